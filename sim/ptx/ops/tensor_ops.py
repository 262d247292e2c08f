"""Tensor-core and matrix data-movement instructions, wired to :mod:`sim.ptx.tensor`::

    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r144, %r145, %r146, %r147}, [%r202+32768];
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,..}, {%r31,..}, {%r36,%r37}, {%f1,..};
    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1,..8}, [%rd22], %r50;
    wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {32 regs}, %rd17, %rd18, %p13, 1, 1, 0, 1;

These are warp-wide (warpgroup-wide for wgmma): every warp with an active lane takes part, and
the register fragments of those warps are gathered into ``[W, 32, R]`` arrays. Addresses are
checked (bounds, alignment, uninitialised shared memory) before the tensor functions read them.
"""

from __future__ import annotations

import numpy as np

from isa import ir
from isa.errors import SimulationError

from ..dtypes import TYPE_WORDS, UINT, types_of
from ..memory import GLOBAL_BASE, gather, unwritten
from . import limit, not_implemented, op, per_thread_i64
from .memory import space_of

WARP = 32
U64 = np.uint64


def _regs(o):
    return list(o.elements) if isinstance(o, ir.Vector) else [o]


def _warps(M, m, group: int = 1):
    """Indices of warps (in the batch) with an active lane, widened to whole groups of ``group``."""
    if m is None:
        return np.arange(M.T // WARP)
    act = m.reshape(-1, WARP).any(axis=1)
    if group > 1:
        act = np.repeat(act.reshape(-1, group).any(axis=1), group)
    return np.flatnonzero(act)


def _lanes(w):
    return (w[:, None] * WARP + np.arange(WARP)).reshape(-1)


class Fragment:
    """Register operand list -> [W, 32, R] uint32 and back (uint64 for 64-bit fragments: f64)."""

    def __init__(self, M, ins, op_, bits: int = 32):
        self.M = M
        self.ops = _regs(op_)
        t = "b64" if bits == 64 else "b32"
        self.dtype = np.uint64 if bits == 64 else np.uint32
        self.srcs = [M.src(e, t, ins) for e in self.ops]
        self.dsts = [M.dst(e, t, ins) if isinstance(e, ir.Register) else None for e in self.ops]
        self.keys = tuple(M.reg_key(e.name, ins.scope) for e in self.ops if isinstance(e, ir.Register))

    def read(self, w) -> np.ndarray:
        n = len(w) * WARP
        lanes = None if n == self.M.T else _lanes(w)          # every warp of the batch: no gather
        dt = self.dtype
        out = np.empty((len(self.srcs), n), dt)                 # register rows: contiguous copies
        for k, s in enumerate(self.srcs):
            v = np.asarray(s())
            if not v.ndim:
                out[k] = v.astype(dt)
            else:
                out[k] = v.view(dt) if lanes is None else v.view(dt)[lanes]
        return out.T.reshape(len(w), WARP, len(self.srcs))

    def write(self, w, regs) -> None:
        n = len(w) * WARP
        lanes = None if n == self.M.T else _lanes(w)
        regs = np.asarray(regs, dtype=self.dtype).reshape(n, -1)
        for k, d in enumerate(self.dsts):
            if d is not None:
                d.at(regs[:, k], lanes)


def _reraise(M, ins, fn):
    try:
        return fn()
    except SimulationError as exc:
        raise M.error(exc.message, ins) from None


def _check_shared_rows(M, pc, lanes, addr, width, kind):
    """Validate per-row shared addresses; returns flat indices (or None if some lane was bad)."""
    groups = M.resolve(pc, "shared", lanes, addr, width, kind)
    sp, data, written, sel, flat, a = groups[0]
    if sel is not None:
        return None, None
    if written is not None and kind == "load" and M.check_uninit:
        bad = unwritten(written, flat, 8, width // 8)
        if bad.any():
            idx = np.flatnonzero(bad)
            M.report("uninitialized_shared", pc, lanes[idx],
                     lambda x: f"{width}-byte row read from shared 0x{x:x} has bytes no thread wrote",
                     addresses=addr[idx], buffer=lambda x: M.shared_var_at(x))
    return flat, a


@op("ldmatrix", "stmatrix")
def _ldmatrix(M, pc, ins, canon, ms, mods):
    from sim.ptx.tensor import ldmatrix, ldmatrix_addresses, stmatrix

    num = int(next(m for m in mods if m in ("x1", "x2", "x4"))[1:])
    trans = "trans" in ms
    load = canon == "ldmatrix"
    frag = Fragment(M, ins, ins.operands[0] if load else ins.operands[1])
    space, afn = M.address(ins.operands[1] if load else ins.operands[0], ins)
    if space is None and not ms & {"shared", "shared::cta"}:
        # no state space: the address is generic and must fall in the shared window (ISA 9.7.14.5.15)
        from ..memory import WINDOWS

        generic_fn, window = afn, U64(WINDOWS["shared"])
        afn = lambda lanes: generic_fn(lanes) - window  # noqa: E731

    def f(m):
        w = _warps(M, m)
        if len(w) == 0:
            return
        lanes = _lanes(w)
        addr = afn(lanes).reshape(len(w), WARP)
        rows, used = ldmatrix_addresses(num, addr.astype(np.int64))
        ul = lanes.reshape(len(w), WARP)[used]
        flat, a = _check_shared_rows(M, pc, ul, rows[used].astype(U64), 16, "load" if load else "store")
        if flat is None:
            return
        base = (M.cta_local[lanes] * M.shared.stride).reshape(len(w), WARP)
        faddr = addr.astype(np.int64) + base
        if load:
            regs = _reraise(M, ins, lambda: ldmatrix(num, trans, M.shared.data, faddr))
            frag.write(w, regs)
        else:
            _reraise(M, ins, lambda: stmatrix(num, trans, M.shared.data, faddr, frag.read(w)))
            if M.shared.written is not None:
                from ..memory import mark_written
                mark_written(M.shared.written, flat, 8, 2)
            if M.tags is not None:
                M.tag_writes(flat, 16, ul)
        kind = "load" if load else "store"
        d = M.bytes_load if load else M.bytes_store
        d["shared"] = d.get("shared", 0) + len(ul) * 16
        if M.mem_listeners:
            if num == 4:                                  # every lane gives a row address
                M.emit_warps(pc, w, space="shared", kind=kind, width=16, addresses=a.reshape(len(w), WARP))
            else:
                M.emit(pc, ul, space="shared", kind=kind, width=16, addresses=a)
    return f


@op("movmatrix")
def _movmatrix(M, pc, ins, canon, ms, mods):
    from sim.ptx.tensor import movmatrix

    d = Fragment(M, ins, ins.operands[0])
    a = Fragment(M, ins, ins.operands[1])

    def f(m):
        w = _warps(M, m)
        if len(w):
            d.write(w, movmatrix(a.read(w)[..., 0])[..., None])
    return f


def mma_types(mods) -> list[str]:
    """The element-type modifiers of an mma-like instruction in source order (``.b1`` included)."""
    return [m for m in mods if m in TYPE_WORDS or m == "b1"]


def _fragment_bits(t: str) -> int:
    return 64 if t == "f64" else 32


@op("mma")
def _mma(M, pc, ins, canon, ms, mods):
    from sim.ptx.tensor import mma_sync
    from sim.ptx.tensor.mma import BIT_OPS

    shape = next(m for m in mods if m.startswith("m") and "n" in m and "k" in m)
    ts = mma_types(mods)
    if len(ts) < 4:
        return not_implemented(M, ins, ins.full_opcode)
    d_t, a_t, b_t, c_t = ts[:4]
    lay = [m for m in mods if m in ("row", "col")]
    la, lb = (lay + ["row", "col"])[:2]
    sat = "satfinite" in ms
    bitop = next((m for m in mods if m in BIT_OPS), None)
    D, A, B, C = (Fragment(M, ins, o, _fragment_bits(t)) for o, t in zip(ins.operands[:4], (d_t, a_t, b_t, c_t)))

    def f(m):
        w = _warps(M, m)
        if len(w) == 0:
            return
        out = _reraise(M, ins, lambda: mma_sync(shape, a_t, b_t, c_t, d_t, la, lb, A.read(w), B.read(w), C.read(w),
                                                satfinite=sat, bitop=bitop))
        D.write(w, out)
    return f


def wmma_accesses(operand: str, layout: str, etype: str, shape: str) -> tuple[tuple[int, int], ...]:
    """The LSU accesses a ``wmma.load``/``wmma.store`` becomes, as (first element, bytes) pairs.

    ptxas loads each distinct fragment element once (f16 A/B registers 4-7 repeat 0-3) and merges
    elements that are adjacent in memory for every lane, in register order, into one aligned vector
    access of up to 16 bytes: ``wmma.load.a.row.f16`` -> 4 x LDG.32 (8 sectors each for a 16x16
    tile), ``wmma.store.d.row.f32`` -> 4 x STG.64 (registers 0-1, 2-3, 4-5, 6-7), as Nsight Compute
    counts them on H200 (examples/h200: 32 load sectors per A or B tile, 32 store sectors per C).
    Layouts where a register's elements are apart in memory (``.col`` A) give one access per
    element (not measured on hardware).
    """
    from sim.ptx.tensor import wmma_addresses
    from sim.ptx.tensor.wmma import wmma_unit

    size = wmma_unit(etype)[0]
    el = wmma_addresses(operand, layout, etype, np.zeros(1, np.int64), 1 << 16, shape)[0]   # [32, E]
    units = []
    seen = set()
    for e in range(el.shape[1]):
        key = el[:, e].tobytes()
        if key not in seen:
            seen.add(key)
            units.append((e, el[:, e]))
    out = []
    i = 0
    while i < len(units):
        first, a0 = units[i]
        n = 1
        while i + n < len(units) and (n + 1) * size <= 16 and np.array_equal(units[i + n][1], a0 + size * n):
            n += 1
        while n > 1 and (n & (n - 1) or (a0 % (size * n)).any()):
            n -= 1                                      # a vector access is 2^k elements, aligned
        out.append((first, size * n))
        i += n
    return tuple(out)


@op("wmma.load", "wmma.store")
def _wmma_mem(M, pc, ins, canon, ms, mods):
    from sim.ptx.tensor import pack, unpack, wmma_addresses

    load = canon == "wmma.load"
    operand = "d" if not load else next(m for m in mods if m in ("a", "b", "c"))
    layout = next(m for m in mods if m in ("row", "col"))
    shape = next(m for m in mods if m.startswith("m") and "n" in m and "k" in m)
    ts = mma_types(mods)
    etype = ts[-1]
    space = space_of(mods)
    if space == "generic":
        space = "global"
    from sim.ptx.tensor.fragments import parse_shape
    from sim.ptx.tensor.wmma import wmma_unit
    esize, bits = wmma_unit(etype)
    frag = Fragment(M, ins, ins.operands[0] if load else ins.operands[1], bits)
    _, afn = M.address(ins.operands[1] if load else ins.operands[0], ins)
    stride_op = ins.operands[2] if len(ins.operands) > 2 else None
    stride = M.src(stride_op, "u32", ins) if stride_op is not None else None
    # no stride operand: the leading dimension of the matrix in its layout
    m_, n_, k_ = parse_shape(shape)
    rows_cols = {"a": (m_, k_), "b": (k_, n_), "c": (m_, n_), "d": (m_, n_)}[operand]
    lead = rows_cols[1] if layout == "row" else rows_cols[0]
    try:
        accesses = wmma_accesses(operand, layout, etype, shape)
    except SimulationError as exc:
        raise M.error(exc.message, ins) from None
    kind = "load" if load else "store"
    per_lane_bytes = sum(b for _, b in accesses)
    offsets: dict = {}

    def element_offsets(st, nw):
        """Byte offsets of every fragment element from the base, [W, 32, E], and their min and
        max per warp; the same strides recur on every k-step."""
        key = (st.tobytes() if isinstance(st, np.ndarray) else st, nw)
        hit = offsets.get(key)
        if hit is None:
            el = wmma_addresses(operand, layout, etype, np.zeros(nw, np.int64), st, shape)   # [W, 32, E]
            if len(offsets) >= 64:
                offsets.clear()
            hit = offsets[key] = (el, el.min(axis=(1, 2)), el.max(axis=(1, 2)))
        return hit

    def in_bounds(first, addr, lo, hi):
        """Flat byte index base per warp when every warp's whole tile [addr+lo, addr+hi+esize) lies
        in one buffer (global) or in the CTA's shared memory and the base is aligned; else None
        (the element-wise check then reports what is wrong)."""
        a = addr.astype(np.int64)
        if (a % esize).any():
            return None
        lo, hi = a + lo, a + hi + esize
        if space == "shared":
            if (lo < 0).any() or (hi > M.shared.size).any():
                return None
            return M.cta_local[first] * M.shared.stride
        g = M.gmem
        k = np.searchsorted(g.bases, lo.astype(U64), side="right").astype(np.int64) - 1
        if (k < 0).any() or (hi.astype(U64) > g.ends[np.maximum(k, 0)]).any():
            return None
        return np.full(len(first), -GLOBAL_BASE, np.int64)

    def f(m):
        w = _warps(M, m)
        if len(w) == 0:
            return
        first = w * WARP
        addr = afn(first)
        st = lead if stride is None else per_thread_i64(M, stride)[first]
        el, lo, hi = element_offsets(st, len(w))
        full = addr[:, None, None].astype(np.int64) + el
        base = in_bounds(first, addr, lo, hi)
        if base is not None:
            data = M.shared.data if space == "shared" else M.gmem.data
            idx = (full + base[:, None, None]).reshape(-1) // esize
        else:
            lanes = np.repeat(_lanes(w), el.shape[2])
            groups = M.resolve(pc, space, lanes, full.reshape(-1).astype(U64), esize, kind)
            if groups[0][3] is not None:
                return
            # resolve checked bounds and alignment and gave the flat byte index of every element
            data = groups[0][1]
            idx = groups[0][4] // esize
        # one element gather/scatter (what wmma_load / wmma_store do from base and stride)
        view = data.view(UINT[esize])
        if load:
            frag.write(w, pack(view[idx].reshape(el.shape), bits))
        else:
            regs = frag.read(w)
            per = max(1, 32 // bits)                          # elements per register (f64: 1)
            if regs.shape[2] * per != el.shape[2]:
                raise M.error(f"wmma.store of .{etype} takes {el.shape[2] // per} registers", ins)
            view[idx] = unpack(regs, bits).reshape(-1)
        d = M.bytes_load if load else M.bytes_store
        d[space] = d.get(space, 0) + len(w) * WARP * per_lane_bytes
        if M.mem_listeners:
            for e, nb in accesses:
                M.emit_warps(pc, w, space=space, kind=kind, width=nb, addresses=full[:, :, e].astype(U64))
    return f


@op("wmma.mma")
def _wmma_mma(M, pc, ins, canon, ms, mods):
    from sim.ptx.tensor import wmma_mma
    from sim.ptx.tensor.mma import BIT_OPS

    shape = next(m for m in mods if m.startswith("m") and "n" in m and "k" in m)
    ts = mma_types(mods)
    # .dtype.ctype (f16 a/b implied) or .dtype.atype.btype.ctype (ISA 9.7.14.4.5)
    if len(ts) >= 4:
        d_t, a_t, b_t, c_t = ts[:4]
    else:
        d_t, c_t = ts[0], ts[-1]
        a_t = b_t = "f16"
    sat = "satfinite" in ms
    bitop = next((m for m in mods if m in BIT_OPS), None)
    D, A, B, C = (Fragment(M, ins, o, _fragment_bits(t)) for o, t in zip(ins.operands[:4], (d_t, a_t, b_t, c_t)))

    def f(m):
        w = _warps(M, m)
        if len(w) == 0:
            return
        out = _reraise(M, ins, lambda: wmma_mma(a_t, b_t, c_t, d_t, A.read(w), B.read(w), C.read(w), sat, shape,
                                                bitop))
        D.write(w, out)
    return f


@op("wgmma.mma_async")
def _wgmma(M, pc, ins, canon, ms, mods):
    from sim.ptx.tensor import wgmma_mma_async, wgmma_smem_addresses
    from sim.ptx.tensor.elements import element_type

    shape = next(m for m in mods if m.startswith("m64"))
    ts = types_of(mods)
    d_t, a_t, b_t = ts[:3]
    sat = "satfinite" in ms
    ops = list(ins.operands)
    D = Fragment(M, ins, ops[0])
    a_regs = isinstance(ops[1], ir.Vector)
    A = Fragment(M, ins, ops[1]) if a_regs else M.src(ops[1], "b64", ins)
    Bd = M.src(ops[2], "b64", ins)
    scale = M.src(ops[3], "pred", ins) if not isinstance(ops[3], ir.Immediate) else None
    scale_imm = bool(ops[3].value) if isinstance(ops[3], ir.Immediate) else None
    imms = [int(o.value) for o in ops[4:]]
    isa_, isb = (imms + [1, 1])[:2]
    tra, trb = 0, 0
    if len(imms) >= 4:
        tra, trb = imms[2], imms[3]
    elif len(imms) == 3:
        trb = imms[2]

    esz_a, esz_b = (element_type(t).bits // 8 for t in (a_t, b_t))
    seen: dict = {}

    def operands(w, first, a, bd):
        """The flat shared-memory element indices this instruction reads, per (descriptors, CTAs):
        descriptors repeat across k-steps and launches, so addresses are computed once."""
        ctas = M.cta_local[first]
        key = (bd.tobytes(), None if a_regs else a.tobytes(), ctas.tobytes())
        hit = seen.get(key)
        if hit is not None:
            return hit
        a_addr, b_addr = _reraise(M, ins, lambda: wgmma_smem_addresses(shape, a_t, b_t, None if a_regs else a, bd,
                                                                       tra, trb))
        idx = []
        for addrs, esz in ((a_addr, esz_a), (b_addr, esz_b)):
            if addrs is None:
                idx.append(None)
                continue
            flat_addr = addrs.reshape(len(w), -1)
            mx = int(flat_addr.max()) + esz if flat_addr.size else 0
            if mx > M.shared_size or int(flat_addr.min()) < 0:
                lanes = np.repeat(first, flat_addr.shape[1])
                M.resolve(pc, "shared", lanes, flat_addr.reshape(-1).astype(U64), esz, "load")
                return None
            # descriptor starts are 16-byte aligned and element offsets multiples of the size
            idx.append((addrs + (ctas * M.shared.stride).reshape((-1,) + (1,) * (addrs.ndim - 1))) // esz)
        if len(seen) >= 256:
            seen.clear()
        hit = seen[key] = tuple(idx)
        return hit

    def f(m):
        w = _warps(M, m, group=4)
        if len(w) == 0:
            return
        first = w * WARP
        bd = np.broadcast_to(np.asarray(Bd()).astype(U64), (M.T,))[first]
        a = A.read(w) if a_regs else np.broadcast_to(np.asarray(A()).astype(U64), (M.T,))[first]
        sd = scale_imm if scale is None else np.broadcast_to(np.asarray(scale()), (M.T,))[first]
        idx = operands(w, first, a, bd)
        if idx is None:
            return
        a_idx, b_idx = idx
        data = M.shared.data
        ops = (None if a_idx is None else data.view(UINT[esz_a])[a_idx], data.view(UINT[esz_b])[b_idx])
        A_ = M.asyncs
        d_in = D.read(w) if A_ is None else A_.wg_input(D, w)
        out = _reraise(M, ins, lambda: wgmma_mma_async(shape, d_t, a_t, b_t, d_in, a, bd, None, sd, isa_,
                                                       isb, tra, trb, sat, operands=ops))
        if A_ is None:
            D.write(w, out)
            return
        lo, hi = [], []
        for ix, esz in ((a_idx, esz_a), (b_idx, esz_b)):
            if ix is None:
                continue
            fl = ix.reshape(len(w), -1)
            lo.append(fl.min(axis=1) * esz)
            hi.append(fl.max(axis=1) * esz + esz)
            _check_async_operand(M, pc, ins, fl * esz, first)
        A_.wg_issue(pc, D, w, out, (np.stack(lo, 1), np.stack(hi, 1)))
    return f


def _check_async_operand(M, pc, ins, flat, first) -> None:
    """wgmma reads its shared operands through the async proxy: bytes an in-flight copy still
    writes, or generic writes not followed by ``fence.proxy.async``, are an ``async_race``."""
    A = M.asyncs
    fl = flat[:, ::max(1, flat.shape[1] // 4096)]
    if A.any_inflight:
        busy = (A.inflight[fl] > 0).any(axis=1)
        if busy.any():
            i = np.flatnonzero(busy)
            M.report("async_race", pc, first[i], f"{ins.full_opcode} reads shared operands that an asynchronous "
                     f"copy still in flight writes (its completion was not waited for: cp.async.wait_group / "
                     f"mbarrier wait missing)")
    A.check_async_read(pc, fl, first, ins.full_opcode)


@op("wgmma.commit_group", "wgmma.wait_group")
def _wgmma_group(M, pc, ins, canon, ms, mods):
    """``wgmma.commit_group.sync.aligned;`` groups the warpgroup's pending wgmma; ``wgmma.wait_group
    .sync.aligned 1;`` completes all but the newest group: their accumulators are written now."""
    if M.asyncs is None:
        return lambda m: None
    commit = canon == "wgmma.commit_group"
    n = int(ins.operands[0].value) if ins.operands and isinstance(ins.operands[0], ir.Immediate) else 0

    def f(m):
        w = _warps(M, m)
        if len(w) == 0:
            return
        if commit:
            M.asyncs.wg_commits[w] += 1
        elif M.asyncs.wg:
            M.asyncs.wg_wait(pc, w, n)
    return f


@op("mma.sp")
def _mma_sp(M, pc, ins, canon, ms, mods):
    """``mma.sp{::ordered_metadata}.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {d}, {a}, {b}, {c}, e, sel;``"""
    from sim.ptx.tensor.mma import mma_sp

    shape = next(m for m in mods if m.startswith("m") and "n" in m and "k" in m)
    ts = mma_types(mods)
    ops = list(ins.operands)
    if len(ts) < 4 or len(ops) < 6 or not isinstance(ops[5], ir.Immediate):
        return not_implemented(M, ins, ins.full_opcode)
    d_t, a_t, b_t, c_t = ts[:4]
    sat = "satfinite" in ms
    D, A, B, C = (Fragment(M, ins, o) for o in ops[:4])
    E = Fragment(M, ins, ops[4])
    sel = int(ops[5].value)

    def f(m):
        w = _warps(M, m)
        if len(w) == 0:
            return
        out = _reraise(M, ins, lambda: mma_sp(shape, a_t, b_t, c_t, d_t, A.read(w), B.read(w), C.read(w),
                                              E.read(w)[..., 0], sel, sat))
        D.write(w, out)
    return f


@op("tcgen05.mma", "wmma.load.c")
def _unsupported(M, pc, ins, canon, ms, mods):
    return not_implemented(M, ins, ins.full_opcode)


_unsupported.refuses = True
limit("mma.sp", "the sm_120a forms: .kind::f8f6f4 with e3m2/e2m3/e2m1, .kind::mxf8f6f4/mxf4 block scaling")


del gather
