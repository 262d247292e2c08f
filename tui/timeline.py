"""The Timeline tab's work, without Textual: run the Ascend-like timing model and lay out its
per-pipe timeline, busy table and stall breakdown as plain rows.

For ``examples/ascend/vadd_f16.asm`` (16 tiles on 48 vector cores) the drawn lanes read::

    cores 0-15   MTE2 ░████████████░░░░░░░░░░░░░██████████████░░░░░░░ ...
                 V                ░░░░░░░░░░░░░██░░░░░░░░░░░░░░░░░ ...
                 MTE3             ░░░░░░░░░░░░░░░░██████████████ ...
    cores 16-47  MTE3 ╵

``█`` a pipe busy at least half of the cell, ``▄`` busy for part of it, ``░`` held by a
``wait_flag``, ``╵`` a ``set_flag`` firing, blank idle. Cores whose lanes draw identically share
one group, so the 48-core launch above takes two groups, not 48. The stall breakdown comes from
the model's own flag accounting (``TimingResult.flag_waits``), not from the drawn cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from isa.errors import InputError

from .model import KernelDoc

BUSY, PART, WAIT, SET, IDLE = "█", "▄", "░", "╵", " "
#: lanes top to bottom in data-flow order: scalar, loads in, cube, fixpipe, vector, stores out
LANE_ORDER = ("S", "MTE2", "MTE1", "M", "FIX", "V", "MTE3")
DEFAULT_MACHINE = "davinci-a2"


@dataclass
class TimelineRun:
    """One timing-only run of an Ascend-like kernel (trace slices kept for drawing)."""

    kernel: str
    machine: str
    hz: float
    core_type: str
    cores: int
    timing: object            # sim.ascend.timing.TimingResult
    reports: list             # sim.ascend.engine.Report (undefined behaviour found on the way)
    instructions: int
    seconds: float            # wall time of the model

    @property
    def cycles(self) -> float:
        return self.timing.cycles


@dataclass(frozen=True)
class Lane:
    """One drawn row: a pipe of a group of cores that draw identically."""

    cores: tuple[int, ...]
    pipe: str
    cells: str


@dataclass(frozen=True)
class StallRow:
    name: str          # "MTE2->V EVENT_ID0" or a pipe name
    waits: int
    cycles: float      # summed over cores
    share: float       # of all flag-wait cycles


@dataclass(frozen=True)
class PipeRow:
    pipe: str
    busy: float        # cycles, summed over cores
    utilization: float
    wait: float        # cycles its wait_flags held it, summed over cores
    ops: int           # instructions it ran


@dataclass
class Breakdown:
    pipes: list[PipeRow] = field(default_factory=list)
    flags: list[StallRow] = field(default_factory=list)
    by_pipe: list[StallRow] = field(default_factory=list)


def machine_name(doc: KernelDoc) -> str:
    """The ``.arch`` of the file when a machine model of that name ships, else ``davinci-a2``."""
    from sim.ascend.machine import MACHINES

    for t in doc.module.targets:
        if (MACHINES / f"{t}.toml").is_file():
            return t
    return DEFAULT_MACHINE


def run_timing(doc: KernelDoc, machine: str | None = None) -> TimelineRun:
    """Run the functional engine in timing-only mode (control flow, addresses, bounds and sync are
    evaluated, no data) and schedule its events with trace slices."""
    import time

    if doc.module.isa != "ascend":
        raise InputError("the timing model covers Ascend-like kernels only")
    from sim.ascend.machine import load_machine
    from sim.ascend.run import run_module

    m = load_machine(machine or machine_name(doc))
    t0 = time.perf_counter()
    res = run_module(doc.module, m, kernel=doc.name, functional=False, trace=True)
    return TimelineRun(doc.name, m.name, m.hz, res.launch.core_type, res.launch.blocks, res.timing,
                       list(res.reports), res.launch.instructions_executed, time.perf_counter() - t0)


def used_pipes(run: TimelineRun) -> list[str]:
    """Pipes with at least one slice, in :data:`LANE_ORDER`."""
    seen = {s.pipe for s in run.timing.slices}
    return [p for p in LANE_ORDER if p in seen] + sorted(seen - set(LANE_ORDER))


def _cells(slices, width: int, scale: float) -> str:
    """Cell characters for one pipe of one core; ``scale`` is cycles per cell."""
    busy = [0.0] * width
    wait = [0.0] * width
    sets = [False] * width
    for s in slices:
        if s.kind == "set":
            sets[min(width - 1, int(s.start / scale))] = True
            continue
        acc = busy if s.kind == "op" else wait if s.kind == "wait" else None
        if acc is None:
            continue
        a, b = s.start / scale, s.end / scale
        i = int(a)
        while i < width and i < b:
            acc[i] += min(b, i + 1) - max(a, i)
            i += 1
    out = []
    for i in range(width):
        if busy[i] >= 0.5:
            out.append(BUSY)
        elif busy[i] > 0:
            out.append(PART)
        elif wait[i] >= 0.5:
            out.append(WAIT)
        elif sets[i]:
            out.append(SET)
        else:
            out.append(IDLE)
    return "".join(out).rstrip()


def lanes(run: TimelineRun, width: int) -> list[Lane]:
    """Rows to draw, ``width`` cells spanning 0..cycles; cores that draw alike are grouped."""
    width = max(8, width)
    scale = max(run.cycles, 1.0) / width
    pipes = used_pipes(run)
    per_core: dict[int, dict[str, list]] = {}
    for s in run.timing.slices:
        per_core.setdefault(s.core, {}).setdefault(s.pipe, []).append(s)
    groups: dict[tuple[str, ...], list[int]] = {}
    for core in range(run.cores):
        rows = per_core.get(core, {})
        key = tuple(_cells(rows.get(p, ()), width, scale) for p in pipes)
        groups.setdefault(key, []).append(core)
    out = []
    for key, cores in sorted(groups.items(), key=lambda kv: kv[1][0]):
        for p, cells in zip(pipes, key):
            out.append(Lane(tuple(cores), p, cells))
    return out


def core_label(cores: tuple[int, ...]) -> str:
    """``(0, 1, 2, 5)`` -> ``cores 0-2,5``; one core -> ``core 3``."""
    if len(cores) == 1:
        return f"core {cores[0]}"
    parts, start, prev = [], cores[0], cores[0]
    for c in cores[1:] + (None,):
        if c is not None and c == prev + 1:
            prev = c
            continue
        parts.append(f"{start}-{prev}" if prev > start else f"{start}")
        if c is not None:
            start = prev = c
    return "cores " + ",".join(parts)


def axis(cycles: float, width: int, ticks: int = 4) -> tuple[str, str]:
    """A tick row (``┬`` marks) and the cycle labels under it, ``width`` cells wide."""
    width = max(8, width)
    marks = [" "] * width
    labels = [" "] * width
    for k in range(ticks + 1):
        pos = min(width - 1, round(k * (width - 1) / ticks))
        marks[pos] = "┬"
        text = f"{cycles * k / ticks:.0f}"
        start = 0 if k == 0 else pos - len(text) + 1 if k == ticks else pos - len(text) // 2
        start = max(0, min(start, width - len(text)))
        labels[start:start + len(text)] = text
    return "".join(marks), "".join(labels)


def breakdown(run: TimelineRun) -> Breakdown:
    """Per pipe: busy cycles, utilisation, cycles held by its wait_flags, instructions run;
    per flag and per waiting pipe: the wait cycles the model accounted (summed over cores)."""
    t = run.timing
    flags = t.flag_waits
    total = sum(v["wait_cycles"] for v in flags.values()) or 0.0
    pipe_wait: dict[str, float] = {}
    pipe_waits: dict[str, int] = {}
    for name, v in flags.items():
        dst = name.split(" ")[0].split("->")[1]
        pipe_wait[dst] = pipe_wait.get(dst, 0.0) + v["wait_cycles"]
        pipe_waits[dst] = pipe_waits.get(dst, 0) + v["waits"]
    ops: dict[str, int] = {}
    other = 0                        # instructions that are not the scalar unit's own: pipe ops and flags
    for s in t.slices:
        if s.kind == "op":
            ops[s.pipe] = ops.get(s.pipe, 0) + 1
        if s.pipe != "S" or s.kind != "op":
            other += 1
    # scalar instructions leave no slice of their own (their issue time is folded into the next
    # event's): the scalar unit ran every instruction that is neither a pipe's op nor a flag
    ops["S"] = max(run.instructions - other, ops.get("S", 0))
    b = Breakdown()
    for p in LANE_ORDER:
        b.pipes.append(PipeRow(p, t.busy.get(p, 0.0), t.utilization.get(p, 0.0), pipe_wait.get(p, 0.0), ops.get(p, 0)))
    b.flags = sorted((StallRow(k, v["waits"], v["wait_cycles"], v["wait_cycles"] / total if total else 0.0)
                      for k, v in flags.items()), key=lambda r: -r.cycles)
    b.by_pipe = sorted((StallRow(p, pipe_waits[p], c, c / total if total else 0.0) for p, c in pipe_wait.items()),
                       key=lambda r: -r.cycles)
    return b


def ptx_units(doc: KernelDoc, stats: dict) -> list[tuple[str, int]]:
    """Executed warp-instructions per unit (``fp32``, ``lsu``, ``tensor``...) from a simulator
    run's ``warp_instructions_by_line``, through each line's first instruction's unit."""
    notes = doc.analysis.notes
    out: dict[str, int] = {}
    for line, n in (stats.get("warp_instructions_by_line") or {}).items():
        idxs = doc.line_instrs.get(int(line))
        if not idxs:
            continue
        unit = (notes[idxs[0]].unit if idxs[0] < len(notes) else None) or "other"
        out[unit] = out.get(unit, 0) + int(n)
    return sorted(out.items(), key=lambda kv: -kv[1])


# ---------------------------------------------------------------------------------------------
# PTX on the H200 timing model (sim.run_kernel(..., timing="h200", trace=True))
# ---------------------------------------------------------------------------------------------

#: lanes of one SM sub-partition, top to bottom (the timing model's unit names, from the analyzer's notes)
PTX_UNIT_ORDER = ("fp32", "fp16", "int", "fp64", "sfu", "tensor", "lsu", "sync", "control", "other")


@dataclass
class PtxTimelineRun:
    """One timed run of a PTX launch: ``timing`` is ``result.timing`` without its trace, ``slices``
    the issue slices of the traced SM (``sim.timing.trace.Slice``: process = sub-partition, track =
    warp, ``args['line']`` = PTX line)."""

    kernel: str
    machine: str
    hz: float
    timing: dict
    slices: list
    seconds: float             # wall time of the run (functional simulation + timing model)
    problems: tuple = ()

    @property
    def cycles(self) -> float:
        return float(self.timing.get("cycles", 0.0))


@dataclass(frozen=True)
class PtxLane:
    """One drawn row: the issues of one unit on one sub-partition of the traced SM."""

    track: str        # "SM 0 sub-partition 2"
    unit: str
    cells: str
    issues: int


def run_ptx_timing(doc: KernelDoc, spec, machine: str = "h200") -> PtxTimelineRun:
    """The launch ``spec`` on the functional simulator with the timing model and its trace."""
    import time

    from sim import launch as L

    from . import backends

    if not backends.timing("ptx").ok:
        raise InputError(backends.timing("ptx").message)
    t0 = time.perf_counter()
    ex = L.execute(doc.module, spec, doc.name, timing=machine, sample="auto", trace=True)
    tm = dict(ex.timing or {})
    # the warps' issue slices (the trace also has pipe and unit tracks: ``kernlens run --trace``)
    slices = [s for s in tm.pop("_slices", []) or [] if s.cat == "issue"]
    try:
        from sim.timing.sm import load_params

        hz = float(load_params(machine).hz)
    except Exception:  # noqa: BLE001 - only the µs figure needs the clock
        hz = float(tm.get("cycles", 0.0)) / tm["seconds"] if tm.get("seconds") else 1.98e9
    return PtxTimelineRun(doc.name, machine, hz, tm, slices, time.perf_counter() - t0, tuple(ex.problems))


def _unit_of_line(doc: KernelDoc, line: int | None) -> str:
    idxs = doc.line_instrs.get(int(line)) if line is not None else None
    notes = doc.analysis.notes
    if not idxs or idxs[0] >= len(notes):
        return "other"
    return notes[idxs[0]].unit or "other"


def ptx_lanes(run: PtxTimelineRun, doc: KernelDoc, width: int) -> list[PtxLane]:
    """One row per (sub-partition, unit) with issues; a cell is ``█`` when the unit issued in at least
    half of its cycles, ``▄`` when it issued at all (each issue takes one cycle of the scheduler)."""
    width = max(8, width)
    scale = max(run.cycles, 1.0) / width
    per: dict[tuple[str, str], list[float]] = {}
    counts: dict[tuple[str, str], int] = {}
    units: dict[int | None, str] = {}
    for s in run.slices:
        line = s.args.get("line") if s.args else None
        unit = units.get(line)
        if unit is None:
            unit = units[line] = _unit_of_line(doc, line)
        key = (s.process, unit)
        acc = per.setdefault(key, [0.0] * width)
        acc[min(width - 1, int(s.start / scale))] += 1.0
        counts[key] = counts.get(key, 0) + 1
    order = {u: i for i, u in enumerate(PTX_UNIT_ORDER)}
    out = []
    for (track, unit), acc in sorted(per.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], len(order)), kv[0][1])):
        cells = "".join(BUSY if v >= 0.5 * scale else PART if v > 0 else IDLE for v in acc).rstrip()
        out.append(PtxLane(track, unit, cells, counts[(track, unit)]))
    return out


def stalls_by_line(run: PtxTimelineRun) -> dict[int, float]:
    """PTX line -> cycles its instructions waited to issue, summed over the traced warps: for each
    warp, the gap between an instruction's issue and the cycle after the previous one's."""
    by_warp: dict[tuple[str, str], list] = {}
    for s in run.slices:
        by_warp.setdefault((s.process, s.track), []).append(s)
    out: dict[int, float] = {}
    for seq in by_warp.values():
        seq.sort(key=lambda s: s.start)
        for prev, cur in zip(seq, seq[1:]):
            gap = cur.start - prev.start - 1.0
            line = cur.args.get("line") if cur.args else None
            if gap > 0 and line is not None:
                out[int(line)] = out.get(int(line), 0.0) + gap
    return out


def stall_heat(run: PtxTimelineRun) -> dict[int, float]:
    """PTX line -> 0..1 by stall cycles (for the heat column)."""
    vals = stalls_by_line(run)
    top = max(vals.values(), default=0.0)
    return {ln: v / top for ln, v in vals.items()} if top else {}
