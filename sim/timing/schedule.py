"""The order ptxas issues a basic block in: a list scheduler over the block's dependence graph.

The H200 issues each warp's instructions in order, but the order is ptxas's, not the PTX's: ptxas
hoists loads above the arithmetic that does not need them and interleaves independent chains. A
replay in PTX order pays latencies the real kernel hides. Measured (``examples/h200/microbench.json``):

* ``ffma_indep``: nvcc's PTX writes each chain's two steps back to back (``fma %f82, %f188..``;
  ``fma %f83, %f82..``); 8 chains, 2 warps per sub-partition run at one FFMA per clock (21,347
  cycles), which PTX order cannot (each pair waits the 4-cycle latency: 25,280 modelled);
* ``smem_conflict_1``: eight loads per iteration, each followed by its add; issue-bound on the GPU
  (24,669 cycles for 8,651 SASS instructions per warp, 2 warps per sub-partition), 75,910 modelled in
  PTX order (every add waits the 23-cycle LDS latency).

What is modelled (*modelled*, an approximation of ptxas's scheduler, not its code):

* blocks: the basic blocks of :class:`isa.cfg.Cfg` (branch targets, after branches and exits);
  the terminator stays last;
* if-conversion: a short ``if`` (``@p bra L; body; L:``, at most ``MAX_IF_BODY`` instructions, see
  :func:`regions`) is scheduled with the blocks around it as one region, its body predicated on the
  branch's guard: ptxas predicates such bodies, so loads under consecutive ``if``s issue together
  (tests/sim/timing/test_if_conversion: a stencil's guarded halo loads are LDGs back to back in the
  SASS; the corpus's bounds-checked tile loads, sgemm_regblock1d's A and B loads). A warp that skips a body runs
  the region in PTX order;
* dependences: registers (read after write with the producer's latency, write after read and
  write after write in order), memory (a load stays after an earlier store to the same state space
  or a generic one, except a non-coherent ``ld.global.nc``, whose data no store of the kernel may
  change; stores and atomics keep their order with every load and store of that space),
  and barriers: synchronisation, control, calls and instructions without tables keep everything
  on their side;
* the scheduler is cycle-driven: each cycle it issues, among instructions whose operands are ready,
  the one with the longest latency path to the end of the block (ties: program order); when none is
  ready it waits for the earliest;
* register pressure: the loads whose results are not yet read may hold at most
  ``MAX_INFLIGHT_REGISTERS`` result registers at a time (ptxas bounds what it hoists by the registers
  the results need: one LDS.128 counts 4, an LDS 1). A load is in flight until the instructions that
  read its result have issued; what merely stays after it (a closing ``bar.sync``, a later store)
  does not keep it in flight, so the window moves along the block (SASS: LDS, FFMA, LDS, FFMA, ...);
* blocks over ``MAX_BLOCK`` instructions keep PTX order (scheduling cost).

A warp's stream (:class:`sim.timing.streams.WarpStream`) is rewritten only where it runs a whole
block in order (a partial run, e.g. under divergence, keeps its order).
"""

from __future__ import annotations

import heapq

import numpy as np

from sim import machines

# sim/machines/h200.toml [schedule], each with its source ([assumed]: ptxas's choices are not published; max_if_body measured)
_SCHED = machines.load("h200")[1]["schedule"]
MAX_INFLIGHT_REGISTERS = int(_SCHED["max_inflight_registers"]["value"])     # 12
MAX_BLOCK = int(_SCHED["max_block"]["value"])                       # 4000: scheduling cost, not hardware
MAX_IF_BODY = int(_SCHED["max_if_body"]["value"])                   # 8: measured with ptxas (bench/ptxas_ifconv.py)

_SPACES = ("global", "shared", "local", "param", "const")
_LOADS = {"ld", "ldu", "ldmatrix"}
_STORES = {"st", "stmatrix", "atom", "red"}
_FREE = {"param", "const"}        # read-only: never ordered against stores


def _space(ins) -> str | None:
    for m in ins.modifiers:
        if m in _SPACES:
            return m
    return None


_BARRIER_OPCODES = {"call", "ret", "exit", "trap", "brkpt", "cp", "wgmma", "mbarrier", "tcgen05", "prefetch",
                    "griddepcontrol", "setmaxnreg", "elect", "nanosleep"}


def _barrier(ins, info) -> bool:
    """Whether ``ins`` keeps every instruction on its side (synchronisation, control, asynchronous
    copies and MMAs, calls, anything without tables)."""
    from isa.semantics import Unit as U

    if info is None or info.unit in (U.SYNC, U.CONTROL):
        return True
    op = ins.opcode
    return op in _BARRIER_OPCODES or op.startswith(("cp.", "wgmma", "mbarrier", "tcgen05"))


def regions(fn, infos=None, base: int = 0) -> list[tuple[int, int, dict[int, int]]]:
    """(start, end, converted) of the scheduling regions of ``fn``: its basic blocks, where a run of
    short ``if``s is one region, as ptxas if-converts them. A block that ends in a guarded ``bra``
    whose target is the end of the next block (``@p bra L; body; L:``), with a body of at most
    ``MAX_IF_BODY`` instructions that only that block enters, that holds no branch and nothing that
    keeps its order (:func:`_barrier`), becomes one region with its body and the block after
    (which may head the next ``if``). ``converted``: body instruction index -> the index of its
    branch (the body is predicated on the branch's guard)."""
    from isa.cfg import Cfg, is_branch

    g = Cfg(fn)
    bl = g.blocks
    ins = fn.instructions
    out = []
    i = 0
    while i < len(bl):
        start, conv = bl[i].start, {}
        while i + 2 < len(bl):
            head, body = bl[i], bl[i + 1]
            last = ins[head.end - 1] if len(head) else None
            if last is None or last.opcode != "bra" or last.guard is None or "uni" in last.modifiers \
                    or sorted(g.succ[head.id]) != [body.id, body.id + 1] or g.pred[body.id] != [head.id] \
                    or not 0 < len(body) <= MAX_IF_BODY or g.succ[body.id] != [body.id + 1] \
                    or sorted(g.pred[body.id + 1]) != [head.id, body.id]:
                break
            if any(is_branch(x) or x.opcode in ("ret", "exit", "trap")
                   or _barrier(x, infos[base + k] if infos is not None else None)
                   for k, x in zip(range(body.start, body.end), ins[body.start:body.end])):
                break
            for k in range(body.start, body.end):
                conv[k] = head.end - 1
            i += 2
        out.append((start, bl[i].end, conv))
        i += 1
    return out


def block_bounds(fn) -> list[tuple[int, int]]:
    """(start, end) instruction indices of ``fn``'s basic blocks: the one CFG of :mod:`isa.cfg` (a label
    that no branch names, like Triton's ``$L__tmp`` line markers, does not start a block)."""
    from isa.cfg import Cfg

    return [(b.start, b.end) for b in Cfg(fn).blocks]


def block_orders(state, facts, global_latency: float, merged=None) -> dict[int, tuple[int, ...]]:
    """start pc -> the block's pcs in scheduled order, for every block whose order changes
    (``facts``: :func:`sim.timing.sm.op_facts`; ``merged``: :func:`sim.timing.vectorize.merged_loads`,
    whose followers stay after their leader)."""
    from isa.semantics import registers

    out: dict[int, tuple[int, ...]] = {}
    for finfo in getattr(state, "funcs", ()):
        fn, base = finfo.fn, finfo.base
        ins = fn.instructions
        for a, b, conv in regions(fn, state.infos, base):
            if b - a < 3 or b - a > MAX_BLOCK:
                continue
            order = _schedule(ins, state.infos, facts, base, a, b, global_latency, registers, merged or {}, conv)
            if order is not None:
                out[base + a] = order
    return out


def _schedule(ins, infos, facts, base, a, b, glat, registers, merged, conv=None):
    m = b - a
    conv = conv or {}
    soft = {v - a for v in conv.values()}       # the branches of if-converted bodies: no barrier
    preds: list[dict[int, float]] = [dict() for _ in range(m)]
    last_w: dict[str, int] = {}
    reads_since: dict[str, list[int]] = {}
    last_store: dict[str | None, int] = {}
    loads_since: dict[str | None, list[int]] = {}
    last_bar = -1
    since_bar: list[int] = []
    lat = [0.0] * m
    is_load = [False] * m
    nregs = [1] * m                 # a load's result registers
    for j in range(m):
        i = ins[a + j]
        f = facts[base + a + j]
        info = infos[base + a + j]
        p = preds[j]
        if a + j in conv:                       # predicated on its branch's guard
            p[conv[a + j] - a] = 0.0
        if j not in soft and _barrier(i, info):
            for x in since_bar:
                p[x] = max(p.get(x, 0.0), 0.0)
            if last_bar >= 0:
                p[last_bar] = max(p.get(last_bar, 0.0), 0.0)
            last_bar, since_bar = j, []
            lat[j] = f.lat
            # the barrier's own register effects still order later readers
            try:
                use = registers(i)
                for r in use.writes:
                    last_w[r] = j
                    reads_since[r] = []
            except Exception:  # noqa: BLE001
                pass
            continue
        if last_bar >= 0:
            p.setdefault(last_bar, 0.0)
        since_bar.append(j)
        try:
            use = registers(i)
        except Exception:  # noqa: BLE001 - treated as a barrier above when tables are missing
            use = None
        sp = _space(i)
        op = i.opcode
        load = op in _LOADS
        store = op in _STORES
        lj = f.lat
        if load and sp in (None, "global", "local"):
            lj = glat
        lat[j] = lj
        is_load[j] = load and sp not in _FREE
        if use is not None and load:
            nregs[j] = max(1, len(use.writes))
        if use is not None:
            for r in use.reads:
                w = last_w.get(r)
                if w is not None:
                    p[w] = max(p.get(w, 0.0), lat[w])
            for r in use.writes:
                w = last_w.get(r)
                if w is not None:
                    p[w] = max(p.get(w, 0.0), 0.0)
                for x in reads_since.get(r, ()):
                    if x != j:
                        p[x] = max(p.get(x, 0.0), 0.0)
        # a non-coherent load (ld.global.nc: data read-only for the kernel's lifetime, isa table
        # extra["nc"]) is ordered against no store: ptxas hoists it above the stores before it
        # (softmax_rows_warp's write pass: LDG.E.CONSTANT x4 above the STG.E x4 of the iteration before)
        nc = load and info is not None and (info.extra or {}).get("nc")
        if (load or store) and sp not in _FREE and not nc:
            keys = _SPACES[:3] + (None,) if sp is None else (sp, None)
            for key in keys:
                s = last_store.get(key)
                if s is not None:
                    p[s] = max(p.get(s, 0.0), 0.0)
                if store:
                    for x in loads_since.get(key, ()):
                        p[x] = max(p.get(x, 0.0), 0.0)
            if store:
                last_store[sp] = j
                loads_since[sp] = []
            else:
                loads_since.setdefault(sp, []).append(j)
        if use is not None:
            for r in use.reads:
                reads_since.setdefault(r, []).append(j)
            for r in use.writes:
                last_w[r] = j
                reads_since[r] = []
    # the terminator (a branch, or whatever ends the block) stays last
    term = m - 1
    for j in range(m - 1):
        preds[term].setdefault(j, 0.0)
    # merged vector-load followers stay after their leader (sim.timing.vectorize)
    for j in range(m):
        mg = merged.get(base + a + j)
        if mg is not None and a <= mg.leader - base < a + j:      # a leader before its follower
            preds[j].setdefault(mg.leader - base - a, 0.0)
    succ: list[list[int]] = [[] for _ in range(m)]
    for j in range(m):
        for x in preds[j]:
            succ[x].append(j)
    prio = [0.0] * m
    for j in range(m - 1, -1, -1):
        prio[j] = lat[j] + max((prio[s] for s in succ[j]), default=0.0)
    npred = [len(preds[j]) for j in range(m)]
    ready_t = [0.0] * m
    # in flight until its readers issue: read-after-write edges carry the producer's latency, the
    # ordering edges (a closing barrier, a later store) none; counting those kept every hoisted load
    # in flight to the end of the block, and the rest then issued just before their FFMAs
    consumers = [sum(1 for s in succ[j] if s != term and preds[s][j] > 0) for j in range(m)]
    uses_of = [[x for x in preds[j] if is_load[x] and preds[j][x] > 0] for j in range(m)]
    cand = [j for j in range(m) if npred[j] == 0]
    t = 0.0
    order: list[int] = []
    inflight: dict[int, int] = {}
    held = 0                        # result registers of the loads in flight
    while cand:
        best = None
        soonest = None
        for j in cand:
            if is_load[j] and consumers[j] and held and held + nregs[j] > MAX_INFLIGHT_REGISTERS:
                continue
            if ready_t[j] <= t:
                if best is None or prio[j] > prio[best] or (prio[j] == prio[best] and j < best):
                    best = j
            elif soonest is None or ready_t[j] < ready_t[soonest] or (ready_t[j] == ready_t[soonest] and j < soonest):
                soonest = j
        if best is None:
            if soonest is None:          # only loads held back by the cap: issue a consumer's earliest
                soonest = min(cand, key=lambda j: (ready_t[j], j))
            t = max(t, ready_t[soonest])
            best = soonest
        cand.remove(best)
        order.append(best)
        for x in uses_of[best]:
            if x in inflight:
                inflight[x] -= 1
                if inflight[x] <= 0:
                    del inflight[x]
                    held -= nregs[x]
        if is_load[best] and consumers[best]:
            inflight[best] = consumers[best]
            held += nregs[best]
        for s in succ[best]:
            ready_t[s] = max(ready_t[s], t + preds[s][best])
            npred[s] -= 1
            if npred[s] == 0:
                cand.append(s)
        t += 1.0
    if len(order) != m or order == list(range(m)):
        return None
    return tuple(base + a + j for j in order)


def reorder(stream, orders: dict[int, tuple[int, ...]]):
    """``stream`` (one warp's :class:`sim.timing.streams.WarpStream`, or a list of ``(pc, access)``
    pairs) with every whole in-order run of a scheduled block put in the block's scheduled order."""
    from .streams import WarpStream

    ws = WarpStream.of(stream)
    if not orders or not ws.pcs:
        return stream
    ix = reorder_index(np.asarray(ws.pcs, np.int64), orders)
    if ix is None:
        return stream
    out = ws.reordered(ix)
    return out if isinstance(stream, WarpStream) else list(zip(out.pcs, out.accesses))


def reorder_index(pcs, orders: dict[int, tuple[int, ...]]):
    """The positions of a warp's stream (``pcs``: its pcs in execution order, an array) in
    :func:`reorder`'s order (``reorder(s)[j] == s[index[j]]``), or ``None`` where nothing moves.

    A block's scheduled order applies where the stream runs the whole block in order: from a
    position holding the block's first pc, the next ``m - 1`` pcs follow one by one (``m`` the
    block's length). Runs of consecutive pcs are found for the whole stream at once (numpy);
    blocks do not overlap, so the runs that match are independent of each other."""
    n = len(pcs)
    if not orders or not n:
        return None
    pcs = np.asarray(pcs, np.int64)
    starts, lens, arrs = _order_table(orders)
    at = np.flatnonzero(np.isin(pcs, starts))
    if not len(at):
        return None
    # breaks[k]: how many of positions 0 .. k-1 are not followed by the next pc
    breaks = np.zeros(n, np.int64)
    np.cumsum(pcs[1:] != pcs[:-1] + 1, out=breaks[1:])
    k = np.searchsorted(starts, pcs[at])
    m = lens[k]
    end = at + m - 1
    ok = end < n
    at, k, end = at[ok], k[ok], end[ok]
    ok = breaks[end] == breaks[at]
    if not ok.any():
        return None
    out = np.arange(n)
    for i, j in zip(at[ok].tolist(), k[ok].tolist()):
        o = arrs[j]
        out[i:i + len(o)] = o + i
    return out


def _order_table(orders: dict) -> tuple:
    """(sorted block start pcs, their lengths, each block's order as offsets from its start), built
    once per ``orders`` mapping."""
    key = id(orders)
    got = _TABLES.get(key)
    if got is not None and got[0] is orders:
        return got[1]
    starts = np.array(sorted(orders), np.int64)
    arrs = [np.asarray(orders[int(p)], np.int64) - p for p in starts.tolist()]
    tab = (starts, np.array([len(o) for o in arrs], np.int64), arrs)
    if len(_TABLES) > 16:
        _TABLES.clear()
    _TABLES[key] = (orders, tab)
    return tab


_TABLES: dict[int, tuple] = {}


__all__ = ["block_orders", "reorder", "reorder_index", "MAX_INFLIGHT_REGISTERS"]
