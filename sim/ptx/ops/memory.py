"""Loads, stores, atomics and asynchronous copies::

    ld.global.nc.v4.f32 {%f7, %f8, %f9, %f10}, [%rd3];    st.shared.v2.b16 [%r233+0], {%rs17, %rs18};
    ld.param.u64 %rd18, [sgemm_naive_param_0];            ld.global.b32 { %r24 }, [ %rd25 + 0 ];
    atom.global.add.f32 %f26, [%rd25], %f46;              atom.global.cas.b32 %r4, [%rd27], %r99, %r2;
    cp.async.cg.shared.global [%r18], [%rd12], 16;        cp.async.ca.shared.global [%r40], [%rd33], 0x8, %r41;

Atomics run in a deterministic order: thread order in the launch (lane order within a warp,
warps in order, CTAs in order). ``cp.async`` reads its source at issue (zero-filling past
``src-size``) and writes shared memory when it completes (:mod:`sim.ptx.completion`): at the
``cp.async.wait_group``/``wait_all`` that covers its group, or the mbarrier wait it is tracked by.
"""

from __future__ import annotations

import numpy as np

from isa import ir
from sim.arrays import distinct

from ..dtypes import UINT, compute_dtype, nbytes, types_of
from ..completion import Op
from ..memory import gather, mark_written, scatter
from . import limit, not_implemented, op, per_thread_i64

SPACES = ("global", "shared", "local", "param", "const")


def space_of(mods) -> str:
    for m in mods:
        s = m.split("::")[0]
        if s in SPACES:
            return s
    return "generic"


def _vec(mods) -> int:
    for m in mods:
        if m in ("v2", "v4", "v8"):
            return int(m[1:])
    return 1


def _regs(op):
    if isinstance(op, ir.Vector):
        return list(op.elements)
    return [op]


def _ty(mods, default="b32"):
    ts = types_of(mods)
    return ts[-1] if ts else default


@op("ld", "ldu")
def _ld(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    space = space_of(mods) if canon == "ld" else ("global" if "global" in ms else "generic")
    nvec = _vec(mods)
    dsts = _regs(ins.operands[0])
    nelem = max(nvec, len(dsts))
    esize = nbytes(t)
    if esize > 8:      # b128: two 64-bit halves per register
        return _ld_b128(M, pc, ins, space, nelem, dsts)
    cd = compute_dtype(t)
    writers = [M.dst(e, t, ins) for e in dsts]
    sym_space, addr_fn = M.address(ins.operands[1], ins)
    if sym_space is not None:
        space = sym_space if space == "generic" or sym_space == "callparam" else space
    if space == "param" and sym_space == "param":     # kernel parameter: a constant of the launch
        a = int(addr_fn(np.arange(1))[0])
        if a + esize * nelem > M.params.size:
            raise M.error(f"parameter read at offset {a} is past the parameter block ({M.params.size} bytes)", ins)
        vals = gather(M.params.data, np.array([a]), esize, nelem)[0].view(cd)

        def ldparam(m):
            for k, w in enumerate(writers):
                w.m(vals[k], m)
            n = M.T if m is None else int(np.count_nonzero(m))
            M.bytes_load["param"] = M.bytes_load.get("param", 0) + n * esize * nelem
        return ldparam

    def f(m):
        lanes, vals = M.load(pc, space, m, addr_fn, esize, nelem)
        if vals is None or len(lanes) == 0:
            return
        whole = m is None and len(lanes) == M.T
        for k, w in enumerate(writers):
            w.at(vals[:, k].view(cd), None if whole else lanes)
    return f


def b128_operand(M, ins, op_):
    """A ``.b128`` register operand: its [T, 2] uint64 storage (low half first)."""
    if not isinstance(op_, ir.Register):
        raise M.error(f"{ins.full_opcode}: a .b128 operand must be a .b128 register", ins)
    arr, rt = M.reg(op_.name, ins.scope)
    if rt != "b128":
        raise M.error(f"{ins.full_opcode}: register {op_.name} is .{rt}, not .b128", ins)
    return arr


def _ld_b128(M, pc, ins, space, nelem, dsts):
    """``ld.global.b128 %rq1, [%rd4];`` (sm_70+, PTX 8.3): 16 aligned bytes per register."""
    regs = [b128_operand(M, ins, e) for e in dsts]
    sym_space, addr_fn = M.address(ins.operands[1], ins)
    if sym_space is not None and (space == "generic" or sym_space == "callparam"):
        space = sym_space

    def f(m):
        lanes, vals = M.load(pc, space, m, addr_fn, 8, 2 * nelem)
        if vals is None or len(lanes) == 0:
            return
        for k, r in enumerate(regs):
            r[lanes] = vals[:, 2 * k:2 * k + 2]
    return f


def _st_b128(M, pc, ins, space, nelem):
    regs = [b128_operand(M, ins, e) for e in _regs(ins.operands[1])]
    sym_space, addr_fn = M.address(ins.operands[0], ins)
    if sym_space is not None and (space == "generic" or sym_space == "callparam"):
        space = sym_space

    def values(lanes):
        return np.concatenate([r if lanes is None else r[lanes] for r in regs], axis=1)

    return lambda m: M.store(pc, space, m, addr_fn, 8, values)


def store_values(M, ins, op_, t, nelem):
    """A function lanes -> [n, nelem] unsigned values to store (registers or immediates)."""
    srcs = [M.src(e, t, ins) for e in _regs(op_)]
    ut = UINT[nbytes(t)]

    def values(lanes):
        n = M.T if lanes is None else len(lanes)
        out = np.empty((n, len(srcs)), ut)
        for k, s in enumerate(srcs):
            v = np.asarray(s())
            if v.ndim == 0:
                out[:, k] = v.view(ut) if v.dtype.itemsize == ut.itemsize else v.astype(ut)
            else:
                v = v.view(ut)
                out[:, k] = v if lanes is None else v[lanes]
        return out
    return values


@op("st")
def _st(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    space = space_of(mods)
    esize = nbytes(t)
    nelem = max(_vec(mods), len(_regs(ins.operands[1])))
    if esize > 8:
        return _st_b128(M, pc, ins, space, nelem)
    sym_space, addr_fn = M.address(ins.operands[0], ins)
    if sym_space is not None and (space == "generic" or sym_space == "callparam"):
        space = sym_space
    values = store_values(M, ins, ins.operands[1], t, nelem)

    def f(m):
        M.store(pc, space, m, addr_fn, esize, values)
    return f


# ---------------------------------------------------------------------------------- atomics
def _atom_fn(opname: str, t: str, space: str):
    cd = compute_dtype(t)
    if t in ("f16", "bf16", "f16x2", "bf16x2"):
        from .floating import half_op
        if opname == "add":
            return half_op(2, t, np.add, frozenset())
        if opname in ("min", "max"):
            return half_op(2, t, np.fmin if opname == "min" else np.fmax, frozenset())
        if opname == "exch":
            return lambda r, s: s
    if opname == "add":
        if t == "f32" and space == "global":
            from .floating import flush32
            return lambda r, s: flush32(flush32(r) + flush32(s))
        return lambda r, s: (r + s).astype(cd)
    if opname in ("min", "max"):
        if cd.kind == "f":
            return np.fmin if opname == "min" else np.fmax
        return np.minimum if opname == "min" else np.maximum
    if opname == "and":
        return np.bitwise_and
    if opname == "or":
        return np.bitwise_or
    if opname == "xor":
        return np.bitwise_xor
    if opname == "exch":
        return lambda r, s: s
    if opname == "inc":
        return lambda r, s: np.where(r >= s, cd.type(0), r + cd.type(1)).astype(cd)
    if opname == "dec":
        return lambda r, s: np.where((r == 0) | (r > s), s, r - cd.type(1)).astype(cd)
    if opname == "cas":
        return lambda r, s, c: np.where(r == s, c, r)
    raise KeyError(opname)


@op("atom", "red")
def _atom(M, pc, ins, canon, ms, mods):
    """Scalar and vector atomics (``atom.global.v4.f32.add {%f1,..}, [%rd1], {%f5,..};`` on
    sm_90: each element is its own atomic add, ISA 9.7.13.5); returns the old values."""
    t = _ty(mods)
    space = space_of(mods)
    opname = next(m for m in mods if m in ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"))
    nvec = _vec(mods)
    if nvec > 1 and (opname not in ("add", "min", "max") or t not in ("f32", "f16", "bf16", "f16x2", "bf16x2")):
        return not_implemented(M, ins, f"{ins.full_opcode} (vector atomics are add/min/max on f32/f16/bf16)")
    fn = _atom_fn(opname, t, space)
    esize = nbytes(t)
    cd = compute_dtype(t)
    ops = list(ins.operands)
    if canon == "red":
        ds = None
        a_op, rest = ops[0], ops[1:]
    else:
        ds = [M.dst(e, t, ins) for e in _regs(ops[0])]
        a_op, rest = ops[1], ops[2:]
    sym_space, addr_fn = M.address(a_op, ins)
    if sym_space is not None and space == "generic":
        space = sym_space
    bs_ = [M.src(e, t, ins) for e in _regs(rest[0])]
    if len(bs_) != nvec or (ds is not None and len(ds) != nvec):
        raise M.error(f"{ins.full_opcode} needs {nvec}-element vector operands", ins)
    c = M.src(rest[1], t, ins) if opname == "cas" else None
    ut = UINT[esize]
    width = esize * nvec

    def run(m):
        lanes = M.lanes_of(m)
        if len(lanes) == 0:
            return
        addr = addr_fn(None if m is None else lanes)
        bvs = [np.broadcast_to(np.asarray(b()), (M.T,))[lanes] for b in bs_]
        cv = np.broadcast_to(np.asarray(c()), (M.T,))[lanes] if c is not None else None
        for sp, data, written, sel, flat, a in M.resolve(pc, space, lanes, addr, width, "atomic"):
            ln = lanes if sel is None else lanes[sel]
            cs = None if cv is None else (cv if sel is None else cv[sel])
            view = data.view(ut)
            for k in range(nvec):
                bs = bvs[k] if sel is None else bvs[k][sel]
                idx = flat // esize + k
                order = np.argsort(idx, kind="stable")
                si = idx[order]
                start = np.ones(len(si), bool)
                start[1:] = si[1:] != si[:-1]
                run_start = np.maximum.accumulate(np.where(start, np.arange(len(si)), 0))
                rank = np.arange(len(si)) - run_start
                old = np.empty(len(idx), cd)
                for r in range(int(rank.max()) + 1 if len(rank) else 0):
                    pick = order[rank == r]
                    cur = view[idx[pick]].view(cd)
                    args = (cur, bs[pick]) if cs is None else (cur, bs[pick], cs[pick])
                    new = np.asarray(fn(*args)).astype(cd)
                    view[idx[pick]] = new.view(ut)
                    old[pick] = cur
                if ds is not None:
                    ds[k].at(old, ln)
            if written is not None:
                mark_written(written, flat, esize, nvec)
            if sp == "global" and M.order is not None:
                M.order.access(pc, "atomic", ln, a, width)
            M.bytes_load[sp] = M.bytes_load.get(sp, 0) + len(ln) * width
            M.bytes_store[sp] = M.bytes_store.get(sp, 0) + len(ln) * width
            if M.mem_listeners:
                M.emit(pc, ln, space=sp, kind="atomic", width=width, addresses=a)
    return run


# ---------------------------------------------------------------------------------- cp.async
@op("cp.async")
def _cp_async(M, pc, ins, canon, ms, mods):
    ops = list(ins.operands)
    _, dfn = M.address(ops[0], ins)
    s_space, sfn = M.address(ops[1], ins)
    cp = int(ops[2].value)
    src_size = None
    ignore = None
    if len(ops) > 3 and not isinstance(ops[3], ir.Address):
        o = ops[3]
        if isinstance(o, (ir.Register, ir.Negated)) and (
                isinstance(o, ir.Negated) or M.reg(o.name, ins.scope)[1] == "pred"):
            ignore = M.src(o, "pred", ins)
        else:
            src_size = M.src(o, "u32", ins)
    e = min(cp, 8)
    n = cp // e

    def run(m):
        lanes = M.lanes_of(m)
        if len(lanes) == 0:
            return
        sub = None if m is None else lanes
        dst = dfn(sub)
        src = sfn(sub)
        if src_size is not None:
            ss = per_thread_i64(M, src_size)[lanes]
        else:
            ss = np.full(len(lanes), cp, np.int64)
        if ignore is not None:
            ss = np.where(np.broadcast_to(np.asarray(ignore()), (M.T,))[lanes], 0, ss)
        vals = np.zeros((len(lanes), n), UINT[e])
        ok = np.ones(len(lanes), bool)
        full = np.flatnonzero(ss >= cp)
        if len(full):
            got = np.zeros(len(full), bool)
            for sp, data, _, sel, flat, a in M.resolve(pc, "global" if s_space is None else s_space, lanes[full],
                                                       src[full], cp, "load"):
                k = full if sel is None else full[sel]
                vals[k] = gather(data, flat, e, n)
                got[np.arange(len(full)) if sel is None else sel] = True
                M._account(pc, sp, "load", lanes[k], a, cp)
            ok[full[~got]] = False
        part = np.flatnonzero((ss > 0) & (ss < cp))
        if len(part):
            raw = vals.view(np.uint8).reshape(len(lanes), cp)
            for size in distinct(ss[part]):
                pk = part[ss[part] == size]
                for sp, data, _, sel, flat, a in M.resolve(pc, "global", lanes[pk], src[pk], int(size), "load",
                                                           align=1):
                    k = pk if sel is None else pk[sel]
                    raw[k, :size] = data[flat[:, None] + np.arange(size)]
                    M._account(pc, sp, "load", lanes[k], a, int(size))
        keep = np.flatnonzero(ok)
        A = M.asyncs
        for sp, data, written, sel, flat, a in M.resolve(pc, "shared", lanes[keep], dst[keep], cp, "store"):
            k = keep if sel is None else keep[sel]
            ln = lanes[k]
            raw = np.ascontiguousarray(vals[k]).view(np.uint8).reshape(len(k), cp)
            A.issue(Op("cp.async", pc, ln, A.cp_commits[ln].copy(), ("shared", flat[:, None] + np.arange(cp)),
                       raw, None))
            M.bytes_store[sp] = M.bytes_store.get(sp, 0) + len(k) * cp
            if M.mem_listeners:
                M.emit(pc, ln, space=sp, kind="async_store", width=cp, addresses=a)
    return run


def _int_operand(ins, k: int, default: int = 0) -> int:
    ops = list(ins.operands)
    return int(ops[k].value) if len(ops) > k and isinstance(ops[k], ir.Immediate) else default


@op("cp.async.commit_group", "cp.async.bulk.commit_group")
def _commit(M, pc, ins, canon, ms, mods):
    """``cp.async.commit_group;``: the thread's uncommitted copies become its newest group."""
    def run(m):
        c = M.asyncs.cp_commits if canon == "cp.async.commit_group" else M.asyncs.bulk_commits
        if m is None:
            c += 1
        else:
            c[m] += 1
    return run if M.asyncs is not None else (lambda m: None)


@op("cp.async.wait_group", "cp.async.wait_all", "cp.async.bulk.wait_group")
def _wait_group(M, pc, ins, canon, ms, mods):
    """``cp.async.wait_group 1;``: every group but the newest one completes (its writes land)."""
    n = None if canon == "cp.async.wait_all" else _int_operand(ins, 0)
    which = "cp.async" if canon.startswith("cp.async.w") else "bulk"
    read = "read" in ms

    def run(m):
        lanes = M.lanes_of(m)
        if len(lanes) == 0 or not M.asyncs.ops:
            return
        if read:
            M.asyncs.wait_read(pc, lanes, n)
        else:
            M.asyncs.wait_cp(pc, lanes, n, which)
    return run if M.asyncs is not None else (lambda m: None)


def _mbar_slots(M, pc, m, afn, lanes, create=False):
    """(lanes, mbarrier slots) of the threads in ``lanes``; bad addresses are reported and dropped."""
    addr = afn(None if m is None else lanes)
    out_l, out_s = [], []
    for sp, data, written, sel, flat, a in M.resolve(pc, "shared", lanes, addr, 8, "atomic"):
        ln = lanes if sel is None else lanes[sel]
        out_l.append(ln)
        out_s.append(M.asyncs.mbar.slots(flat, create))
    if not out_l:
        return lanes[:0], np.zeros(0, np.int64)
    ln, sl = np.concatenate(out_l), np.concatenate(out_s)
    bad = sl < 0
    if bad.any():
        i = np.flatnonzero(bad)
        M.report("uninitialized_shared", pc, ln[i], "mbarrier operation on a shared word that mbarrier.init never "
                 "initialised", addresses=addr[i] if len(addr) == len(bad) else None)
        ln, sl = ln[~bad], sl[~bad]
    return ln, sl


@op("cp.async.mbarrier.arrive")
def _cp_async_arrive(M, pc, ins, canon, ms, mods):
    """``cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];``: an arrive-on the mbarrier fires when
    every prior cp.async of the thread has completed; without ``.noinc`` the pending count is
    raised by one first, so the arrive is not one of the phase's expected arrivals."""
    _, afn = M.address(ins.operands[0], ins)
    noinc = "noinc" in ms

    def run(m):
        lanes = M.lanes_of(m)
        if len(lanes) == 0:
            return
        A = M.asyncs
        lanes, s = _mbar_slots(M, pc, m, afn, lanes)
        if len(lanes) == 0:
            return
        if not noinc:
            np.add.at(A.mbar.pending, s, 1)
        per = np.full(M.T, -1, np.int64)
        per[lanes] = s
        for o in A.ops:
            if o.op == "cp.async" and not o.done:
                mine = per[o.lanes]
                if (mine >= 0).any():
                    o.mbar = np.where(mine >= 0, mine, o.mbar if o.mbar is not None else -1)
        A.issue(Op("cp.async", pc, lanes, A.cp_commits[lanes].copy(), None, None, None, mbar=s, arrive=True,
                   noinc=noinc))
    return run


# ---------------------------------------------------------------------------------- bulk copies
@op("cp.async.bulk")
def _bulk(M, pc, ins, canon, ms, mods):
    """``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], %r2, [%r3];``
    (global -> shared, complete_tx on the mbarrier when it lands) and
    ``cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], %r2;`` (shared -> global, a bulk group)."""
    ops = list(ins.operands)
    spaces = [m.split("::")[0] for m in mods if m.split("::")[0] in ("shared", "global")]
    dst_space, src_space = (spaces + ["shared", "global"])[:2]
    _, dfn = M.address(ops[0], ins)
    _, sfn = M.address(ops[1], ins)
    size = M.src(ops[2], "u32", ins)
    mfn = M.address(ops[3], ins)[1] if len(ops) > 3 and isinstance(ops[3], ir.Address) else None
    return _bulk_run(M, pc, ins, dst_space, src_space, dfn, sfn, size, mfn, "cp.async.bulk")


def _bulk_run(M, pc, ins, dst_space, src_space, dfn, sfn, size, mfn, name, source=None):
    def run(m):
        lanes = M.lanes_of(m)
        if len(lanes) == 0:
            return
        A = M.asyncs
        sub = None if m is None else lanes
        sizes = per_thread_i64(M, size)[lanes]
        slots = None
        if mfn is not None:
            lanes_m, slots_m = _mbar_slots(M, pc, m, mfn, lanes)
            per = np.full(M.T, -1, np.int64)
            per[lanes_m] = slots_m
        dst_all = dfn(sub)
        src_all = sfn(sub) if source is None else None
        for n in distinct(sizes):
            n = int(n)
            k = np.flatnonzero(sizes == n)
            if n <= 0:
                continue
            if n % 16:
                M.report("misaligned", pc, lanes[k], f"{ins.full_opcode}: size {n} is not a multiple of 16")
                continue
            ln = lanes[k]
            if source is None:
                got = M.resolve(pc, src_space, ln, src_all[k], n, "load", align=16)
                if not got:
                    continue
                sp, data, _, sel, flat, a = got[0]
                kk = np.arange(len(k)) if sel is None else sel
                sidx = flat[:, None] + np.arange(n)
                vals = data[sidx]
                reads = None
                if sp == "shared":
                    A.check_async_read(pc, sidx, ln[kk], ins.full_opcode)
                    reads = (flat, flat + n)
                M._account(pc, sp, "load", ln[kk], a, n)
            else:
                kk, vals, reads = source(ln, n)
            ln2 = ln[kk]
            got = M.resolve(pc, dst_space, ln2, dst_all[k][kk], n, "store", align=16)
            if not got:
                continue
            sp, data, _, sel2, flat, a = got[0]
            k3 = np.arange(len(ln2)) if sel2 is None else sel2
            if reads is not None:
                reads = (reads[0][k3], reads[1][k3])
            ln3 = ln2[k3]
            dst = (sp, flat[:, None] + np.arange(n))
            if mfn is not None and sp == "shared":
                s = per[ln3]
                A.issue(Op(name, pc, ln3, np.zeros(len(ln3), np.int64), dst, vals[k3], reads, mbar=s, tx=n))
            else:
                A.issue(Op(name, pc, ln3, A.bulk_commits[ln3].copy(), dst, vals[k3], reads))
            M.bytes_store[sp] = M.bytes_store.get(sp, 0) + len(ln3) * n
            if M.mem_listeners:
                M.emit(pc, ln3, space=sp, kind="async_store", width=n, addresses=a)
    return run


# ---------------------------------------------------------------------------------- TMA (tensor maps)
limit("cp.async.bulk.tensor", "tile mode (interleaved 16B/32B maps of whole channel slices included) and .im2col loads; "
      ".im2col::w, .im2col::w::128, .im2col_no_offs stores and gather4/scatter4 are not simulated; "
      ".multicast::cluster runs with ctaMask 0x1 only (every CTA is a cluster of one)")


@op("cp.async.bulk.tensor")
def _bulk_tensor(M, pc, ins, canon, ms, mods):
    """``cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r7], [%rd11, {%r72, %r37}], [%r5];``
    (a box of the tensor map at %rd11 -> shared, complete_tx on the mbarrier) and
    ``cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd14, {%r36, %r37}], [%r7];`` (shared -> the
    box's in-bound elements, a bulk group): tile mode, :mod:`sim.ptx.tensormap`."""
    from ..tensormap import IM2COL, SIZE, TensorMap

    ops = list(ins.operands)
    im2col = "im2col" in ms
    if any(m.startswith("im2col") and m != "im2col" for m in ms):
        what = next(m for m in ms if m.startswith("im2col") and m != "im2col")
        return not_implemented(M, ins, f"cp.async.bulk.tensor .{what} mode (tile and .im2col only)")
    if any(m.startswith("tile::") for m in ms):
        what = next(m for m in ms if m.startswith("tile::"))
        return not_implemented(M, ins, f"cp.async.bulk.tensor .{what} mode (tile and .im2col only)")
    multicast = any(m.startswith("multicast") for m in ms)
    k = next((i for i, o in enumerate(ops[:2]) if isinstance(o, ir.Address) and o.coords is not None), None)
    if k is None:
        raise M.error(f"{ins.full_opcode} needs a tensor-map operand [map, {{coordinates}}]", ins)
    load = k == 1
    tm = ops[k]
    t_space, tfn = M.address(ir.Address(tm.base, tm.offset), ins)
    cfns = [M.src(e, "s32", ins) for e in tm.coords.elements]
    _, sfn = M.address(ops[0 if load else 1], ins)          # the shared side
    mfn = M.address(ops[2], ins)[1] if load and len(ops) > 2 and isinstance(ops[2], ir.Address) else None
    maskfn = None
    ofns = None
    nxt = 3
    if im2col:
        if not load or mfn is None or len(ops) < 4 or not isinstance(ops[3], ir.Vector):
            raise M.error(f"{ins.full_opcode}: .im2col is a global -> shared copy with an mbarrier and the im2col "
                          "offsets: [dstMem], [tensorMap, {coordinates}], [mbar], {offsets}", ins)
        ofns = [M.src(e, "u16", ins) for e in ops[3].elements]
        nxt = 4
    if multicast:
        if not load or mfn is None or len(ops) <= nxt:
            raise M.error(f"{ins.full_opcode}: .multicast::cluster is a global -> shared copy with an mbarrier and "
                          "a ctaMask operand: [dstMem], [tensorMap, {coordinates}], [mbar], ctaMask", ins)
        maskfn = M.src(ops[nxt], "u16", ins)
    cache: dict[bytes, TensorMap] = {}

    def maps(lanes, sub):
        """Per lane: the decoded tensor map (lanes whose map cannot be read are reported and dropped)."""
        addr = tfn(sub)
        out_l, out_m = [], []
        for sp, data, _, sel, flat, a in M.resolve(pc, t_space, lanes, addr, SIZE, "load", align=64):
            ln = lanes if sel is None else lanes[sel]
            raw = data[flat[:, None] + np.arange(SIZE)]
            for j in range(len(ln)):
                key = raw[j].tobytes()
                t = cache.get(key)
                if t is None:
                    t = TensorMap.decode(key)
                    if t is None:
                        raise M.error(f"{ins.full_opcode}: the 128 bytes at 0x{int(a[j]):x} ({sp}) are not a tensor "
                                      "map (describe the CUtensorMap parameter in the launch spec: "
                                      "{\"tensor_map\": ..., \"of\": BUFFER, ...})", ins)
                    if t.rank != len(cfns):
                        raise M.error(f"{ins.full_opcode} gives {len(cfns)} coordinates; the tensor map has rank "
                                      f"{t.rank}", ins)
                    if (t.mode == IM2COL) != im2col:
                        raise M.error(f"{ins.full_opcode}: the tensor map is encoded for "
                                      f"{'im2col' if t.mode == IM2COL else 'tile'} mode, the copy is in "
                                      f"{'im2col' if im2col else 'tile'} mode", ins)
                    if im2col and len(ofns) != t.rank - 2:
                        raise M.error(f"{ins.full_opcode} gives {len(ofns)} im2col offsets; a rank-{t.rank} map "
                                      f"takes {t.rank - 2}", ins)
                    cache[key] = t
                out_l.append(int(ln[j]))
                out_m.append(t)
        return np.array(out_l, np.int64), out_m

    def run(m):
        lanes = M.lanes_of(m)
        if len(lanes) == 0:
            return
        A = M.asyncs
        sub = None if m is None else lanes
        coords_all = np.stack([per_thread_i64(M, f) for f in cfns], axis=1)
        offs_all = None if ofns is None else np.stack(
            [per_thread_i64(M, f) for f in ofns], axis=1)
        smem_all = np.broadcast_to(sfn(sub), (len(lanes),))
        pos = {int(l): i for i, l in enumerate(lanes)}
        ln_all, tms = maps(lanes, sub)
        if maskfn is not None:
            _multicast_mask(M, ins, per_thread_i64(M, maskfn)[ln_all])
        if mfn is not None:
            lanes_m, slots_m = _mbar_slots(M, pc, m, mfn, lanes)
            per = np.full(M.T, -1, np.int64)
            per[lanes_m] = slots_m
        G = M.gmem.data
        for j, lane in enumerate(ln_all.tolist()):
            t = tms[j]
            ln = np.array([lane], np.int64)
            i = pos[lane]
            off, inb = t.box_elements(coords_all[lane][None, :], None if offs_all is None else offs_all[lane][None, :])
            gaddr = np.uint64(t.address) + off.astype(np.uint64)          # [1, E]
            es = t.esize
            nb = t.box_bytes
            got = M.resolve(pc, "shared", ln, smem_all[i:i + 1], nb, "store" if load else "load", align=128)
            if not got:
                continue
            _, _, _, _, sflat, sa = got[0]
            sidx = sflat[:, None] + (t.shared_offsets(smem_all[i:i + 1]) - smem_all[i:i + 1].astype(np.int64)[:, None])
            sidx = np.minimum(sidx, M.shared.data.size - 1)
            ein = np.flatnonzero(inb[0])
            gflat = None
            if len(ein):
                gflat, ok = M.gmem.check(gaddr[0, ein], es)
                if not ok.all():
                    M.report("out_of_bounds", pc, ln, f"{ins.full_opcode}: the tensor map ({t.describe()}) reaches "
                             "past its buffer", addresses=gaddr[0, ein[~ok]][:1])
                    continue
                gidx = gflat[:, None] + np.arange(es)
            if load:
                vals = np.tile(t.fill_bytes(), inb.shape[1]).reshape(inb.shape[1], es)
                if len(ein):
                    vals[ein] = G[gidx]
                    M._account(pc, "global", "load", np.repeat(ln, len(ein)), gaddr[0, ein], es)
                vals = vals.reshape(1, nb)
                if mfn is not None:
                    A.issue(Op(canon, pc, ln, np.zeros(1, np.int64), ("shared", sidx), vals, None,
                               mbar=per[ln], tx=nb))
                else:
                    A.issue(Op(canon, pc, ln, A.bulk_commits[ln].copy(), ("shared", sidx), vals, None))
                M.bytes_store["shared"] = M.bytes_store.get("shared", 0) + nb
                if M.mem_listeners:
                    M.emit(pc, ln, space="shared", kind="async_store", width=nb, addresses=sa)
            else:
                A.check_async_read(pc, sidx.reshape(-1), ln, ins.full_opcode)
                if not len(ein):
                    continue
                bidx = sidx.reshape(inb.shape[1], es)[ein]
                vals = M.shared.data[bidx].reshape(1, -1)
                reads = (sidx.min(axis=1), sidx.max(axis=1) + 1)
                M._account(pc, "shared", "load", ln, sa, nb)
                A.issue(Op(canon, pc, ln, A.bulk_commits[ln].copy(), ("global", gidx.reshape(1, -1)), vals, reads))
                M.bytes_store["global"] = M.bytes_store.get("global", 0) + len(ein) * es
    return run


def _multicast_mask(M, ins, masks):
    """``.multicast::cluster``: bit i of the 16-bit ctaMask names the CTA of %cluster_ctarank i, and the box
    lands at the same CTA-relative offset of each one's shared memory, with complete_tx on the mbarrier at the
    same offset in each (PTX ISA, cp.async.bulk.tensor).  The simulator runs every CTA as a cluster of one
    (%cluster_nctarank = 1, rank 0), so the only mask it can honour is 0x1, which is the unicast copy; any
    other mask names CTAs that do not exist here and is refused with the reason."""
    bad = masks[(masks & 0xFFFF) != 1]
    if len(bad):
        m = int(bad[0]) & 0xFFFF
        ranks = [i for i in range(16) if m >> i & 1]
        what = "names no CTA" if not ranks else f"names the CTAs of cluster rank {ranks}"
        raise M.error(f"{ins.full_opcode}: ctaMask 0x{m:x} {what}; the simulator runs every CTA as a cluster of "
                      "one (%cluster_nctarank = 1, clusters of several CTAs are not simulated), so only ctaMask "
                      "0x1 (this CTA) can run", ins)


@op("prefetch", "prefetchu", "applypriority", "discard", "cp.async.bulk.prefetch", "cp.async.bulk.prefetch.tensor")
def _noop_mem(M, pc, ins, canon, ms, mods):
    return lambda m: None


@op("createpolicy")
def _createpolicy(M, pc, ins, canon, ms, mods):
    d = M.dst(ins.operands[0], "b64", ins)
    return lambda m: d.m(np.uint64(0), m)


# ---------------------------------------------------------------------------------- mbarrier
TOKEN = np.uint64(0x4B4C000000000000)     # state tokens: marker | phase number


@op("mbarrier.init", "mbarrier.arrive", "mbarrier.arrive_drop", "mbarrier.expect_tx", "mbarrier.complete_tx",
    "mbarrier.inval", "mbarrier.pending_count")
def _mbarrier(M, pc, ins, canon, ms, mods):
    """mbarrier objects with phases (ISA 9.7.13.15): ``init`` sets the expected arrival count,
    ``arrive``/``arrive_drop`` count down the pending arrivals (``.expect_tx`` first adds to the
    tx-count), ``expect_tx``/``complete_tx`` move the tx-count; a phase completes when both reach
    zero. ``arrive`` returns a state token naming the phase it arrived on."""
    ops = list(ins.operands)
    kind = canon.split(".", 1)[1]
    if kind == "pending_count":
        d = M.dst(ops[0], "u32", ins)
        return lambda m: d.m(np.uint32(0), m)
    addr_i = next((i for i, o in enumerate(ops) if isinstance(o, ir.Address)), None)
    if addr_i is None:
        raise M.error(f"{ins.full_opcode} needs an mbarrier address operand", ins)
    _, afn = M.address(ops[addr_i], ins)
    rest = ops[addr_i + 1:]
    d = M.dst(ops[0], "b64", ins) if addr_i == 1 else None
    if kind == "init":
        cnt = M.src(ops[1], "u32", ins)

        def init(m):
            lanes = M.lanes_of(m)
            if len(lanes) == 0:
                return
            M.store(pc, "shared", m, afn, 8,
                    lambda lanes: np.broadcast_to(np.asarray(cnt()).astype(np.uint64),
                                                  (M.T,))[M.all_lanes if lanes is None else lanes][:, None].copy())
            ln, s = _mbar_slots(M, pc, m, afn, lanes, create=True)
            M.asyncs.mbar.init(s, per_thread_i64(M, cnt)[ln])
        return init
    if kind == "inval":
        return lambda m: None
    expect = "expect_tx" in ms or kind in ("expect_tx", "complete_tx")
    count_src = M.src(rest[0], "u32", ins) if rest else None

    def run(m):
        lanes = M.lanes_of(m)
        if len(lanes) == 0:
            return
        B = M.asyncs.mbar
        ln, s = _mbar_slots(M, pc, m, afn, lanes)
        if len(ln) == 0:
            return
        B.progress += 1
        c = per_thread_i64(M, count_src)[ln] if count_src is not None else 1
        if d is not None:
            tok = TOKEN | B.phase[s].astype(np.uint64)
            full = np.zeros(M.T, np.uint64)
            full[ln] = tok
            d.at(full[ln], ln)
        if kind == "expect_tx":
            B.add_tx(s, c)
        elif kind == "complete_tx":
            B.add_tx(s, -np.asarray(c))
        elif expect:                                   # arrive.expect_tx: tx first, then one arrival
            B.add_tx(s, c)
            B.arrive(s, 1, drop=kind == "arrive_drop")
        else:
            B.arrive(s, c, drop=kind == "arrive_drop")
    return run


@op("mbarrier.test_wait", "mbarrier.try_wait")
def _mbarrier_wait(M, pc, ins, canon, ms, mods):
    """``mbarrier.try_wait.parity.shared::cta.b64 P1, [%r4], %r7;``: true once the phase named by
    the parity (or the state token) has completed. Copies that complete the phase land here, if
    they have not yet. A wait that fails for every thread of a path lets a sibling path run
    (a producer warp, say); when nothing can change the barrier any more, ``deadlock`` is reported
    for the CTA (kernel, line, thread) and its waiting threads stop, instead of hanging. A
    ``test_wait`` (non-blocking) that fails is a deadlock only when a loop repeats it 64 times
    with nothing changing."""
    from . import guard_mask

    ops = list(ins.operands)
    d = M.dst(ops[0], "pred", ins)
    _, afn = M.address(ops[1], ins)
    parity = "parity" in ms
    tok = M.src(ops[2], "u32" if parity else "b64", ins)
    G = guard_mask(M, ins)
    nxt = pc + 1
    try_ = canon == "mbarrier.try_wait"

    def wait(M, stack, top):
        mask = top.mask if G is None else top.mask & G()
        top.pc = nxt
        lanes = np.flatnonzero(mask)
        if len(lanes) == 0:
            return
        B = M.asyncs.mbar
        ln, s = _mbar_slots(M, pc, mask, afn, lanes)
        t = np.broadcast_to(np.asarray(tok()), (M.T,))[ln]

        def done():
            ph = B.phase[s]
            if parity:
                return (ph & 1) != (t.astype(np.int64) & 1)
            return ph != (t.astype(np.uint64) & ~TOKEN).astype(np.int64)
        ok = done()
        if not ok.all():
            M.asyncs.complete_for_mbarrier(pc, distinct(s[~ok]), ln[~ok])
            ok = done()
        res = np.zeros(M.T, bool)
        res[ln] = ok
        d.m(res, mask)
        if ok.any():
            M.asyncs.observe(pc, ln[ok], s[ok])
            M.spin_reset()
            return
        top.pc = nxt
        if try_:
            top.pc = pc                               # nothing succeeded: retry here
        if not M.spin(stack, top, B.progress, patience=0 if try_ else 64):
            cta_l = distinct(M.cta_local[ln])
            for c in cta_l[:8]:
                i = ln[M.cta_local[ln] == c]
                sl = int(s[M.cta_local[ln] == c][0])
                M.report_cta("deadlock", pc, int(c),
                             f"{ins.full_opcode} can never succeed: phase {int(B.phase[sl])} of the mbarrier has "
                             f"{int(B.pending[sl])} pending arrival(s) and tx-count {int(B.tx[sl])}, and no thread "
                             f"that could complete it is running (the CTA would hang); its waiting threads stop here",
                             lane=int(i[0]))
            M.retire(stack, mask)
            top.pc = nxt
    return 1, wait


limit("atom", "vector atomics other than add/min/max on f32/f16/bf16")
