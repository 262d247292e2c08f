"""Cycle-approximate timing: the scalar unit issues into in-order queues per pipe that run in parallel.

Input is the event list the functional engine recorded per core (it never re-executes semantics).
Per core, one pass in program order:

* the scalar unit spends ``issue_cycles`` per instruction (``Event.scal``) and stalls when a
  pipe's queue already holds ``queue_depth`` instructions that have not started;
* a pipe runs its instructions in order; an instruction starts when issued and when the pipe is
  free; ``set_flag`` fires when everything before it in its queue has finished; ``wait_flag``
  holds its queue until the matching set fired (+ ``flag_latency``);
  ``pipe_barrier(PIPE_ALL)`` holds the scalar until every pipe drained;
* costs come from the machine model: ``mad`` = head + fractals (x2 for f32); movers = head +
  bytes / bandwidth of the path; vector = head + per repeat max(slope, UB bank cycles), where
  bank cycles follow ascend.md 5 (reads of one repeat that fall in the same bank group
  serialise, as do writes; a read and a write in the same bank add a cycle);
* GM is shared: a GM transfer gets the smaller of the core's port bandwidth and its fair share
  of HBM bandwidth (split over the cores that move GM data) for the bytes that miss L2 (first
  touches; everything if the footprint is larger than L2).

A FixPipe with a unit flag streams from the ``mad`` it depends on: it can start once that mad
started and ends no earlier than one fractal after it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from isa.ascend.opcodes import PIPES
from isa.errors import InputError

from .machine import AscendModel

FLAG_NAME = "{0}->{1} EVENT_ID{2}"


@dataclass
class Slice:
    """One instruction on one pipe of one core: ``start``..``end`` in cycles, as scheduled.

    ``end`` is the real end (a ``set_flag`` or an already-satisfied ``wait_flag`` takes 0
    cycles); :attr:`shown_end` stretches it to at least one cycle for drawing only.
    """

    core: int
    pipe: str
    start: float
    end: float
    name: str
    idx: int
    eid: int
    kind: str

    @property
    def cycles(self) -> float:
        return self.end - self.start

    @property
    def shown_end(self) -> float:
        return max(self.end, self.start + 1)


@dataclass
class TimingResult:
    cycles: float
    seconds: float
    core_cycles: list[float]
    busy: dict[str, float]
    utilization: dict[str, float]
    flag_waits: dict[str, dict]
    gm_bytes: int
    gm_unique_bytes: int
    gm_bytes_per_cycle: float
    slices: list[Slice] = field(default_factory=list)
    flows: list[tuple[Slice, Slice]] = field(default_factory=list)


def ub_bank_cycles(reads: list[np.ndarray], writes: list[np.ndarray], m: AscendModel) -> np.ndarray:
    """Cycles per repeat spent on UB access: max over bank groups of the blocks read (resp.
    written) in it, plus ``rw_conflict_cycles`` when a read and a write of the repeat hit one bank.

    ``reads``/``writes`` hold 32-B block addresses, shape (repeats, blocks).
    """
    groups = m.bank_groups
    out = None
    banks = {}
    for label, arrs in (("r", reads), ("w", writes)):
        if not arrs:
            continue
        a = np.concatenate(arrs, axis=1).astype(np.int64)
        g = (a >> m.group_shift) % groups
        counts = (g[:, :, None] == np.arange(groups)[None, None, :]).sum(axis=1).max(axis=1)
        out = counts if out is None else np.maximum(out, counts)
        banks[label] = (a >> m.bank_shift) * groups + g
    if out is None:
        return np.zeros(0)
    if "r" in banks and "w" in banks:
        r, w = banks["r"], banks["w"]
        clash = (r[:, :, None] == w[:, None, :]).any(axis=(1, 2))
        out = out + clash * m.rw_conflict_cycles
    return out


class Pricer:
    """Cycles of one event from the machine model."""

    def __init__(self, m: AscendModel, gm_bw: float):
        self.m = m
        self.gm_bw = gm_bw

    def __call__(self, ev) -> float:
        w = ev.work
        m = self.m
        kind = w[0]
        if kind == "mad":
            if w[1] == 0:
                return 1.0
            return m.mad_head + w[1] * (m.f32_factor if w[2] == "f32" else 1)
        if kind == "move":
            path, nbytes = w[1], w[2]
            bw = m.mover_bw[path]
            if "gm" in path:
                return m.mover_head + nbytes / min(bw, self.gm_bw)
            return m.onchip_head + nbytes / bw
        if kind == "vec":
            _, name, reps, rblocks, wblocks, counter = w
            if reps == 0:
                return 1.0
            slope = m.vec_slope.get(name)
            if slope is None:
                raise InputError(f"machine model '{m.name}' has no vector slope for {name} ([vector] slope)")
            bank = ub_bank_cycles(rblocks, wblocks, m)
            per = np.maximum(slope, bank) if bank.size else np.full(reps, slope)
            total = m.vec_head + float(per.sum())
            return max(total, m.counter_floor) if counter else total
        if kind == "scalar_ld":
            return 2.0
        return 1.0


def simulate(events_per_core, m: AscendModel, *, gm_bytes: int = 0, gm_unique: int = 0, trace: bool = False) -> TimingResult:
    """Schedule every core's events; ``gm_bytes``/``gm_unique`` set the GM sharing model."""
    n = max(1, len(events_per_core))
    # HBM is shared by the cores that move GM data; cores of the launch that never touch GM
    # (a grid larger than the work) take no share
    n_gm = max(1, sum(1 for events in events_per_core if _moves_gm(events)))
    miss = 1.0 if gm_unique > m.l2_bytes else (min(1.0, gm_unique / gm_bytes) if gm_bytes else 1.0)
    share = m.hbm_bytes_per_cycle / (n_gm * miss) if miss > 0 else float("inf")
    price = Pricer(m, share)
    busy = defaultdict(float)
    waits: dict[str, dict] = {}
    core_cycles = []
    slices: list[Slice] = []
    flows = []
    depth = m.queue_depth
    lat = m.flag_latency
    issue = m.issue_cycles
    for core, events in enumerate(events_per_core):
        t_s = 0.0
        free = {p: 0.0 for p in PIPES}
        starts = {p: [] for p in PIPES}
        set_time: dict[int, float] = {}
        start_of = [0.0] * len(events)
        end_of = [0.0] * len(events)
        set_slice: dict[int, Slice] = {}
        for ev in events:
            t_s += ev.scal * issue
            busy["S"] += ev.scal * issue
            p = ev.pipe
            kind = ev.kind
            if p == "ALL":
                t = max(t_s, max(free.values()))
                t_s = t
                for q in free:
                    free[q] = t
                start_of[ev.eid] = end_of[ev.eid] = t
                continue
            if p == "S":
                start = t_s
                if kind == "wait":
                    t_s = max(t_s, set_time[ev.pair] + lat)
                    _wait(waits, ev, t_s - start)
                elif kind == "set":
                    set_time[ev.eid] = t_s
                elif kind == "op":
                    d = price(ev)
                    t_s += d
                    busy["S"] += d
                start_of[ev.eid], end_of[ev.eid] = start, t_s
                if trace:
                    s = Slice(core, p, start, t_s, ev.name, ev.idx, ev.eid, kind)
                    slices.append(s)
                    _link(s, ev, set_slice, flows)
                continue
            st = starts[p]
            if len(st) >= depth and st[-depth] > t_s:
                t_s = st[-depth]
            start = max(t_s, free[p])
            if kind == "op":
                d = price(ev)
                if ev.unit_dep is not None:
                    dep = ev.unit_dep
                    start = max(start, start_of[dep] + m.mad_head)
                    tail = m.mover_head + 512.0 / m.mover_bw["l0c->gm"]  # the last 16x16 fractal
                    end = max(start + d, end_of[dep] + tail)
                else:
                    end = start + d
                busy[p] += end - start
            elif kind == "set":
                end = start
                set_time[ev.eid] = start
            elif kind == "wait":
                end = max(start, set_time[ev.pair] + lat)
                _wait(waits, ev, end - start)
            else:  # single-pipe barrier: queue already in order
                end = start
            free[p] = end
            st.append(start)
            start_of[ev.eid], end_of[ev.eid] = start, end
            if trace:
                s = Slice(core, p, start, end, ev.name, ev.idx, ev.eid, kind)
                slices.append(s)
                _link(s, ev, set_slice, flows)
        core_cycles.append(max([t_s] + list(free.values())))
    cycles = max(core_cycles) if core_cycles else 0.0
    util = {p: (busy[p] / (cycles * n) if cycles else 0.0) for p in PIPES}
    return TimingResult(cycles, cycles / m.hz, core_cycles, {p: busy[p] for p in PIPES}, util, waits, gm_bytes,
                        gm_unique, share, slices, flows)


def _wait(waits, ev, cycles):
    src, dst, e = ev.key
    w = waits.setdefault(FLAG_NAME.format(src, dst, e), {"wait_cycles": 0.0, "waits": 0})
    w["wait_cycles"] += cycles
    w["waits"] += 1


def _link(s: Slice, ev, set_slice, flows):
    if ev.kind == "set":
        set_slice[ev.eid] = s
    elif ev.kind == "wait" and ev.pair in set_slice:
        flows.append((set_slice.pop(ev.pair), s))


def _is_gm_move(ev) -> bool:
    w = ev.work
    return w is not None and w[0] == "move" and "gm" in w[1]


def _moves_gm(events) -> bool:
    return any(_is_gm_move(ev) for ev in events)


def gm_traffic(events_per_core) -> int:
    """Bytes all cores move between GM and on-chip buffers."""
    return sum(ev.work[2] for events in events_per_core for ev in events if _is_gm_move(ev))
