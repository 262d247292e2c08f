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
from sim.arrays import distinct

from ..machine import Writer, _reader
from . import guard_mask, limit, not_implemented, op, per_thread_i64


def _label(M, ins):
    for o in ins.operands:
        if isinstance(o, (ir.Symbol, ir.Register)):
            t = M.label_pc(o.name)
            if t is not None:
                return t
    raise M.error("branch target is not a label of this function", ins)


@op("bra")
def _bra(M, pc, ins, canon, ms, mods):
    tgt = _label(M, ins)
    r = M.reconv[pc]
    G = guard_mask(M, ins)
    nxt = pc + 1
    back = tgt <= pc                  # a loop's back edge: checked now and then for a spin that never ends
    check = M.SPIN_CHECK - 1
    if G is None:
        if back:
            def jump_back(M, stack, top):
                top.pc = tgt
                c = M.back_counts
                c[pc] += 1
                if not c[pc] & check:
                    M.spin_check(stack, top, pc)
            return 1, jump_back

        def jump(M, stack, top):
            top.pc = tgt
        return 1, jump

    def branch(M, stack, top):
        mask = top.mask
        taken = mask & G()
        nt = int(np.count_nonzero(taken))
        M.pc_taken[pc] += nt
        if nt == top.threads:
            top.pc = tgt
            if back:
                c = M.back_counts
                c[pc] += 1
                if not c[pc] & check:
                    M.spin_check(stack, top, pc)
            return
        if nt == 0:
            top.pc = nxt
            return
        other = mask & ~taken
        paths = [(nxt, other), (tgt, taken)]
        if r != -1 and r == top.rpc:
            stack.pop()              # the entry below already waits at r with all these threads
        else:
            top.pc = r
        for start, msk in paths:
            if start != r:
                stack.append(M.entry(start, r, msk))
    return 1, branch


@op("ret", "exit")
def _exit(M, pc, ins, canon, ms, mods):
    """``exit`` ends threads; ``ret`` does in a kernel, and leaves the function in a callee."""
    G = guard_mask(M, ins)
    nxt = pc + 1
    in_function = canon == "ret" and M.cur.fid != 0

    def leave(M, stack, top):
        mask = top.mask if G is None else top.mask & G()
        if in_function and M.frames:
            M.leave_function(stack, mask)
        else:
            M.retire(stack, mask)
        top.pc = nxt
    return 1, leave


@op("trap", "brkpt")
def _trap(M, pc, ins, canon, ms, mods):
    def trap(m):
        lanes = M.lanes_of(m)
        if len(lanes):
            M.report("trap", pc, lanes[:1], f"{ins.opcode} executed by {len(lanes)} thread(s)")
    return trap


def _slots(M, ins, items, what):
    """Call-sequence ``.param`` operands -> their (offset, size) in call-parameter memory."""
    out = []
    for x in items:
        if not isinstance(x, (ir.Symbol, ir.Register)):
            raise M.error(f"call {what} must be .param variables, got {x!r}", ins)
        space, off = M.symbol(x.name, ins)
        if space != "callparam":
            raise M.error(f"call {what} '{x.name}' is not a .param variable of a call sequence", ins)
        out.append((off, M.param_slot_size(x.name, ins)))
    return tuple(out)


def _register_bindings(M, ins, info, formals, actuals, what):
    """Split a call's ``actuals`` into the ones bound to ``.param`` formals (returned as they are,
    for :func:`_slots`) and ``(reader, writer)`` pairs for ``.reg`` formals::

        .func (.reg .b32 a, .reg .b32 b) two(.reg .b32 x) ...   call (%r2, %r3), two, (%r1);

    arguments read the caller's operand and write the callee's register; results read the
    callee's register and write the caller's."""
    if not any(p.space == "reg" for p in formals):
        return actuals, ()
    if len(actuals) > len(formals):
        raise M.error(f"call passes {len(actuals)} {what} to {info.fn.name}, which has {len(formals)}", ins)
    slots, regs = [], []
    for a, p in zip(actuals, formals):
        if p.space != "reg":
            slots.append(a)
            continue
        callee = M.reg(p.name, 0, key=f"{info.fid}:{p.name}")[0]
        if what == "arguments":
            regs.append((M.src(a, p.type, ins), Writer(callee, p.type)))
        else:
            if not isinstance(a, ir.Register):
                raise M.error(f"call result for .reg '{p.name}' of {info.fn.name} must be a register, got {a!r}", ins)
            regs.append((_reader(callee, p.type), M.dst(a, p.type, ins)))
    return tuple(slots), tuple(regs)


@op("call")
def _call(M, pc, ins, canon, ms, mods):
    """``call.uni (retval0), f, (param0, param1);`` and ``call (retval0), %rd10, (param0), proto;``"""
    from ..calls import call_parts

    rets, callee, args, _ = call_parts(ins)
    G = guard_mask(M, ins)
    nxt = pc + 1
    if isinstance(callee, ir.Symbol) or (isinstance(callee, ir.Register) and callee.name in M.func_by_name):
        info = M.func_by_name.get(callee.name)
        if info is None:
            fn = next((f for f in M.module.functions if f.name == callee.name), None)
            what = "an external function without a body" if fn is not None else "not a function of this module"
            return not_implemented(M, ins, f"call to '{callee.name}' ({what})")
        args, reg_args = _register_bindings(M, ins, info, info.fn.params, args, "arguments")
        rets, reg_rets = _register_bindings(M, ins, info, info.fn.returns, rets, "results")
        ret_slots = _slots(M, ins, rets, "results")
        arg_slots = _slots(M, ins, args, "arguments")

        def call(M, stack, top):
            mask = top.mask if G is None else top.mask & G()
            top.pc = nxt
            if mask is top.mask or mask.any():
                if reg_args:
                    lanes = np.flatnonzero(mask)
                    vals = [np.broadcast_to(np.asarray(a()), (M.T,))[lanes] for a, _ in reg_args]
                    for (_, w), v in zip(reg_args, vals):
                        w.at(v, lanes)
                M.begin_call(stack, info, mask.copy(), arg_slots, ret_slots, reg_rets)
        return 1, call
    ret_slots = _slots(M, ins, rets, "results")
    arg_slots = _slots(M, ins, args, "arguments")

    target = M.src(callee, "u64", ins)

    def call_indirect(M, stack, top):
        mask = top.mask if G is None else top.mask & G()
        top.pc = nxt
        lanes = np.flatnonzero(mask)
        if len(lanes) == 0:
            return
        addr = np.broadcast_to(np.asarray(target()).astype(np.uint64), (M.T,))[lanes]
        for a in distinct(addr)[::-1]:
            sel = lanes[addr == a]
            info = M.func_by_addr.get(int(a))
            if info is None:
                M.report("bad_call", pc, sel, lambda x: f"indirect call to 0x{x:x}, which is no device function "
                                                        f"of this module", addresses=addr[addr == a])
                continue
            m = np.zeros(M.T, bool)
            m[sel] = True
            M.begin_call(stack, info, m, arg_slots, ret_slots)
    return 1, call_indirect


@op("brx.idx", "brx")
def _brx(M, pc, ins, canon, ms, mods):
    """``@%p1 brx.idx %r3, ts;`` with ``ts: .branchtargets L0, L1, L2;``: thread i jumps to the
    label at index %r3; an index past the list is undefined behaviour (reported; the thread
    falls through)."""
    ops = list(ins.operands)
    table = M.branch_table()
    name = next((o.name for o in ops[1:] if isinstance(o, (ir.Symbol, ir.Register)) and o.name in table), None)
    if name is None:
        raise M.error("brx.idx needs a .branchtargets list of this function", ins)
    targets = []
    for lab in table[name]:
        t = M.label_pc(lab)
        if t is None:
            raise M.error(f"branch target '{lab}' is not a label of this function", ins)
        targets.append(t)
    targets = np.array(targets, np.int64)
    idx = M.src(ops[0], "u32", ins)
    G = guard_mask(M, ins)
    r = M.reconv[pc]
    nxt = pc + 1

    def brx(M, stack, top):
        mask = top.mask if G is None else top.mask & G()
        lanes = np.flatnonzero(mask)
        i = per_thread_i64(M, idx)[lanes]
        bad = i >= len(targets)
        if bad.any():
            M.report("bad_branch", pc, lanes[bad], f"brx.idx index past the {len(targets)} targets of {name}")
        dest = np.where(bad, nxt, targets[np.minimum(i, len(targets) - 1)])
        paths = {}
        if len(lanes) < top.threads:
            paths[nxt] = top.mask & ~mask
        for d in distinct(dest):
            msk = np.zeros(M.T, bool)
            msk[lanes[dest == d]] = True
            paths[int(d)] = paths[int(d)] | msk if int(d) in paths else msk
        paths = {d: m for d, m in paths.items() if m.any()}
        if len(paths) == 1:
            top.pc = next(iter(paths))
            return
        if r != -1 and r == top.rpc:
            stack.pop()
        else:
            top.pc = r
        for start, msk in sorted(paths.items(), reverse=True):
            if start != r:
                stack.append(M.entry(start, r, msk))
    return 1, brx


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
    if not red and count is None:
        bid = ops[0].value if ops and isinstance(ops[0], ir.Immediate) else None
        return 1, _barrier_control(M, pc, ins, guard_mask(M, ins), bid, M.src(ops[0], "u32", ins) if ops else None)

    def sync(m):
        M.barrier_waits += 1
        if M.tags is not None or M.order is not None:
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


def _barrier_control(M, pc, ins, G, bid, id_src):
    """``bar.sync 0;`` / ``barrier.sync.aligned 0;`` as a scheduling point.

    Threads of a CTA may reach the same barrier id at different ``bar.sync`` instructions (legal
    since sm_70). When the threads here are not the whole CTA and the missing ones sit in a
    sibling path of the divergence stack (an entry below that shares no thread with this one),
    this entry *parks*: it waits below that sibling, which runs until it reaches a barrier; when
    every live thread of the CTA has arrived, the barrier completes and parked entries go on after
    their own ``bar.sync``. Only when the missing threads cannot run (they exited or wait at a
    reconvergence point) is ``barrier_divergence`` reported (the CTA would hang)."""
    tpc, batch = M.tpc, M.batch
    nxt = pc + 1
    key = bid if bid is not None else ("reg", pc)

    def release(stack, ctas_mask):
        """Barrier ``key`` completes for the threads in ``ctas_mask``: parked entries go on."""
        M.barrier_epoch_for(ctas_mask)
        pend = M.bar_pending.get(key)
        if pend is not None:
            pend &= ~ctas_mask
        keep = []
        for e, at in M.bar_parked.get(key, []):
            done = e.mask & ctas_mask
            if not done.any():
                keep.append((e, at))
                continue
            if (done == e.mask).all():
                e.pc = at + 1
                M.parked_ids.discard(id(e))
                continue
            e.mask = e.mask & ~done                      # part of the entry's CTAs completed: split it
            M.refresh(e)
            k = next(i for i, x in enumerate(stack) if x is e)
            stack.insert(k + 1, M.entry(at + 1, e.rpc, done))
            keep.append((e, at))
        M.bar_parked[key] = keep

    def barrier(M, stack, top):
        M.barrier_waits += 1
        here = top.mask if G is None else top.mask & G()
        top.pc = nxt
        if not here.any():
            return
        M.parked_ids.discard(id(top))          # a parked entry retrying (its sibling never arrived)
        pend = M.bar_pending.get(key)
        arrived = here if pend is None else (here | pend)
        expected = ~M.exited
        missing = (expected & ~arrived).reshape(batch, tpc)
        cta_here = here.reshape(batch, tpc).any(axis=1)
        incomplete = missing.any(axis=1) & cta_here
        if not incomplete.any():
            release(stack, np.repeat(cta_here, tpc))
            return
        miss = (missing & incomplete[:, None]).reshape(-1)
        sibling = None
        for j in range(len(stack) - 2, -1, -1):
            e = stack[j]
            if e.threads and id(e) not in M.parked_ids and not (e.mask & top.mask).any() and (e.mask & miss).any():
                sibling = j
                break
        if sibling is None:
            for cta in np.flatnonzero(incomplete)[:8]:
                lanes = np.flatnonzero(missing[cta])
                first = int(cta * tpc + lanes[0])
                n_here = int(np.count_nonzero(arrived.reshape(batch, tpc)[cta]))
                M.report_cta("barrier_divergence", pc, int(cta),
                             f"{ins.full_opcode}: {n_here} of {n_here + len(lanes)} live threads of the CTA "
                             f"arrive; thread {M.thread_coords(first)[1]} and {len(lanes) - 1} other(s) "
                             f"never reach it (the CTA would hang)", lane=first)
            release(stack, np.repeat(cta_here, tpc))
            return
        done_ctas = cta_here & ~incomplete
        if done_ctas.any():
            release(stack, np.repeat(done_ctas, tpc))
        wait = here & np.repeat(incomplete, tpc)
        M.bar_pending[key] = wait.copy() if pend is None else (pend | wait)
        go = top.mask & ~wait
        if go.any():                              # threads of completed CTAs (or guard-false) go on
            top.mask = go
            M.refresh(top)
            parked = M.entry(pc, top.rpc, wait)
        else:
            stack.pop()
            top.pc = pc
            top.mask = wait
            M.refresh(top)
            parked = top
        stack.insert(sibling, parked)
        M.bar_parked.setdefault(key, []).append((parked, pc))
        M.parked_ids.add(id(parked))
    return barrier


@op("fence", "membar", "fence.proxy.async")
def _fence(M, pc, ins, canon, ms, mods):
    """``fence.proxy.async.shared::cta;``: this CTA's generic-proxy writes to shared memory become
    visible to the async proxy (wgmma operands, bulk-copy sources). ``membar.gl;``,
    ``fence.sc.gpu;``, ``fence.acq_rel.gpu;``: memory fences (:mod:`sim.ptx.order`)."""
    if "proxy" in ms:
        if "async" not in ms and canon != "fence.proxy.async" or M.asyncs is None:
            return lambda m: None

        def proxy(m):
            lanes = M.lanes_of(m)
            if len(lanes):
                M.asyncs.fence_proxy(lanes)
        return proxy
    order = getattr(M, "order", None)
    if order is None:
        return lambda m: None
    return order.fence_op(pc, canon, ms)


@op("bar.warp.sync", "fence.proxy.tensormap", "nanosleep", "setmaxnreg",
    "griddepcontrol", "pmevent", "wgmma.fence", "tcgen05.fence", "fence.mbarrier_init",
    "fence.proxy.alias", "fence.acq_rel", "fence.sc")
def _noop(M, pc, ins, canon, ms, mods):
    return lambda m: None


limit("call", "calls to external functions without a body (vprintf, malloc)")
