"""Conv2d on cube cores through img2col (Load3Dv2), in the manner of CATLASS ``33_basic_conv2d``.

The feature map ``x`` (NHWC, N = 1, f16) is copied once into L1 as NC1HWC0 (one ND -> NZ copy
of the H*W x Cin matrix: C0 = 16 channels per slice), the weights ``w`` as the K x Cout matrix
(row-major in GM, K ordered (c1, kh, kw, c0) = FRACTAL_Z with channels padded to 16) into L0B
once. Each block of ``tm`` output pixels is expanded by ``img2colv2_cbuf_to_ca`` straight into
L0A (ZZ), multiplied by ``mad`` and written by FixPipe (f32 -> f16) to ``y`` (OH*OW x Cout, NHWC).
Blocks are spread over cube cores (``block_idx`` step ``block_num``)::

    text = conv2d_kernel(ConvConfig(cin=16, h=16, w=16, cout=32, kh=3, kw=3, stride=1, pad=1))
"""

from __future__ import annotations

from dataclasses import dataclass

from isa.errors import InputError

from .gemm import L0A_BYTES, L0B_BYTES, L0C_BYTES, L1_BYTES, _Asm, header


@dataclass(frozen=True)
class ConvConfig:
    cin: int = 16
    h: int = 16
    w: int = 16
    cout: int = 32
    kh: int = 3
    kw: int = 3
    stride: int = 1
    pad: int = 1
    tm: int = 64          # output pixels per block (a multiple of 16)

    @property
    def oh(self) -> int:
        return (self.h + 2 * self.pad - self.kh) // self.stride + 1

    @property
    def ow(self) -> int:
        return (self.w + 2 * self.pad - self.kw) // self.stride + 1

    @property
    def k(self) -> int:
        return -(-self.cin // 16) * self.kh * self.kw * 16


def check(cfg: ConvConfig) -> None:
    for v, nm in ((cfg.cin, "cin"), (cfg.h, "h"), (cfg.w, "w"), (cfg.cout, "cout"), (cfg.kh, "kh"), (cfg.kw, "kw"),
                  (cfg.stride, "stride")):
        if v < 1:
            raise InputError(f"conv2d: --{nm} must be positive, got {v}")
    if cfg.pad < 0 or cfg.pad > 255 or cfg.kh > 255 or cfg.kw > 255 or cfg.tm % 16 or cfg.tm < 16:
        raise InputError("conv2d: pad and kernel sizes must be 0..255 and --tm a positive multiple of 16")
    if cfg.oh < 1 or cfg.ow < 1:
        raise InputError(f"conv2d: a {cfg.kh}x{cfg.kw} kernel does not fit a {cfg.h}x{cfg.w} map with pad {cfg.pad}")
    n1 = -(-cfg.cout // 16)
    x_l1 = -(-cfg.cin // 16) * cfg.h * cfg.w * 32
    uses = [("L1", x_l1 + cfg.k * n1 * 16 * 2, L1_BYTES), ("L0A", cfg.tm * cfg.k * 2, L0A_BYTES),
            ("L0B", cfg.k * n1 * 16 * 2, L0B_BYTES), ("L0C", cfg.tm * n1 * 16 * 4, L0C_BYTES)]
    for buf, used, cap in uses:
        if used > cap:
            raise InputError(f"conv2d: {buf} needs {used} bytes > {cap} ({cap // 1024} KB); use a smaller map, "
                             "fewer channels or a smaller --tm")


def conv2d_kernel(cfg: ConvConfig, name: str | None = None) -> str:
    check(cfg)
    H, W, cin, cout, K, tm = cfg.h, cfg.w, cfg.cin, cfg.cout, cfg.k, cfg.tm
    M = cfg.oh * cfg.ow
    blocks = -(-M // tm)
    n1 = -(-cout // 16)
    xb = (-(-cin // 16) * H * W * 32 + 511) // 512 * 512
    p = cfg.pad
    fmatrix = W | (H << 16) | (p << 32) | (p << 40) | (p << 48) | (p << 56)
    name = name or f"conv2d_{cin}x{H}x{W}_{cout}_k{cfg.kh}x{cfg.kw}_s{cfg.stride}_p{p}"
    lines = [".arch davinci-a2",
             header("conv2d", cin=cin, h=H, w=W, cout=cout, kh=cfg.kh, kw=cfg.kw, stride=cfg.stride, pad=p,
                    dtype="f16", out="f16", tm=tm),
             f"// y[{cfg.oh}x{cfg.ow}x{cout}] = conv2d(x[{H}x{W}x{cin}] NHWC, {cfg.kh}x{cfg.kw} stride {cfg.stride} "
             f"pad {p}); w is the {K}x{cout} FRACTAL_Z-ordered matrix; {blocks} blocks of {tm} pixels",
             f".kernel {name} .cube (.gm .f16 %x[{H * W * cin}], .gm .f16 %w[{K * cout}], .gm .f16 %y[{M * cout}])",
             "{"]
    A = _Asm()
    A(f"copy_gm_to_cbuf_multi_nd2nz_b16 l1[0], gm[%x], 0, 1, {H * W}, {cin}, 0, {cin}, {H * W}, 1, 0")
    A(f"copy_gm_to_cbuf_multi_nd2nz_b16 l1[{xb}], gm[%w], 0, 1, {K}, {cout}, 0, {cout}, {K}, 1, 0")
    A("set_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0")
    A("wait_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0")
    for kb in range(K // 16):
        A(f"load_cbuf_to_cb.f16 l0b[{kb * n1 * 512}], l1[{xb + kb * 512}], 0, {n1}, {K // 16}, 0, 0, 1, 0")
    A(f"set_fmatrix {fmatrix:#x}")
    A("set_flag PIPE_M, PIPE_MTE1, EVENT_ID0")
    A("set_flag PIPE_FIX, PIPE_M, EVENT_ID0")
    A("mov %blk, block_idx")
    A.label("block_loop")
    A(f"cmp.ge %p0, %blk, {blocks}")
    A("@%p0 bra done")
    A(f"mul %m0, %blk, {tm}")
    A(f"sub %mact, {M}, %m0")
    A(f"min %mact, %mact, {tm}")
    A("add %t1, %mact, 15")
    A("shr %t1, %t1, 4")
    A("shl %t1, %t1, 4")                   # rows of L0C the mad writes (M1 * 16)
    A("wait_flag PIPE_M, PIPE_MTE1, EVENT_ID0")
    A(f"img2colv2_cbuf_to_ca.f16 l0a[0], l1[0], {K}, {tm}, 0, %m0, {cfg.stride}, {cfg.stride}, {cfg.kw}, {cfg.kh}, "
      f"1, 1, 0, 0, 0, 0, {cin}")
    A("set_flag PIPE_MTE1, PIPE_M, EVENT_ID0")
    A("wait_flag PIPE_MTE1, PIPE_M, EVENT_ID0")
    A("wait_flag PIPE_FIX, PIPE_M, EVENT_ID0")
    A(f"mad.f16 l0c[0], l0a[0], l0b[0], %mact, {K}, {cout}, 0, 0, 0, 1")
    A("set_flag PIPE_M, PIPE_MTE1, EVENT_ID0")
    A("set_flag PIPE_M, PIPE_FIX, EVENT_ID0")
    A("wait_flag PIPE_M, PIPE_FIX, EVENT_ID0")
    A(f"mul %t0, %m0, {cout * 2}")
    A("add %t0, %t0, %y")
    A(f"copy_matrix_cc_to_gm.f32 gm[%t0], l0c[0], 0, {cout}, %mact, {cout}, %t1, 0, F322F16, 0, 0, 1")
    A("set_flag PIPE_FIX, PIPE_M, EVENT_ID0")
    A("add %blk, %blk, block_num")
    A("bra block_loop")
    A.label("done")
    A("wait_flag PIPE_M, PIPE_MTE1, EVENT_ID0")
    A("wait_flag PIPE_FIX, PIPE_M, EVENT_ID0")
    A("ret")
    return "\n".join(lines + A.lines + ["}"]) + "\n"


def pack_weights(wt, cin: int):
    """Natural weights ``(cout, cin, kh, kw)`` -> the K x Cout matrix the kernel reads (K ordered
    (c1, kh, kw, c0), channels padded to a multiple of 16 with zeros)."""
    import numpy as np
    cout, _, kh, kw = wt.shape
    c1 = -(-cin // 16)
    full = np.zeros((cout, c1 * 16, kh, kw), dtype=wt.dtype)
    full[:, :cin] = wt
    # (cout, c1, c0, kh, kw) -> (c1, kh, kw, c0, cout)
    return full.reshape(cout, c1, 16, kh, kw).transpose(1, 3, 4, 2, 0).reshape(c1 * kh * kw * 16, cout)
