"""The Overview tab's content as Textual markup: mix, work, intensity, footprint, expectations.

A bar row looks like ``tensor core        ████████▏            16``.
"""

from __future__ import annotations

from pathlib import Path

from textual.markup import escape

from ..analysis import register_bits
from ..model import KernelDoc
from .asm_view import format_count

BAR = 36
EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(value: float, top: float, width: int = BAR) -> str:
    """A horizontal bar of ``width * value / top`` cells, in eighths."""
    if top <= 0 or value <= 0:
        return ""
    cells = width * value / top
    full = int(cells)
    rest = int((cells - full) * 8)
    return "█" * full + (EIGHTHS[rest] if rest and full < width else "")


def _bars(rows: list[tuple[str, float]], fmt=format_count, limit: int = 16) -> list[str]:
    rows = [(k, v) for k, v in rows if v]
    if not rows:
        return ["  [dim](none)[/]"]
    shown = rows[:limit]
    rest = sum(v for _, v in rows[limit:])
    if rest:
        shown.append((f"{len(rows) - limit} more", rest))
    top = max(v for _, v in shown)
    return [f"  {escape(k[:22]):<22} [$primary]{bar(v, top)}[/]{' ' * (BAR + 1 - len(bar(v, top)))}{fmt(v):>8}"
            for k, v in shown]


def overview_markup(doc: KernelDoc) -> str:
    a = doc.analysis
    m = doc.module
    out: list[str] = []
    out.append(f"[b]{escape(doc.name)}[/]  [dim]{escape(Path(doc.path).name)}, {m.isa}"
               f"{', ' + m.target if m.target else ''}, {len(doc.fn.instructions)} instructions, "
               f"lines {doc.first_line}–{doc.last_line}[/]")
    out.append(f"[dim]facts from: {a.provider}[/]")
    out.append("")
    dyn = any(d is not None for _, _, d in a.class_mix)
    out.append("[b]Instruction mix by class[/] " + ("[dim](dynamic estimate)[/]" if dyn else "[dim](static)[/]"))
    out += _bars([(c, (d if dyn and d is not None else s)) for c, s, d in a.class_mix])
    out.append("")
    out.append("[b]FLOPs by dtype[/]  [dim]" + escape(a.work_note) + "[/]")
    out += _bars(sorted(a.flops.items(), key=lambda kv: -kv[1]))
    out.append("")
    out.append("[b]Bytes by state space[/]")
    out += _bars(sorted(a.bytes.items(), key=lambda kv: -kv[1]))
    out.append("")
    out.append("[b]Arithmetic intensity[/]")
    if a.intensity is not None:
        out.append(f"  {a.intensity:.2f} FLOP/byte" + (f"  {escape(a.roofline)}" if a.roofline else ""))
    else:
        out.append("  [dim]not available: needs the analyzer's dynamic estimates and machine model[/]")
    out.append("")
    if m.isa != "ascend":            # PTX-only facts
        out.append("[b]Registers and shared memory[/]")
        regs = ", ".join(f"{n} {t}" for t, n in sorted(a.registers.items()))
        out.append(f"  declared virtual registers: {escape(regs) or 'none'}"
                   f" [dim]({register_bits(a.registers) // 32} × 32-bit)[/]")
        shared = f"{a.shared_bytes} B static" if a.shared_bytes is not None else "unknown"
        out.append(f"  shared memory: {shared} {escape(a.shared_note)}")
    if doc.corpus and doc.corpus.truth:
        t = doc.corpus.truth
        out.append(f"  [dim]on the H200 (corpus truth, {doc.corpus.target}):[/] {t.get('regs_per_thread')} registers/thread,"
                   f" {t.get('static_smem_bytes')} B static shared, check {escape(str(t.get('status')))}")
    out.append("")
    out.append("[b]Expectations[/]" + (f" [dim]({escape(a.expectations_source)})[/]" if a.expectations_source else ""))
    if not a.expectations:
        why = (f"its {doc.corpus.root.name}/manifest.json entry has no 'expect' for {doc.corpus.target}"
               if doc.corpus is not None else "not in a corpus manifest")
        out.append(f"  [dim]none for this kernel ({escape(why)})[/]")
    for e in a.expectations:
        mark = "[$success]✓[/]" if e.ok else ("[$error]✗[/]" if e.ok is False else "?")
        out.append(f"  {mark} {escape(e.expr):<26} [dim]found {e.found}[/] {escape(e.note)}")
    if a.missing:
        out.append("")
        out.append("[b]Not available here[/]")
        out += [f"  [dim]· {escape(x)}[/]" for x in a.missing]
    return "\n".join(out)
