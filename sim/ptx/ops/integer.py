"""Integer, bit and predicate instructions::

    mad.lo.s32 %r1, %r9, %r8, %r10;      mul.wide.s32 %rd3, %r24, 4;     bfe.u32 %r78, %r2, 4, 4;
    prmt.b32 %r65, %r11, %r15, %r64;     shl.b64 %rd5, %rd4, 2;          setp.lt.u32 %p5, %r22, 3;
    selp.b32 %r41, 8, 0, %p2;            and.pred %p8, %p9, %p10;        dp4a.s32.s32 %r11, %r14, %r17, %r14;

Values wrap like the hardware (numpy integer arrays wrap silently); shifts clamp the shift
amount as PTX does; ``div``/``rem`` truncate toward zero.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import SINT, UINT, compute_dtype, is_float, nbytes, types_of
from . import op

U32 = np.uint32
U64 = np.uint64


def _ty(mods, default="b32") -> str:
    ts = types_of(mods)
    return ts[-1] if ts else default


def unary(M, ins, t, fn, tout=None):
    d = M.dst(ins.operands[0], tout or t, ins)
    a = M.src(ins.operands[1], t, ins)
    return lambda m: d.m(fn(a()), m)


def binary(M, ins, t, fn, tout=None, tb=None):
    d = M.dst(ins.operands[0], tout or t, ins)
    a = M.src(ins.operands[1], t, ins)
    b = M.src(ins.operands[2], tb or t, ins)
    return lambda m: d.m(fn(a(), b()), m)


def ternary(M, ins, t, fn, tout=None, tc=None, tb=None):
    d = M.dst(ins.operands[0], tout or t, ins)
    a = M.src(ins.operands[1], t, ins)
    b = M.src(ins.operands[2], tb or t, ins)
    c = M.src(ins.operands[3], tc or t, ins)
    return lambda m: d.m(fn(a(), b(), c()), m)


def ufunc2(M, ins, t, uf):
    """``uf(a, b)`` written straight into the destination register when the types allow it."""
    d = M.dst(ins.operands[0], t, ins)
    a = M.src(ins.operands[1], t, ins)
    b = M.src(ins.operands[2], t, ins)
    if d.conv is None and d.view is not None:
        view = d.view
        sa, sb = getattr(a, "static", None), getattr(b, "static", None)
        if sa is not None and sb is not None and isinstance(sa, np.ndarray):
            def f(m):
                uf(sa, sb, out=view, where=True if m is None else m)
            return f

        def g(m):
            uf(a(), b(), out=view, where=True if m is None else m)
        return g
    return lambda m: d.m(uf(a(), b()), m)


# ---------------------------------------------------------------------------------- helpers
def wide_of(t: str) -> str:
    return t[0] + str(2 * int(t[1:]))


def mulhi(a, b, t):
    n = nbytes(t)
    if n <= 4:
        w = SINT[2 * n] if t[0] == "s" else UINT[2 * n]
        return ((a.astype(w) * b.astype(w)) >> (8 * n)).astype(compute_dtype(t))
    ua = np.asarray(a).astype(U64) if t[0] != "s" else np.asarray(a).view(U64) if np.ndim(a) else np.uint64(np.int64(a).view(np.uint64))
    ub = np.asarray(b).astype(U64) if t[0] != "s" else np.asarray(b).view(U64) if np.ndim(b) else np.uint64(np.int64(b).view(np.uint64))
    ua = np.asarray(ua, dtype=U64)
    ub = np.asarray(ub, dtype=U64)
    m32 = U64(0xFFFFFFFF)
    al, ah = ua & m32, ua >> U64(32)
    bl, bh = ub & m32, ub >> U64(32)
    ll = al * bl
    lh = al * bh
    hl = ah * bl
    hh = ah * bh
    mid = (ll >> U64(32)) + (lh & m32) + (hl & m32)
    hi = hh + (lh >> U64(32)) + (hl >> U64(32)) + (mid >> U64(32))
    if t[0] == "s":
        hi = hi - np.where(np.asarray(a) < 0, ub, U64(0)) - np.where(np.asarray(b) < 0, ua, U64(0))
        return hi.view(np.int64)
    return hi


def _sat_add(a, b, t, sub=False):
    w = (a.astype(np.int64) - b) if sub else (a.astype(np.int64) + b)
    return np.clip(w, -2 ** 31, 2 ** 31 - 1).astype(np.int32)


# ---------------------------------------------------------------------------------- arithmetic
@op("add", "sub")
def _add(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    if is_float(t):
        from .floating import float_arith
        return float_arith(M, pc, ins, canon, ms, mods)
    if "cc" in ms:
        return _carry_chain(M, ins, canon, ms, t)
    if "sat" in ms:
        return binary(M, ins, t, lambda a, b: _sat_add(a, b, t, canon == "sub"))
    return ufunc2(M, ins, t, np.add if canon == "add" else np.subtract)


def carry(M) -> np.ndarray:
    """The condition-code carry flag CC.CF of every thread (created on first use, starts clear)."""
    cf = getattr(M, "carry_flag", None)
    if cf is None:
        cf = M.carry_flag = np.zeros(M.T, bool)
    return cf


def add_with_carry(a, b, cin, sub: bool):
    """Unsigned ``a + b + cin`` (or ``a - b``) wrapped to the width, and the carry-out, elementwise:
    the ISA's ``addc``/``subc`` (9.7.2).

    A subtraction is ``a + ~b + cin`` with ``cin = 1`` for ``sub.cc`` and ``cin = CC.CF`` for
    ``subc``, so the flag it leaves is the carry-out, i.e. *not* borrow: on the H200
    ``sub.cc.u32 d, 0x627ADF75, 0x864CCEF5; addc.u32 e, 0, 0;`` gives ``e = 0``, and
    ``subc.u32 e, 0, 0`` after an ``add.cc`` that carried nothing gives ``0xFFFFFFFF``
    (``examples/ptx/isa/carry.ptx``)."""
    a = np.asarray(a)
    b = np.asarray(b).astype(a.dtype)
    c = np.asarray(cin).astype(a.dtype)
    if sub:
        b = ~b
    s1 = a + b
    s = s1 + c
    return s, (s1 < a) | (s < s1)


@op("addc", "subc", "madc", "add.cc", "sub.cc", "mad.cc")
def _carry_in(M, pc, ins, canon, ms, mods):
    if canon.endswith(".cc"):
        canon, ms = canon[:-3], ms | {"cc"}
    return _carry_chain(M, ins, canon, ms, _ty(mods))


def _carry_chain(M, ins, canon, ms, t):
    """Extended-precision arithmetic through CC.CF::

        add.cc.u32 %r1, %r2, %r3;   addc.cc.u32 %r4, %r5, %r6;   addc.u32 %r7, %r8, %r9;
        sub.cc.u32 ...; subc ...;   mad.lo.cc.u32 %r1, %r2, %r3, %r4;   madc.hi.u32 ...

    ``add``/``sub``/``mad`` with ``.cc`` write the carry-out; ``addc``/``subc``/``madc`` also add
    (subtract) the carry-in, and write the carry-out only with ``.cc``."""
    ut = UINT[nbytes(t)]
    st = "u64" if nbytes(t) == 8 else "u32"
    d = M.dst(ins.operands[0], st, ins)
    srcs = [M.src(o, st, ins) for o in ins.operands[1:]]
    cin = canon in ("addc", "subc", "madc")
    cout = "cc" in ms
    sub = canon in ("sub", "subc")
    mad = canon in ("mad", "madc")
    hi = "hi" in ms
    signed = t.startswith("s")
    cf = carry(M)

    def f(m):
        a, b = (np.broadcast_to(np.asarray(x()), (M.T,)).astype(ut) for x in srcs[:2])
        if mad:
            if hi:
                sa = a.view(SINT[ut.itemsize]) if signed else a
                sb = b.view(SINT[ut.itemsize]) if signed else b
                a = np.asarray(mulhi(sa, sb, t)).view(ut)
            else:
                a = a * b
            b = np.broadcast_to(np.asarray(srcs[2]()), (M.T,)).astype(ut)
        r, c = add_with_carry(a, b, cf if cin else ut.type(1 if sub else 0), sub)
        d.m(r, m)
        if cout:
            np.copyto(cf, c, where=True if m is None else m)
    return f


@op("mul")
def _mul(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    if is_float(t):
        from .floating import float_arith
        return float_arith(M, pc, ins, canon, ms, mods)
    if "wide" in ms:
        wt = wide_of(t)
        wd = compute_dtype(wt)
        return binary(M, ins, t, lambda a, b: np.multiply(np.asarray(a).astype(wd), np.asarray(b).astype(wd)), tout=wt)
    if "hi" in ms:
        return binary(M, ins, t, lambda a, b: mulhi(np.asarray(a), np.asarray(b), t))
    return ufunc2(M, ins, t, np.multiply)


@op("mul24", "mad24")
def _mul24(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    sd = np.int64

    def ext(x):
        x = np.asarray(x).astype(np.int64) & 0xFFFFFF
        return np.where(x >= 0x800000, x - 0x1000000, x) if t[0] == "s" else x

    def prod(a, b):
        p = ext(a) * ext(b)
        return (p >> 16) if "hi" in ms else p

    cd = compute_dtype(t)
    if canon == "mul24":
        return binary(M, ins, t, lambda a, b: prod(a, b).astype(sd).astype(UINT[4]).view(cd) if cd.itemsize == 4 else prod(a, b).astype(cd))
    return ternary(M, ins, t, lambda a, b, c: (prod(a, b) + np.asarray(c).astype(np.int64)).astype(UINT[8]).astype(UINT[4]).view(cd))


@op("mad")
def _mad(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    if is_float(t):
        from .floating import fma_builder
        return fma_builder(M, pc, ins, canon, ms, mods)
    if "cc" in ms:
        return _carry_chain(M, ins, canon, ms, t)
    if "wide" in ms:
        wt = wide_of(t)
        wd = compute_dtype(wt)
        return ternary(M, ins, t, lambda a, b, c: np.asarray(a).astype(wd) * np.asarray(b).astype(wd) + c,
                       tout=wt, tc=wt)
    if "hi" in ms:
        if "sat" in ms:
            return ternary(M, ins, t, lambda a, b, c: np.clip(mulhi(np.asarray(a), np.asarray(b), t).astype(np.int64)
                                                              + c, -2 ** 31, 2 ** 31 - 1).astype(np.int32))
        return ternary(M, ins, t, lambda a, b, c: mulhi(np.asarray(a), np.asarray(b), t) + c)
    d = M.dst(ins.operands[0], t, ins)
    a = M.src(ins.operands[1], t, ins)
    b = M.src(ins.operands[2], t, ins)
    c = M.src(ins.operands[3], t, ins)
    if d.conv is None:
        view = d.view

        def f(m):
            p = np.multiply(a(), b())
            np.add(p, c(), out=view, where=True if m is None else m, casting="unsafe")
        return f
    return lambda m: d.m(np.multiply(a(), b()) + c(), m)


def _tdiv(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    bz = b == 0
    bs = np.where(bz, 1, b).astype(b.dtype)
    if a.dtype.kind == "u":
        return np.where(bz, np.iinfo(a.dtype).max, a // bs).astype(a.dtype)   # PTX leaves x/0 open: all ones
    r = np.fmod(a, bs)
    q = (a - r) // bs
    return np.where(bz, -1, q).astype(a.dtype)


def _trem(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    bz = b == 0
    bs = np.where(bz, 1, b).astype(b.dtype)
    r = np.fmod(a, bs) if a.dtype.kind == "i" else a % bs
    return np.where(bz, a, r).astype(a.dtype)


@op("div", "rem")
def _div(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    if is_float(t):
        from .floating import float_div
        return float_div(M, pc, ins, canon, ms, mods)
    return binary(M, ins, t, _tdiv if canon == "div" else _trem)


@op("abs", "neg")
def _abs(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    if is_float(t):
        from .floating import float_unary
        return float_unary(M, pc, ins, canon, ms, mods)
    return unary(M, ins, t, np.abs if canon == "abs" else np.negative)


@op("min", "max")
def _minmax(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    if is_float(t):
        from .floating import float_minmax
        return float_minmax(M, pc, ins, canon, ms, mods)
    if t.startswith("b"):
        t = "u" + t[1:]
    return ufunc2(M, ins, t, np.minimum if canon == "min" else np.maximum)


# ---------------------------------------------------------------------------------- logic
@op("and", "or", "xor")
def _logic(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    uf = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[canon]
    if t == "pred":
        uf = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[canon]
    return ufunc2(M, ins, t, uf)


@op("not")
def _not(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    return unary(M, ins, t, np.logical_not if t == "pred" else np.invert)


@op("cnot")
def _cnot(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    cd = compute_dtype(t)
    return unary(M, ins, t, lambda a: (np.asarray(a) == 0).astype(cd))


@op("lop3")
def _lop3(M, pc, ins, canon, ms, mods):
    t = "b32"
    lut = int(ins.operands[4].value) & 0xFF

    def f(a, b, c):
        out = np.zeros(np.broadcast(a, b, c).shape, np.uint32)
        for i in range(8):
            if lut >> i & 1:
                out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
        return out
    return ternary(M, ins, t, f)


def _shift_amount(b, bits):
    b = np.asarray(b).astype(np.uint32)
    return np.minimum(b, np.uint32(bits)), b >= bits


@op("shl", "shr")
def _shift(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    cd = compute_dtype(t)
    bits = 8 * cd.itemsize
    wide = SINT[8] if cd.kind == "i" else UINT[8]

    if bits < 64:
        def f(a, b):
            s = np.minimum(np.asarray(b).astype(np.int64) & 0xFFFFFFFF, bits)
            if canon == "shl":
                return (np.asarray(a).astype(wide) << s.astype(wide)).astype(cd) if cd.kind == "i" else \
                    (np.asarray(a).astype(UINT[8]) << s.astype(UINT[8])).astype(cd)
            return (np.asarray(a).astype(wide) >> s.astype(wide)).astype(cd)
    else:
        def f(a, b):
            s = np.asarray(b).astype(np.uint64) & U64(0xFFFFFFFF)
            big = s >= 64
            s = np.minimum(s, U64(63)).astype(cd)
            a = np.asarray(a)
            if canon == "shl":
                return np.where(big, cd.type(0), a << s)
            r = a >> s
            return np.where(big, (a >> cd.type(63)) if cd.kind == "i" else cd.type(0), r)
    return binary(M, ins, t, f, tb="u32")


@op("shf")
def _shf(M, pc, ins, canon, ms, mods):
    left = "l" in ms
    clamp = "clamp" in ms

    def f(a, b, c):
        c = np.asarray(c).astype(np.uint64)
        n = np.minimum(c, U64(32)) if clamp else (c & U64(31))
        v = (np.asarray(b).astype(U64) << U64(32)) | np.asarray(a).astype(U64)
        if left:
            return ((v << n) >> U64(32)).astype(np.uint32)
        return ((v >> n) & U64(0xFFFFFFFF)).astype(np.uint32)
    return ternary(M, ins, "b32", f, tc="u32")


@op("popc")
def _popc(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    cd = compute_dtype(t)

    def f(a):
        a = np.asarray(a).astype(U64)
        return np.bitwise_count(a).astype(np.uint32) if hasattr(np, "bitwise_count") else \
            np.array([bin(int(x)).count("1") for x in a.ravel()], np.uint32).reshape(a.shape)
    del cd
    return unary(M, ins, t, f, tout="u32")


@op("clz")
def _clz(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    bits = 8 * nbytes(t)

    def f(a):
        a = np.asarray(a).astype(U64)
        n = np.zeros(a.shape, np.uint32)
        x = a.copy()
        length = np.zeros(a.shape, np.int64)
        for s in (32, 16, 8, 4, 2, 1):
            big = x >= (U64(1) << U64(s))
            length = np.where(big, length + s, length)
            x = np.where(big, x >> U64(s), x)
        length = length + (x > 0)
        n[...] = bits - length
        return n
    return unary(M, ins, t, f, tout="u32")


@op("bfind")
def _bfind(M, pc, ins, canon, ms, mods):
    """``bfind{.shiftamt}.type d, a;`` (ISA 9.7.1.16): the bit position of the most significant 1
    (for a negative signed ``a``: of the most significant 0); with ``.shiftamt`` the left shift
    that moves it to the top (``bits - 1 - pos``); 0xFFFFFFFF when there is no such bit::

        bfind.u32 %r10, %r1;     bfind.shiftamt.s32 %r13, %r1;
    """
    t = _ty(mods)
    bits = 8 * nbytes(t)
    signed = t[0] == "s"
    shiftamt = "shiftamt" in ms

    def f(a):
        a = np.asarray(a)
        u = a.astype(UINT[bits // 8]).astype(U64)
        if signed:
            u = np.where(a < 0, ~u & U64((1 << bits) - 1), u)
        pos = np.full(u.shape, -1, np.int64)
        x = u.copy()
        for sh in (32, 16, 8, 4, 2, 1):
            big = x >= (U64(1) << U64(sh))
            pos = np.where(big, np.where(pos < 0, sh, pos + sh), pos)
            x = np.where(big, x >> U64(sh), x)
        pos = np.where(u == 0, -1, np.where(pos < 0, 0, pos))
        if shiftamt:
            pos = np.where(pos < 0, -1, bits - 1 - pos)
        return (pos & 0xFFFFFFFF).astype(np.uint32)
    return unary(M, ins, t, f, tout="u32")


@op("bmsk")
def _bmsk(M, pc, ins, canon, ms, mods):
    """``bmsk.mode.b32 d, a, b;`` (ISA 9.7.8.x): ``b`` one bits starting at bit ``a``; ``.wrap``
    takes both modulo 32, ``.clamp`` limits them to 32; bits past 31 are dropped."""
    wrap = "wrap" in ms

    def f(a, b):
        a = np.asarray(a).astype(np.int64) & 0xFFFFFFFF
        b = np.asarray(b).astype(np.int64) & 0xFFFFFFFF
        if wrap:
            a, b = a & 31, b & 31
        else:
            a, b = np.minimum(a, 32), np.minimum(b, 32)
        m = ((np.int64(1) << b) - 1) << a
        return (m & 0xFFFFFFFF).astype(np.uint32)
    return binary(M, ins, "b32", f, tb="u32")


@op("szext")
def _szext(M, pc, ins, canon, ms, mods):
    """``szext.mode.type d, a, b;``: the low ``b`` bits of ``a`` sign- (``.s32``) or zero-extended
    (``.u32``); ``.wrap`` takes ``b`` modulo 32, ``.clamp`` limits it to 32; ``b = 0`` gives 0."""
    t = _ty(mods)
    wrap = "wrap" in ms

    def f(a, b):
        x = np.asarray(a).astype(np.int64) & 0xFFFFFFFF
        b = np.asarray(b).astype(np.int64) & 0xFFFFFFFF
        b = (b & 31) if wrap else np.minimum(b, 32)
        low = x & ((np.int64(1) << b) - 1)
        if t[0] == "s":
            sign = (low >> np.maximum(b - 1, 0)) & 1
            low = np.where((b > 0) & (sign == 1), low - (np.int64(1) << b), low)
        return (low & 0xFFFFFFFF).astype(np.uint32).view(compute_dtype(t))
    return binary(M, ins, t, f, tb="u32")


@op("fns")
def _fns(M, pc, ins, canon, ms, mods):
    """``fns.b32 d, mask, base, offset;`` (ISA 9.7.1.x): the position of the ``offset``-th set bit
    of ``mask`` counting up from ``base`` (down for a negative ``offset``; ``offset = 0`` asks
    whether bit ``base`` itself is set); 0xFFFFFFFF when there is none."""

    def f(mask, base, off):
        mask = np.asarray(mask).astype(np.int64) & 0xFFFFFFFF
        base = np.asarray(base).astype(np.int64) & 0xFFFFFFFF
        off = np.asarray(off).astype(np.int64)
        mask, base, off = np.broadcast_arrays(mask, base, off)
        d = np.full(mask.shape, -1, np.int64)
        bit0 = (mask >> np.minimum(base, 63)) & 1
        d = np.where((off == 0) & (base < 32) & (bit0 == 1), base, d)
        count = np.abs(off) - 1
        inc = np.where(off > 0, 1, -1)
        pos = base.copy()
        live = (off != 0)
        for _ in range(33):
            inside = live & (pos >= 0) & (pos < 32)
            hit = inside & (((mask >> np.clip(pos, 0, 31)) & 1) == 1)
            found = hit & (count == 0)
            d = np.where(found, pos, d)
            live = inside & ~found
            count = np.where(hit & ~found, count - 1, count)
            pos = pos + inc
        return (d & 0xFFFFFFFF).astype(np.uint32)
    return ternary(M, ins, "b32", f, tb="u32", tc="s32")


@op("cvt.pack")
def _cvt_pack(M, pc, ins, canon, ms, mods):
    """``cvt.pack.sat.convertType.s32{.b32} d, a, b{, c};`` (ISA 9.7.9.22): ``a`` and ``b``
    saturated to ``convertType`` (u2 .. s16) and packed with ``b`` in the low bits and ``a`` above
    it; for the 2/4/8-bit types the bits of ``c`` fill the rest of ``d`` from bit ``2*size`` up::

        cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4;    # d = c << 16 | sat(a) << 8 | sat(b)
    """
    ct = next(m for m in mods if m in ("u2", "s2", "u4", "s4", "u8", "s8", "u16", "s16"))
    size = int(ct[1:])
    lo, hi = (-(1 << (size - 1)), (1 << (size - 1)) - 1) if ct[0] == "s" else (0, (1 << size) - 1)
    mask = (1 << size) - 1
    has_c = len(ins.operands) > 3

    def pack(a, b, c=None):
        ta = np.clip(np.asarray(a).astype(np.int64), lo, hi) & mask
        tb = np.clip(np.asarray(b).astype(np.int64), lo, hi) & mask
        d = tb | (ta << size)
        if c is not None and 2 * size < 32:
            d = d | (np.asarray(c).astype(np.int64) << (2 * size))
        return (d & 0xFFFFFFFF).astype(np.uint32)
    if has_c:
        return ternary(M, ins, "s32", pack, tout="b32", tc="b32")
    return binary(M, ins, "s32", pack, tout="b32")


@op("brev")
def _brev(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    cd = compute_dtype(t)
    bits = 8 * cd.itemsize

    def f(a):
        a = np.asarray(a).astype(U64)
        out = np.zeros(a.shape, U64)
        for i in range(bits):
            out |= ((a >> U64(i)) & U64(1)) << U64(bits - 1 - i)
        return out.astype(cd)
    return unary(M, ins, t, f)


@op("bfe")
def _bfe(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    cd = compute_dtype(t)
    bits = 8 * cd.itemsize
    signed = t[0] == "s"

    def f(a, b, c):
        pos = np.asarray(b).astype(np.int64) & 0xFF
        ln = np.asarray(c).astype(np.int64) & 0xFF
        ua = np.asarray(a).astype(cd).view(UINT[cd.itemsize]).astype(U64)
        sh = np.minimum(pos, 63).astype(U64)
        x = ua >> sh
        x = np.where(pos >= bits, U64(0), x)
        mask = np.where(ln >= 64, U64(0xFFFFFFFFFFFFFFFF), (U64(1) << np.minimum(ln, 63).astype(U64)) - U64(1))
        x = x & mask
        if signed:
            sbit_pos = np.minimum(pos + ln - 1, bits - 1)
            sbit = (ua >> sbit_pos.astype(U64)) & U64(1)
            sbit = np.where(ln == 0, U64(0), sbit)
            ext = np.where(sbit == 1, ~mask, U64(0))
            x = np.where(ln == 0, U64(0), np.where(sbit == 1, x | ext, x))
        return x.astype(UINT[cd.itemsize]).view(cd)
    return ternary(M, ins, t, f, tb="u32", tc="u32")


@op("bfi")
def _bfi(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    cd = compute_dtype(t)
    bits = 8 * cd.itemsize
    d = M.dst(ins.operands[0], t, ins)
    a = M.src(ins.operands[1], t, ins)
    b = M.src(ins.operands[2], t, ins)
    c = M.src(ins.operands[3], "u32", ins)
    dd = M.src(ins.operands[4], "u32", ins)

    def f(m):
        pos = np.asarray(c()).astype(np.int64) & 0xFF
        ln = np.asarray(dd()).astype(np.int64) & 0xFF
        ua = np.asarray(a()).astype(U64)
        ub = np.asarray(b()).astype(U64)
        mask = ((U64(1) << np.minimum(ln, 63).astype(U64)) - U64(1)) << np.minimum(pos, 63).astype(U64)
        mask = np.where(pos >= bits, U64(0), mask)
        d.m(((ub & ~mask) | ((ua << np.minimum(pos, 63).astype(U64)) & mask)).astype(cd), m)
    return f


PRMT_MODES = {
    "f4e": lambda s, k: (s + k) & 7,
    "b4e": lambda s, k: (s - k) & 7,
    "rc8": lambda s, k: s,
    "ecl": lambda s, k: max(k, s),
    "ecr": lambda s, k: min(k, s),
    "rc16": lambda s, k: (s & 1) * 2 + (k & 1),
}


def _prmt_mode_table(mode):
    """selector c[1:0] -> the source byte for each destination byte (ISA prmt mode table)."""
    return np.array([[PRMT_MODES[mode](s, k) for k in range(4)] for s in range(4)], dtype=np.uint64)


def _prmt_byte_sources(mode, c: int) -> np.ndarray:
    """For a fixed selector ``c``: per destination byte, the index into the 16 bytes
    ``{b, a}`` bytes 0-7 then their sign bytes 0-7 (``0xFF`` where the byte's bit 7 is set)."""
    if mode is None:
        sels = [(c >> (4 * k)) & 0xF for k in range(4)]
        return np.array([(s & 7) + (8 if s & 8 else 0) for s in sels], dtype=np.intp)
    return _prmt_mode_table(mode)[c & 3].astype(np.intp)


@op("prmt")
def _prmt(M, pc, ins, canon, ms, mods):
    mode = next((m for m in mods if m in PRMT_MODES), None)
    sc = getattr(M.src(ins.operands[3], "b32", ins), "static", None)
    if sc is not None and np.ndim(sc) == 0:            # selector is an immediate: one byte gather
        take = _prmt_byte_sources(mode, int(sc) & 0xFFFFFFFF)
        signed = bool((take >= 8).any())

        def g(a, b, c):
            src = (np.asarray(b).astype(U64) << U64(32)) | np.asarray(a).astype(U64)
            by = np.ascontiguousarray(src).reshape(-1).view(np.uint8).reshape(-1, 8)
            if signed:
                by = np.concatenate([by, (by.view(np.int8) >> 7).view(np.uint8)], axis=1)
            out = np.ascontiguousarray(by[:, take]).view(np.uint32).reshape(-1)
            return out if np.ndim(src) else out[0]
        return ternary(M, ins, "b32", g)

    def f(a, b, c):
        src = (np.asarray(b).astype(U64) << U64(32)) | np.asarray(a).astype(U64)
        c = np.asarray(c).astype(U64)
        src, c = np.broadcast_arrays(src, c)
        out = np.zeros(src.shape, U64)
        if mode is None:
            for k in range(4):
                sel = (c >> U64(4 * k)) & U64(0xF)
                byte = (src >> ((sel & U64(7)) * U64(8))) & U64(0xFF)
                sign = np.where((byte & U64(0x80)) != 0, U64(0xFF), U64(0))
                byte = np.where((sel & U64(8)) != 0, sign, byte)
                out |= byte << U64(8 * k)
        else:
            tbl = _prmt_mode_table(mode)
            s = (c & U64(3)).astype(np.int64)
            for k in range(4):
                sel = tbl[s, k]
                out |= ((src >> (sel * U64(8))) & U64(0xFF)) << U64(8 * k)
        return out.astype(np.uint32)
    return ternary(M, ins, "b32", f)


# ---------------------------------------------------------------------------------- compare/select
CMP = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal,
}
BOOLOP = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def compare(cmp: str, t: str):
    """A function (a, b) -> bool array for ``setp.<cmp>.<t>`` (unordered float forms included)."""
    if is_float(t):
        from .floating import float_compare
        return float_compare(cmp, t)
    if cmp in ("lo", "ls", "hi", "hs") or t.startswith("b"):
        ut = "u" + t[1:] if t[0] in "bs" else t
        cd = compute_dtype(ut)
        f = CMP[cmp]
        if t[0] == "s" and cmp not in ("lo", "ls", "hi", "hs"):
            return f
        return lambda a, b: f(np.asarray(a).view(cd) if np.ndim(a) else cd.type(np.asarray(a).astype(cd)),
                              np.asarray(b).view(cd) if np.ndim(b) else cd.type(np.asarray(b).astype(cd)))
    return CMP[cmp]


@op("setp")
def _setp(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    cmp = next(m for m in mods if m in CMP or m in ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"))
    bop = next((m for m in mods if m in BOOLOP), None)
    f = compare(cmp, t)
    dst = ins.operands[0]
    if isinstance(dst, type(ins.operands[0])) and dst.__class__.__name__ == "Pair":
        p = M.dst(dst.first, "pred", ins)
        q = M.dst(dst.second, "pred", ins)
    else:
        p, q = M.dst(dst, "pred", ins), None
    a = M.src(ins.operands[1], t, ins)
    b = M.src(ins.operands[2], t, ins)
    c = M.src(ins.operands[3], "pred", ins) if bop else None
    bf = BOOLOP.get(bop)
    if not bop and q is None and p.conv is None:
        view = p.view

        def fast(m):
            r = f(a(), b())
            if m is None:
                view[...] = r
            else:
                np.copyto(view, r, where=m)
        return fast

    def g(m):
        r = f(a(), b())
        if bf is not None:
            cv = c()
            p.m(bf(r, cv), m)
            if q is not None:
                q.m(bf(~r, cv), m)
        else:
            p.m(r, m)
            if q is not None:
                q.m(~r, m)
    return g


def _ftz32(x):
    """float32 subnormals flushed to zero of the same sign (``.ftz``)."""
    x = np.asarray(x, dtype=np.float32)
    return np.where(np.abs(x) < np.float32(2.0 ** -126), np.copysign(np.float32(0), x), x)


#: what ``set`` writes for true, per destination type (false is all zero bits)
SET_TRUE = {"u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "b32": 0xFFFFFFFF, "f32": 0x3F800000, "f16": 0x3C00,
            "bf16": 0x3F80}


@op("set")
def _set(M, pc, ins, canon, ms, mods):
    """``set.CmpOp{.BoolOp}{.ftz}.dtype.stype d, a, b{, {!}c};`` (ISA 9.7.6.1, 9.7.4.4): the compare
    (``setp``'s), combined with predicate ``c``, written as all ones (integer ``d``) or 1.0 (float
    ``d``: 0x3F800000, f16 0x3C00, bf16 0x3F80) for true and 0 for false; packed ``f16x2``/``bf16x2``
    sources compare each half, and the result has one half per comparison (0xFFFF halves for a
    ``.u32``/``.s32`` destination)::

        set.lt.u32.f32 %r10, %f1, %f2;     set.ltu.f16x2.f16x2 %r22, %r1, %r2;
    """
    ts = types_of(mods)
    dt, st = ts[0], ts[-1]
    cmp = next(m for m in mods if m in CMP or m in ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"))
    bop = next((m for m in mods if m in BOOLOP), None)
    bf = BOOLOP.get(bop)
    c = M.src(ins.operands[3], "pred", ins) if bop else None
    packed = st in ("f16x2", "bf16x2")
    half = st[:-2] if packed else st
    f = compare(cmp, half)
    if "ftz" in ms and half == "f32":
        g = f
        f = lambda a, b: g(_ftz32(a), _ftz32(b))  # noqa: E731
    one = SET_TRUE[dt[:-2] if dt in ("f16x2", "bf16x2") else dt]
    a = M.src(ins.operands[1], "b32" if packed else st, ins)
    b = M.src(ins.operands[2], "b32" if packed else st, ins)

    def truth(x, y):
        r = f(x, y)
        return bf(r, c()) if bf is not None else r

    if packed:
        hone = 0xFFFF if dt in ("u32", "s32") else one
        d = M.dst(ins.operands[0], "b32", ins)

        def g2(m):
            x = np.asarray(a()).astype(np.uint32)
            y = np.asarray(b()).astype(np.uint32)
            lo = truth((x & 0xFFFF).astype(np.uint16), (y & 0xFFFF).astype(np.uint16))
            hi = truth((x >> 16).astype(np.uint16), (y >> 16).astype(np.uint16))
            d.m(np.where(lo, np.uint32(hone), np.uint32(0)) | np.where(hi, np.uint32(hone << 16), np.uint32(0)), m)
        return g2
    dbits = "b16" if dt in ("f16", "bf16") else "b32"
    d = M.dst(ins.operands[0], dbits, ins)
    cd = compute_dtype(dbits)
    if half in ("f16", "bf16"):
        a = M.src(ins.operands[1], "b16", ins)
        b = M.src(ins.operands[2], "b16", ins)

    def g1(m):
        d.m(np.where(truth(a(), b()), cd.type(one), cd.type(0)), m)
    return g1


@op("selp")
def _selp(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    return ternary(M, ins, t, lambda a, b, c: np.where(c, a, b), tc="pred")


@op("slct")
def _slct(M, pc, ins, canon, ms, mods):
    ts = types_of(mods)
    t, tc = ts[0], ts[-1]
    if is_float(tc):
        return ternary(M, ins, t, lambda a, b, c: np.where(c >= 0, a, b), tc=tc)
    return ternary(M, ins, t, lambda a, b, c: np.where(c >= 0, a, b), tc=tc)


# ---------------------------------------------------------------------------------- dot products
def _bytes(x, signed, n=4, width=8):
    x = np.asarray(x).astype(np.uint32).astype(np.int64)
    out = []
    for k in range(n):
        v = (x >> (width * k)) & ((1 << width) - 1)
        if signed:
            v = np.where(v >= 1 << (width - 1), v - (1 << width), v)
        out.append(v)
    return out


@op("dp4a")
def _dp4a(M, pc, ins, canon, ms, mods):
    ta, tb = types_of(mods)[:2]
    tc = "u32" if ta == "u32" and tb == "u32" else "s32"

    def f(a, b, c):
        va = _bytes(a, ta == "s32")
        vb = _bytes(b, tb == "s32")
        acc = np.asarray(c).astype(np.int64)
        for k in range(4):
            acc = acc + va[k] * vb[k]
        return (acc & 0xFFFFFFFF).astype(np.uint32).view(compute_dtype(tc))
    return ternary(M, ins, "b32", f, tout=tc, tc=tc)


@op("dp2a")
def _dp2a(M, pc, ins, canon, ms, mods):
    ta, tb = types_of(mods)[:2]
    tc = "u32" if ta == "u32" and tb == "u32" else "s32"
    hi = "hi" in ms

    def f(a, b, c):
        va = _bytes(a, ta == "s32", 2, 16)
        vb = _bytes(b, tb == "s32")
        off = 2 if hi else 0
        acc = np.asarray(c).astype(np.int64) + va[0] * vb[off] + va[1] * vb[off + 1]
        return (acc & 0xFFFFFFFF).astype(np.uint32).view(compute_dtype(tc))
    return ternary(M, ins, "b32", f, tout=tc, tc=tc)


@op("sad")
def _sad(M, pc, ins, canon, ms, mods):
    t = _ty(mods)
    return ternary(M, ins, t, lambda a, b, c: (np.abs(np.asarray(a).astype(np.int64) - b) + c).astype(compute_dtype(t)))
