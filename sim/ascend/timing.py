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
* GM is shared: a GM transfer streams at the core's port bandwidth, and the bytes that go to
  HBM (L2 misses, dirty write-backs; an LRU L2 over the transfers of all cores in time order,
  :mod:`sim.ascend.l2`) at the core's share of HBM bandwidth (split over the cores that move
  GM data).

A FixPipe with a unit flag streams from the ``mad`` it depends on: it can start once that mad
started and ends no earlier than one fractal after it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from isa.ascend.opcodes import PIPES
from isa.errors import InputError, SimulationError

from sim.timing import Queue, Stalls, Unit
from sim.timing.trace import Interval

from .l2 import L2
from .machine import AscendModel

FLAG_NAME = "{0}->{1} EVENT_ID{2}"


@dataclass
class Slice(Interval):
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
    l2_hit_rate: float = 0.0          # of GM bytes read
    hbm_read_bytes: int = 0           # GM reads that missed L2
    hbm_writeback_bytes: int = 0      # dirty L2 data written back during the kernel
    utilization_by_kind: dict = field(default_factory=dict)   # mix launches: {'cube': {pipe: u}, 'vector': ...}
    stalls: Stalls = field(default_factory=Stalls)            # every wait, by cause (sim.timing.Stalls)


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
    """Cycles of one event from the machine model.

    A GM transfer takes ``head + max(bytes / port, hbm_bytes / share)``: its bytes stream through
    the core's port, and the part that goes to HBM (L2 misses read, dirty lines written back,
    as :mod:`sim.ascend.l2` decides; ``Event.hbm``) gets its share of HBM bandwidth
    (``Event.hbm_share``: HBM bandwidth / transfers streaming from HBM at the same time).
    """

    def __init__(self, m: AscendModel, gm_bw: float, with_l2: bool = True):
        self.m = m
        self.gm_bw = gm_bw
        self.with_l2 = with_l2

    def __call__(self, ev) -> float:
        w = ev.work
        m = self.m
        kind = w.kind
        if kind == "mad":
            if w.fractals == 0:
                return 1.0
            return m.mad_head + w.fractals * (m.f32_factor if w.dtype == "f32" else 1)
        if kind == "move":
            path, nbytes = w.path, w.nbytes
            bw = m.mover_bw[path]
            if "gm" in path:
                if self.with_l2 and ev.hbm:
                    return m.mover_head + max(nbytes / bw, ev.hbm / ev.hbm_share)
                return m.mover_head + nbytes / bw
            return m.onchip_head + nbytes / bw
        if kind == "vec":
            name, reps = w.name, w.reps
            if reps == 0:
                return 1.0
            slope = m.vec_slope.get(name)
            if slope is None:
                raise InputError(f"machine model '{m.name}' has no vector slope for {name} ([vector] slope)")
            bank = ub_bank_cycles(w.rblocks, w.wblocks, m)
            per = np.maximum(slope, bank) if bank.size else np.full(reps, slope)
            total = m.vec_head + float(per.sum())
            return max(total, m.counter_floor) if w.counter else total
        if kind == "scalar_ld":
            return 2.0
        return 1.0


@dataclass
class _CoreRun:
    cycles: float
    busy: dict
    start_of: list
    end_of: list
    slices: list
    flows: list


def _schedule(core: int, events, m: AscendModel, price: Pricer, stalls: Stalls | None, waits: dict | None,
              trace: bool, xtime: dict, xslice: dict):
    """One core's events through the scalar unit and its in-order pipe queues (a generator: it
    yields while a cross-core wait needs the time of a set another core has not reached yet, and
    returns a :class:`_CoreRun`). ``xtime`` maps (core, eid) of every cross-core set to its time.

    Built on the shared timing layer: each pipe is a :class:`sim.timing.Unit` (free time, busy
    cycles), each pipe's instruction queue a :class:`sim.timing.Queue` of ``queue_depth`` entries
    that leave when they start, and every wait is charged to a cause in ``stalls``
    (:class:`sim.timing.Stalls`): ``queue_full:<pipe>`` (the scalar unit waits for a queue slot),
    ``flag:<src>-><dst>`` (a pipe, or the scalar unit, waits in ``wait_flag``), ``cross_core``
    (``wait_flag_dev``), ``barrier`` (``pipe_barrier(PIPE_ALL)`` drains every pipe),
    ``unit_flag`` (a FixPipe streaming from its mad waits for it beyond its pipe's own order).
    """
    units = {p: Unit(p) for p in PIPES}
    queues = {p: Queue(p, m.queue_depth) for p in PIPES}
    scalar = units["S"]
    slices: list[Slice] = []
    flows = []
    lat = m.flag_latency
    issue = m.issue_cycles
    t_s = 0.0
    set_time: dict[int, float] = {}
    start_of = [0.0] * len(events)
    end_of = [0.0] * len(events)
    set_slice: dict[int, Slice] = {}
    add = stalls.add if stalls is not None else (lambda cause, cycles, n=1: None)
    note = (lambda ev, cycles: _wait(waits, ev, cycles)) if waits is not None else (lambda ev, cycles: None)
    for ev in events:
        t_s += ev.scal * issue
        scalar.busy += ev.scal * issue
        p = ev.pipe
        kind = ev.kind
        if p == "ALL":
            t = max(t_s, max(u.free_at for u in units.values()))
            add("barrier", t - t_s)
            t_s = t
            for u in units.values():
                u.free_at = max(u.free_at, t)
            start_of[ev.eid] = end_of[ev.eid] = t
            continue
        if p == "S":
            start = t_s
            if kind == "xwait":
                while any(k not in xtime for k in ev.pair):
                    yield
                t_s = max(t_s, max(xtime[k] for k in ev.pair) + m.cross_core_latency)
                add("cross_core", t_s - start)
                note(ev, t_s - start)
            elif kind == "wait":
                t_s = max(t_s, set_time[ev.pair] + lat)
                add(_flag_cause(ev), t_s - start)
                note(ev, t_s - start)
            elif kind == "set":
                set_time[ev.eid] = t_s
            elif kind == "op":
                d = price(ev)
                t_s += d
                scalar.busy += d
            start_of[ev.eid], end_of[ev.eid] = start, t_s
            if trace:
                sl = Slice(core, p, start, t_s, ev.name, ev.idx, ev.eid, kind)
                slices.append(sl)
                _link(sl, ev, set_slice, flows, xslice)
            continue
        q = queues[p]
        t_in, waited = q.admit(t_s)
        add("queue_full:" + p, waited)
        t_s = t_in
        u = units[p]
        start = max(t_s, u.free_at)
        if kind == "op":
            d = price(ev)
            if ev.unit_dep is not None:
                dep = ev.unit_dep
                ready = max(start, start_of[dep] + m.mad_head)
                add("unit_flag", ready - start)
                start = ready
                tail = m.mover_head + 512.0 / m.mover_bw["l0c->gm"]  # the last 16x16 fractal
                end = max(start + d, end_of[dep] + tail)
            else:
                end = start + d
            u.busy += end - start
            u.work += 1
        elif kind == "set":
            end = start
            set_time[ev.eid] = start
        elif kind == "xset":
            end = start
            xtime[(core, ev.eid)] = start
        elif kind == "wait":
            end = max(start, set_time[ev.pair] + lat)
            add(_flag_cause(ev), end - start)
            note(ev, end - start)
        else:  # single-pipe barrier: queue already in order
            end = start
        u.free_at = end
        q.push(start)
        start_of[ev.eid], end_of[ev.eid] = start, end
        if trace:
            sl = Slice(core, p, start, end, ev.name, ev.idx, ev.eid, kind)
            slices.append(sl)
            _link(sl, ev, set_slice, flows, xslice)
    busy = {p: units[p].busy for p in PIPES}
    return _CoreRun(max([t_s] + [u.free_at for u in units.values()]), busy, start_of, end_of, slices, flows)


def _flag_cause(ev) -> str:
    src, dst, _ = ev.key
    return f"flag:{src}->{dst}"


#: pipes of each kind of core of a mix launch (utilisation is over the cores that have the pipe)
KIND_PIPES = {"cube": ("S", "M", "MTE1", "MTE2", "MTE3", "FIX"), "vector": ("S", "V", "MTE2", "MTE3")}


def simulate(events_per_core, m: AscendModel, *, gm_bytes: int = 0, gm_unique: int = 0, trace: bool = False,
             core_types: list[str] | None = None) -> TimingResult:
    """Schedule every core's events.

    Two passes: the first prices every GM byte as an L2 hit and gives each transfer its start
    time; the transfers of all cores then go through the L2 (:class:`sim.ascend.l2.L2`) in that
    time order, which says how many bytes of each one come from (or go back to) HBM; the second
    pass schedules again with those HBM bytes priced at the core's share of HBM bandwidth
    (HBM bandwidth / cores that move GM data).
    """
    n = max(1, len(events_per_core))
    # HBM is shared by the cores that move GM data; cores of the launch that never touch GM
    # (a grid larger than the work) take no share
    n_gm = max(1, sum(1 for events in events_per_core if _moves_gm(events)))
    share = m.hbm_bytes_per_cycle / n_gm
    first = Pricer(m, share, with_l2=False)
    order = []
    for core, run in enumerate(_schedule_all(events_per_core, m, first, None, None, False)):
        events = events_per_core[core]
        for ev in events:
            if _is_gm_move(ev):
                order.append((run.start_of[ev.eid], run.end_of[ev.eid], core, ev.eid))
    order.sort()
    l2 = L2(m.l2_bytes, m.gm_line)
    streams = []
    for start, end, core, eid in order:
        ev = events_per_core[core][eid]
        path, nbytes, span = ev.work.path, ev.work.nbytes, ev.work.span
        miss, wb = l2.access(span[:2] if span is not None else (core, eid), nbytes, write=path.endswith("->gm"))
        ev.hbm = miss + wb
        ev.hbm_share = share
        if ev.hbm:
            streams.append((start, end, ev))
    if streams:
        # HBM bandwidth is split over the transfers that stream from (or to) HBM at the same time
        # (counted in the first pass): a miss shared by few cores is not slowed as if all missed
        s_arr = np.array(sorted(x[0] for x in streams))
        e_arr = np.array(sorted(x[1] for x in streams))
        mids = np.array([(a + b) / 2 for a, b, _ in streams])
        k = np.searchsorted(s_arr, mids, side="right") - np.searchsorted(e_arr, mids, side="right")
        for (_, _, ev), kk in zip(streams, k):
            ev.hbm_share = m.hbm_bytes_per_cycle / max(1, int(kk))
    price = Pricer(m, share)
    busy = defaultdict(float)
    stalls = Stalls()
    waits: dict[str, dict] = {}
    core_cycles = []
    slices: list[Slice] = []
    flows = []
    runs_busy = []
    for run in _schedule_all(events_per_core, m, price, stalls, waits, trace):
        runs_busy.append(run.busy)
        for k, v in run.busy.items():
            busy[k] += v
        core_cycles.append(run.cycles)
        slices.extend(run.slices)
        flows.extend(run.flows)
    cycles = max(core_cycles) if core_cycles else 0.0
    by_kind = {}
    if core_types:
        for kind, pipes in KIND_PIPES.items():
            idx = [i for i, k in enumerate(core_types) if k == kind]
            kb = defaultdict(float)
            for i in idx:
                for q, v in runs_busy[i].items():
                    kb[q] += v
            by_kind[kind] = {q: (kb[q] / (cycles * len(idx)) if cycles and idx else 0.0) for q in pipes}
        util = {p: max((by_kind[k].get(p, 0.0) for k in by_kind), default=0.0) for p in PIPES}
    else:
        util = {p: (busy[p] / (cycles * n) if cycles else 0.0) for p in PIPES}
    return TimingResult(cycles, cycles / m.hz, core_cycles, {p: busy[p] for p in PIPES}, util, waits, gm_bytes,
                        gm_unique, share, slices, flows, l2_hit_rate=l2.hit_rate, hbm_read_bytes=l2.miss_bytes,
                        hbm_writeback_bytes=l2.writeback_bytes, utilization_by_kind=by_kind, stalls=stalls)


def _schedule_all(events_per_core, m, price, stalls, waits, trace) -> list[_CoreRun]:
    """Every core's schedule; cores take turns where cross-core flags make one wait for another."""
    xtime: dict = {}
    xslice: dict = {}
    gens = [_schedule(core, events, m, price, stalls, waits, trace, xtime, xslice)
            for core, events in enumerate(events_per_core)]
    runs: list = [None] * len(gens)
    live = list(range(len(gens)))
    while live:
        progressed = False
        still = []
        for i in live:
            before = len(xtime)
            try:
                next(gens[i])
                still.append(i)
            except StopIteration as stop:
                runs[i] = stop.value
                progressed = True
            progressed |= len(xtime) != before
        if still and not progressed:
            raise SimulationError("timing: cross-core waits with no reachable set (the functional run "
                                  "should have reported a deadlock)")
        live = still
    return runs


def _wait(waits, ev, cycles):
    if ev.kind == "xwait":
        name = f"cross-core flag {ev.key}"
    else:
        src, dst, e = ev.key
        name = FLAG_NAME.format(src, dst, e)
    w = waits.setdefault(name, {"wait_cycles": 0.0, "waits": 0})
    w["wait_cycles"] += cycles
    w["waits"] += 1


def _link(s: Slice, ev, set_slice, flows, xslice=None):
    if ev.kind == "set":
        set_slice[ev.eid] = s
    elif ev.kind == "wait" and ev.pair in set_slice:
        flows.append((set_slice.pop(ev.pair), s))
    elif ev.kind == "xset" and xslice is not None:
        xslice[(s.core, ev.eid)] = s
    elif ev.kind == "xwait" and xslice is not None:
        for k in ev.pair:
            if k in xslice:
                flows.append((xslice[k], s))


def _is_gm_move(ev) -> bool:
    w = ev.work
    return w is not None and w.kind == "move" and "gm" in w.path


def _moves_gm(events) -> bool:
    return any(_is_gm_move(ev) for ev in events)


def gm_traffic(events_per_core) -> int:
    """Bytes all cores move between GM and on-chip buffers."""
    return sum(ev.work.nbytes for events in events_per_core for ev in events if _is_gm_move(ev))
