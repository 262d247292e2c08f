"""Moves and conversions: ``mov`` (incl. pack/unpack and symbol addresses), ``cvt``, ``cvta``::

    mov.b32 %r20, {%rs2, %rs3};          # %r20 = %rs2 | %rs3 << 16
    mov.b64 {%r1, %r2}, %rd5;            # %r1 = low 32 bits
    mov.u32 %r32, dyn_smem;              # shared-space address of a variable
    cvt.rn.f16x2.f32 %r315, %r486, %r485;  # a -> UPPER half, b -> lower half
    cvt.rni.s32.f32 %r3, %f2;            # saturating float -> int
    cvta.to.global.u64 %rd9, %rd3;

Rounding lives in :mod:`sim.numerics`; common cases (f32 -> f16/bf16 nearest, int <-> f32
nearest, widening) take exact numpy fast paths.
"""

from __future__ import annotations

import numpy as np

from isa import ir

from ..dtypes import SINT, UINT, compute_dtype, is_float, nbytes, types_of
from ..memory import WINDOWS
from . import op
from .floating import F32, F64, bf16_bits, dec, flush32

U16, U32, U64 = np.uint16, np.uint32, np.uint64
FP8 = ("e4m3", "e5m2")


def _ty(mods, default="b32"):
    ts = types_of(mods)
    return ts[-1] if ts else default


# ---------------------------------------------------------------------------------- mov
def _mov_b128(M, ins, dst, src):
    """``mov.b128 %rq1, {%rd1, %rd2};`` packs (first element lowest), ``mov.b128 {%rd1, %rd2}, %rq1;``
    unpacks (also as four .b32), ``mov.b128 %rq2, %rq1;`` copies."""
    from .memory import b128_operand

    def halves_of(parts, ew):
        per = 64 // ew
        out = []
        for h in range(2):
            v = None
            for k in range(per):
                x = np.broadcast_to(np.asarray(parts[h * per + k]()).astype(U64), (M.T,)) << U64(ew * k)
                v = x if v is None else v | x
            out.append(v)
        return np.stack(out, axis=1)

    if isinstance(src, ir.Vector):
        n = len(src.elements)
        ew = 128 // n
        parts = [M.src(e, f"b{ew}", ins) for e in src.elements]
        d = b128_operand(M, ins, dst)
        return lambda m: np.copyto(d, halves_of(parts, ew), where=True if m is None else m[:, None])
    a = b128_operand(M, ins, src)
    if isinstance(dst, ir.Vector):
        n = len(dst.elements)
        ew = 128 // n
        per = 64 // ew
        outs = [M.dst(e, f"b{ew}", ins) for e in dst.elements]
        mask = U64((1 << ew) - 1) if ew < 64 else U64(0xFFFFFFFFFFFFFFFF)

        def unpack(m):
            for i, o in enumerate(outs):
                o.m(((a[:, i // per] >> U64(ew * (i % per))) & mask).astype(UINT[ew // 8]), m)
        return unpack
    d = b128_operand(M, ins, dst)
    return lambda m: np.copyto(d, a, where=True if m is None else m[:, None])


@op("mov")
def _mov(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    dst, src = ins.operands[0], ins.operands[1]
    if t == "b128":
        return _mov_b128(M, ins, dst, src)
    vec = next((int(m[1:]) for m in mods if m in ("v2", "v4")), 0)
    if vec:                                  # mov.v4.b32 v, {a, b, c, d}: element by element
        ds, ss = (list(o.elements) if isinstance(o, ir.Vector) else None for o in (dst, src))
        if ds is None or ss is None or len(ds) != vec or len(ss) != vec:
            raise M.error(f"mov.v{vec} moves a .v{vec} vector: both operands must be vector registers "
                          f"or {vec}-element {{...}} lists", ins)
        outs = [M.dst(e, t, ins) for e in ds]
        ins_ = [M.src(e, t, ins) for e in ss]

        def vmov(m):
            vals = [a() for a in ins_]       # read every source first: {v.y, v.x} swaps
            for o, v in zip(outs, vals):
                o.m(v, m)
        return vmov
    if isinstance(src, ir.Vector):           # pack
        n = len(src.elements)
        ew = 8 * nbytes(t) // n
        et = f"b{ew}"
        parts = [M.src(e, et, ins) for e in src.elements]
        cd = compute_dtype(t)
        wide = UINT[8]

        def pack():
            out = None
            for k, p in enumerate(parts):
                v = np.asarray(p()).astype(wide) << wide.type(ew * k)
                out = v if out is None else out | v
            return out.astype(cd)
        d = M.dst(dst, t, ins)
        return lambda m: d.m(pack(), m)
    if isinstance(dst, ir.Vector):           # unpack
        n = len(dst.elements)
        ew = 8 * nbytes(t) // n
        et = f"b{ew}"
        a = M.src(src, t, ins)
        outs = [M.dst(e, et, ins) for e in dst.elements]
        ecd = compute_dtype(et)
        mask = (1 << ew) - 1

        def unpack(m):
            v = np.asarray(a()).astype(U64)
            for k, w in enumerate(outs):
                w.m(((v >> U64(ew * k)) & U64(mask)).astype(ecd), m)
        return unpack
    d = M.dst(dst, t, ins)
    a = M.src(src, t, ins)
    static = getattr(a, "static", None)
    if d.conv is None and d.view is not None:
        view = d.view
        if static is not None:
            def f(m):
                if m is None:
                    view[...] = static
                else:
                    np.copyto(view, static, where=m, casting="unsafe")
            return f

        def g(m):
            if m is None:
                view[...] = a()
            else:
                np.copyto(view, a(), where=m, casting="unsafe")
        return g
    return lambda m: d.m(a(), m)


# ---------------------------------------------------------------------------------- cvta
@op("cvta")
def _cvta(M, pc, ins, canon, ms, mods):
    t = _ty(mods, "u64")
    space = next((s.split("::")[0] for s in mods if s.split("::")[0] in ("global", "shared", "local", "const",
                                                                         "param")), "global")
    to = "to" in ms
    base = 0 if space == "global" else WINDOWS[space]
    cd = compute_dtype(t)
    d = M.dst(ins.operands[0], t, ins)
    a = M.src(ins.operands[1], t, ins)
    if base == 0:
        return lambda m: d.m(a(), m)
    b = cd.type(base & ((1 << (8 * cd.itemsize)) - 1))
    if to:
        return lambda m: d.m(np.asarray(a()) - b, m)
    return lambda m: d.m(np.asarray(a()) + b, m)


# ---------------------------------------------------------------------------------- cvt
def decode_values(x, t: str):
    """Source bits/values of type ``t`` -> float64 (floats) or int64/uint64 (ints)."""
    if t in ("f32", "f64"):
        return np.asarray(x, dtype=F64)
    if t in ("f16", "bf16"):
        return dec(x, t)
    if t in FP8:
        from sim.numerics import decode
        return decode(np.asarray(x).astype(np.uint8), t)
    if t == "tf32":
        return np.asarray(x).astype(U32).view(F32).astype(F64)
    if t == "u64" or t == "b64":
        return np.asarray(x).astype(U64)
    return np.asarray(x).astype(np.int64)


def to_float_bits(v, src: str, dst: str, mode: str, ms, x=None):
    """Values (decoded source) -> destination float bits/values of ``dst`` with one rounding."""
    satfinite = "satfinite" in ms
    relu = "relu" in ms
    ftz = "ftz" in ms
    sat = "sat" in ms
    int_src = not is_float(src)
    from sim import numerics

    if int_src:
        if dst == "f32" and mode == "rn" and nbytes(src) <= 4 and not sat:
            return np.asarray(v).astype(F64).astype(F32)
        if dst == "f64" and nbytes(src) <= 4:
            return np.asarray(v).astype(F64)
        val = numerics.int_to_float(np.asarray(v), dst if dst not in ("f16", "bf16") else dst, mode)
        if sat:
            val = np.where(np.isnan(val), 0.0, np.clip(val, 0.0, 1.0))
        return _values_to(val, dst)
    if mode in ("rni", "rzi", "rmi", "rpi"):     # round to integral, same type
        val = numerics.round_integral(v, mode)
        if ftz and dst == "f32":
            val = flush32(val.astype(F32)).astype(F64)
        if sat:
            val = np.where(np.isnan(val), 0.0, np.clip(val, 0.0, 1.0))
        return _values_to(val, dst)
    if ftz and src == "f32":
        v = np.where(np.abs(v) < 2.0 ** -126, np.copysign(0.0, v), v)
    if relu:
        v = np.where(np.isnan(v), np.nan, np.maximum(v, 0.0))
    # fast exact paths
    if not (satfinite or sat):
        if dst == "f32" and (mode == "rn" or src in ("f16", "bf16", "f32", "tf32") or src in FP8):
            r = np.asarray(v).astype(F32)
            return flush32(r) if ftz else r
        if dst == "f64":
            return np.asarray(v, dtype=F64)
        if dst == "f16" and mode == "rn":
            return np.asarray(v, dtype=F32 if src == "f32" else F64).astype(np.float16).view(U16)
        if dst == "bf16" and mode == "rn" and src == "f32":
            return bf16_bits(np.asarray(v, dtype=F32))
        if dst == "bf16" and mode == "rz" and src == "f32":
            b = np.asarray(v, dtype=F32).view(U32)
            nan = np.isnan(np.asarray(v, dtype=F32))
            return np.where(nan, (b >> U32(16)) | U32(0x40), b >> U32(16)).astype(U16)
    if dst in ("f16", "bf16") + FP8:
        bits = numerics.encode(v, dst, mode, saturate=True if satfinite else None, ftz=ftz and dst != "f32")
        if sat:
            bits = numerics.encode(np.where(np.isnan(numerics.decode(bits, dst)), 0.0,
                                            np.clip(numerics.decode(bits, dst), 0.0, 1.0)), dst, "rn")
        return np.asarray(bits).astype(UINT[nbytes(dst)])
    val = numerics.round_float(v, dst, mode, True if satfinite else None, sat=sat, ftz=ftz)
    return _values_to(val, dst)


def _values_to(val, dst):
    """Exactly representable float64 values -> storage of ``dst``."""
    if dst == "f32":
        return np.asarray(val).astype(F32)
    if dst == "f64":
        return np.asarray(val, dtype=F64)
    from sim.numerics import values_to_bits
    return np.asarray(values_to_bits(np.asarray(val, dtype=F64), dst)).astype(UINT[nbytes(dst)])


def to_int(v, src: str, dst: str, mode: str | None, ms):
    from sim import numerics

    cd = compute_dtype(dst)
    if is_float(src):
        m = mode or "rzi"
        return numerics.float_to_int(np.asarray(v, dtype=F64), dst if dst[0] != "b" else "u" + dst[1:], m,
                                     src=src).astype(cd)
    if "sat" in ms:
        return numerics.saturate_int(v, dst if dst[0] != "b" else "u" + dst[1:]).astype(cd)
    n = nbytes(dst)
    v = np.asarray(v)
    if v.dtype == U64:
        u = v
    else:
        u = v.astype(np.int64).view(U64) if v.ndim else np.uint64(np.int64(v).view(np.uint64))
    low = np.asarray(u).astype(UINT[n])
    return low.view(cd) if low.ndim else low.astype(UINT[n]).view(cd)


@op("cvt")
def _cvt(M, pc, ins, canon, ms, mods):
    ts = types_of(mods)
    dst_t, src_t = ts[0], ts[-1]
    mode = next((m for m in mods if m in ("rn", "rna", "rz", "rm", "rp", "rs", "rni", "rzi", "rmi", "rpi")), None)
    d = M.dst(ins.operands[0], dst_t, ins)
    if dst_t.endswith("x2") and len(ins.operands) >= 3:   # pack two floats: a -> upper half
        base = dst_t[:-2]
        a = M.src(ins.operands[1], src_t, ins)
        b = M.src(ins.operands[2], src_t, ins)
        n = nbytes(base)
        cd = compute_dtype(dst_t)
        wide = U64

        def pack(m):
            hi = to_float_bits(decode_values(a(), src_t), src_t, base, mode or "rn", ms)
            lo = to_float_bits(decode_values(b(), src_t), src_t, base, mode or "rn", ms)
            v = (np.asarray(hi).astype(wide) << wide(8 * n)) | np.asarray(lo).astype(wide)
            d.m(v.astype(cd), m)
        return pack
    if src_t.endswith("x2") and dst_t.endswith("x2"):      # unpack fp8x2 -> f16x2 and similar
        sb, db = src_t[:-2], dst_t[:-2]
        a = M.src(ins.operands[1], src_t, ins)
        sn = 8 * nbytes(sb)
        dn = 8 * nbytes(db)
        cd = compute_dtype(dst_t)

        def unpack(m):
            v = np.asarray(a()).astype(U64)
            out = None
            for k in range(2):
                part = (v >> U64(sn * k)) & U64((1 << sn) - 1)
                bits = to_float_bits(decode_values(part.astype(UINT[nbytes(sb)]), sb), sb, db, mode or "rn", ms)
                x = np.asarray(bits).astype(U64) << U64(dn * k)
                out = x if out is None else out | x
            d.m(out.astype(cd), m)
        return unpack
    a = M.src(ins.operands[1], src_t, ins)
    if is_float(dst_t):
        def f(m):
            d.m(to_float_bits(decode_values(a(), src_t), src_t, dst_t, mode or "rn", ms), m)
        if dst_t == "f32" and src_t in ("f16", "bf16") and not ms & {"ftz", "sat", "relu"}:
            if src_t == "f16":
                return lambda m: d.m(np.asarray(a()).view(np.float16).astype(F32), m)
            return lambda m: d.m((np.asarray(a()).astype(U32) << U32(16)).view(F32), m)
        return f
    # integer destination
    if not is_float(src_t) and "sat" not in ms:
        cd = compute_dtype(dst_t)
        sd = compute_dtype(src_t)
        if cd.itemsize > sd.itemsize:    # widen: sign-extend signed sources, zero-extend others
            if src_t[0] == "s":
                return lambda m: d.m(np.asarray(a()).astype(SINT[cd.itemsize]).view(cd), m)
            return lambda m: d.m(np.asarray(a()).astype(UINT[cd.itemsize]).view(cd), m)
        if cd.itemsize < sd.itemsize:    # chop
            return lambda m: d.m(np.asarray(a()).astype(UINT[cd.itemsize]).view(cd), m)
        return lambda m: d.m(np.asarray(a()).view(cd), m)
    return lambda m: d.m(to_int(decode_values(a(), src_t), src_t, dst_t, mode, ms), m)
