"""``timing="h200"`` for :func:`sim.run_kernel`: choose the CTAs to simulate, replay them on the SM
model (:mod:`sim.timing.sm`) and turn the result into the ``result.timing`` mapping.

Sampling (deterministic): CTAs go to SMs round robin, so SM 0 runs CTAs 0, 132, 264, ...
``sample='auto'`` simulates every CTA when the launch has no more CTAs than SMs (one CTA per SM:
each is replayed alone and the slowest sets the time), else SM 0's first wave (its first ``k``
CTAs, ``k`` from the occupancy) and extrapolates to SM 0's number of waves; ``sample='all'``
simulates every CTA and replays every SM's list. Every figure is labelled ``modelled``.
"""

from __future__ import annotations

import math
import time

from sim import machines

from .l2slice import echelon, unit_of_line
from .occupancy import occupancy
from .regs import registers_per_thread
from .sm import SM, load_params, op_facts, sm_ctas
from .stalls import Stalls
from .schedule import block_orders, reorder_index
from .streams import WarpStreams


PER_SP = ("fma", "fp16", "alu", "fp64", "xu", "lsu", "branch", "mma")
SAMPLE_MODES = ("auto", "all")


def plan(ncta: int, sms: int, k: int, sample: str) -> tuple[list[int] | None, bool]:
    """(CTAs to simulate, None for all; sampled?)"""
    if sample not in SAMPLE_MODES:
        from isa.errors import InputError

        raise InputError(f"sample must be one of {', '.join(SAMPLE_MODES)}, got {sample!r}")
    if sample == "all" or ncta <= sms:
        return None, False
    return sm_ctas(ncta, sms, 0)[:k], True


def _reuse_pass(seq) -> tuple[list, dict, list]:
    """One LRU pass over an access sequence ``[(key, bytes, ...), ...]`` (a Fenwick tree over
    positions holding each key's last touch). Returns (per access: the bytes of the distinct keys
    touched since its key's previous touch, None for a first touch or a keyless access; key -> the
    position of its last touch; per position: the bytes it holds at the end, i.e. a key's size at
    its last touch and every keyless access's bytes). ``key`` None: a new key every time."""
    n = len(seq)
    tree = [0.0] * (n + 1)
    marks = [0.0] * n
    last: dict = {}
    size: dict = {}
    dist: list = [None] * n
    for i, e in enumerate(seq):
        k, b = e[0], e[1]
        j = last.get(k) if k is not None else None
        if j is not None:
            d, x = 0.0, i               # marks at positions j+1 .. i-1 (0-based) = prefix(i) - prefix(j+1)
            while x > 0:
                d += tree[x]
                x &= x - 1
            x = j + 1
            while x > 0:
                d -= tree[x]
                x &= x - 1
            dist[i] = d
            x, v = j + 1, -size[k]
            while x <= n:
                tree[x] += v
                x += x & -x
            marks[j] = 0.0
        x = i + 1
        while x <= n:
            tree[x] += b
            x += x & -x
        marks[i] = b
        if k is not None:
            last[k] = i
            size[k] = b
    return dist, last, marks


def stack_distances(seq, reuse=None) -> tuple[list, list, float, float]:
    """LRU stack distances of an access sequence ``[(key, bytes, weight[, stored]), ...]``: for every
    access whose key was seen before, the bytes of the distinct keys touched since
    (:func:`_reuse_pass`). ``key`` None: a new key every time (a store without a key). Returns
    (distances, weights of those accesses, distinct bytes of the keyed accesses, bytes of the keyless
    ones). ``reuse``: the sequence's :func:`_reuse_pass`, when already made."""
    dist_all, last, _ = reuse or _reuse_pass(seq)
    dist, wts = [], []
    distinct = keyless = 0.0
    seen: set = set()
    for e, d in zip(seq, dist_all):
        k = e[0]
        if d is not None:
            dist.append(d)
            wts.append(e[2])
        elif k is None:
            keyless += e[1]
        elif k not in seen:
            distinct += e[1]
        if k is not None:
            seen.add(k)
    return dist, wts, distinct, keyless


def survival(d, full: float, none: float):
    """The share of lines re-touched at chip-wide reuse distance ``d`` (bytes) that are still in the
    L2: 1 up to ``l2_reuse_full``, falling linearly to 0 at ``l2_reuse_none`` (sim/machines/h200.toml)."""
    import numpy as np

    return 1.0 - np.clip((np.asarray(d, dtype=np.float64) - full) / (none - full), 0.0, 1.0)


def dirty_write_backs(seq, ratio: float, full: float, none: float, reuse=None) -> tuple[float, float]:
    """DRAM write-backs of one SM's L2 accesses (``[(key, bytes, weight, stored bytes), ...]``,
    :attr:`sim.timing.sm.SMRun.l2_seq`): (bytes written back while it runs, dirty bytes still in the
    L2 at its end).

    The L2 is write-back: a store makes its line dirty (``stored`` bytes), and the line goes to DRAM
    only when the L2 evicts it. A dirty line re-touched at reuse distance ``d`` (scaled to the chip by
    ``ratio``) was evicted -- written back -- with probability ``1 - survival(d)``
    (:func:`survival`, the same window as the re-reads' capacity misses), else it is still dirty (a
    store to it merges into it); at the end a dirty line whose distance to the end (the bytes touched
    after its last touch) is ``d`` has been written back with probability ``1 - survival(d)`` and is
    left dirty otherwise (Nsight Compute's dram__bytes_write counts only the kernel's own time).
    examples/h200/mem_sweep copy_cg_64m_1x (64 MiB copied once with .cg loads): 67.1 MB stored,
    47.6 MB written back, 19.5 MB left in the L2; copy_cg_8m (16 MiB footprint): 0.003 MB. ``reuse``:
    the sequence's :func:`_reuse_pass`, when already made."""
    import numpy as np

    if not seq:
        return 0.0, 0.0
    dist, last, marks = reuse or _reuse_pass(seq)
    after = np.concatenate([np.cumsum(np.asarray(marks[::-1], dtype=np.float64))[::-1][1:], [0.0]])
    dirty: dict = {}                 # key -> [probability the line is dirty, its dirty bytes]
    wb = left = 0.0
    ends_k, ends_b = [], []          # keyless stores: never re-touched; (position, bytes)
    re_i, re_p, re_b = [], [], []    # dirty lines re-touched: the write-backs, summed vectorised below
    for i, e in enumerate(seq):
        k, st = e[0], (e[3] if len(e) > 3 else 0)
        if k is None:
            if st:
                ends_k.append(i)
                ends_b.append(st)
            continue
        cur = dirty.get(k)
        d = dist[i]
        if cur is not None and d is not None and cur[0] > 0.0:
            sv = float(survival(d * ratio, full, none))
            wb += cur[0] * (1.0 - sv) * cur[1]
            cur[0] *= sv
        if st:
            if cur is None:
                dirty[k] = [1.0, float(st)]
            else:
                cur[1] = max(cur[1], float(st)) if cur[0] > 0.0 else float(st)
                cur[0] = 1.0
    for k, (p, b) in dirty.items():
        if p > 0.0:
            re_i.append(last[k])
            re_p.append(p)
            re_b.append(b)
    for pos, p, b in ((ends_k, None, ends_b), (re_i, re_p, re_b)):
        if not pos:
            continue
        sv = survival(after[np.asarray(pos)] * ratio, full, none)
        pb = np.asarray(b, dtype=np.float64) * (1.0 if p is None else np.asarray(p))
        wb += float(np.dot(pb, 1.0 - sv))
        left += float(np.dot(pb, sv))
    return wb, left


def l2_capacity(runs, chip_bytes: float, active: int, H: dict, store_distinct: float = 1.0) -> tuple[float, float, float]:
    """What the simulated SMs' L2 accesses cost the DRAM beyond their first touches: (load sectors
    re-read after the L2 dropped them -- capacity misses --, bytes of dirty lines written back while
    they run, dirty bytes left in the L2 at their end: :func:`dirty_write_backs`).

    Each SM replay lists its L2 accesses in order (:attr:`sim.timing.sm.SMRun.l2_seq`); a re-access's
    LRU stack distance (distinct bytes the SM touched at L2 since, :func:`stack_distances`) is scaled
    to the chip by ``chip_bytes / sm_bytes`` (the launch's distinct bytes over the SM's, at most
    ``active``: every SM streaming data of its own; less when SMs share data). A re-access survives
    with probability 1 up to ``l2_reuse_full`` bytes, falling linearly to 0 at ``l2_reuse_none``
    (sim/machines/h200.toml: the L2 is not LRU, and lines read across the two partitions are kept in
    both). Only re-reads that missed L1 count (their weight: sectors). A store is known by its first
    line (as a load is); a store without one counts as new bytes in the distances, and as
    ``store_distinct`` of its bytes in the SM's distinct bytes (the launch's distinct written sectors
    over its store sectors)."""
    import numpy as np

    full, none = H.get("l2_reuse_full"), H.get("l2_reuse_none")
    if not full or not none:
        return 0.0, 0.0, 0.0
    tot = wb = left = 0.0
    for r in runs:
        if not r.l2_seq:
            continue
        ps = _reuse_pass(r.l2_seq)
        dist, wts, keyed, keyless = stack_distances(r.l2_seq, ps)
        sm_bytes = keyed + keyless * store_distinct
        ratio = min(float(active), chip_bytes / sm_bytes) if sm_bytes > 0 else float(active)
        if dist:
            tot += float(np.dot(1.0 - survival(np.asarray(dist) * ratio, full, none), np.asarray(wts, dtype=np.float64)))
        w, lf = dirty_write_backs(r.l2_seq, ratio, full, none, ps)
        wb += w
        left += lf
    return tot, wb, left


def ncu_l2_hit_rate(loads: float, writes: float, misses: float, H: dict) -> float | None:
    """``lts__t_sector_hit_rate`` as Nsight Compute counts it on the two-partition L2: a store (or
    atomic) sector is looked up near its SM and, for the half of the lines homed in the far
    partition, again there, all hits (1.5 lookups); a load sector that hits is served near (1);
    one that misses is looked up and missed near and, for half of them, far (1.5 misses).
    ``loads``: load sectors reaching L2, ``writes``: store and atomic sectors, ``misses``: load
    sectors read from DRAM."""
    if loads + writes <= 0:
        return None
    k = H.get("l2_far_fraction", 0.5)
    loads = max(loads, misses)      # sectors the model's L1 caught that the L2 read from DRAM
    return max(0.0, 1.0 - (1 + k) * misses / (loads + k * misses + (1 + k) * writes))


def first_touch_split(miss_rate: float, loads: float, first: float) -> tuple[float, float]:
    """(L2 hit rate of the first touches, of the re-touches) of the load sectors that miss L1, when
    ``miss_rate`` of the ``loads`` sectors miss L2 and ``first`` of them are the SMs' first touches
    of their sectors: the misses go to the first touches first (a sector no SM touched before is not
    in the L2), the rest to the re-touches. ``ld.global.cg.v4.f32 {%f1, %f2, %f3, %f4}, [%rd8];`` over
    16 MiB 8 times: ``first_touch_split(0.125, 8.0, 1.0)`` is ``(0.0, 1.0)``."""
    if loads <= 0:
        return 1.0 - miss_rate, 1.0 - miss_rate
    m = miss_rate * loads
    first = min(max(first, 0.0), loads)
    if first <= 0 or first >= loads:
        return 1.0 - miss_rate, 1.0 - miss_rate
    mf = min(1.0, m / first)
    mr = max(0.0, (m - mf * first) / (loads - first))
    return 1.0 - mf, 1.0 - mr


def dram_bytes_time(read: float, write: float, turnaround: float) -> float:
    """A launch's DRAM time in bytes at the read rate (``hierarchy.dram_bw``): its read and write
    bytes, and ``turnaround`` per byte of the smaller of the two streams (the bus turns around
    between reads and writes; hierarchy.dram_rw_turnaround). copy_dram_perf (268.4 MB read,
    245.3 MB written): 572.1 MB, 276,293 cycles at 4.1 TB/s; a read-only launch: its bytes."""
    return read + write + turnaround * min(read, write)


def occupancy_of(module, fn_name: str, state, machine: str = "h200"):
    regs = registers_per_thread(module, fn_name)
    occ = occupancy(machine, regs.per_thread, state.static_shared_end + state.dynamic_shared, state.nthreads)
    return occ, regs



def _requests(instruction) -> list[tuple]:
    """One warp's atomic instruction as the requests it sends to the L2: per 128-byte line, one request
    per lane that shares an address with another of the same sector (the lanes of one address go one
    by one; distinct words of one line go together): (line, requests, operations per request)."""
    lines: dict = {}
    for sector, n in instruction:
        v = lines.setdefault(sector >> 2, [0, 0])
        v[0] = max(v[0], n)
        v[1] += n
    return [(line, r, ops / r) for line, (r, ops) in lines.items()]


def atomic_windows(seq: dict, ncta: int, sms: int, ctas_per_sm: int, wpc: int) -> list[list[tuple]]:
    """The L2 atomic requests each SM sub-partition sends, in issue order (:func:`_requests`): ``seq``
    (:attr:`sim.timing.streams.WarpStreams.atomic_seq`, per warp and instruction its (sector, operations))
    gathered per (SM, warp index in its CTA mod 4), the SM's CTAs as :func:`sm_ctas` gives them, those
    resident together (``ctas_per_sm``) taking turns instruction by instruction, as the scheduler
    interleaves warps that issue back to back."""
    out = []
    for s in range(min(sms, ncta)):
        ctas = sm_ctas(ncta, sms, s)
        for p in range(4):
            ops: list = []
            for w0 in range(0, len(ctas), max(1, ctas_per_sm)):
                lists = [seq[g] for c in ctas[w0:w0 + max(1, ctas_per_sm)] for w in range(p, wpc, 4)
                         if (g := c * wpc + w) in seq]
                for i in range(max((len(x) for x in lists), default=0)):
                    for x in lists:
                        if i < len(x):
                            ops.extend(_requests(x[i]))
            if ops:
                out.append(ops)
    return out


def atomic_window_cycles(windows: list, unit_of: dict, service: dict, window: int, rtt: float) -> float:
    """Time of the L2 atomics when each SM sub-partition keeps at most ``window`` of its requests in
    flight, in issue order: a request leaves when one of the sub-partition's ``window`` slots is free,
    reaches its L2 atomic unit (``unit_of``: 128-byte line -> unit) ``rtt / 2`` later, waits there behind
    the requests that came before it (first come, first served, ``service[unit]`` cycles per operation)
    and frees its slot ``rtt / 2`` after it is done; the time runs from the first arrival (the launch
    overhead holds the first and last half round trips). A sub-partition whose warps alternate between hot lines of
    different units has all its slots at the unit of its current instruction, so units go idle while
    their senders wait at another: examples/h200/atomic_slice hot_lines (every warp 4 x 32 atomics to
    line ``w % n``, 2 warps per sub-partition): n = 4 lines in 4 units 4.0 x one line, 8/16/32 lines
    (2 lines per sub-partition) 5.7/10.0/17.7 x, not 8/16/32 x. ``windows``: :func:`atomic_windows`."""
    import heapq
    if not windows or window < 1:
        return 0.0
    half = rtt / 2.0
    free: dict = {}
    slots = [[0.0] * window for _ in windows]       # when each slot of a sub-partition is free again
    pos = [[0, 0] for _ in windows]                 # (index into its list, operations of it already sent)
    ready = [(0.0, i) for i in range(len(windows))]
    last = 0.0
    while ready:
        t, i = heapq.heappop(ready)
        ops = windows[i]
        k, done = pos[i]
        line, n, per = ops[k]
        u = unit_of[line]
        sv = service[u] * per
        st = max(t + half, free.get(u, 0.0))
        free[u] = st + sv
        if st + sv > last:
            last = st + sv
        heapq.heapreplace(slots[i], st + sv + half)
        done += 1
        if done == n:
            k, done = k + 1, 0
        pos[i][0], pos[i][1] = k, done
        if k < len(ops):
            heapq.heappush(ready, (max(t, slots[i][0]), i))
    return last - half          # from the first request's arrival, as the serial time above counts


def atomic_unit_service(ops: dict, same: float, issue: float) -> float:
    """Mean cycles per operation of one L2 atomic unit whose operations go to the 32-byte sectors of
    ``ops`` (sector -> operations): the unit starts an operation every ``issue`` cycles
    (``latency_cycles.atomic_unit_issue``), but one to the sector of the operation just before it
    waits for that one's read-modify-write, ``same`` cycles after its start
    (``latency_cycles.atomic_same_address``). Requests from all the SMs reach the unit interleaved
    at random, so an operation follows one to its own sector with probability sum p_i^2 (p_i: the
    sector's share of the unit's operations): ``issue + (same - issue) * sum p_i^2``. One hot sector:
    ``same``; k sectors of equal share: ``issue + (same - issue) / k`` (examples/h200/pipe_atomic,
    medians of 8 ncu launches: 2 hot sectors of one line 1.37 x one sector's rate (atomic_spacing_2x32),
    4 sectors 1.68 x (4x32) and 1.83 x (32x4), 8 sectors of 2 lines of one unit 2.02 x (8x32);
    examples/h200/atomic_slice: 2 lines of one unit 1.34 x one line). An operation two back to the same
    sector is taken as never waiting (``2 * issue`` is within 10 % of ``same``)."""
    n = sum(ops.values())
    if n <= 0:
        return same
    share2 = sum((v / n) ** 2 for v in ops.values())
    return issue + (same - issue) * share2


def atomic_serial_cycles(counts: dict, scale: float, lat: dict, hier: dict | None = None,
                         windows: list | None = None) -> float:
    """Chip-wide time of the L2 atomics that go one after the other: the operations to one 32-byte
    sector at ``atomic_same_address`` each, and those homed in one L2 atomic unit
    (:func:`sim.timing.l2slice.unit_of_line` of their 128-byte line, ``hier`` holding its measured
    kernel; without it each line is its own unit) at the unit's mean time per operation over its hot
    sectors, :func:`atomic_unit_service` (the unit pipelines operations to different sectors,
    ``atomic_unit_issue`` apart, and serialises those to one sector). ``counts``:
    :attr:`sim.timing.streams.WarpStreams.atomic_counts` (sector -> [operations, first CTA, shared by
    CTAs, pcs]); a sector shared by sampled CTAs is scaled by ``scale``.
    ``red.global.add.f32 [%rd6], %f1;`` by every warp to 4 words 32 bytes apart (one line, 4 sectors
    of equal share): 4 x 33,792 operations x (1.61 + (3.47 - 1.61) / 4), not 33,792 x 3.47; to 8 words
    128 bytes apart (lines 0-7, units {0, 1, 4, 5} and {2, 3, 6, 7}): 4 x 16,896 x the same.
    Two units form an L2 slice (their lines differ by ``hierarchy.l2_atomic_slice_kernel`` too) whose
    operations to the sectors at one place in their lines (address bits 5-6) start at most one per
    ``latency_cycles.atomic_slice_issue``: 8 words 128 bytes apart (sector 0 of lines 0-7, both units
    of one slice) take 135,168 x 1.19, not 4 x 16,896 x 2.09; 4 sectors of each of lines 0-3 are four
    such places and go at their units' rate.
    ``windows`` (every CTA's atomics per SM sub-partition, :func:`atomic_windows`): the units are
    fed by sub-partitions with at most ``hierarchy.l2_atomic_window`` operations in flight each, a
    round trip of ``latency_cycles.global_l2`` (:func:`atomic_window_cycles`); the time is the longer."""
    c = lat["atomic_same_address"]
    issue = lat.get("atomic_unit_issue", c)
    kern = echelon((hier or {}).get("l2_atomic_unit_kernel", ()))
    slice_kern = echelon(kern + tuple((hier or {}).get("l2_atomic_slice_kernel", ())))
    span = int((hier or {}).get("l2_atomic_unit_span", 1))
    worst, units, unit_of, places = 0.0, {}, {}, {}
    for sector, v in counts.items():
        n = v[0] * (scale if v[2] else 1.0)
        worst = max(worst, n * c)
        line = sector >> 2
        key = unit_of[line] = unit_of_line(line, kern, span)
        ops = units.setdefault(key, {})
        ops[sector] = ops.get(sector, 0.0) + n
        place = (unit_of_line(line, slice_kern, span), sector & 3)
        places[place] = places.get(place, 0.0) + n
    worst = max(worst, max(places.values(), default=0.0) * lat.get("atomic_slice_issue", 0.0))
    service = {}
    for key, ops in units.items():
        service[key] = atomic_unit_service(ops, c, issue)
        worst = max(worst, sum(ops.values()) * service[key])
    window = int((hier or {}).get("l2_atomic_window", 0))
    if windows and window > 0:
        worst = max(worst, atomic_window_cycles(windows, unit_of, service, window, lat["global_l2"]))
    return worst

def predict(state, streams: WarpStreams, occ, regs, *, simulated: list[int] | None, sampled: bool,
            gmem=None, machine: str = "h200", trace: bool = False) -> dict:
    t0 = time.perf_counter()
    P = load_params(machine)
    H = P.hier
    raw = machines.load(machine)[1]
    l2_bytes = raw["chip"]["l2_bytes"]["value"]                    # 60 MiB (h200.md)
    max_warps = raw["occupancy"]["max_warps_per_sm"]["value"]      # 64
    facts = op_facts(state, P)
    ncta, sms, wpc = state.ncta, P.sms, state.tpc // 32
    k = max(1, occ.ctas_per_sm)
    sim_ctas = list(range(ncta)) if simulated is None else list(simulated)
    f = ncta / max(1, len(sim_ctas))
    active = min(sms, ncta)
    dram_bpc = H["dram_bw"] / P.hz / active
    l2_bpc = H["l2_bw"] / P.hz / active
    l2_read_bpc = H["l2_read_bw"] / P.hz / active if H.get("l2_read_bw") else None   # the loaded L2 read latency (sim.timing.sm)
    bases = ends = None
    if gmem is not None and gmem.buffers:
        bases = [b.base for b in gmem.buffers]
        ends = [b.base + b.size for b in gmem.buffers]
    rd, wr = streams.footprint(bases, ends, f)
    # the DRAM moves 64-byte granules: a sector read alone in its granule costs two
    gs = max(1, int(H.get("dram_granule", 32) // 32))
    gran = streams.granule_factor(gs)
    # ... and each 128-byte line it fetches costs an overhead beside its granules: DRAM time per
    # sector read (hierarchy.dram_line_overhead; 1.0 for dense reads, the bytes above for none)
    tgran = streams.dram_time_factor(gs, H.get("dram_line_overhead", 0.0), int(H["l1_line"] // 32))
    dram_bpc /= tgran
    accesses = streams.global_sectors * f
    foot = (rd + wr) * 32
    h2 = max(0.0, 1.0 - (rd + wr) / accesses) if accesses else 1.0
    # The first replay's L2 hit rate (the latency blend of its loads) is this footprint estimate,
    # scaled down by L2 / footprint over the L2 size; the replay after it takes the capacity misses
    # of its reuse distances instead (below). That made softmax_rows_warp +39 % while the scheduler
    # kept its write pass's ld.global.nc loads after the stores (one load in flight per warp where
    # ptxas issues four: sim.timing.schedule); the DRAM latency constants (latency_cycles.global_dram,
    # hierarchy.dram_queue_latency) were fitted with the footprint estimate
    if foot > l2_bytes:
        h2 *= l2_bytes / foot
    shared_alloc = getattr(occ, "carveout_bytes", 0) or 0
    l1_lines = int(max(H["l1_bytes"] - shared_alloc, H["l1_min_bytes"]) // H["l1_line"])

    # each warp's stream in ptxas's order of every basic block (sim/timing/schedule.py)
    orders = block_orders(state, facts, P.lat["global_l2"], streams.merged)

    index: dict[int, object] = {}         # warp -> its replay order (reorder_index), for streams and waits

    def replay_index(w):
        if w not in index:
            index[w] = reorder_index(streams.pcs(w), orders)
        return index[w]

    def cta_streams(c):
        out = []
        for w in range(c * wpc, (c + 1) * wpc):
            out.append(streams.stream(w, replay_index(w)))
        return out

    if simulated is None and ncta > sms:
        lists = [sm_ctas(ncta, sms, s) for s in range(sms)]
    elif simulated is None:
        lists = [[c] for c in range(ncta)]
    else:
        lists = [sim_ctas]
    leaders = frozenset(m.leader for m in streams.merged.values())
    waves_sm0 = math.ceil(len(sm_ctas(ncta, sms, 0)) / k)
    scale = waves_sm0 / math.ceil(len(sim_ctas) / k) if sampled else 1.0
    per_sm = [[cta_streams(c) for c in lst] for lst in lists]
    log = getattr(streams, "async_log", None)          # where the functional semantics completed async work
    waits = log.by_warp(replay_index) if log is not None else None

    # same-address atomics serialise at the address's L2 slice, whichever SM sends them: the hottest
    # address's operations one after the other (scaled from the sample when several sampled CTAs
    # share the address)
    h = max(streams.atomic_counts.values(), key=lambda v: v[0], default=None)
    # ... and reach the L2 from the SMs' sub-partitions, a few operations in flight each (every CTA's
    # atomics are known only when every CTA ran)
    seq = getattr(streams, "atomic_seq", None)
    windows = atomic_windows(seq, ncta, sms, k, wpc) if seq and simulated is None else None
    atomic_cycles = atomic_serial_cycles(streams.atomic_counts, f if sampled else 1.0, P.lat, H, windows)
    hot_pcs = frozenset(h[3]) if h is not None and h[2] and len(h) > 3 else frozenset()   # shared by CTAs
    aw = [0.0]                  # the queueing each of those atomics sees at the slice (below)

    def one(i, dram_latency, traced=False):
        # lists[i] is what SM i runs (every SM's list, one CTA per SM, or SM 0's sample)
        sm = SM(facts, P, ctas_per_sm=k, warps_per_cta=wpc, l1_lines=l1_lines, l2_hit=h2s[0], dram_bpc=dram_bpc,
                l2_bpc=l2_bpc, trace=traced, leaders=leaders, dram_latency=dram_latency, sm_index=i,
                hot_atomics=hot_pcs, atomic_wait=aw[0], l2_read_bpc=l2_read_bpc, l2_hit_first=h2s[1])
        return sm.run(per_sm[i], ids=list(lists[i]) if waits is not None else None, waits=waits)

    traffic: dict = {}          # id(runs) -> dram_traffic(runs): the reuse pass is done once per replay

    def dram_traffic(runs):
        if id(runs) not in traffic:
            traffic.clear()
            traffic[id(runs)] = (runs, _dram_traffic(runs))
        return traffic[id(runs)][1]

    def _dram_traffic(runs):
        """(L2 load sectors re-read from DRAM, DRAM write-back bytes, store bytes), scaled to the launch.
        Writes: the dirty lines the L2 evicts while the launch runs (a sample's: below)"""
        g = f if sampled else 1.0
        sts = (sum(r.l2_sectors for r in runs) - sum(r.l2_load_sectors for r in runs)) * g
        u = min(1.0, wr / sts) if sts > 0 else 1.0
        c, wb, left = l2_capacity(runs, foot, active, H, u)
        if sampled:
            # a sample's dirty lines scale with the launch; at its end the L2 holds dirty the written
            # share of the bytes within its reuse window of the end (survival: full up to
            # l2_reuse_full, none beyond l2_reuse_none, on average their mean), the rest was written
            # back while it ran. A sample's own end says nothing of that: its SMs' last CTAs are a
            # few of the launch's. ncu dram__bytes_write: copy_cg_64m_1x 47.6 MB (model 44.0),
            # copy_cg_32m 47.4 (44.5); was 43.3 and 43.6 when the sample's own end was the launch's
            tot = (wb + left) * f
            share = wr / (rd + wr) if rd + wr > 0 else 1.0
            wb = tot - min(tot, share * 0.5 * (H["l2_reuse_full"] + H["l2_reuse_none"]))
        return c * g, wb, sts * 32

    def replay(dram_latency):
        runs = [one(i, dram_latency) for i in range(len(lists))]
        slow = max(runs, key=lambda r: r.cycles)
        return runs, slow, slow.cycles * scale

    # DRAM latency under load (a queue in front of the DRAM): L(rho) = L0 + q rho / (1 - rho), rho the
    # launch's DRAM bytes over what the DRAM moves in the SM time (at most 0.95). The SM time is
    # close to linear in the latency, so two replays (at L0 and at L(rho(L0))) give its line, the
    # fixed point L = L(rho(L)) on that line is found by bisection and replayed: three replays,
    # only when the DRAM time is over a tenth of the SM time
    R = {k: v["value"] for k, v in raw["replay"].items()}         # when to replay again (h200.toml [replay])
    L0, q = P.lat["global_dram"], H.get("dram_queue_latency", 0.0)
    # reads and writes share the DRAM bus: each switch between them costs a turnaround, the fewer
    # switches the more one-sided the traffic (hierarchy.dram_rw_turnaround: DRAM time per byte of
    # the smaller of the two streams)
    turn = H.get("dram_rw_turnaround", 0.0)
    dram_min = (rd + wr) * 32 / (H["dram_bw"] / P.hz)

    def loaded(t):
        rho = min(R["dram_max_utilisation"], dram_min / t) if t > 0 else R["dram_max_utilisation"]
        return L0 + q * rho / (1.0 - rho)

    dram_latency = L0
    h2s = [h2, None]            # L2 hit rate of the loads' re-touches, of their first touches (None: the same)
    runs, slow, sm_cycles = replay(L0)
    # the L2 hit rate of the loads that miss L1: first touches over the L1 misses of the replay
    # (the estimate above counts L1 hits and stores too); replayed when it moves by > 5 points
    g_ = f if sampled else 1.0
    ll = sum(r.l2_load_sectors for r in runs) * g_
    if ll > 0:
        # the load sectors the L2 reads from DRAM: the first touches and the re-reads the L2 dropped
        # (the capacity misses of the reuse distances, l2_capacity; the footprint estimate above
        # only guesses them: a 64 MiB copy done twice reads both passes from DRAM, ncu 24 L2 hits of
        # 2.1 M read sectors on copy_cg_32m, where the estimate had 60 / 64 of the re-reads hit).
        # They are DRAM reads as the first touches are: the loaded DRAM latency counts them too
        cap0, wb0, _ = dram_traffic(runs)
        h2_loads = max(0.0, 1.0 - (rd + cap0) / ll)
        rd_all = rd + cap0
        # (the written footprint stands for the writes, as the DRAM latency constants were fitted; the
        # bus turnaround is paid on the writes that reach the DRAM: the write-backs)
        dram_min = (dram_bytes_time(rd_all * 32, wb0, turn) + wr * 32 - wb0) / (H["dram_bw"] / P.hz)
        # ... and where its misses fall: a sector an SM has not touched before misses first (it was
        # brought to the L2 by no SM, or by another SM), one it touched before only when the misses
        # are more than the SMs' first touches (read_cg_16m: 16 MiB read 8 times, the first pass
        # from DRAM and the other seven from L2, not 1/8 of every pass)
        hf, hr = first_touch_split(1.0 - h2_loads, ll, sum(r.l2_first_sectors for r in runs) * g_)
        if abs(h2_loads - h2) > R["l2_hit_replay_points"] or abs(hf - hr) > R["l2_hit_replay_points"]:
            h2s[0], h2s[1] = hr, hf
            runs, slow, sm_cycles = replay(L0)
    if q > 0 and sm_cycles > 0 and dram_min > R["dram_replay_share"] * sm_cycles:
        lb = loaded(sm_cycles)
        rb = replay(lb)
        slope = (rb[2] - sm_cycles) / (lb - L0) if lb > L0 else 0.0
        lo, hi = L0, lb
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            if loaded(sm_cycles + slope * (mid - L0)) > mid:
                lo = mid
            else:
                hi = mid
        dram_latency = 0.5 * (lo + hi)
        runs, slow, sm_cycles = replay(dram_latency)
    # When the hottest address's atomics take longer one after the other than the SMs' replay, every
    # SM's atomics to it wait in the slice's queue: each waits the delay ``w`` at which the replayed SM
    # time reaches the serial time (the SMs keep their CTAs in flight while they wait: Little's law).
    # Only warps that wait for such an atomic (its result, or an .acquire) are slowed; the SM time
    # is close to linear in ``w``: one replay at the gap gives the slope, one more at the solution
    if h is not None and h[2] and atomic_cycles > sm_cycles > 0:
        gap = atomic_cycles - sm_cycles
        aw[0] = gap
        rb = replay(dram_latency)
        slope = (rb[2] - sm_cycles) / gap
        if slope > 0.01:
            aw[0] = gap / slope
            runs, slow, sm_cycles = replay(dram_latency)
        else:
            aw[0] = 0.0
    # the trace: the slowest SM (the one that sets the time) replayed once more, recording slices
    # (the replay is deterministic: its figures are those of ``slow``)
    slices = one(runs.index(slow), dram_latency, traced=True).slices if trace else None
    # chip-wide totals (sampled figures scaled to the launch)
    issued = sum(r.issued for r in runs) * (f if sampled else 1.0)
    stalls = Stalls()
    for r in runs:
        stalls.merge(r.stalls, f if sampled else 1.0)
    l1_tot = sum(r.l1_load_sectors for r in runs)
    l1_hit = sum(r.l1_hit_sectors for r in runs)
    l2_sec = sum(r.l2_sectors for r in runs) * (f if sampled else 1.0)
    l2_ld = sum(r.l2_load_sectors for r in runs) * (f if sampled else 1.0)
    # DRAM reads: first touches plus capacity misses (L2 re-reads whose reuse distance, scaled to the
    # chip, exceeds what the L2 keeps: l2_capacity)
    cap, dram_write, _ = dram_traffic(runs)
    dram_read = (rd + cap) * 32 * gran
    dram_cycles = (dram_bytes_time(dram_read, dram_write, turn) + dram_read * (tgran / gran - 1.0)) / (H["dram_bw"] / P.hz)
    # L2 work: load sectors that missed L1 and atomics at 32 bytes each, stores at their cost (sim.timing.sm)
    l2_cycles = sum(r.l2_work for r in runs) * (f if sampled else 1.0) / (H["l2_bw"] / P.hz)
    over = H["launch_overhead"]
    # same-address atomics serialise at the address's L2 slice (atomic_cycles, above)
    body = max(sm_cycles, dram_cycles, l2_cycles, atomic_cycles)
    cycles = over + body
    sm_busy = {}
    for name, v in slow.busy.items():
        copies = 4 if name in PER_SP else 1
        sm_busy[name] = {"busy_cycles": v * scale,
                         "utilization": (v / (slow.cycles * copies)) if slow.cycles else 0.0}
    top_unit = max(sm_busy, key=lambda n: sm_busy[n]["utilization"]) if sm_busy else None
    if body == atomic_cycles and atomic_cycles > 0:
        bound = "atomics (same address)"
    elif body == dram_cycles and dram_cycles > 0:
        bound = "dram"
    elif body == l2_cycles and l2_cycles > 0:
        bound = "l2"
    elif top_unit and sm_busy[top_unit]["utilization"] > 0.6:
        bound = top_unit
    else:
        bound = f"latency ({stalls.top() or 'none'})"
    ctas_sm0 = min(k, len(sm_ctas(ncta, sms, 0)))
    achieved = ctas_sm0 * wpc / max_warps
    per_issue = stalls.per_issue(issued)
    l2_req = l2_sec
    return {
        "model": machine, "label": "modelled",
        "cycles": cycles, "seconds": cycles / P.hz,
        "sm_cycles": sm_cycles, "dram_cycles": dram_cycles, "l2_cycles": l2_cycles, "launch_overhead": over, "atomic_cycles": atomic_cycles,
        "dram_latency": dram_latency,
        "atomic_wait": aw[0],          # queueing of each atomic to the hottest address at its slice
        "ipc": (issued / sms if ncta >= sms else issued / active) / body if body else 0.0,
        "issued_warp_instructions": issued,
        "occupancy": {"theoretical": occ.theoretical, "achieved": achieved, "limiter": occ.limiter,
                      "ctas_per_sm": occ.ctas_per_sm, "registers_per_thread": regs.per_thread,
                      "registers_source": regs.source, "waves": ncta / (k * sms),
                      # whole waves of k x sms CTAs, and how full the last (tail) wave is
                      "wave_count": math.ceil(ncta / (k * sms)),
                      "tail_wave": (ncta - (math.ceil(ncta / (k * sms)) - 1) * k * sms) / (k * sms)},
        "pipes": sm_busy,
        "stalls": per_issue,
        "top_stall": next(iter(per_issue), None),
        "memory": {"l1_hit_rate": l1_hit / l1_tot if l1_tot else None,
                   # stores hit: the L2 is write-back and allocates on write (ncu_deep dequantize_s8
                   # perf: 2.10 M store sectors, 0.52 M read from DRAM -> 80.7 %, ncu 81.6 %)
                   "l2_hit_rate": ncu_l2_hit_rate(l2_ld, l2_sec - l2_ld, dram_read / gran / 32, H),
                   "dram_bytes_read": dram_read, "dram_bytes_write": dram_write,
                   "l2_sectors": l2_req,
                   # the L2 hit rates the replay priced the loads that miss L1 at: the sectors an SM
                   # touches for the first time, and those it touched before (first_touch_split)
                   "replay_l2_hit": {"first_touch": h2s[0] if h2s[1] is None else h2s[1], "re_touch": h2s[0]},
                   "shared_wavefronts": streams.shared_wavefronts * f},
        "bound": bound,
        "sampled": sampled, "simulated_ctas": len(sim_ctas), "ctas": ncta,
        "slowest_sm": runs.index(slow),          # the SM that sets the time (lists[i] is SM i's), the one traced
        "model_seconds": time.perf_counter() - t0,
        **({"_slices": slices} if trace else {}),
    }


__all__ = ["predict", "plan", "occupancy_of", "SAMPLE_MODES"]
