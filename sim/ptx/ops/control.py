"""Control flow and synchronisation::

    @%p6 bra $L__BB0_4;      bra.uni $L__BB1_1;      ret;      exit;
    bar.sync 0;              barrier.sync.aligned 0; bar.warp.sync -1;     membar.gl;

A branch whose threads disagree splits the top stack entry: it waits at the branch's
reconvergence pc (immediate post-dominator) while the taken and fall-through paths run.
``bar.sync`` checks, per CTA, that every thread that has not exited is at the barrier; if not,
it reports ``barrier_divergence`` (on hardware the CTA would hang) and goes on.
"""

from __future__ import annotations

import numpy as np

from isa import ir

from . import guard_mask, not_implemented, op


def _label(M, ins):
    for o in ins.operands:
        if isinstance(o, (ir.Symbol, ir.Register)) and o.name in M.fn.labels:
            return M.fn.labels[o.name]
    raise M.error("branch target is not a label of this function", ins)


@op("bra")
def _bra(M, pc, ins, canon, ms, mods):
    tgt = _label(M, ins)
    r = M.reconv[pc]
    G = guard_mask(M, ins)
    nxt = pc + 1
    if G is None:
        def jump(M, stack, top):
            top[0] = tgt
        return 1, jump

    def branch(M, stack, top):
        mask = top[2]
        taken = mask & G()
        nt = int(np.count_nonzero(taken))
        if nt == top[3]:
            top[0] = tgt
            return
        if nt == 0:
            top[0] = nxt
            return
        other = mask & ~taken
        paths = [(nxt, other), (tgt, taken)]
        if r != -1 and r == top[1]:
            stack.pop()              # the entry below already waits at r with all these threads
        else:
            top[0] = r
        for start, msk in paths:
            if start != r:
                stack.append(M.entry(start, r, msk))
    return 1, branch


@op("ret", "exit")
def _exit(M, pc, ins, canon, ms, mods):
    G = guard_mask(M, ins)
    nxt = pc + 1

    def leave(M, stack, top):
        mask = top[2] if G is None else top[2] & G()
        M.retire(stack, mask)
        top[0] = nxt
    return 1, leave


@op("trap", "brkpt")
def _trap(M, pc, ins, canon, ms, mods):
    def trap(m):
        lanes = M.lanes_of(m)
        if len(lanes):
            M.report("trap", pc, lanes[:1], f"{ins.opcode} executed by {len(lanes)} thread(s)")
    return trap


@op("call")
def _call(M, pc, ins, canon, ms, mods):
    return not_implemented(M, ins, "call (device-function calls)")


@op("brx.idx", "brx")
def _brx(M, pc, ins, canon, ms, mods):
    return not_implemented(M, ins, "brx.idx (indirect branches)")


@op("bar", "barrier", "bar.sync", "barrier.sync", "bar.arrive", "barrier.arrive", "bar.red", "barrier.red")
def _bar(M, pc, ins, canon, ms, mods):
    words = set(canon.split(".")) | ms
    if "warp" in words:
        return lambda m: None
    if "arrive" in words:
        return lambda m: None
    ops = list(ins.operands)
    red = "red" in words
    d = None
    if red:
        d = M.dst(ops[0], "u32" if "popc" in words else "pred", ins)
        ops = ops[1:]
    count = None
    if len(ops) >= 2 and not red or (red and len(ops) >= 3):
        count = M.src(ops[1], "u32", ins)
    pred = M.src(ops[-1], "pred", ins) if red else None
    tpc, batch, nthreads = M.tpc, M.batch, M.nthreads

    def sync(m):
        M.barrier_waits += 1
        if M.tags is not None:
            M.barrier_epoch(np.arange(batch) if m is None else np.flatnonzero(m.reshape(batch, tpc).any(axis=1)))
        if m is not None:
            arrived = m.reshape(batch, tpc)
            expected = ~M.exited.reshape(batch, tpc)
            full = True
            if count is not None:
                c = int(np.max(np.asarray(count())))
                full = c >= nthreads
            if full:
                missing = expected & ~arrived
                bad = missing.any(axis=1) & arrived.any(axis=1)
                if bad.any():
                    for cta in np.flatnonzero(bad)[:8]:
                        lanes = np.flatnonzero(missing[cta])
                        first = int(cta * tpc + lanes[0])
                        here = int(np.count_nonzero(arrived[cta]))
                        M.report_cta("barrier_divergence", pc, int(cta),
                                     f"{ins.full_opcode}: {here} of {here + len(lanes)} live threads of the CTA "
                                     f"arrive; thread {M.thread_coords(first)[1]} and {len(lanes) - 1} other(s) "
                                     f"never reach it (the CTA would hang)", lane=first)
        if red:
            act = np.ones(M.T, bool) if m is None else m
            p = np.broadcast_to(np.asarray(pred()), (M.T,)) & act
            per = p.reshape(batch, tpc)
            if "popc" in words:
                v = np.repeat(per.sum(axis=1).astype(np.uint32), tpc)
            elif "and" in words:
                v = np.repeat((per | ~act.reshape(batch, tpc)).all(axis=1), tpc)
            else:
                v = np.repeat(per.any(axis=1), tpc)
            d.m(v, m)
    return sync


@op("bar.warp.sync", "membar", "fence", "fence.proxy.async", "fence.proxy.tensormap", "nanosleep", "setmaxnreg",
    "griddepcontrol", "pmevent", "wgmma.fence", "wgmma.commit_group", "tcgen05.fence", "fence.mbarrier_init",
    "fence.proxy.alias", "fence.acq_rel", "fence.sc")
def _noop(M, pc, ins, canon, ms, mods):
    return lambda m: None
