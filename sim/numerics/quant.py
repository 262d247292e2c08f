"""Quantisation parameters, quantise / dequantise, and a quantised GEMM.

The arithmetic is the corpus kernels' (``../shared/corpus/cuda/quantize.cu``) bit for bit::

    div.rn.f32      %f3, %f2, %f1;        // x / scale, IEEE fp32 division
    cvt.rni.s32.f32 %r10, %f3;            // round to nearest even, saturating, NaN -> 0
    ... add zero_point, clamp to [qmin, qmax]
    cvt.rn.f32.s32  %f2, %r13;  mul.f32 %f3, %f2, %f1;   // dequantise: (q - zp) * scale in fp32

so ``quantize``/``dequantize`` reproduce ``reference.py``'s ``ref_quant_sym_s8``,
``ref_quant_asym_u8``, ``ref_dequant_s8`` and ``ref_dequant_u8`` exactly.  Where the numpy
reference is undefined (NaN, quotients beyond the int64 range) the ``cvt.rni.s32`` rules apply:
NaN -> 0, huge -> INT_MAX/INT_MIN, then the zero point is added without wrapping, as the
reference does.  (The CUDA kernel's ``int`` add would wrap for ``x/scale + zp >= 2^31``,
e.g. 1e9/0.1 + 128; neither the reference nor the H200 data exercise that.)  Integer types
s8/u8/s4/u4 use a scale and an integer zero point; fp8 (e4m3, e5m2) and hif8 use a scale only
(values are rounded to the format with ``.satfinite``).  Per-channel parameters have one scale
(and zero point) per index of ``axis``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from isa.errors import InputError

from .formats import get_format
from .report import ErrorReport, error_report
from .rounding import float_to_int, round_float

QTYPES = ("s8", "u8", "s4", "u4", "e4m3", "e5m2", "hif8")


def qrange(qtype) -> tuple[float, float]:
    """The representable range of a quantised type (``s8`` -> (-128, 127), ``e4m3`` -> +-448)."""
    f = get_format(qtype)
    if f.name not in QTYPES:
        raise InputError(f"{f.name} is not a quantisation type", expected=list(QTYPES))
    if f.kind == "int":
        return float(f.min), float(f.max)
    return -f.max, f.max


@dataclass(frozen=True)
class QuantParams:
    """Scale (float32) and zero point (int32) for a quantised type, per tensor or per channel.

    ``real = (q - zero_point) * scale``.  ``axis`` is the channel axis of the tensor being
    quantised (None: per tensor).
    """

    qtype: str
    scale: np.ndarray
    zero_point: np.ndarray
    axis: int | None = None
    symmetric: bool = True
    method: str = "given"
    notes: tuple = field(default=(), compare=False)

    @staticmethod
    def make(qtype, scale, zero_point=0, axis=None, symmetric=None, method="given") -> "QuantParams":
        f = get_format(qtype)
        qrange(f)
        s = np.asarray(scale, dtype=np.float32)
        z = np.broadcast_to(np.asarray(zero_point, dtype=np.int32), s.shape).copy()
        if f.kind == "float" and np.any(z != 0):
            raise InputError(f"{f.name} quantisation has no zero point")
        if np.any(~np.isfinite(s)) or np.any(s <= 0):
            raise InputError("quantisation scale must be finite and > 0")
        if s.ndim > 1:
            raise InputError("per-channel scale must be 1-D")
        if symmetric is None:
            symmetric = bool(np.all(z == (0 if f.kind == "float" or getattr(f, "signed", True) else (f.max + 1) // 2)))
        return QuantParams(f.name, s, z, axis if s.ndim == 1 else None, bool(symmetric), method)

    def _expand(self, ndim: int):
        if self.axis is None or self.scale.ndim == 0:
            return self.scale, self.zero_point
        shape = [1] * ndim
        shape[self.axis] = -1
        return self.scale.reshape(shape), self.zero_point.reshape(shape)


def quantize(x, params: QuantParams, mode: str = "rn") -> np.ndarray:
    """``clamp(round(x / scale) + zero_point)`` for ints (int8/uint8 arrays; s4/u4 held in
    int8/uint8), ``round_satfinite(x / scale)`` as float64 values for fp8/hif8."""
    f = get_format(params.qtype)
    x32 = np.asarray(x, dtype=np.float32)
    scale, zp = params._expand(x32.ndim)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y = x32 / scale                                   # fp32 division, IEEE RN (div.rn.f32)
    if f.kind == "float":
        return round_float(y, f, mode, saturate=True)
    v = float_to_int(y, "s32", mode).astype(np.int64) + zp.astype(np.int64)
    return np.clip(v, f.min, f.max).astype(f.np_dtype)


def dequantize(q, params: QuantParams) -> np.ndarray:
    """``float32(q - zero_point) * scale`` in fp32 (``cvt.rn.f32.s32`` then ``mul.f32``)."""
    f = get_format(params.qtype)
    qa = np.asarray(q)
    scale, zp = params._expand(qa.ndim)
    if f.kind == "float":
        return (qa.astype(np.float32) * scale).astype(np.float32)
    return (qa.astype(np.int64) - zp.astype(np.int64)).astype(np.float32) * scale


def fake_quantize(x, params: QuantParams, mode: str = "rn") -> np.ndarray:
    """``dequantize(quantize(x))``: the values a quantised pipeline actually sees."""
    return dequantize(quantize(x, params, mode), params)


@dataclass(frozen=True)
class QGemmResult:
    """Output of :func:`quantized_gemm`: the fp32 result, the raw int32 accumulators and the
    error analysis against the float64 product of the unquantised inputs."""

    c: np.ndarray
    acc: np.ndarray
    report: ErrorReport
    acc_overflows: int
    a_params: QuantParams
    b_params: QuantParams


def quantized_gemm(a, b, a_params: QuantParams, b_params: QuantParams, *, wrap: bool = True) -> QGemmResult:
    """``C = (qA - zA) @ (qB - zB)`` accumulated in int32, then one fused rescale
    ``C = float32(acc) * (sA * sB)`` in fp32.

    ``a_params`` may be per tensor or per row (axis 0 of A); ``b_params`` per tensor or per
    column (axis 1 of B).  Integer types only.  Accumulators that leave the int32 range wrap
    (``wrap=True``, as ``mma``/``dp4a`` without ``.satfinite`` do) or saturate; either way they
    are counted in ``acc_overflows``.
    """
    for p, ax in ((a_params, 0), (b_params, 1)):
        if get_format(p.qtype).kind != "int":
            raise InputError("quantized_gemm needs integer quantisation types", expected=["s8", "u8", "s4", "u4"])
        if p.axis not in (None, ax):
            raise InputError(f"{'A' if ax == 0 else 'B'} may only be quantised per {'row' if ax == 0 else 'column'}")
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise InputError(f"quantized_gemm shapes do not chain: {a.shape} @ {b.shape}")
    qa = quantize(a, a_params).astype(np.int64)
    qb = quantize(b, b_params).astype(np.int64)
    sa, za = a_params._expand(2)
    sb, zb = b_params._expand(2)
    wide = (qa - za) @ (qb - zb)
    over = (wide > 2 ** 31 - 1) | (wide < -2 ** 31)
    if wrap:
        acc = ((wide + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)
    else:
        acc = np.clip(wide, -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    scale = (sa.astype(np.float32) * sb.astype(np.float32)).astype(np.float32)
    c = acc.astype(np.float32) * scale
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return QGemmResult(c=c, acc=acc, report=error_report(ref, c), acc_overflows=int(over.sum()),
                       a_params=a_params, b_params=b_params)
