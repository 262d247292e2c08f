"""Overflow strategies for a low-precision GEMM: clip, scale, promote, skip-update.

The GEMM model: inputs are rounded to ``fmt``; the k-loop runs ``acc = fma(a_ik, b_kj, acc)``
rounded to the accumulator format after every step (as an ``fma.rn.f16`` / HFMA2 loop does),
and the result is rounded to ``fmt``.  What each strategy does when a value exceeds ``fmt``:

* ``clip``: every rounding saturates (``.satfinite``): overflowed values become +-max;
* ``scale``: pick a power-of-two ``2^-k`` so that ``|A| @ |B|`` (a bound on every partial sum)
  stays below max, run the GEMM on ``A * 2^-k``, undo with ``* 2^k`` in float32 (powers of two
  are exact, so only underflow can cost accuracy);
* ``promote``: run the GEMM in the wider format (f16/bf16/fp8/hif8 -> f32, f32 -> f64);
* ``skip``: run it; if anything overflowed (Inf/NaN) keep ``prev`` (the whole update, as
  dynamic loss scaling skips a step, or per element with ``per_element=True``).

Each returns ``(C, OverflowReport)``; the report counts the results whose exact value exceeds
``fmt``'s max and the largest exact magnitude.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from isa.errors import InputError

from .arith import fma
from .formats import float_format
from .rounding import round_float

STRATEGIES = ("clip", "scale", "promote", "skip")
_WIDER = {"f64": "f64", "f32": "f64"}


@dataclass(frozen=True)
class OverflowReport:
    strategy: str
    fmt: str
    n_total: int
    n_overflow: int          # exact results with |C| > max of fmt
    max_abs: float           # largest exact |C|
    n_nonfinite_out: int     # Inf/NaN left in the returned result
    scale_exp: int = 0       # scale: the GEMM ran on A * 2^-scale_exp
    promoted_to: str = ""    # promote: the format actually used
    skipped: bool = False    # skip: whether the previous value was kept
    n_kept: int = 0          # skip: elements that kept their previous value

    def as_dict(self) -> dict:
        return asdict(self)


def lowp_gemm(a, b, fmt="f16", acc=None, *, saturate=False) -> np.ndarray:
    """The low-precision GEMM model above; ``acc`` defaults to ``fmt``.  Returns float64 values
    representable in ``fmt``."""
    f = float_format(fmt)
    accf = float_format(acc or fmt)
    a = np.asarray(round_float(np.asarray(a, dtype=np.float64), f, "rn", saturate), dtype=np.float64)
    b = np.asarray(round_float(np.asarray(b, dtype=np.float64), f, "rn", saturate), dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise InputError(f"GEMM shapes do not chain: {a.shape} @ {b.shape}")
    c = np.zeros((a.shape[0], b.shape[1]))
    for k in range(a.shape[1]):
        c = fma(a[:, k:k + 1], b[k:k + 1, :], c, accf, "rn", saturate=saturate)
    return np.asarray(round_float(c, f, "rn", saturate), dtype=np.float64)


def gemm_with_overflow(a, b, fmt="f16", strategy="clip", *, acc=None, prev=None,
                       per_element=False, margin=0.5):
    """Run :func:`lowp_gemm` under one overflow ``strategy``; returns ``(C, OverflowReport)``.

    ``margin`` (scale only) is the fraction of max the bound is brought under.
    """
    if strategy not in STRATEGIES:
        raise InputError(f"unknown overflow strategy {strategy!r}", expected=list(STRATEGIES))
    f = float_format(fmt)
    a64 = np.asarray(round_float(np.asarray(a, dtype=np.float64), f, "rn", True), dtype=np.float64)
    b64 = np.asarray(round_float(np.asarray(b, dtype=np.float64), f, "rn", True), dtype=np.float64)
    exact = a64 @ b64
    n_over = int(np.sum(np.abs(exact) > f.max))
    max_abs = float(np.max(np.abs(exact))) if exact.size else 0.0
    common = dict(fmt=f.name, n_total=int(exact.size), n_overflow=n_over, max_abs=max_abs)

    if strategy == "clip":
        c = lowp_gemm(a64, b64, f, acc, saturate=True)
        return c, OverflowReport("clip", n_nonfinite_out=int(np.sum(~np.isfinite(c))), **common)

    if strategy == "scale":
        bound = float(np.max(np.abs(a64) @ np.abs(b64))) if exact.size else 0.0
        k = 0
        if bound > 0 and bound > margin * f.max:
            k = int(np.ceil(np.log2(bound / (margin * f.max))))
        c = lowp_gemm(np.ldexp(a64, -k), b64, f, acc)
        c = (c.astype(np.float32) * np.float32(2.0 ** k)).astype(np.float64)
        return c, OverflowReport("scale", n_nonfinite_out=int(np.sum(~np.isfinite(c))), scale_exp=k, **common)

    if strategy == "promote":
        wide = _WIDER.get(f.name, "f32")
        c = lowp_gemm(a64, b64, wide, None)
        return c, OverflowReport("promote", n_nonfinite_out=int(np.sum(~np.isfinite(c))),
                                 promoted_to=wide, **common)

    c = lowp_gemm(a64, b64, f, acc)
    bad = ~np.isfinite(c)
    prev_arr = np.zeros_like(c) if prev is None else np.broadcast_to(np.asarray(prev, dtype=np.float64), c.shape)
    if per_element:
        out = np.where(bad, prev_arr, c)
        kept = int(bad.sum())
    elif bad.any():
        out, kept = np.array(prev_arr), int(c.size)
    else:
        out, kept = c, 0
    return out, OverflowReport("skip", n_nonfinite_out=int(np.sum(~np.isfinite(out))),
                               skipped=bool(bad.any()), n_kept=kept, **common)
