"""The Overview tab's content as Textual markup: mix, work, intensity, footprint, expectations.

A bar row looks like ``tensor core        ████████▏            16``.
"""

from __future__ import annotations

from pathlib import Path

from textual.markup import escape

from ..analysis import _si, register_bits
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
    out.append("[b]Instruction mix by class[/] " + (f"[dim]({escape(a.work_note)})[/]" if dyn else "[dim](static)[/]"))
    out += _bars([(c, (d if dyn and d is not None else s)) for c, s, d in a.class_mix])
    out.append("")
    out.append("[b]FLOPs by dtype[/]  [dim]" + escape(a.work_note) + "[/]")
    out += _bars(sorted(a.flops.items(), key=lambda kv: -kv[1]))
    out.append("")
    out.append("[b]Bytes by state space[/]  [dim]" + escape(a.work_note) + "[/]")
    out += _bars(sorted(a.bytes.items(), key=lambda kv: -kv[1]))
    out.append("")
    out.append("[b]Arithmetic intensity[/]  [dim]" + escape(a.work_note) + "; the roofline verdict is a model: global "
               "bytes taken as DRAM bytes, no caches[/]")
    if a.intensity is not None:
        out.append(f"  {a.intensity:.2f} FLOP/byte" + (f"  {escape(a.roofline)}" if a.roofline else ""))
    else:
        out.append("  [dim]not available: needs the analyzer's dynamic estimates and machine model[/]")
    if m.isa != "ascend":
        out += modelled_point_markup(doc)
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


def modelled_point_markup(doc: KernelDoc) -> list[str]:
    """The roofline point of the Timeline tab's timed run (the H200 timing model), when there is one:
    executed work over modelled DRAM bytes and modelled time, against the roof at that intensity."""
    from ..timeline import PtxTimelineRun

    run = doc.timeline
    if not isinstance(run, PtxTimelineRun):
        return ["  [dim]modelled point: open the Timeline tab (5) to run the H200 timing model on the launch[/]"]
    try:
        from analyzer.machine import load_machine
        from analyzer.plot import point_from_timing, roof_at

        pt = point_from_timing(doc.name, run.timing)
        machine = load_machine(run.machine)
    except Exception as exc:  # noqa: BLE001 - the overview shows what it can
        return [f"  [dim]modelled point not available ({escape(type(exc).__name__)}: {escape(str(exc))})[/]"]
    if pt is None:
        return ["  [dim]modelled point: the timed run does no counted work or moves no modelled DRAM bytes[/]"]
    tm = run.timing
    peak, att = roof_at(machine, tm.get("work") or {}, pt.intensity)
    sampled = f", {tm['simulated_ctas']} of {tm['ctas']} CTAs simulated" if tm.get("sampled") else ""
    out = [f"  [$error]●[/] modelled on {escape(run.machine.upper())} [dim](timing model, not measured{sampled})[/]: "
           f"{_si(pt.ops_per_s, 'OP/s')} at {pt.intensity:.3g} OP per DRAM byte, "
           f"{tm['seconds'] * 1e6:,.2f} µs, bound: {escape(str(tm.get('bound')))}"]
    if att:
        out.append(f"    {100 * pt.ops_per_s / att:.1f}% of the roof there [dim](min(peak {_si(peak, 'OP/s')}, "
                   f"{pt.intensity:.3g} OP/B × DRAM {_si(machine.dram_bw, 'B/s')}) = {_si(att, 'OP/s')})[/]")
        out.append(f"    [$error]{bar(pt.ops_per_s, att)}[/]")
    return out

