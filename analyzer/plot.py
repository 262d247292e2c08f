"""The roofline as an SVG picture, hand-written (no plotting library): a kernel's arithmetic intensity
(FLOP or integer OP per DRAM byte) against its operations per second, under the ceilings of a machine
model (``sim/machines/h200.toml``).

    >>> from analyzer.machine import load_machine
    >>> svg = roofline_svg(load_machine("h200"), [RooflinePoint("sgemm", 8.0, 2.0e13, "estimated")])
    >>> svg.startswith("<svg") and "estimated" in svg
    True

Compute ceilings: FP32, packed FP16 (HFMA2), and for each other kind of work the kernel does (tensor
dense for its dtype, DP4A, FP64) that kind's peak. Memory ceilings (bandwidth x intensity): DRAM
(datasheet and measured), L2 (measured copy through L2) and shared memory (128 B/clk/SM), all drawn on
the DRAM-intensity axis. Every point says whether it is ``estimated`` (static counts: the time the
ceilings allow), ``modelled`` (the timing model's time) or ``measured``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

STATUSES = ("estimated", "modelled", "measured")

#: compute ceilings always drawn, then the kernel's own kinds; labels for the legend
ALWAYS = ("fp32", "fp16")
KIND_LABEL = {
    "fp32": "FP32 FFMA", "fp16": "FP16 HFMA2 (packed)", "fp64": "FP64 DFMA", "int8_dp4a": "INT8 DP4A",
    "tensor_f16": "tensor f16 dense (wgmma)", "tensor_bf16": "tensor bf16 dense (wgmma)",
    "tensor_fp8": "tensor fp8 dense (wgmma)", "tensor_int8": "tensor int8 dense (wgmma)",
    "tensor_tf32": "tensor tf32 dense (wgmma)", "mma_sync_f16": "tensor f16/bf16 (mma.sync)",
    "mma_sync_int8": "tensor int8 (mma.sync)",
}
BW_LABEL = {"dram": "DRAM (datasheet)", "dram_measured": "DRAM (measured copy)",
            "l2_measured": "L2 (measured copy)", "shared": "shared memory"}
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
STATUS_COLOR = {"estimated": "#555555", "modelled": "#d62728", "measured": "#2ca02c"}

W, H = 760, 500
LEFT, RIGHT, TOP, BOTTOM = 80, 230, 40, 60


@dataclass(frozen=True)
class RooflinePoint:
    """One kernel on the roofline: ``intensity`` in OP per DRAM byte, ``ops_per_s`` whole-launch."""

    label: str
    intensity: float
    ops_per_s: float
    status: str = "estimated"

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {self.status!r}")


def ceilings(machine, kinds=()) -> tuple[list[tuple[str, str, float]], list[tuple[str, str, float]]]:
    """(compute [(kind, label, OP/s)], memory [(name, label, B/s)]) that apply to a kernel doing ``kinds``."""
    want = list(ALWAYS) + [k for k in kinds if k not in ALWAYS]
    compute = [(k, KIND_LABEL.get(k, k), machine.peak(k)) for k in dict.fromkeys(want) if k in machine.per_sm_clk]
    bws = getattr(machine, "bandwidths", None) or {"dram": machine.dram_bw}
    memory = [(k, BW_LABEL.get(k, k), v) for k, v in sorted(bws.items(), key=lambda kv: kv[1])]
    return compute, memory


def _fmt_si(v: float, unit: str) -> str:
    for scale, p in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M")):
        if v >= scale:
            x = v / scale
            return f"{x:.3g} {p}{unit}"
    return f"{v:.3g} {unit}"


def _decade_label(k: int) -> str:
    v = 10.0 ** k
    return f"{v:g}" if -3 <= k <= 4 else f"1e{k}"


def roofline_svg(machine, points, kinds=(), title: str | None = None) -> str:
    """The SVG text of the roofline of ``machine`` with ``points`` (a list of :class:`RooflinePoint`)."""
    points = [p for p in points if p.intensity and p.intensity > 0 and p.ops_per_s and p.ops_per_s > 0]
    compute, memory = ceilings(machine, kinds)
    top = max(c[2] for c in compute)
    ridges = [c[2] / m[2] for c in compute for m in memory]
    xs = [p.intensity for p in points] + ridges
    lx0 = math.floor(math.log10(min(xs))) - 1
    lx1 = math.ceil(math.log10(max(xs))) + 1
    ys = [p.ops_per_s for p in points] + [10.0 ** lx0 * memory[0][2]]
    ly0 = math.floor(math.log10(min(ys)))
    ly1 = math.ceil(math.log10(top * 1.2))
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def X(i: float) -> float:
        return LEFT + (math.log10(i) - lx0) / (lx1 - lx0) * pw

    def Y(v: float) -> float:
        return TOP + (1 - (math.log10(v) - ly0) / (ly1 - ly0)) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<title>{escape(title or f"roofline on {machine.name}")}</title>',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text class="title" x="{LEFT}" y="22" font-size="14">{escape(title or f"Roofline: {machine.description or machine.name}")}</text>',
           f'<g class="axes" data-log-x="{lx0} {lx1}" data-log-y="{ly0} {ly1}">',
           f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#000"/>']
    for k in range(lx0, lx1 + 1):
        x = X(10.0 ** k)
        out.append(f'<line class="grid" x1="{x:.2f}" y1="{TOP}" x2="{x:.2f}" y2="{TOP + ph}" stroke="#eee"/>')
        out.append(f'<text class="xtick" data-value="{10.0 ** k:g}" x="{x:.2f}" y="{TOP + ph + 16}" '
                   f'text-anchor="middle">{_decade_label(k)}</text>')
    for k in range(ly0, ly1 + 1):
        y = Y(10.0 ** k)
        out.append(f'<line class="grid" x1="{LEFT}" y1="{y:.2f}" x2="{LEFT + pw}" y2="{y:.2f}" stroke="#eee"/>')
        out.append(f'<text class="ytick" data-value="{10.0 ** k:g}" x="{LEFT - 6}" y="{y + 4:.2f}" '
                   f'text-anchor="end">{_fmt_si(10.0 ** k, "OP/s")}</text>')
    out.append(f'<text class="xlabel" x="{LEFT + pw / 2}" y="{H - 18}" text-anchor="middle">arithmetic intensity '
               f'(FLOP or OP per DRAM byte, log)</text>')
    out.append(f'<text class="ylabel" transform="translate(18 {TOP + ph / 2}) rotate(-90)" text-anchor="middle">'
               f'operations per second (log)</text>')
    out.append('</g>')

    # ceilings: memory diagonals up to the highest compute roof, compute roofs from their ridge with DRAM
    legend = []
    out.append('<g class="ceilings">')
    xmin, xmax = 10.0 ** lx0, 10.0 ** lx1
    for n, (kind, label, bw) in enumerate(memory):
        x_end = min(xmax, top / bw)
        y_start = xmin * bw
        color = COLORS[(len(compute) + n) % len(COLORS)]
        out.append(f'<line class="ceiling memory" data-kind="{kind}" data-bytes-per-s="{bw:.6g}" '
                   f'x1="{X(xmin):.2f}" y1="{Y(y_start):.2f}" x2="{X(x_end):.2f}" y2="{Y(x_end * bw):.2f}" '
                   f'stroke="{color}" stroke-width="1.5" stroke-dasharray="{"" if kind == "dram" else "5,3"}"/>')
        legend.append((color, f"{label}: {_fmt_si(bw, 'B/s')}", kind))
    dram = next(m[2] for m in memory if m[0] == "dram") if any(m[0] == "dram" for m in memory) else memory[0][2]
    for n, (kind, label, peak) in enumerate(compute):
        color = COLORS[n % len(COLORS)]
        x_start = max(xmin, peak / dram)
        out.append(f'<line class="ceiling compute" data-kind="{kind}" data-ops-per-s="{peak:.6g}" '
                   f'x1="{X(x_start):.2f}" y1="{Y(peak):.2f}" x2="{X(xmax):.2f}" y2="{Y(peak):.2f}" '
                   f'stroke="{color}" stroke-width="2"/>')
        legend.append((color, f"{label}: {_fmt_si(peak, 'OP/s')}", kind))
    out.append('</g>')

    out.append('<g class="points">')
    for p in points:
        cx, cy = X(p.intensity), Y(p.ops_per_s)
        color = STATUS_COLOR[p.status]
        out.append(f'<circle class="point {p.status}" data-label="{escape(p.label)}" data-intensity="{p.intensity:.6g}" '
                   f'data-ops-per-s="{p.ops_per_s:.6g}" cx="{cx:.2f}" cy="{cy:.2f}" r="5" fill="{color}"/>')
        out.append(f'<text class="point-label" x="{cx + 8:.2f}" y="{cy - 6:.2f}" fill="{color}">'
                   f'{escape(p.label)} ({p.status}): {_fmt_si(p.ops_per_s, "OP/s")} at {p.intensity:.3g} OP/B</text>')
    out.append('</g>')

    out.append(f'<g class="legend" transform="translate({W - RIGHT + 12} {TOP + 4})">')
    for i, (color, text, kind) in enumerate(legend):
        out.append(f'<line x1="0" y1="{i * 16}" x2="18" y2="{i * 16}" stroke="{color}" stroke-width="2"/>')
        out.append(f'<text class="legend-entry" data-kind="{kind}" x="24" y="{i * 16 + 4}">{escape(text)}</text>')
    n = len(legend)
    for j, status in enumerate(s for s in STATUSES if any(p.status == s for p in points)):
        y = (n + j + 1) * 16
        out.append(f'<circle cx="9" cy="{y}" r="4" fill="{STATUS_COLOR[status]}"/>')
        out.append(f'<text class="legend-entry" x="24" y="{y + 4}">{status}'
                   # the x axis is per DRAM byte; a static estimate has no cache model: its bytes are the
                   # global bytes the kernel requests, an upper bound on the DRAM traffic
                   f'{" (static counts, every global byte taken as DRAM, time at the ceilings)" if status == "estimated" else ""}'
                   f'{" (timing model)" if status == "modelled" else ""}</text>')
    out.append('</g>')
    out.append('</svg>')
    return "\n".join(out) + "\n"


def write_roofline(path, machine, points, kinds=(), title: str | None = None) -> Path:
    """Write :func:`roofline_svg` to ``path`` (``InputError`` when it cannot be written)."""
    from isa.errors import InputError, Span

    p = Path(path)
    try:
        p.write_text(roofline_svg(machine, points, kinds, title))
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}", Span(str(path))) from None
    return p


def point_from_dynamic(label: str, dyn: dict, seconds: float | None = None, status: str = "estimated"):
    """A point from a report's ``dynamic()`` section: its work and DRAM bytes over ``seconds`` (the
    modelled time) or, without it, at the attainable rate the ceilings allow. ``None`` when the
    kernel moves no global bytes or does no counted work."""
    roof = dyn.get("roofline") or {}
    intensity = roof.get("intensity")
    if not intensity:
        return None
    if seconds is not None:
        work = sum(dyn.get("work_by_kind", {}).values())
        if not work or seconds <= 0:
            return None
        return RooflinePoint(label, float(intensity), work / seconds, status)
    rate = roof.get("attainable_ops_per_s")
    return RooflinePoint(label, float(intensity), float(rate), status) if rate else None


def work_by_kind(infos, thread_counts, scale: float = 1.0) -> dict[str, float]:
    """Operations of a run by the kind of peak they run at: :func:`analyzer.report.work_sums`
    (the analyzer's one sum of work) of ``infos`` with ``thread_counts`` how many threads executed
    each (the functional simulator's exact per-pc counts), times ``scale`` (a sampled timing run's
    launch CTAs over the CTAs it ran)."""
    from .report import work_sums

    return dict(work_sums(infos, thread_counts, scale).by_kind)


def point_from_timing(label: str, timing: dict):
    """The *modelled* point of a timed run (``result.timing`` of ``timing="h200"``): its work
    (``timing["work"]``, :func:`work_by_kind`) over the modelled DRAM bytes (read + written) and the
    modelled time. ``None`` when the run does no counted work or moves no DRAM bytes."""
    work = sum((timing.get("work") or {}).values())
    mem = timing.get("memory") or {}
    dram = (mem.get("dram_bytes_read") or 0.0) + (mem.get("dram_bytes_write") or 0.0)
    seconds = timing.get("seconds") or 0.0
    if not work or not dram or seconds <= 0:
        return None
    return RooflinePoint(label, work / dram, work / seconds, "modelled")


def roof_at(machine, work: dict[str, float], intensity: float) -> tuple[float | None, float | None]:
    """(compute peak for this mix of work, attainable OP/s at ``intensity``): the mix's peak is its
    work over the time each kind takes at its own peak (``machine.peak``), the attainable rate the
    lower of that and ``intensity`` x DRAM bandwidth (the datasheet roof the plot draws solid)."""
    t = sum(v / machine.peak(k) for k, v in work.items() if k in machine.per_sm_clk)
    total = sum(v for k, v in work.items() if k in machine.per_sm_clk)
    if not t:
        return None, None
    peak = total / t
    return peak, min(peak, intensity * machine.dram_bw)
