"""Loads, stores, atomics and asynchronous copies::

    ld.global.nc.v4.f32 {%f7, %f8, %f9, %f10}, [%rd3];    st.shared.v2.b16 [%r233+0], {%rs17, %rs18};
    ld.param.u64 %rd18, [sgemm_naive_param_0];            ld.global.b32 { %r24 }, [ %rd25 + 0 ];
    atom.global.add.f32 %f26, [%rd25], %f46;              atom.global.cas.b32 %r4, [%rd27], %r99, %r2;
    cp.async.cg.shared.global [%r18], [%rd12], 16;        cp.async.ca.shared.global [%r40], [%rd33], 0x8, %r41;

Atomics run in a deterministic order: thread order in the launch (lane order within a warp,
warps in order, CTAs in order). ``cp.async`` copies at issue (zero-filling past ``src-size``);
``commit_group``/``wait_group`` then have nothing left to wait for.
"""

from __future__ import annotations

import numpy as np

from isa import ir

from ..dtypes import UINT, compute_dtype, nbytes, types_of
from ..memory import gather, mark_written, scatter
from . import not_implemented, op

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
            ss = np.broadcast_to(np.asarray(src_size()).astype(np.int64), (M.T,))[lanes]
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
            for size in np.unique(ss[part]):
                pk = part[ss[part] == size]
                for sp, data, _, sel, flat, a in M.resolve(pc, "global", lanes[pk], src[pk], int(size), "load",
                                                           align=1):
                    k = pk if sel is None else pk[sel]
                    raw[k, :size] = data[flat[:, None] + np.arange(size)]
                    M._account(pc, sp, "load", lanes[k], a, int(size))
        keep = np.flatnonzero(ok)
        for sp, data, written, sel, flat, a in M.resolve(pc, "shared", lanes[keep], dst[keep], cp, "store"):
            k = keep if sel is None else keep[sel]
            scatter(data, flat, vals[k], e)
            if written is not None:
                mark_written(written, flat, e, n)
            if M.tags is not None:
                M.tag_writes(flat, cp, lanes[k])
            M.bytes_store[sp] = M.bytes_store.get(sp, 0) + len(k) * cp
            if M.mem_listeners:
                M.emit(pc, lanes[k], space=sp, kind="async_store", width=cp, addresses=a)
    return run


@op("cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all", "cp.async.mbarrier.arrive",
    "prefetch", "prefetchu", "applypriority", "discard", "cp.async.bulk.commit_group",
    "cp.async.bulk.wait_group", "cp.async.bulk.wait_group.read")
def _noop_mem(M, pc, ins, canon, ms, mods):
    return lambda m: None


@op("createpolicy")
def _createpolicy(M, pc, ins, canon, ms, mods):
    d = M.dst(ins.operands[0], "b64", ins)
    return lambda m: d.m(np.uint64(0), m)


# ---------------------------------------------------------------------------------- mbarrier
@op("mbarrier.init", "mbarrier.arrive", "mbarrier.arrive_drop", "mbarrier.expect_tx", "mbarrier.test_wait",
    "mbarrier.try_wait", "mbarrier.inval", "mbarrier.complete_tx", "mbarrier.pending_count")
def _mbarrier(M, pc, ins, canon, ms, mods):
    """mbarrier as a functional no-op: copies complete at issue, so every wait succeeds at once.
    ``init`` writes the barrier word (so reads of it are initialised); waits return true."""
    ops = list(ins.operands)
    kind = canon.split(".", 1)[1]
    if kind in ("test_wait", "try_wait"):
        d = M.dst(ops[0], "pred", ins)
        return lambda m: d.m(np.True_, m)
    if kind == "init":
        _, afn = M.address(ops[0], ins)
        cnt = M.src(ops[1], "u32", ins)

        def init(m):
            M.store(pc, "shared", m, afn, 8,
                    lambda lanes: np.broadcast_to(np.asarray(cnt()).astype(np.uint64),
                                                  (M.T,))[M.all_lanes if lanes is None else lanes][:, None].copy())
        return init
    if kind in ("arrive", "arrive_drop", "pending_count") and ops and not isinstance(ops[0], ir.Address):
        d = M.dst(ops[0], "b64", ins)
        return lambda m: d.m(np.uint64(0), m)
    return lambda m: None
