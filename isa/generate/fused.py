"""Fused mix kernels for the Ascend-like assembly: cube (AIC) and vector (AIV) cores together.

``gemm_epilogue_kernel``: ``out = epilogue(A @ B + bias)`` in the manner of CATLASS ``20_matmul_bias`` /
``26_matmul_relu`` (matmul on the cube, epilogue on the vector cores, a GM workspace between them):

* the cube core runs the CATLASS-style GEMM of :mod:`isa.generate.gemm` (same tiles, swizzle,
  ping-pong) and FixPipes each block's fp32 accumulators, unconverted, into one of two workspace
  slots of its own; ``ffts_cross_core_sync PIPE_FIX, 2, slot`` tells its two vector cores;
* vector core ``2g + s`` of cube core ``g`` waits (``wait_flag_dev slot``), copies rows
  ``s * tm/2 .. (s+1) * tm/2`` of the block into UB, hands the slot back
  (``ffts_cross_core_sync PIPE_MTE2, 2, 2 + slot``; the cube core waits for both halves before it
  writes that slot again), adds the bias row, applies the activation and converts: to f16, or
  quantised to int8 as ``sat(rint(f16(y * scale)))`` (``vmuls``, ``vconv_f322f16r``,
  ``vconv_f162s8r``), and writes its rows of the output.

    text = gemm_epilogue_kernel(EpilogueConfig(m=256, n=256, k=128, act="relu", out="s8", scale=0.05))
"""

from __future__ import annotations

from dataclasses import dataclass

from isa.errors import InputError

from .gemm import GemmConfig, _Asm, check, gemm_kernel, header, swizzle

UB_BYTES = 192 * 1024


@dataclass(frozen=True)
class EpilogueConfig:
    m: int = 256
    n: int = 256
    k: int = 256
    dtype: str = "f16"
    l1_tile: tuple[int, int, int] = (128, 256, 256)
    l0_tile: tuple[int, int, int] = (128, 256, 64)
    stages: int = 2
    act: str = "relu"          # none | relu
    out: str = "s8"            # f16 | s8 (quantised: sat(rint(f16(y * scale))))
    scale: float = 0.0625

    def gemm(self) -> GemmConfig:
        return GemmConfig(dtype=self.dtype, m=self.m, n=self.n, k=self.k, l1_tile=self.l1_tile, l0_tile=self.l0_tile,
                          stages=self.stages)


def _check(cfg: EpilogueConfig) -> None:
    check(cfg.gemm())
    tm, tn, _ = cfg.l1_tile
    if cfg.dtype not in ("f16", "bf16"):
        raise InputError(f"gemm epilogue: --dtype {cfg.dtype} is not supported (f16, bf16)")
    if cfg.act not in ("none", "relu"):
        raise InputError(f"--act must be none or relu, got {cfg.act}")
    if cfg.out not in ("f16", "s8"):
        raise InputError(f"--out must be f16 or s8, got {cfg.out}")
    if cfg.m % tm or cfg.n % tn:
        raise InputError(f"gemm epilogue: m={cfg.m}, n={cfg.n} must be multiples of the L1 tile {tm}x{tn} "
                         "(the vector cores take whole half tiles)")
    if tm % 32 or tn % 64:
        raise InputError(f"gemm epilogue: tile m={tm} must be a multiple of 32 and n={tn} of 64")
    half = tm // 2 * tn
    need = half * 4 + tn * 4 + half * 2 + half * (1 if cfg.out == "s8" else 2)
    if need > UB_BYTES:
        raise InputError(f"gemm epilogue: half a {tm}x{tn} tile needs {need} bytes of UB (f32 rows, bias, f16 "
                         f"and output) > {UB_BYTES}; choose a smaller tile")


def gemm_epilogue_kernel(cfg: EpilogueConfig, name: str | None = None) -> str:
    """The text of a mix kernel: ``.mix NAME NAME_aic NAME_aiv`` and both kernels."""
    _check(cfg)
    M, N, K = cfg.m, cfg.n, cfg.k
    tm, tn, _ = cfg.l1_tile
    mt, nt = M // tm, N // tn
    total = mt * nt
    name = name or f"gemm_{cfg.act}_{cfg.out}_{M}x{N}x{K}"
    osize = 1 if cfg.out == "s8" else 2
    tile_f32 = tm * tn * 4
    params = (f"(.gm .{cfg.dtype} %a[{M * K}], .gm .{cfg.dtype} %b[{K * N}], .gm .f32 %bias[{N}], "
              f".gm .f32 %ws[{2 * tile_f32 // 4 * 24}], .gm .{cfg.out} %c[{M * N}])")
    meta = header("gemm_epilogue", m=M, n=N, k=K, dtype=cfg.dtype, out=cfg.out, act=cfg.act, scale=cfg.scale,
                  l1_tile=",".join(map(str, cfg.l1_tile)), l0_tile=",".join(map(str, cfg.l0_tile)),
                  stages=cfg.stages, layout_a="row", layout_b="row")

    def prologue(A):
        A("mov %slot, 0")

    def store(A, unit, acc):
        # wait until both vector cores have taken this slot's previous block, then FixPipe the
        # fp32 accumulators unconverted into the slot and tell them
        A("add %t2, %slot, 2")
        A("wait_flag_dev %t2")
        A("mul %t0, block_idx, 2")
        A("add %t0, %t0, %slot")
        A(f"mul %t0, %t0, {tile_f32}")
        A("add %t0, %t0, %ws")
        A("shl %t1, %M1, 4")
        if unit:
            A(f"copy_matrix_cc_to_gm.{acc} gm[%t0], l0c[0], 0, %nact, %mact, {tn}, %t1, 3, NoQuant, 0, 0, 1")
        else:
            A("set_flag PIPE_M, PIPE_FIX, EVENT_ID0")
            A("wait_flag PIPE_M, PIPE_FIX, EVENT_ID0")
            A(f"copy_matrix_cc_to_gm.{acc} gm[%t0], l0c[0], 0, %nact, %mact, {tn}, %t1, 0, NoQuant, 0, 0, 1")
        A("ffts_cross_core_sync PIPE_FIX, 2, %slot")
        A("xor %slot, %slot, 1")

    aic = gemm_kernel(cfg.gemm(), name=f"{name}_aic", params=params, store=store, prologue=prologue,
                      header_line=meta)
    aic = aic.replace(".arch davinci-a2\n", f".arch davinci-a2\n.mix {name} {name}_aic {name}_aiv\n", 1)
    return aic + "\n" + _aiv(cfg, name, params, mt, nt, total, osize, tile_f32)


def _chunks(A, op: str, dst: int, src: int, reps: int, dst_rep: int, src_rep: int, dst_step: int, src_step: int,
            extra: str = "") -> None:
    """``op`` over ``reps`` repeats, at most 255 per instruction."""
    r = 0
    while r < reps:
        n = min(255, reps - r)
        mid = f"{extra}, " if extra else ""
        A(f"{op} ub[{dst + r * dst_step}], ub[{src + r * src_step}], {mid}{n}, 1, 1, {dst_rep}, {src_rep}")
        r += n


def _aiv(cfg: EpilogueConfig, name: str, params: str, mt: int, nt: int, total: int, osize: int, tile_f32: int) -> str:
    M, N = cfg.m, cfg.n
    tm, tn, _ = cfg.l1_tile
    rows = tm // 2
    half = rows * tn
    IN, BIAS = 0, half * 4
    T16 = BIAS + (tn * 4 + 31) // 32 * 32
    OUT = T16 + half * 2
    A = _Asm()
    # UB starts free: the input buffer for MTE2, the output buffer for V; both workspace slots free
    A("set_flag PIPE_V, PIPE_MTE2, EVENT_ID0")
    A("set_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A("ffts_cross_core_sync PIPE_MTE2, 2, 2")
    A("ffts_cross_core_sync PIPE_MTE2, 2, 3")
    A("mov %slot, 0")
    A("shr %blk, block_idx, 1")          # this vector core's cube core
    A("shr %ncube, block_num, 1")
    A.label("block_loop")
    A(f"cmp.ge %p0, %blk, {total}")
    A("@%p0 bra done")
    swizzle(A, mt, nt, tm, tn)
    A("wait_flag_dev %slot")
    A("wait_flag PIPE_V, PIPE_MTE2, EVENT_ID0")
    # rows subblock_idx * tm/2 .. of the block from the cube core's slot
    A("shr %g, block_idx, 1")
    A("mul %t0, %g, 2")
    A("add %t0, %t0, %slot")
    A(f"mul %t0, %t0, {tile_f32}")
    A(f"mul %t1, subblock_idx, {half * 4}")
    A("add %t0, %t0, %t1")
    A("add %t0, %t0, %ws")
    A(f"copy_gm_to_ubuf ub[{IN}], gm[%t0], 0, 1, {half * 4 // 32}, 0, 0")
    A("add %t2, %slot, 2")
    A("ffts_cross_core_sync PIPE_MTE2, 2, %t2")
    A("mul %t0, %n0, 4")
    A("add %t0, %t0, %bias")
    A(f"copy_gm_to_ubuf ub[{BIAS}], gm[%t0], 0, 1, {tn * 4 // 32}, 0, 0")
    A("set_flag PIPE_MTE2, PIPE_V, EVENT_ID0")
    A("wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0")
    A("wait_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    # y = acc + bias: one vadd per 64 columns, a repeat per row (bias repeat stride 0)
    row_blocks = tn * 4 // 32
    for c in range(tn // 64):
        A(f"vadd.f32 ub[{IN + c * 256}], ub[{IN + c * 256}], ub[{BIAS + c * 256}], {rows}, 1, 1, 1, "
          f"{row_blocks}, {row_blocks}, 0")
    reps32 = half // 64
    if cfg.act == "relu":
        A("pipe_barrier PIPE_V")
        _chunks(A, "vrelu.f32", IN, IN, reps32, 8, 8, 256, 256)
    A("pipe_barrier PIPE_V")
    if cfg.out == "s8":
        _chunks(A, "vmuls.f32", IN, IN, reps32, 8, 8, 256, 256, extra=repr(float(cfg.scale)))
        A("pipe_barrier PIPE_V")
        _chunks(A, "vconv_f322f16r", T16, IN, reps32, 4, 8, 128, 256)
        A("pipe_barrier PIPE_V")
        _chunks(A, "vconv_f162s8r", OUT, T16, half // 128, 4, 8, 128, 256)
    else:
        _chunks(A, "vconv_f322f16r", OUT, IN, reps32, 4, 8, 128, 256)
    A("set_flag PIPE_V, PIPE_MTE2, EVENT_ID0")
    A("set_flag PIPE_V, PIPE_MTE3, EVENT_ID0")
    A("wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0")
    A(f"mul %t0, subblock_idx, {rows}")
    A("add %t0, %t0, %m0")
    A(f"mul %t0, %t0, {N}")
    A("add %t0, %t0, %n0")
    A(f"mul %t0, %t0, {osize}")
    A("add %t0, %t0, %c")
    A(f"copy_ubuf_to_gm gm[%t0], ub[{OUT}], 0, {rows}, {tn * osize // 32}, 0, {(N - tn) * osize // 32}")
    A("set_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A("xor %slot, %slot, 1")
    A("add %blk, %blk, %ncube")
    A("bra block_loop")
    A.label("done")
    A("wait_flag PIPE_V, PIPE_MTE2, EVENT_ID0")
    A("wait_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A("ret")
    return "\n".join([f".kernel {name}_aiv .vector {params}", "{"] + A.lines + ["}"]) + "\n"
