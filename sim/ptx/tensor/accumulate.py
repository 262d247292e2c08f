"""How a tensor-core instruction turns exact operand values into its accumulator result.

The ISA leaves the float accumulation order and rounding unspecified (9.7.14.5.14); this module
is the one place that decides it, for ``mma``, ``wmma`` and ``wgmma`` alike::

    mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r1,...}, {%r5,%r6}, {%f1,...};

**Float model (fitted to the H200 outputs, bit-exact there).**  One instruction computes each
``d[m, n]`` as a single fused sum of ``c[m, n]`` and the ``K`` products ``a[m, k] * b[k, n]``:

1. every product is exact; its exponent is taken as ``ea + eb`` (the exponents of the two factors,
   subnormals counted at the format's minimum exponent), not the exponent of the exact product;
2. ``emax`` is the largest of those exponents and the exponent of ``c`` (zeros do not count);
3. every term (``c`` included) is truncated toward zero to a multiple of ``2**(emax - P + 1)``
   (``P = 26`` for f16/bf16/tf32, see :data:`ALIGN_BITS`);
4. the terms are summed exactly and the sum is rounded toward zero to float32.

With this model the f32 results of ``mma_bf16_m16n8k16_gemm`` (3072 elements, 6 chained k16
``mma``), ``wmma_gemm_f16_f32`` (3840 elements) and ``wgmma_f16_m64n64k16_gemm`` (24576 elements)
in ``corpus/h200/io_sm90`` are reproduced bit for bit (a float32 sum in k order matches only
41 %, 18 % of them).  A probe on the H200 (``tests/sim/ptx/tensor/h200_probe``; 127 wgmma and 90
mma.sync launches on random data) confirmed it bit for bit for wgmma f16 (incl. subnormal inputs,
``imm-scale-a = -1``) and bf16, mma.sync f16/bf16/tf32 -> f32 and f16 -> f16.  An f16
destination is the float32 result rounded to nearest even: 99.98 % bit-exact for wgmma
``.f16.f16.f16`` (the rest one f16 ulp), 100 % for mma.sync.

**fp8 is approximate.**  wgmma e4m3/e5m2 (k32) use the same scheme with ``P = 14`` (H200 FP8
accumulation keeps about 14 bits): 72 % (e4m3) and 75 % (e5m2) of the probe's elements are
bit-exact, the others differ by 1-3 units of ``2**(emax-13)``.  mma.sync m16n8k32 e4m3 uses
``P = 26`` (:data:`MMA_FP8_ALIGN_BITS`): 75 % bit-exact.  The exact fp8 datapath is not found yet.
A NaN or infinite term gives the IEEE float32 sum.

**Integer.** Exact sum in int64, then wrapped to 32 bits, or clamped to the s32 range with
``.satfinite`` (both verified on H200, facts/ptx.md 10.2).
"""

from __future__ import annotations

from _thread import _local as thread_local   # threading.local itself, without threading's import

import numpy as np

#: alignment width P (bits kept below and including the leading bit of the largest term)
ALIGN_BITS: dict[str, int] = {"f16": 26, "bf16": 26, "tf32": 26, "e4m3": 14, "e5m2": 14}

#: ``mma.sync.m16n8k32`` with e4m3/e5m2 on sm_90 matches the H200 better with the 16-bit width
MMA_FP8_ALIGN_BITS = 26

#: minimum normal exponent of each input format (the exponent a subnormal is counted at)
MIN_EXP: dict[str, int] = {"f16": -14, "bf16": -126, "tf32": -126, "f32": -126, "e4m3": -6, "e5m2": -14}


def _exponent(x: np.ndarray, emin: int) -> np.ndarray:
    """floor(log2|x|) clamped below at ``emin`` (int64); zeros give a very small number."""
    _, e = np.frexp(x)
    e = np.maximum(e.astype(np.int64) - 1, emin)
    return np.where(x != 0, e, np.int64(-(1 << 20)))


def _round_toward_zero_f32(s: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounded toward zero: the nearest float32, one step smaller in magnitude
    where that rounded away (magnitude bits minus one; an overflow to Inf becomes the largest
    finite value); NaN stays NaN."""
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to Inf is expected and handled
        f = np.asarray(s.astype(np.float32))
        over = np.abs(f.astype(np.float64)) > np.abs(s)
    return (f.view(np.int32) - over.astype(np.int32)).view(np.float32)


def float_accumulate(a: np.ndarray, b: np.ndarray, c: np.ndarray, a_type: str = "f16",
                     b_type: str | None = None, c_type: str = "f32", align_bits: int | None = None) -> np.ndarray:
    """a [W, M, K], b [W, K, N], c [W, M, N] as float64 values -> d [W, M, N] as float32.

    The whole K of ``a``/``b`` is one instruction (one fused sum); chain calls for longer K.
    ``align_bits`` overrides :data:`ALIGN_BITS` (``mma.sync`` fp8 uses :data:`MMA_FP8_ALIGN_BITS`).

    The terms are formed in float32 and truncated by converting to int32 where that is exact (see
    :func:`_fast_terms`); otherwise, and for NaN/Inf operands, in float64 (:func:`float_accumulate_f64`).
    Both give the same bits.
    """
    b_type = b_type or a_type
    p = align_bits or min(ALIGN_BITS[a_type], ALIGN_BITS[b_type])
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    # a NaN or Inf anywhere makes the sum non-finite (finite values here cannot overflow it)
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf here only means "not finite"
        finite = np.isfinite(a.sum() + b.sum() + c.sum())
    if not finite:
        return float_accumulate_f64(a, b, c, a_type, b_type, c_type, p)
    W, M, K = a.shape
    N = b.shape[2]
    if MIN_EXP[a_type] == MIN_EXP[b_type]:                               # one pass over both
        eab = _exponent16(np.concatenate([a.reshape(-1), b.reshape(-1)]), MIN_EXP[a_type])
        ea, eb = eab[:a.size].reshape(a.shape), eab[a.size:].reshape(b.shape)
    else:
        ea = _exponent16(a, MIN_EXP[a_type])                             # [W, M, K]
        eb = _exponent16(b, MIN_EXP[b_type])                             # [W, K, N]
    ec = _exponent16(c, MIN_EXP.get(c_type, -126))                       # [W, M, N]
    e4 = _outer(np.add, ea, eb, _scratch("e", (W, M, K, N), np.int16))
    emax = np.maximum(_reduce_k(e4, np.maximum), ec)                    # [W, M, N]
    zero = emax < _ZERO16 // 2                                           # no nonzero term at all
    shift = np.where(zero, np.int32(0), emax.astype(np.int32) - np.int32(p - 1))
    units = _fast_terms(a, b, ea, eb, shift, a_type, b_type, p)
    if units is None:
        return float_accumulate_f64(a, b, c, a_type, b_type, c_type, p)
    # both sums are integers below 2**53 (exact in float64); scaling by 2**shift is exact
    total = (units + np.trunc(c * np.ldexp(1.0, -shift))) * np.ldexp(1.0, shift)
    return _round_toward_zero_f32(total)


#: exponent of a zero in the int16 exponent arrays (two of them still fit in int16)
_ZERO16 = -16000

#: significand bits (with the implicit one) of the formats whose products may be formed in float32
_SIG_BITS: dict[str, int] = {"f16": 11, "bf16": 8, "tf32": 11, "e4m3": 4, "e5m2": 3}


#: formats whose products always lie in float32's normal range (|e| <= 15 and 22 bits at most)
_SAFE_PRODUCTS = frozenset({"f16", "e4m3", "e5m2"})


def _exponent16(x: np.ndarray, emin: int) -> np.ndarray:
    """:func:`_exponent` as int16, zeros at :data:`_ZERO16` (finite inputs)."""
    _, e = np.frexp(x)
    e = np.maximum(e.astype(np.int16) - np.int16(1), np.int16(emin))
    return np.where(x != 0, e, np.int16(_ZERO16))


def _fast_terms(a, b, ea, eb, shift, a_type, b_type, p):
    """Sum over k of ``trunc(a[m, k] * b[k, n] * 2**-shift[m, n])`` as int64 [W, M, N], computed in
    float32 and int32, or None when that would not be exact.

    Exact when every product is a float32 (significands of <= 24 bits together, exponent range
    checked from ``ea``/``eb``), ``2**-shift`` is a normal float32 (the scaling is then exact, or
    the scaled value is below 1 and truncates to 0 either way), and each scaled term (below
    ``2**(P+1)``) fits in int32; the K terms are summed in int32, or in int64 when
    ``K * 2**(P+1)`` could pass 2**31 (mma.sync fp8 k32 with P = 26).
    """
    pa, pb = _SIG_BITS.get(a_type), _SIG_BITS.get(b_type)
    if pa is None or pb is None or pa + pb > 24:
        return None
    if shift.size and (int(shift.min()) < -126 or int(shift.max()) > 126):
        return None
    if ea.size and eb.size and not (a_type in _SAFE_PRODUCTS and b_type in _SAFE_PRODUCTS):
        hi = int(ea.max()) + int(eb.max())
        if hi > 126:                                       # a product could reach 2**128
            return None
        big = np.int16(1 << 14)
        lo_a = int(np.where(ea > _ZERO16, ea, big).min())
        lo_b = int(np.where(eb > _ZERO16, eb, big).min())
        if lo_a < big and lo_b < big and lo_a + lo_b - (pa - 1) - (pb - 1) < -149:
            return None                                    # a product's last bit below float32's
    W, M, K = a.shape
    N = b.shape[2]
    a32 = a.astype(np.float32, order="C")
    b32 = b.astype(np.float32, order="C")
    prod = _outer(np.multiply, a32, b32, _scratch("p", (W, M, K, N), np.float32))   # exact
    # the scaling is exact (see above) and done in float32; storing into integers truncates
    # (in place: the int32 terms reuse the products' memory, which keeps the work in cache)
    terms = prod.view(np.int32)
    scale = np.ldexp(np.float32(1), -shift)[:, :, None, :]
    if prod.size <= _REPEAT_MAX:
        scale = np.repeat(scale, K, axis=2)
    np.multiply(prod, scale, out=terms, casting="unsafe")
    if K << (p + 1) > 1 << 31:                                           # K terms below 2**(P+1) each
        terms = terms.astype(np.int64)
    return _reduce_k(terms, np.add).astype(np.int64)


#: up to this many products, broadcast operands are materialised (np.repeat) so that numpy runs
#: over whole K*N rows: broadcasting gives inner loops of only N elements, slow for the 8-wide
#: mma tiles; above it, the fresh megabyte-sized copies cost more (page faults) than they save
_REPEAT_MAX = 1 << 16


def _outer(op, x: np.ndarray, y: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[w, m, k, n] = op(x[w, m, k], y[w, k, n])``."""
    W, M, K = x.shape
    N = y.shape[2]
    if out.size <= _REPEAT_MAX:
        op(np.repeat(x, N, axis=2), y.reshape(W, 1, K * N), out=out.reshape(W, M, K * N))
    else:
        op(x[:, :, :, None], y[:, None, :, :], out=out)
    return out


def _reduce_k(x: np.ndarray, op) -> np.ndarray:
    """``op``-reduce [W, M, K, N] over K in place by halving (faster than numpy's reduction over a
    short middle axis); exact for ``np.maximum`` and for ``np.add`` on integers that do not
    overflow.  Returns a view of ``x[:, :, 0]``."""
    k = x.shape[2]
    while k > 1:
        h = k // 2                       # rows k-h..k-1 fold onto 0..h-1; an odd middle row stays
        op(x[:, :, :h], x[:, :, k - h:k], out=x[:, :, :h])
        k -= h
    return x[:, :, 0]


_SCRATCH = thread_local()


def _scratch(name: str, shape: tuple, dtype) -> np.ndarray:
    """A reused work array of this thread (fresh allocations of these megabyte-sized products
    cost page faults on every instruction); its contents are garbage."""
    store = _SCRATCH.__dict__
    key = (name, shape, np.dtype(dtype).char)
    buf = store.get(key)
    if buf is None:
        if len(store) >= 24:
            store.clear()
        buf = store[key] = np.empty(shape, dtype)
    return buf


def float_accumulate_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray, a_type: str, b_type: str, c_type: str,
                         p: int) -> np.ndarray:
    """:func:`float_accumulate` with every term in float64 (any finite range; NaN/Inf give the
    IEEE float32 sum); ``p`` is the alignment width."""
    # exponents as int32 (a zero factor gives about -2**20, so its product never sets emax)
    ea = _exponent(a, MIN_EXP[a_type]).astype(np.int32)                  # [W, M, K]
    ebt = _exponent(b, MIN_EXP[b_type]).astype(np.int32).transpose(0, 2, 1)   # [W, N, K]
    bt = b.transpose(0, 2, 1)
    c = c.astype(np.float64)
    ec = _exponent(c, MIN_EXP.get(c_type, -126)).astype(np.int32)
    emax = np.maximum((ea[:, :, None, :] + ebt[:, None, :, :]).max(axis=-1), ec)   # [W, M, N]
    shift = (emax - (p - 1)).astype(np.int64)
    shift = np.where(emax < -(1 << 19), 0, shift)
    prod = a[:, :, None, :] * bt[:, None, :, :]                          # exact in float64
    total = _truncate(prod, shift[..., None]).sum(axis=-1)
    total += _truncate(c, shift)
    d = _round_toward_zero_f32(total)
    if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(c).all()):
        bad = ~np.isfinite(prod).all(axis=-1) | ~np.isfinite(c)
        with np.errstate(invalid="ignore", over="ignore"):
            ieee = (prod.sum(axis=-1) + c).astype(np.float32)
        d = np.where(bad, ieee, d)
    return d


def _truncate(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``x`` truncated toward zero to a multiple of ``2**q``: ``trunc(x * 2**-q) * 2**q``, both
    scalings exact (powers of two, far from float64's range for these formats), so this equals
    ``ldexp(trunc(ldexp(x, -q)), q)`` at a fraction of its cost; zeros keep their sign."""
    return np.trunc(x * np.ldexp(1.0, -q)) * np.ldexp(1.0, q)


def int_accumulate(a: np.ndarray, b: np.ndarray, c: np.ndarray, satfinite: bool) -> np.ndarray:
    """a [W, M, K], b [W, K, N], c [W, M, N] as int64 -> d [W, M, N] as int32 (wrapped or clamped)."""
    d = c.astype(np.int64) + np.einsum("wmk,wkn->wmn", a.astype(np.int64), b.astype(np.int64))
    if satfinite:
        d = np.clip(d, -(2**31), 2**31 - 1)
    return (d & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def f64_accumulate(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a [W, M, K], b [W, K, N], c [W, M, N] float64 -> d [W, M, N] float64 for ``.f64`` mma.

    The ISA gives .f64 mma round-to-nearest-even (``.rn``, the only mode) but not the order of the
    K products; this model (guessed, not measured) evaluates ``d = fma(a[k], b[k], d)`` for
    k = 0..K-1 from ``c``, each step exact and rounded once (Fractions; int/int true division
    rounds correctly).  The H200 programs in ``examples/ptx/isa`` use values whose sums are exact
    in every order, so they check the fragment layouts, not this order."""
    from fractions import Fraction

    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    d = np.array(c, np.float64, copy=True)
    if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(d).all()):
        for k in range(a.shape[2]):                        # NaN/Inf: IEEE arithmetic decides
            with np.errstate(invalid="ignore", over="ignore"):
                d = a[:, :, k, None] * b[:, None, k, :] + d
        return d
    W, M, K = a.shape
    N = b.shape[2]
    fa = [[[Fraction(float(x)) for x in row] for row in w] for w in a]
    fb = [[[Fraction(float(x)) for x in row] for row in w] for w in b]
    out = np.empty((W, M, N), np.float64)
    for w in range(W):
        for m in range(M):
            for n in range(N):
                acc = float(d[w, m, n])
                for k in range(K):
                    x = fa[w][m][k] * fb[w][k][n] + Fraction(acc)
                    acc = _round_f64(x)
                out[w, m, n] = acc
    return out


def _round_f64(x) -> float:
    """A Fraction rounded to the nearest float64 (ties to even; overflow to +-Inf)."""
    try:
        return x.numerator / x.denominator
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")
