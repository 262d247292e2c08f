"""What each data instruction does to buffers: movers, fractal loads, ``mad``, FixPipe, vector ops.

One handler per family (the opcode table's ``family``); ``HANDLERS[family](ins, machine)``
returns ``impl(core, args) -> (work, reads, writes)``: ``work`` is what the timing model prices,
``reads``/``writes`` are ``(buffer, lo, hi)`` byte ranges for the race checker. Numerics run only
when ``core.functional``; address, range and alignment checks always run. Layouts (ascend.md 3):

* L1 and L0C hold NZ: column blocks of C0 (= 32 B / element) columns, rows inside.
* L0A holds ZZ: fractal (m1, k1) at ``(m1*K1 + k1) * 512``, row-major 16 x C0 inside.
* L0B holds ZN: fractal (k1, n1) at ``(k1*N1 + n1) * 512``, inside 16 rows of n, C0 columns of k.
* L0C: fractal (n1, m1) of 16 x 16 accumulators at ``(n1*M1 + m1) * 256 * 4``.

A real line::

    mad.f16 l0c[0], l0a[0], l0b[0], 128, 64, 256, 0, 0, 0, 1   # C[128x256] = A[128x64] @ B[64x256]
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from isa.ascend.opcodes import OPCODES
from isa.errors import SimulationError

from .events import Mad, Move, Vec


class _Dtypes(dict):
    """PTX-style type name -> numpy type; bf16 (ml_dtypes, ~0.5 s of CPU to import) on first use."""

    def __missing__(self, t: str):
        if t != "bf16":
            raise KeyError(t)
        from sim.numerics.formats import ml_dtype

        self[t] = ml_dtype("bfloat16").type
        return self[t]


_NP = _Dtypes({"f16": np.float16, "f32": np.float32, "s8": np.int8, "u8": np.uint8,
       "s16": np.int16, "u16": np.uint16, "s32": np.int32, "u32": np.uint32, "b8": np.uint8, "b16": np.uint16,
       "b32": np.uint32, "u64": np.uint64, "s64": np.int64, "b64": np.uint64, "f64": np.float64})
_SIZE = {"f16": 2, "bf16": 2, "f32": 4, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "s32": 4, "u32": 4}


def np_dtype(t: str):
    return _NP[t]


def dtype_size(t: str) -> int:
    return _SIZE[t]


def _ub(msg):
    from .engine import UndefinedBehaviour
    return UndefinedBehaviour(msg)


# ----------------------------------------------------------------------------------------------
# memory helpers
# ----------------------------------------------------------------------------------------------

def _gm(c, lo, hi, what, bursts=None):
    """(array, offset) for a GM byte range, bounds-checked; the bytes accessed are recorded for the
    footprint: ``bursts`` = ``[(offset from lo, count, bytes, stride)]`` (default: all of it)."""
    gm = c.launch.gm
    i, off = gm.locate(lo, hi)
    for b_off, n, nbytes, stride in bursts or ((0, 1, hi - lo, 0),):
        gm.touch(i, off + b_off, nbytes, n, stride)
    return gm.data[i], off


def _local(c, space, lo, hi, what):
    c.check_range(space, lo, hi, what)
    return c.buffers.get(space), lo


def _region(c, space, lo, hi, what, bursts=None):
    if space == "gm":
        return _gm(c, lo, hi, what, bursts)
    return _local(c, space, lo, hi, what)


def _view2d(buf, off, rows, cols, stride):
    """A (rows, cols) byte view of ``buf`` starting at ``off`` with row stride ``stride``."""
    base = buf[off:]
    return as_strided(base, shape=(rows, cols), strides=(stride, 1))


def _store(c, dst_space, db, do, rows, rowbytes, stride, data) -> None:
    """Write ``data`` (rows x rowbytes bytes) to ``db`` at ``do`` with row ``stride``; GM stores
    under ``set_atomic_add/max/min`` combine with what GM holds, in the ``set_atomic_<t>`` type
    ([CCE-ATOMIC]: the operation runs on the store into GM)."""
    view = _view2d(db, do, rows, rowbytes, stride)
    mode = getattr(c, "atomic", None)
    if dst_space != "gm" or mode is None:
        view[...] = data
        return
    t = _NP[c.atomic_type]
    size = _SIZE[c.atomic_type]
    _need(rowbytes % size == 0, f"atomic {mode}: rows of {rowbytes} bytes are not whole .{c.atomic_type} elements")
    old = np.ascontiguousarray(view).view(t).astype(np.float64 if c.atomic_type[0] in "fb" else np.int64)
    new = np.ascontiguousarray(data).reshape(rows, rowbytes).view(t).astype(old.dtype)
    with np.errstate(all="ignore"):
        res = old + new if mode == "add" else np.maximum(old, new) if mode == "max" else np.minimum(old, new)
    if c.atomic_type[0] in "su":
        info = np.iinfo(t)
        res = ((res - info.min) % (1 << (8 * size))) + info.min      # integer adds wrap
    view[...] = np.ascontiguousarray(res.astype(t)).view(np.uint8).reshape(rows, rowbytes)


def _need(cond, msg):
    if not cond:
        raise _ub(msg)


# ----------------------------------------------------------------------------------------------
# movers: burst copies
# ----------------------------------------------------------------------------------------------

_UNITS = 32


def _copy(ins, machine):
    """``copy_gm_to_ubuf ub[0], gm[%x], sid, nBurst, lenBurst, srcGap, dstGap`` (units of 32 B)."""
    dst_space = ins.operands[0].space
    src_space = ins.operands[1].space
    path = f"{src_space}->{dst_space}"
    op = ins.opcode
    first = 2 if op == "copy_cbuf_to_fbuf" else 3

    def impl(c, a):
        dst, src = a[0], a[1]
        n, ln, sgap, dgap = (int(x) for x in a[first:first + 4])
        _need(1 <= n <= 4095, f"{op}: nBurst {n} is outside [1, 4095]")
        _need(1 <= ln <= 65535, f"{op}: lenBurst {ln} is outside [1, 65535]")
        _need(sgap >= 0 and dgap >= 0, f"{op}: negative gap")
        blen = ln * _UNITS
        ss, ds = (ln + sgap) * _UNITS, (ln + dgap) * _UNITS
        for space, addr in ((dst_space, dst), (src_space, src)):
            if space != "gm":
                c.check_align(space, addr, op)
        s_hi = src + (n - 1) * ss + blen
        d_hi = dst + (n - 1) * ds + blen
        sb, so = _region(c, src_space, src, s_hi, op, [(0, n, blen, ss)])
        db, do = _region(c, dst_space, dst, d_hi, op, [(0, n, blen, ds)])
        if c.functional:
            _store(c, dst_space, db, do, n, blen, ds, _view2d(sb, so, n, blen, ss).copy())
        reads = [(src_space, src, s_hi)] if src_space != "gm" else []
        writes = [(dst_space, dst, d_hi)] if dst_space != "gm" else []
        span = (src, s_hi, (n, blen, ss)) if src_space == "gm" else (dst, d_hi, (n, blen, ds)) \
            if dst_space == "gm" else None
        return Move(path, n * blen, span), reads, writes
    return impl


def _copy_align(ins, machine):
    """``copy_gm_to_ubuf_align_b16 ub, gm, sid, nBurst, lenBurst(bytes), leftPad, rightPad, srcGap, dstGap``.

    GM side strides are ``lenBurst + gap`` bytes; UB side rows are padded to 32 B plus ``gap``
    blocks of 32 B.
    """
    op = ins.opcode
    to_ub = op.startswith("copy_gm")
    path = "gm->ub" if to_ub else "ub->gm"

    def impl(c, a):
        dst, src = a[0], a[1]
        n, ln, lpad, rpad, sgap, dgap = (int(x) for x in a[3:9])
        _need(1 <= n <= 4095, f"{op}: nBurst {n} is outside [1, 4095]")
        _need(1 <= ln <= 2097151, f"{op}: lenBurst {ln} bytes is out of range")
        _need(lpad == 0 and rpad == 0, f"{op}: left/right padding is not modelled (use 0)")
        ub_row = (ln + 31) // 32 * 32
        if to_ub:
            ss, ds = ln + sgap, ub_row + dgap * 32
            c.check_align("ub", dst, op)
            sb, so = _gm(c, src, src + (n - 1) * ss + ln, op, [(0, n, ln, ss)])
            db, do = _local(c, "ub", dst, dst + (n - 1) * ds + ln, op)
            rng = ("ub", dst, dst + (n - 1) * ds + ln)
            span = (src, src + (n - 1) * ss + ln, (n, ln, ss))
        else:
            ss, ds = ub_row + sgap * 32, ln + dgap
            c.check_align("ub", src, op)
            sb, so = _local(c, "ub", src, src + (n - 1) * ss + ln, op)
            db, do = _gm(c, dst, dst + (n - 1) * ds + ln, op, [(0, n, ln, ds)])
            rng = ("ub", src, src + (n - 1) * ss + ln)
            span = (dst, dst + (n - 1) * ds + ln, (n, ln, ds))
        if c.functional:
            _store(c, "ub" if to_ub else "gm", db, do, n, ln, ds, _view2d(sb, so, n, ln, ss).copy())
        return Move(path, n * ln, span), ([] if to_ub else [rng]), ([rng] if to_ub else [])
    return impl


def _nd2nz(ins, machine):
    """``copy_gm_to_cbuf_multi_nd2nz_b16 l1, gm, sid, ndNum, nValue, dValue, srcNdMatrixStride,
    srcDValue, dstNzC0Stride, dstNzNStride, dstNzMatrixStride``: an nValue x dValue row-major GM
    matrix (row stride srcDValue elements) into NZ: element (n, d) goes to
    ``dst + (d // C0) * dstNzC0Stride * 32 + n * dstNzNStride * 32 + (d % C0) * size``.
    Columns of the last C0 block beyond dValue are written as zeros (documented choice)."""
    size = {"b8": 1, "b16": 2, "b32s": 4}[ins.opcode.rsplit("_", 1)[1]]
    c0 = 32 // size
    op = ins.opcode

    def impl(c, a):
        dst, src = a[0], a[1]
        nd, nv, dv, s_mat, s_d, c0s, ns, d_mat = (int(x) for x in a[3:11])
        _need(nd >= 1 and nv >= 0 and dv >= 0, f"{op}: ndNum/nValue/dValue must be positive")
        c.check_align("l1", dst, op)
        if nv == 0 or dv == 0:
            return Move("gm->l1", 0, None), [], []
        _need(s_d >= dv, f"{op}: srcDValue {s_d} is smaller than dValue {dv}")
        d1 = (dv + c0 - 1) // c0
        total = 0
        writes = []
        lo_all, hi_all = None, None
        one_nd = nd == 1
        for i in range(nd):
            s0 = src + i * s_mat * size
            d0 = dst + i * d_mat * size
            s_hi = s0 + ((nv - 1) * s_d + dv) * size
            d_hi = d0 + (d1 - 1) * c0s * 32 + (nv - 1) * ns * 32 + 32
            sb, so = _gm(c, s0, s_hi, op, [(0, nv, dv * size, s_d * size)])
            lo_all = s0 if lo_all is None else min(lo_all, s0)
            hi_all = s_hi if hi_all is None else max(hi_all, s_hi)
            db, do = _local(c, "l1", d0, d_hi, op)
            if c.functional:
                rows = _view2d(sb, so, nv, dv * size, s_d * size)
                pad = np.zeros((nv, d1 * 32), dtype=np.uint8)
                pad[:, :dv * size] = rows
                out = as_strided(db[do:], shape=(d1, nv, 32), strides=(c0s * 32, ns * 32, 1))
                out[...] = pad.reshape(nv, d1, 32).transpose(1, 0, 2)
            total += nv * dv * size
            writes.append(("l1", d0, d_hi))
        pattern = (nv, dv * size, s_d * size) if one_nd else None
        return Move("gm->l1", total, (lo_all, hi_all, pattern)), [], writes
    return impl


# ----------------------------------------------------------------------------------------------
# MTE1: L1 -> L0A / L0B fractal loads
# ----------------------------------------------------------------------------------------------

def _load2d(ins, machine):
    """``load_cbuf_to_ca.f16 l0a, l1, baseIdx, repeat, srcStride, dstGap, sid, transpose, addrMode``:
    fractal r (512 B) from ``src + (baseIdx + r*srcStride)*512`` to ``dst + r*(1+dstGap)*512``;
    ``transpose=1`` transposes each 16x16 fractal of a 16-bit type."""
    dst_space = ins.operands[0].space
    op = ins.opcode
    size = _SIZE[ins.modifiers[0]]
    path = f"l1->{dst_space}"

    def impl(c, a):
        dst, src, base, rep, sstr, dgap, _sid, tr = (int(x) for x in a[:8])
        _need(1 <= rep <= 255, f"{op}: repeat {rep} is outside [1, 255]")
        c.check_align(dst_space, dst, op)
        c.check_align("l1", src, op)
        s_lo = src + base * 512
        s_hi = s_lo + ((rep - 1) * sstr + 1) * 512 if sstr >= 0 else s_lo + 512
        d_hi = dst + ((rep - 1) * (1 + dgap) + 1) * 512
        sb, so = _local(c, "l1", min(s_lo, s_hi - 512), s_hi, op)
        db, do = _local(c, dst_space, dst, d_hi, op)
        if tr and size != 2:
            raise _ub(f"{op}: transpose=1 transposes 16-bit fractals only; for 8-bit data use {op}_transpose")
        if c.functional:
            frac = as_strided(c.buffers["l1"][s_lo:], shape=(rep, 512), strides=(sstr * 512, 1)).copy()
            if tr:
                frac = frac.view(np.uint16).reshape(rep, 16, 16).transpose(0, 2, 1).reshape(rep, 256) \
                    .copy().view(np.uint8)
            as_strided(db[dst:], shape=(rep, 512), strides=((1 + dgap) * 512, 1))[...] = frac
        return Move(path, rep * 512, None), [("l1", min(s_lo, s_hi - 512), s_hi)], [(dst_space, dst, d_hi)]
    return impl


def _load2d_t(ins, machine):
    """``load_cbuf_to_cb_transpose.s8 l0b, l1, indexID, repeat, srcStride, dstStride, dstFracGap``:
    8-bit transposing load (LoadDataWithTranspose). Square r is the 32x32-byte block of two
    consecutive L1 fractals at ``src + (indexID + r*srcStride)*512``; it is transposed and its
    two halves written to ``dst + r*dstStride*512`` and ``+ (1 + dstFracGap)*512``."""
    dst_space = ins.operands[0].space
    op = ins.opcode
    path = f"l1->{dst_space}"

    def impl(c, a):
        dst, src, base, rep, sstr, dstr, fgap = (int(x) for x in a[:7])
        _need(1 <= rep <= 255, f"{op}: repeat {rep} is outside [1, 255]")
        c.check_align(dst_space, dst, op)
        c.check_align("l1", src, op)
        s_lo = src + base * 512
        s_hi = s_lo + (rep - 1) * sstr * 512 + 1024
        d_hi = dst + (rep - 1) * dstr * 512 + (2 + fgap) * 512
        _local(c, "l1", s_lo, s_hi, op)
        _local(c, dst_space, dst, d_hi, op)
        if c.functional:
            sq = as_strided(c.buffers["l1"][s_lo:], shape=(rep, 32, 32), strides=(sstr * 512, 32, 1))
            t = sq.transpose(0, 2, 1).reshape(rep, 2, 512)
            out = as_strided(c.buffers[dst_space][dst:], shape=(rep, 2, 512),
                             strides=(dstr * 512, (1 + fgap) * 512, 1))
            out[...] = t
        return Move(path, rep * 1024, None), [("l1", s_lo, s_hi)], [(dst_space, dst, d_hi)]
    return impl


def _img2col(ins, machine):
    """``img2colv2_cbuf_to_ca.f16 l0a, l1, stepK, stepM, posK, posM, strideW, strideH, Wk, Hk, dilW, dilH,
    filterW, filterH, transpose, fmatrixCtrl, sizeChannel`` (Load3Dv2): rows ``posM ..+stepM`` and
    columns ``posK ..+stepK`` of the im2col matrix of the feature map in L1 (NC1HWC0: C1 slices of
    H x W x C0, W/H/pads from ``set_fmatrix``) into L0A (ZZ). Row m is output pixel (m // OW, m % OW);
    column k is (c1, kh, kw, c0) with k = ((c1 * Hk + kh) * Wk + kw) * C0 + c0. Taps in the padding,
    channels beyond sizeChannel and rows beyond OH*OW read 0."""
    op = ins.opcode
    size = _SIZE[ins.modifiers[0]]
    c0 = 32 // size

    def impl(c, a):
        dst, src = int(a[0]), int(a[1])
        step_k, step_m, pos_k, pos_m, sw, sh, wk, hk, dw, dh, fw, fh, tr, fctl, cin = (int(x) for x in a[2:17])
        _need(c.fmatrix is not None, f"{op}: no set_fmatrix before it (the feature map's W, H and pads)")
        _need(fw == 0 and fh == 0 and tr == 0 and fctl == 0,
              f"{op}: filterW/filterH (kernel sizes above 255), transpose and fmatrixCtrl are modelled as 0 only")
        _need(step_m % 16 == 0 and step_k % c0 == 0 and step_m > 0 and step_k > 0,
              f"{op}: stepM must be a multiple of 16 and stepK of {c0}, got {step_m}, {step_k}")
        _need(min(sw, sh, wk, hk, dw, dh, cin) >= 1, f"{op}: strides, kernel size, dilation and channels must be >= 1")
        W, H, pl, pr, pt, pb = c.fmatrix
        ow = (W + pl + pr - dw * (wk - 1) - 1) // sw + 1
        oh = (H + pt + pb - dh * (hk - 1) - 1) // sh + 1
        _need(ow >= 1 and oh >= 1, f"{op}: the kernel does not fit the {H}x{W} feature map")
        c1n = -(-cin // c0)
        c.check_align("l0a", dst, op)
        c.check_align("l1", src, op)
        s_hi = src + c1n * H * W * 32
        d_hi = dst + step_m * step_k * size
        _local(c, "l1", src, s_hi, op)
        _local(c, "l0a", dst, d_hi, op)
        if c.functional:
            m = pos_m + np.arange(step_m)
            k = pos_k + np.arange(step_k)
            cc0 = k % c0
            kw_ = (k // c0) % wk
            kh_ = (k // (c0 * wk)) % hk
            cc1 = k // (c0 * wk * hk)
            ih = (m // ow)[:, None] * sh - pt + kh_[None, :] * dh
            iw = (m % ow)[:, None] * sw - pl + kw_[None, :] * dw
            ok = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W) & (m < oh * ow)[:, None] \
                & ((cc1 * c0 + cc0) < cin)[None, :] & (cc1 < c1n)[None, :]
            idx = ((cc1[None, :] * H + np.clip(ih, 0, H - 1)) * W + np.clip(iw, 0, W - 1)) * c0 + cc0[None, :]
            fm = c.buffers["l1"][src:s_hi].view(np.uint16 if size == 2 else np.uint8)
            vals = np.where(ok, fm[idx], 0).astype(fm.dtype)
            m1, k1 = step_m // 16, step_k // c0
            zz = vals.reshape(m1, 16, k1, c0).transpose(0, 2, 1, 3)
            c.buffers["l0a"][dst:d_hi] = np.ascontiguousarray(zz).view(np.uint8).reshape(-1)
        return Move("l1->l0a", step_m * step_k * size, None), [("l1", src, s_hi)], [("l0a", dst, d_hi)]
    return impl


# ----------------------------------------------------------------------------------------------
# cube
# ----------------------------------------------------------------------------------------------

def _mad(ins, machine):
    """``mad.f16 l0c, l0a, l0b, m, k, n, unitFlag, kDirectionAlign, cmatrixSource, cmatrixInitVal``."""
    dt = ins.modifiers[0]
    size = _SIZE[dt]
    k0 = 32 // size
    acc = np.int32 if dt in ("s8", "u8") else np.float32

    def impl(c, a):
        cc, aa, bb = a[0], a[1], a[2]
        m, k, n, _uf, _kdir, csrc, init = (int(x) for x in a[3:10])
        for v, nm in ((m, "m"), (k, "k"), (n, "n")):
            _need(0 <= v <= 4095, f"mad: {nm}={v} is outside [0, 4095]")
        c.check_align("l0a", aa, "mad")
        c.check_align("l0b", bb, "mad")
        c.check_align("l0c", cc, "mad")
        if m == 0 or k == 0 or n == 0:
            return Mad(0, dt), [], []
        if csrc:
            raise SimulationError("mad with cmatrixSource=1 (bias table) is not modelled", ins.span)
        m1, k1, n1 = (m + 15) // 16, (k + k0 - 1) // k0, (n + 15) // 16
        a_hi, b_hi, c_hi = aa + m1 * k1 * 512, bb + k1 * n1 * 512, cc + m1 * n1 * 1024
        _local(c, "l0a", aa, a_hi, "mad (L0A operand)")
        _local(c, "l0b", bb, b_hi, "mad (L0B operand)")
        _local(c, "l0c", cc, c_hi, "mad (L0C result)")
        if c.functional:
            A = c.buffers["l0a"][aa:a_hi].view(_NP[dt]).reshape(m1, k1, 16, k0).transpose(0, 2, 1, 3) \
                .reshape(m1 * 16, k1 * k0)[:, :k]
            B = c.buffers["l0b"][bb:b_hi].view(_NP[dt]).reshape(k1, n1, 16, k0).transpose(0, 3, 1, 2) \
                .reshape(k1 * k0, n1 * 16)[:k, :]
            Cv = c.buffers["l0c"][cc:c_hi].view(acc).reshape(n1, m1 * 16, 16)
            if acc is np.int32:
                P = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.int64)
                prev = 0 if init else Cv.transpose(1, 0, 2).reshape(m1 * 16, n1 * 16).astype(np.int64)
                R = ((P + prev) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
            else:
                P = A.astype(np.float32) @ B.astype(np.float32)
                R = P if init else Cv.transpose(1, 0, 2).reshape(m1 * 16, n1 * 16) + P
            Cv[...] = R.reshape(m1 * 16, n1, 16).transpose(1, 0, 2)
        reads = [("l0a", aa, a_hi), ("l0b", bb, b_hi)] + ([] if init else [("l0c", cc, c_hi)])
        return Mad(m1 * k1 * n1, dt), reads, [("l0c", cc, c_hi)]
    return impl


# ---- FixPipe ----

def _quant_fields(q: int):
    m1_bits = (q & 0xFFFFFFFF) & ~0x1FFF          # hardware keeps sign, 8-bit exponent, 10-bit mantissa
    scale = np.array([m1_bits], dtype=np.uint32).view(np.float32)[0]
    shift = (q >> 32) & 0xF
    mcb = (q >> 36) & 1
    off = (q >> 37) & 0x1FF
    off = off - 512 if off >= 256 else off
    signed = (q >> 46) & 1
    return np.float32(scale), shift, mcb, off, signed


_OUT = {"NoQuant": None, "F322F16": "f16", "F322BF16": "bf16", "DEQF16": "f16", "VDEQF16": "f16",
        "REQ8": "s8", "VREQ8": "s8", "QF322B8_PRE": "s8", "VQF322B8_PRE": "s8"}
_NEEDS = {"F322F16": "f32", "F322BF16": "f32", "QF322B8_PRE": "f32", "VQF322B8_PRE": "f32",
          "DEQF16": "s32", "VDEQF16": "s32", "REQ8": "s32", "VREQ8": "s32"}


def quantize(x: np.ndarray, mode: str, qpre: int, per_channel: np.ndarray | None) -> tuple[np.ndarray, str]:
    """FixPipe output conversion of accumulators ``x`` (f32 or s32) by QuantMode; returns (array, dtype)."""
    if mode == "NoQuant":
        return x, "f32" if x.dtype == np.float32 else "s32"
    if mode == "F322F16":
        return x.astype(np.float16), "f16"
    if mode == "F322BF16":
        return x.astype(_NP["bf16"]), "bf16"
    fields = [_quant_fields(int(q)) for q in per_channel] if per_channel is not None else None
    if fields is not None:
        scale = np.array([f[0] for f in fields], dtype=np.float32)[None, :]
        shift = np.array([f[1] for f in fields])[None, :]
        mcb = np.array([f[2] for f in fields])[None, :]
        off = np.array([f[3] for f in fields])[None, :]
        signed = fields[0][4] if fields else 1
    else:
        scale, shift, mcb, off, signed = _quant_fields(qpre)
    if mode in ("DEQF16", "VDEQF16"):
        return (x.astype(np.float32) * scale).astype(np.float16), "f16"
    v = x.astype(np.int64)
    if mode in ("REQ8", "VREQ8"):
        v = np.where(mcb == 1, v >> shift, v)
        y = v.astype(np.float32) * scale
    else:
        y = x.astype(np.float32) * scale
    r = np.rint(y).astype(np.int64) + off
    lo, hi = (-128, 127) if signed else (0, 255)
    r = np.clip(r, lo, hi)
    return (r.astype(np.int8) if signed else r.astype(np.uint8)), ("s8" if signed else "u8")


def _fixpipe(ins, machine):
    """``copy_matrix_cc_to_gm.f32 gm, l0c, sid, nSize, mSize, dstStride, srcStride, unitFlagMode,
    QuantMode, reluPre, channelSplit, nz2ndEn``: L0C NZ (column block stride srcStride rows of 16)
    to a row-major GM matrix (row stride dstStride elements) with conversion."""
    acc = ins.modifiers[0]
    quant = ins.operands[8].name
    if quant in _NEEDS and _NEEDS[quant] != acc:
        raise SimulationError(f"copy_matrix_cc_to_gm: {quant} converts {_NEEDS[quant]} accumulators, "
                              f"not .{acc}", ins.span)
    out_t = _OUT[quant] or acc
    osize = _SIZE[out_t]

    def impl(c, a):
        dst, src = a[0], a[1]
        n, m, dstr, sstr, _uf, _q, relu, split, nz2nd = (int(x) if not isinstance(x, str) else x for x in a[3:12])
        _need(1 <= n <= 4095 and 1 <= m <= 65535, f"copy_matrix_cc_to_gm: nSize {n} / mSize {m} out of range")
        _need(sstr >= m, f"copy_matrix_cc_to_gm: srcStride {sstr} is smaller than mSize {m}")
        if split:
            _need(not nz2nd, "copy_matrix_cc_to_gm: channelSplit splits NZ output; it needs nz2ndEn=0")
            _need(out_t == "f32", f"copy_matrix_cc_to_gm: channelSplit is for f32 output (16x16 -> 2 x 16x8), "
                                  f"not .{out_t}")
        if nz2nd:
            _need(dstr >= n, f"copy_matrix_cc_to_gm: dstStride {dstr} is smaller than nSize {n}")
            nblk = cw = 0
        else:
            # ascend.md: 32 B of C0 per fractal row: f32 channel split 16x16 -> 2 x 16x8, s8/u8 merge
            # 16x16 -> 16x32, otherwise 16 columns per block; nSize a multiple of 16 (8 with split)
            cw = 8 if split else 32 if osize == 1 else 16
            _need(n % (8 if split else 16) == 0, f"copy_matrix_cc_to_gm: NZ output needs nSize a multiple of "
                                                  f"{8 if split else 16}, got {n}")
            nblk = -(-n // cw)
            _need(dstr * 32 >= m * cw * osize, f"copy_matrix_cc_to_gm: NZ dstStride {dstr} x 32 B is smaller than "
                                              f"one column block ({m} x {cw} x {osize} B)")
        c.check_align("l0c", src, "copy_matrix_cc_to_gm")
        n1 = (n + 15) // 16
        s_hi = src + ((n1 - 1) * sstr + m) * 64
        _local(c, "l0c", src, s_hi, "copy_matrix_cc_to_gm")
        d_hi = dst + ((m - 1) * dstr + n) * osize if nz2nd else \
            dst + (nblk - 1) * dstr * 32 + m * min(cw, n - (nblk - 1) * cw) * osize
        if nz2nd:
            bursts = [(0, m, n * osize, dstr * osize)]
        else:           # NZ: column blocks of m x cw elements, dstStride x 32 B apart
            bursts = [(j * dstr * 32, m, min(cw, n - j * cw) * osize, cw * osize) for j in range(nblk)]
        db, do = _gm(c, dst, d_hi, "copy_matrix_cc_to_gm", bursts)
        if quant.startswith("V"):
            c.check_range("fb", c.fpc, c.fpc + 8 * n, "copy_matrix_cc_to_gm (per-channel parameters)")
        if c.functional:
            view = c.buffers["l0c"][src:s_hi + 64].view(np.float32 if acc == "f32" else np.int32)
            nn = np.arange(n)
            idx = (nn // 16 * sstr * 16 + nn % 16)[None, :] + (np.arange(m) * 16)[:, None]
            x = view[idx]
            pc = None
            if quant.startswith("V"):
                pc = c.buffers["fb"][c.fpc:c.fpc + 8 * n].view(np.uint64)
            y, _ = quantize(x, quant, c.quant_pre, pc)
            if relu:
                y = np.maximum(y, np.zeros((), dtype=y.dtype))
            if nz2nd:
                _store(c, "gm", db, do, m, n * osize, dstr * osize,
                       np.ascontiguousarray(y).view(np.uint8).reshape(m, n * osize))
            else:  # NZ out: column blocks of cw elements, each m rows x cw, dstStride x 32 B apart
                yb = np.ascontiguousarray(y)
                for j in range(nblk):
                    blk = yb[:, j * cw:(j + 1) * cw]
                    w = blk.shape[1] * osize
                    _store(c, "gm", db, do + j * dstr * 32, m, w, cw * osize,
                           np.ascontiguousarray(blk).view(np.uint8).reshape(m, w))
        pattern = (m, n * osize, dstr * osize) if nz2nd else None
        return Move("l0c->gm", m * n * osize, (dst, d_hi, pattern)), [("l0c", src, s_hi)], []
    return impl


# ----------------------------------------------------------------------------------------------
# vector unit
# ----------------------------------------------------------------------------------------------

def _lanes(*types):
    return 256 // max(_SIZE[t] for t in types)


def _active(c, lanes: int, repeat: int) -> tuple[int, np.ndarray]:
    """(repeats, active lanes (repeat, lanes)) from the mask mode."""
    hi, lo = c.mask
    if c.mask_mode == "count":
        count = lo & ((1 << 64) - 1)
        reps = max(1, (count + lanes - 1) // lanes)
        act = (np.arange(reps * lanes) < count).reshape(reps, lanes)
        return reps, act
    lo &= (1 << 64) - 1
    hi &= (1 << 64) - 1
    bits = np.array([(lo >> i) & 1 for i in range(64)] + [(hi >> i) & 1 for i in range(64)], dtype=bool)
    if lanes == 64:
        row = bits[:64]
    elif lanes == 128:
        row = bits
    else:  # 8-bit types: each mask bit covers two lanes (documented choice)
        row = np.repeat(bits, 2)
    return repeat, np.broadcast_to(row, (repeat, lanes))


def _addrs(base, blk, rep, reps, lanes, size):
    epb = 32 // size
    lane = np.arange(lanes)
    inner = (lane // epb) * blk * 32 + (lane % epb) * size
    return base + (np.arange(reps) * rep * 32)[:, None] + inner[None, :]


def _blocks(base, blk, rep, reps, nblocks):
    return base + (np.arange(reps) * rep * 32)[:, None] + (np.arange(nblocks) * blk * 32)[None, :]


def _range(c, addrs, act, size, what):
    sel = addrs[act] if act is not None else addrs
    if sel.size == 0:
        return None
    lo, hi = int(sel.min()), int(sel.max()) + size
    c.check_range("ub", lo, hi, what)
    return ("ub", lo, hi)


def _compute(op, xs, scalar, dt):
    """Elementwise op in f32 (floats) or int64 (integers); result cast back to ``dt``."""
    is_f = dt in ("f16", "bf16", "f32")
    wide = [x.astype(np.float32 if is_f else np.int64) for x in xs]
    if scalar is not None:
        s = np.asarray(scalar).astype(_NP[dt]).astype(np.float32 if is_f else np.int64)
    with np.errstate(all="ignore"):
        if op in ("vadd", "vadds"):
            r = wide[0] + (wide[1] if op == "vadd" else s)
        elif op == "vsub":
            r = wide[0] - wide[1]
        elif op in ("vmul", "vmuls"):
            r = wide[0] * (wide[1] if op == "vmul" else s)
        elif op == "vdiv":
            r = wide[0] / wide[1] if is_f else np.where(wide[1] != 0, wide[0] // np.where(wide[1] == 0, 1, wide[1]), 0)
        elif op in ("vmax", "vmaxs"):
            r = np.maximum(wide[0], wide[1] if op == "vmax" else s)
        elif op in ("vmin", "vmins"):
            r = np.minimum(wide[0], wide[1] if op == "vmin" else s)
        elif op in ("vand", "vor"):
            a = xs[0].view(np.uint8 if _SIZE[dt] == 1 else np.uint16 if _SIZE[dt] == 2 else np.uint32)
            b = xs[1].view(a.dtype)
            return (a & b if op == "vand" else a | b).view(_NP[dt])
        elif op == "vexp":
            r = np.exp(wide[0])
        elif op == "vln":
            r = np.log(wide[0])
        elif op == "vabs":
            r = np.abs(wide[0])
        elif op == "vrelu":
            r = np.maximum(wide[0], 0)
        elif op == "vsqrt":
            r = np.sqrt(wide[0])
        elif op == "vrec":
            r = 1.0 / wide[0]
        elif op == "vcopy":
            return xs[0]
        elif op == "vector_dup":
            return np.full(xs[0].shape, s).astype(_NP[dt])
        else:
            raise KeyError(op)
    if not is_f:
        return np.asarray(r, dtype=np.int64).astype(_NP[dt])  # integer results wrap
    return r.astype(_NP[dt])


def _vector(ins, machine):
    """Elementwise vector ops: binary (10 operands), vector-scalar (8), unary/vconv (7), vector_dup (7)."""
    op = ins.opcode
    fam = {"vbinary": "bin", "vscalar": "sca", "vunary": "un", "vconv": "un", "vdup": "dup"}[OPCODES[op].family]
    if op == "vconv":
        st, dt = ins.modifiers[0], ins.modifiers[1]
        rnd = ins.modifiers[2] if len(ins.modifiers) > 2 else None
    else:
        st = dt = ins.modifiers[0]
        rnd = None
    ssz, dsz = _SIZE[st], _SIZE[dt]
    lanes = _lanes(st, dt)
    name = op if op != "vconv" else "vconv"

    def impl(c, a):
        if fam == "bin":
            dst, s0, s1, rep, db, b0, b1, dr, r0, r1 = a
            srcs, sblk, srep, scalar = [s0, s1], [b0, b1], [r0, r1], None
        elif fam == "sca":
            dst, s0, scalar, rep, db, b0, dr, r0 = a
            srcs, sblk, srep = [s0], [b0], [r0]
        elif fam == "dup":
            dst, scalar, rep, db, _b0, dr, _r0 = a
            srcs, sblk, srep = [], [], []
        else:
            dst, s0, rep, db, b0, dr, r0 = a
            srcs, sblk, srep, scalar = [s0], [b0], [r0], None
        rep = int(rep)
        counter = c.mask_mode == "count"
        if not counter:
            _need(0 <= rep <= 255, f"{op}: repeat {rep} is outside [0, 255]")
            if rep == 0:
                return Vec(name, 0, [], [], False), [], []
        reps, act = _active(c, lanes, rep)
        c.check_align("ub", dst, op)
        for s in srcs:
            c.check_align("ub", s, op)
        daddr = _addrs(dst, int(db), int(dr), reps, lanes, dsz)
        saddrs = [_addrs(s, int(b), int(r), reps, lanes, ssz) for s, b, r in zip(srcs, sblk, srep)]
        wr = _range(c, daddr, act, dsz, op)
        rd = [_range(c, sa, act, ssz, op) for sa in saddrs]
        nb_d = max(1, lanes * dsz // 32)
        nb_s = max(1, lanes * ssz // 32)
        rblocks = [_blocks(s, int(b), int(r), reps, nb_s) for s, b, r in zip(srcs, sblk, srep)]
        wblocks = [_blocks(dst, int(db), int(dr), reps, nb_d)]
        if c.functional and wr is not None:
            ub = c.buffers["ub"]
            xs = [ub.view(_NP[st])[sa[act] // ssz] for sa in saddrs]
            if fam == "dup":
                xs = [np.empty(int(act.sum()), dtype=_NP[dt])]
            if op == "vconv":
                res = convert(xs[0], st, dt, rnd)
            else:
                res = _compute(op, xs, scalar, dt)
            ub.view(_NP[dt])[daddr[act] // dsz] = res
        return (Vec(name, reps, rblocks, wblocks, counter), [r for r in rd if r], [wr] if wr else [])
    return impl


_RND = {None: "rn", "r": "rn", "a": "rna", "f": "rm", "c": "rp", "z": "rz", "o": "ro"}


def convert(x: np.ndarray, st: str, dt: str, rnd: str | None) -> np.ndarray:
    """``vconv`` numerics: float->float and float->int with the CastMode suffix, int->float exact."""
    mode = _RND[rnd]
    src = x.astype(np.float64)
    if dt in ("f16", "bf16", "f32"):
        if st in ("f16", "bf16", "s8", "u8", "s16") or (st == "f32" and dt == "f32"):
            return src.astype(_NP[dt])
        from sim.numerics.rounding import round_float

        if mode == "ro":
            rz = src.astype(np.float32)  # f64 -> f32 exact for f32/s32 sources up to 2^24
            t = np.asarray(round_float(rz, dt, "rz"))
            inexact = t != rz
            bits = t.astype(_NP[dt]).view(np.uint16)
            odd = (bits & 1) == 1
            bump = inexact & ~odd & np.isfinite(t)
            bits = np.where(bump, bits + 1, bits).astype(np.uint16)
            return bits.view(_NP[dt])
        return np.asarray(round_float(src, dt, mode)).astype(_NP[dt])
    # to integer
    if mode == "ro":
        mode = "rn"
    r = {"rn": np.rint, "rna": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5), "rm": np.floor, "rp": np.ceil,
         "rz": np.trunc}[mode](src)
    info = np.iinfo(_NP[dt])
    r = np.where(np.isnan(r), 0, np.clip(r, info.min, info.max))
    return r.astype(_NP[dt])


def _reduce(ins, machine):
    """``vcadd|vcmax|vcmin dst, src, repeat, dstRepStride, srcBlkStride, srcRepStride, mode|order``:
    one result per repeat (``VALUE_INDEX``/``INDEX_VALUE``: a value and its lane index) written at
    ``dst + r * dstRepStride * (result bytes)``.
    ``vcgadd|vcgmax|vcgmin dst, src, repeat, dstRepStride, srcBlkStride, srcRepStride``: one result
    per 32-B block (8 per repeat), a repeat's 8 results at ``dst + r * dstRepStride * 8 * size``."""
    op = ins.opcode
    dt = ins.modifiers[0]
    size = _SIZE[dt]
    lanes = 256 // size
    group = op.startswith("vcg")
    kind = op[-3:]  # add / max / min
    is_f = dt in ("f16", "bf16", "f32")

    def impl(c, a):
        dst, src, rep, drs, sbs, srs = (int(x) for x in a[:6])
        tail = a[6] if len(a) > 6 else 0
        order = tail if isinstance(tail, str) else "ONLY_VALUE"
        if kind == "add" and not group and int(tail) != 0:
            raise SimulationError("vcadd mode 1 (total into ACC_VAL) is not modelled; use mode 0", ins.span)
        counter = c.mask_mode == "count"
        if not counter:
            _need(0 <= rep <= 255, f"{op}: repeat {rep} is outside [0, 255]")
            if rep == 0:
                return Vec(op, 0, [], [], False), [], []
        reps, act = _active(c, lanes, rep)
        c.check_align("ub", src, op)
        c.check_align("ub", dst, op, size)
        saddr = _addrs(src, sbs, srs, reps, lanes, size)
        rd = _range(c, saddr, act, size, op)
        per = 8 if group else (2 if order in ("VALUE_INDEX", "INDEX_VALUE") else 1)
        unit = per * size
        d_lo, d_hi = dst, dst + (reps - 1) * drs * unit + unit
        c.check_range("ub", d_lo, d_hi, op)
        if c.functional:
            ub = c.buffers["ub"]
            x = ub.view(_NP[dt])[saddr // size].astype(np.float32 if is_f else np.int64)
            ident = {"add": 0, "max": -np.inf if is_f else np.iinfo(np.int64).min,
                     "min": np.inf if is_f else np.iinfo(np.int64).max}[kind]
            xm = np.where(act, x, ident)
            if group:
                xm = xm.reshape(reps, 8, lanes // 8)
            fn = {"add": np.sum, "max": np.max, "min": np.min}[kind]
            val = fn(xm, axis=-1).astype(_NP[dt])
            view = ub.view(_NP[dt])
            base = dst // size
            if group:
                idx = base + (np.arange(reps) * drs * 8)[:, None] + np.arange(8)[None, :]
                view[idx] = val
            else:
                rows = base + np.arange(reps) * drs * per
                if order == "ONLY_VALUE" or kind == "add":
                    view[rows] = val
                else:
                    arg = (np.argmax if kind == "max" else np.argmin)(xm, axis=-1)
                    ity = {1: np.uint8, 2: np.uint16, 4: np.uint32}[size]
                    iview = ub.view(ity)
                    if order == "ONLY_INDEX":
                        iview[rows] = arg.astype(ity)
                    elif order == "VALUE_INDEX":
                        view[rows] = val
                        iview[rows + 1] = arg.astype(ity)
                    else:
                        iview[rows] = arg.astype(ity)
                        view[rows + 1] = val
        rblocks = [_blocks(src, sbs, srs, reps, 8)]
        wblocks = [np.full((reps, 1), dst, dtype=np.int64) + (np.arange(reps) * drs * unit)[:, None]]
        return Vec(op, reps, rblocks, wblocks, counter), [rd] if rd else [], [("ub", d_lo, d_hi)]
    return impl


HANDLERS = {"load3d": _img2col, "copy": _copy, "copy_align": _copy_align, "nd2nz": _nd2nz, "load2d": _load2d, "load2d_t": _load2d_t,
            "mad": _mad, "fixpipe": _fixpipe, "vbinary": _vector, "vscalar": _vector, "vunary": _vector,
            "vconv": _vector, "vdup": _vector, "vreduce": _reduce, "vgreduce": _reduce}

__all__ = ["HANDLERS", "np_dtype", "dtype_size", "quantize", "convert", "math"]
