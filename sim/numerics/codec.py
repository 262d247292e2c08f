"""Bit patterns: encode/decode every format, order codes, measure ULP distance.

A register in the PTX simulator holds bits; arithmetic works on float64 values.  These move
between the two::

    cvt.rn.f16.f32 %rs1, %f1;   ->   bits = encode(decode(f1_bits, 'f32'), 'f16', 'rn')
    mov.b32 %r1, 0f3F800000;    ->   decode(0x3F800000, 'f32') == 1.0

Decoding is exact.  Encoding rounds first (any mode of :func:`round_float`), then packs.
Canonical NaN patterns are the numpy / ml_dtypes ones (f32 0x7FC00000, f16 0x7E00, bf16 0x7FC0,
e4m3 0x7F, e5m2 0x7E, hif8 0x80); :data:`PTX_CANONICAL_NAN` lists PTX's (all mantissa bits set).
"""

from __future__ import annotations

import numpy as np

from isa.errors import InputError

from .formats import IntFormat, get_format
from .hif8 import HIF8_VALUES, NAN_CODE, NEG_INF_CODE, POS_CODES, POS_INF_CODE, POS_VALUES
from .rounding import float_to_int, round_float

#: NaN produced by PTX arithmetic (ISA "canonical NaN"); the simulator may prefer these
PTX_CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF, "f64": 0x7FFFFFFFFFFFFFFF}


def decode(bits, fmt) -> np.ndarray:
    """Bit patterns (integer array or int) -> float64 values (floats) or int64 values (ints)."""
    f = get_format(fmt)
    b = np.asarray(bits)
    scalar = b.ndim == 0
    if b.dtype.kind == "f":
        raise InputError(f"decode expects integer bit patterns, got {b.dtype}")
    if f.kind == "int":
        out = _decode_int(b, f)
    elif f.specials == "hif8":
        out = HIF8_VALUES[b.astype(np.int64) & 0xFF]
    elif f.name == "tf32":
        w = (b.astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        w = w & np.uint32(0xFFFFE000)
        out = w.view(np.float32).astype(np.float64)
    else:
        raw = (b.astype(np.uint64) & np.uint64(f.mask)).astype(f.storage)
        with np.errstate(invalid="ignore"):
            out = raw.view(f.np_dtype).astype(np.float64)
    return out[()] if scalar else out


def _decode_int(b, f: IntFormat):
    if f.bits == 64:
        return b.astype(np.uint64).view(np.int64) if f.signed else b.astype(np.uint64)
    low = b.astype(np.int64) & f.mask
    if f.signed:
        low = np.where(low >= (1 << (f.bits - 1)), low - (1 << f.bits), low)
    return low


def bf16_bits_from_f32(x) -> np.ndarray:
    """float32 values -> bf16 bit patterns, round to nearest even, by bit arithmetic (the fast
    path of :func:`encode` for float32 input, and what ``cvt.rn.bf16.f32`` does): a NaN stays a
    NaN, quieted, keeping its sign and top payload bits."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((u >> np.uint64(16)) | np.uint64(0x40)).astype(np.uint16), r)


def values_to_bits(values, fmt) -> np.ndarray:
    """Pack values that are exactly representable in float format ``fmt`` (no rounding)."""
    f = get_format(fmt)
    v = np.asarray(values, dtype=np.float64)
    if f.specials == "hif8":
        a = np.abs(v)
        idx = np.clip(np.searchsorted(POS_VALUES, a), 0, len(POS_VALUES) - 1)
        code = POS_CODES[idx]
        code = np.where((v < 0) & (code != 0), code | 0x80, code)
        code = np.where(np.isinf(v), np.where(v > 0, POS_INF_CODE, NEG_INF_CODE), code)
        code = np.where(np.isnan(v), NAN_CODE, code)
        return code.astype(np.uint8)
    if f.name == "tf32":
        return v.astype(np.float32).view(np.uint32)
    out = v.astype(f.np_dtype).view(f.storage)
    return out


def encode(x, fmt, mode: str = "rn", saturate: bool | None = None, **kw) -> np.ndarray:
    """Round ``x`` to ``fmt`` (float: :func:`round_float`; int: PTX saturating
    :func:`float_to_int`) and return the bit patterns (unsigned; int4 in the low nibble)."""
    f = get_format(fmt)
    xa = np.asarray(x)
    scalar = xa.ndim == 0
    if f.kind == "int":
        q = float_to_int(xa, f, mode if mode != "rn" else "rni")
        out = (q.astype(np.int64) & f.mask).astype(f.storage) if f.bits < 64 else q.view(np.uint64)
    elif f.name == "bf16" and xa.dtype == np.float32 and mode == "rn" and not saturate and not kw:
        out = bf16_bits_from_f32(xa)                 # the same rounding, by bit arithmetic
    else:
        out = values_to_bits(round_float(xa, f, mode, saturate, **kw), f)
    return out[()] if scalar else out


def ordinal(bits, fmt) -> np.ndarray:
    """A signed integer that orders the codes of ``fmt`` by value (+0 and -0 both map to 0).

    Consecutive representable values have consecutive ordinals, so ULP distance is a
    difference.  NaN codes map to an arbitrary value; filter them first.
    """
    f = get_format(fmt)
    b = np.asarray(bits)
    if f.kind == "int":
        return np.asarray(decode(b, f)).astype(np.int64)
    if f.specials == "hif8":
        return _HIF8_ORD[b.astype(np.int64) & 0xFF]
    u = b.astype(np.uint64) & np.uint64(f.mask)
    if f.shift:
        u = u >> np.uint64(f.shift)
    width = f.bits - f.shift
    sign = (u >> np.uint64(width - 1)) & np.uint64(1)
    mag = (u & np.uint64((1 << (width - 1)) - 1)).astype(np.int64)
    return np.where(sign == 1, -mag, mag)


def _hif8_ordinals() -> np.ndarray:
    rank = np.zeros(256, dtype=np.int64)
    for r, code in enumerate(POS_CODES):               # 0 -> 0, 2^-22 -> 1, ...
        rank[code] = r
        rank[code | 0x80] = -r
    rank[POS_INF_CODE] = len(POS_CODES)
    rank[NEG_INF_CODE] = -len(POS_CODES)
    return rank


_HIF8_ORD = _hif8_ordinals()


def ulp_distance(a, b, fmt) -> np.ndarray:
    """How many representable steps of ``fmt`` separate ``a`` and ``b`` (both rounded to nearest
    into ``fmt`` first, saturating for formats without infinities such as e4m3; 0 for equal
    values, -1 where either is NaN). Integer formats: the absolute difference of the values
    rounded to integers."""
    f = get_format(fmt)
    va = np.asarray(a, dtype=np.float64)
    vb = np.asarray(b, dtype=np.float64)
    if f.kind == "int":
        with np.errstate(invalid="ignore"):
            return np.abs(np.rint(va) - np.rint(vb)).astype(np.int64)
    sat = True if f.specials == "fn" else None
    with np.errstate(all="ignore"):
        d = np.abs(ordinal(encode(va, f, "rn", saturate=sat), f).astype(np.int64)
                   - ordinal(encode(vb, f, "rn", saturate=sat), f).astype(np.int64))
    return np.where(np.isnan(va) | np.isnan(vb), -1, d)


def ulp(x, fmt) -> np.ndarray:
    """The spacing of ``fmt`` at ``x``: distance from |x| (rounded toward zero) to the next
    representable magnitude (the subnormal spacing below the normal range)."""
    f = get_format(fmt)
    if f.kind == "int":
        return np.ones_like(np.asarray(x, dtype=np.float64))
    a = np.abs(np.asarray(x, dtype=np.float64))
    if f.specials == "hif8":
        lo = np.asarray(round_float(a, f, "rz"), dtype=np.float64)
        idx = np.clip(np.searchsorted(POS_VALUES, lo) + 1, 0, len(POS_VALUES) - 1)
        return POS_VALUES[idx] - POS_VALUES[idx - 1]
    _, e = np.frexp(a)
    return np.ldexp(1.0, np.maximum(e.astype(np.int64) - 1, f.emin) - f.mbits)


def pack_int4(values) -> np.ndarray:
    """Pack s4/u4 values two per byte, element 0 in the low nibble (PTX/CUTLASS order)."""
    v = np.asarray(values).astype(np.int64).reshape(-1)
    if v.size % 2:
        v = np.concatenate([v, [0]])
    lo = v[0::2] & 0xF
    hi = v[1::2] & 0xF
    return (lo | (hi << 4)).astype(np.uint8)


def unpack_int4(packed, signed: bool = True, count: int | None = None) -> np.ndarray:
    """Inverse of :func:`pack_int4`."""
    p = np.asarray(packed).astype(np.int64).reshape(-1)
    out = np.empty(p.size * 2, dtype=np.int64)
    out[0::2] = p & 0xF
    out[1::2] = (p >> 4) & 0xF
    if signed:
        out = np.where(out >= 8, out - 16, out)
    out = out[:count] if count is not None else out
    return out.astype(np.int8 if signed else np.uint8)
