"""The video instructions (ISA 9.7.18): scalar byte/half-word/word arithmetic with selectors,
saturation, a secondary operation or a sub-word merge, and the 2- and 4-way SIMD forms::

    vadd.s32.u32.s32.sat      %r1, %r2.b0, %r3.h0;          # sat(sext(b0 of r2) + h0 of r3)
    vabsdiff.s32.s32.s32.sat  %r1.h0, %r2.b0, %r3.b2, %r4;  # result merged into half 0 of r4
    vmin.s32.s32.s32.sat.add  %r1, %r2, %r3, %r4;           # min(r2, r3) + r4
    vshl.u32.u32.u32.clamp    %r1, %r2, %r3;                # shift amounts above 32 count as 32
    vmad.s32.s32.s32.sat.shr7 %r1, -%r2, %r3.b1, %r4;       # sat((-(r2 * b1 of r3) + r4) >> 7)
    vset.u32.u32.ne.add       %r1, %r2, %r3.h1, %r4;        # (r2 != h1 of r3) + r4
    vadd2.u32.u32.u32.add     %r1.h1, %r2.h10, %r3.h00, %r4;  # half-word SIMD, accumulate
    vavrg4.s32.s32.s32        %r1, %r2, %r3, %r4;           # byte SIMD rounded average, merge

Inputs are extracted as 33-bit signed values (signed or unsigned by the operand's type) and the
primary result is exact; everything follows the ISA's pseudocode (``partSelectSignExtend``,
``optSaturate``, ``optSecondaryOp``, ``optMerge``, ``extractAndSignExt_2/_4``), checked against
the H200 in ``examples/ptx/isa/video.ptx``.  ``vmad`` works in Python integers (its 64-bit
product of 33-bit values does not fit numpy's int64).
"""

from __future__ import annotations

import numpy as np

from isa import ir

from ..dtypes import types_of
from . import op

_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}


def _operand(op_):
    """(plain operand, selector or None, minus) of a video source or destination."""
    minus = False
    if isinstance(op_, ir.Modified) and op_.op == "-":
        minus, op_ = True, op_.operand
    if isinstance(op_, ir.Register) and op_.component is not None:
        return ir.Register(op_.name, None, op_.span), op_.component, minus
    return op_, None, minus


def _part(x, sel: str | None, signed: bool) -> np.ndarray:
    """``partSelectSignExtend``: byte ``bK``, half-word ``hK`` or the word, sign- or zero-extended."""
    x = np.asarray(x).astype(np.int64) & 0xFFFFFFFF
    if sel is None:
        v, bits = x, 32
    else:
        bits = 8 if sel[0] == "b" else 16
        v = (x >> (bits * int(sel[1:]))) & ((1 << bits) - 1)
    if signed:
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def _clamp(v, bits: int, signed: bool):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return np.clip(v, lo, hi)


def _avrg(p, q):
    s = p + q
    return np.where(s >= 0, (s + 1) >> 1, s >> 1)


# the integer operation of vadd/vsub/vabsdiff/vmin/vmax and of the SIMD vadd2/vavrg4/... (name after the 'v')
_BINOP = {"add": np.add, "sub": np.subtract, "absdiff": lambda p, q: np.abs(p - q), "min": np.minimum,
          "max": np.maximum, "avrg": _avrg}


_MERGE = {"h0": (0, 0xFFFF), "h1": (16, 0xFFFF), "b0": (0, 0xFF), "b1": (8, 0xFF), "b2": (16, 0xFF), "b3": (24, 0xFF)}


def _scalar_tail(tmp, ds, signed_d: bool, sat: bool, op2: str | None, c):
    """optSaturate, then the secondary operation or the merge with ``c``; the low 32 bits.

    The primary result is a signed 34-bit value: wider results (``vshl`` by up to 32) wrap to it
    before saturation (the H200: ``0xFF << 32`` saturates to 0, ``0x21 << 32`` to 0xFFFFFFFF)."""
    tmp = np.asarray(tmp).astype(np.int64)
    tmp = ((tmp + (1 << 33)) & ((1 << 34) - 1)) - (1 << 33)
    if sat:
        bits = 32 if ds is None else (8 if ds[0] == "b" else 16)
        tmp = _clamp(tmp, bits, signed_d)
    if op2 is not None:
        cv = np.asarray(c).astype(np.int64) & 0xFFFFFFFF
        if signed_d:
            cv = np.where(cv >= 1 << 31, cv - (1 << 32), cv)
        tmp = {"add": np.add, "min": np.minimum, "max": np.maximum}[op2](tmp, cv)
    elif ds is not None:
        sh, m = _MERGE[ds]
        cv = np.asarray(c).astype(np.int64) & 0xFFFFFFFF
        tmp = ((tmp & m) << sh) | (cv & ~(m << sh) & 0xFFFFFFFF)
    return (np.asarray(tmp).astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)


def _sources(M, ins, n):
    """Readers (as u32 words) and (selector, minus) of the first ``n`` sources."""
    out = []
    for o in ins.operands[1:1 + n]:
        base, sel, minus = _operand(o)
        out.append((M.src(base, "u32", ins), sel, minus))
    return out


@op("vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vset")
def _video(M, pc, ins, canon, ms, mods):
    ts = types_of(mods)
    if canon == "vset":
        ta, tb = ts[0], ts[1]
        td = "u32"
    else:
        td, ta, tb = ts[0], ts[1], ts[2]
    dst, ds, _ = _operand(ins.operands[0])
    d = M.dst(dst, "u32", ins)
    (a, asel, _), (b, bsel, _) = _sources(M, ins, 2)
    c = M.src(ins.operands[3], "u32", ins) if len(ins.operands) > 3 else None
    op2 = next((m for m in mods if m in ("add", "min", "max")), None)
    sat = "sat" in ms
    cmp = next((m for m in mods if m in _CMP), None)
    clamp = "clamp" in ms

    def f(m):
        x = _part(a(), asel, ta[0] == "s")
        if canon in ("vshl", "vshr"):
            y = _part(b(), bsel, False)
            y = np.minimum(y, 32) if clamp else (y & 31)
            tmp = (x << y) if canon == "vshl" else (x >> y)
        else:
            y = _part(b(), bsel, tb[0] == "s")
            op = _BINOP.get(canon[1:])
            tmp = op(x, y) if op is not None else _CMP[cmp](x, y).astype(np.int64)
        signed_d = (ta[0] == "s") if canon == "vset" else td[0] == "s"   # vset: c as the sources (H200)
        d.m(_scalar_tail(tmp, ds, signed_d, sat and canon != "vset", op2, None if c is None else c()), m)
    return f


@op("vmad")
def _vmad(M, pc, ins, canon, ms, mods):
    td, ta, tb = types_of(mods)[:3]
    d = M.dst(ins.operands[0], "u32", ins)
    (a, asel, na), (b, bsel, nb), (c, _, nc) = _sources(M, ins, 3)
    po = "po" in ms
    sat = "sat" in ms
    shift = 7 if "shr7" in ms else 15 if "shr15" in ms else 0
    signed = ta[0] == "s" or tb[0] == "s" or (na ^ nb) or nc
    mask128 = (1 << 128) - 1

    def f(m):
        # the H200 sign-extends a whole-word .u32 operand when the result is signed, and c always
        # (examples/ptx/isa/video.ptx words 31, 35); the ISA's pseudocode zero-extends them
        x = _part(a(), asel, ta[0] == "s" or (signed and asel is None)).astype(object)
        y = _part(b(), bsel, tb[0] == "s" or (signed and bsel is None)).astype(object)
        cv = np.broadcast_to(np.asarray(c()).astype(np.int64) & 0xFFFFFFFF, np.broadcast(x, y).shape).astype(object)
        tmp = (x * y) & mask128
        lsb = 0
        if po:
            lsb = 1
        elif na ^ nb:
            tmp, lsb = ~tmp & mask128, 1
        elif nc:
            cv, lsb = ~cv & 0xFFFFFFFF, 1
        cv = np.where(cv >= 1 << 31, cv - (1 << 32), cv)
        tmp = (tmp + cv + lsb) & mask128
        res = (tmp >> shift) & ((1 << 64) - 1)
        if sat:
            if signed:
                res = np.where(res >= 1 << 63, res - (1 << 64), res)
            res = np.clip(res, -(1 << 31) if signed else 0, (1 << 31) - 1 if signed else (1 << 32) - 1)
        d.m(np.array([int(v) & 0xFFFFFFFF for v in np.ravel(res)], np.uint32).reshape(np.shape(res)), m)
    return f


def _lanes_of(x, y, sel: str, width: int):
    """``extractAndSignExt_2/_4``: the elements picked by selector digits from the sub-words of
    the pair ``(x, y)`` (x's first), element 0 last in the selector (``.h10``, ``.b3210``)."""
    n = 32 // width
    words = (np.asarray(x).astype(np.int64) & 0xFFFFFFFF) | ((np.asarray(y).astype(np.int64) & 0xFFFFFFFF) << 32)
    m = (1 << width) - 1
    return [(words >> (width * int(ch))) & m for ch in reversed(sel)][:n]


def _signed(v, width, signed):
    return np.where(v >= 1 << (width - 1), v - (1 << width), v) if signed else v


@op("vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2",
    "vadd4", "vsub4", "vavrg4", "vabsdiff4", "vmin4", "vmax4", "vset4")
def _simd(M, pc, ins, canon, ms, mods):
    ts = types_of(mods)
    if canon.startswith("vset"):
        ta, tb = ts[0], ts[1]
        td = "u32"
    else:
        td, ta, tb = ts[0], ts[1], ts[2]
    n = int(canon[-1])
    width = 32 // n
    kind = canon[1:-1]
    dst, dmask, _ = _operand(ins.operands[0])
    d = M.dst(dst, "u32", ins)
    (a, asel, _), (b, bsel, _) = _sources(M, ins, 2)
    c = M.src(ins.operands[3], "u32", ins)
    letter = "h" if n == 2 else "b"
    asel = (asel or letter + "".join(str(i) for i in reversed(range(n))))[1:]
    bsel = (bsel or letter + "".join(str(i) for i in reversed(range(n, 2 * n))))[1:]
    mask = [str(i) in (dmask or letter + "".join(map(str, range(n))))[1:] for i in range(n)]
    acc = "add" in ms
    sat = "sat" in ms
    cmp = next((m for m in mods if m in _CMP), None)

    def f(m):
        x, y = a(), b()
        va = [_signed(v, width, ta[0] == "s") for v in _lanes_of(x, y, asel, width)]
        vb = [_signed(v, width, tb[0] == "s") for v in _lanes_of(x, y, bsel, width)]
        cv = np.asarray(c()).astype(np.int64) & 0xFFFFFFFF
        out = cv.copy() if acc else np.zeros(np.broadcast(x, y, cv).shape, np.int64)
        for i in range(n):
            p, q = va[i], vb[i]
            op = _BINOP.get(kind)
            t = op(p, q) if op is not None else _CMP[cmp](p, q).astype(np.int64)
            if sat:
                t = _clamp(t, width, td[0] == "s")
            if acc:
                out = out + np.where(mask[i], t, 0)
            else:
                field = (t if mask[i] else (cv >> (width * i))) & ((1 << width) - 1)
                out = out | (field << (width * i))
        d.m((out & 0xFFFFFFFF).astype(np.uint32), m)
    return f
