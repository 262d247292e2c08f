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


# ----------------------------------------------------------------------------------------------
# FlashAttention-style forward
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AttentionConfig:
    sq: int = 256          # query rows
    sk: int = 512          # key / value rows
    d: int = 64            # head dimension (64 or 128)
    br: int = 64           # query rows per cube task (each vector core takes half)
    bc: int = 128          # keys per step (a multiple of 64, at most 256)

    @property
    def softmax_scale(self) -> float:
        import numpy as np
        return float(np.float32(1.0 / np.sqrt(self.d)))


def _check_attention(cfg: AttentionConfig) -> None:
    if cfg.d not in (64, 128):
        raise InputError(f"flash attention: --d must be 64 or 128, got {cfg.d}")
    if cfg.br not in (32, 64) or cfg.bc % 64 or not 64 <= cfg.bc <= 256:
        raise InputError(f"flash attention: br must be 32 or 64 and bc a multiple of 64 up to 256 "
                         f"(got br={cfg.br}, bc={cfg.bc})")
    if cfg.sq % cfg.br or cfg.sk % cfg.bc or cfg.sq < 1 or cfg.sk < 1:
        raise InputError(f"flash attention: sq={cfg.sq} must be a multiple of br={cfg.br} and sk={cfg.sk} of "
                         f"bc={cfg.bc}")
    if cfg.bc * cfg.d * 2 > 64 * 1024 or cfg.br * cfg.bc * 2 > 64 * 1024:
        raise InputError("flash attention: a K/V or P tile does not fit L0A/L0B (64 KB)")


def flash_attention_kernel(cfg: AttentionConfig, name: str | None = None) -> str:
    """``O = softmax(Q K^T * scale) V`` (f16 in and out) as a mix kernel, FlashAttention-2 style:
    per block of ``br`` query rows the cube core computes ``S_j = Q K_j^T`` one key block ahead
    (two S slots in the GM workspace), the vector cores keep the running row max ``m``, row sum
    ``l`` and output ``O`` in UB (online softmax), write ``P_j = f16(exp(S_j * scale - m))`` to GM,
    the cube core computes ``P_j V_j`` and the vector cores add it to ``O * exp(m_old - m)``."""
    _check_attention(cfg)
    name = name or f"flash_attn_{cfg.sq}x{cfg.sk}x{cfg.d}"
    sq, sk, d, br, bc = cfg.sq, cfg.sk, cfg.d, cfg.br, cfg.bc
    per_core = 2 * br * bc + br * d
    params = (f"(.gm .f16 %q[{sq * d}], .gm .f16 %k[{sk * d}], .gm .f16 %v[{sk * d}], "
              f".gm .f32 %ws[{per_core * 24}], .gm .f16 %wp[{br * bc * 24}], .gm .f16 %o[{sq * d}])")
    meta = header("flash_attention", sq=sq, sk=sk, d=d, dtype="f16", out="f16", br=br, bc=bc,
                  softmax_scale=repr(cfg.softmax_scale))
    lines = [".arch davinci-a2", f".mix {name} {name}_aic {name}_aiv", meta,
             f"// O[{sq}x{d}] = softmax(Q K^T * {cfg.softmax_scale:.6g}) V; K, V [{sk}x{d}]; blocks of {br} query "
             f"rows x {bc} keys"]
    return "\n".join(lines) + "\n" + _attn_aic(cfg, name, params, per_core) + "\n" + \
        _attn_aiv(cfg, name, params, per_core)


def _attn_aic(cfg, name, params, per_core) -> str:
    d, br, bc = cfg.d, cfg.br, cfg.bc
    qb, nb = cfg.sq // br, cfg.sk // bc
    Q, KT, PL, VL = 0, 64 * 1024, 128 * 1024, 192 * 1024        # L1 regions
    PVC = br * bc * 4                                          # L0C: S at 0, PV after it
    A = _Asm()

    def s_phase(jreg: str, slotreg: str) -> None:
        A(f"mul %t0, {jreg}, {bc * d * 2}")
        A("add %t0, %t0, %k")
        A(f"copy_gm_to_cbuf_multi_nd2nz_b16 l1[{KT}], gm[%t0], 0, 1, {bc}, {d}, 0, {d}, {bc}, 1, 0")
        A("set_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0")
        A("wait_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0")
        for kb in range(d // 16):
            A(f"load_cbuf_to_ca.f16 l0a[{kb * 512}], l1[{Q + kb * br // 16 * 512}], 0, {br // 16}, 1, "
              f"{d // 16 - 1}, 0, 0, 0")
        for kb in range(d // 16):
            A(f"load_cbuf_to_cb.f16 l0b[{kb * bc // 16 * 512}], l1[{KT + kb * bc // 16 * 512}], 0, {bc // 16}, 1, "
              "0, 0, 0, 0")
        A("set_flag PIPE_MTE1, PIPE_M, EVENT_ID0")
        A("wait_flag PIPE_MTE1, PIPE_M, EVENT_ID0")
        A(f"mad.f16 l0c[0], l0a[0], l0b[0], {br}, {d}, {bc}, 0, 0, 0, 1")
        A("set_flag PIPE_M, PIPE_FIX, EVENT_ID0")
        A("wait_flag PIPE_M, PIPE_FIX, EVENT_ID0")
        A(f"mul %t0, {slotreg}, {br * bc * 4}")
        A("add %t0, %t0, %wsg")
        A(f"copy_matrix_cc_to_gm.f32 gm[%t0], l0c[0], 0, {bc}, {br}, {bc}, {br}, 0, NoQuant, 0, 0, 1")
        A("ffts_cross_core_sync PIPE_FIX, 2, 0")
        A("pipe_barrier PIPE_ALL")

    A(f"mul %wsg, block_idx, {per_core * 4}")
    A("add %wsg, %wsg, %ws")
    A(f"mul %wpg, block_idx, {br * bc * 2}")
    A("add %wpg, %wpg, %wp")
    A("mov %blk, block_idx")
    A.label("q_loop")
    A(f"cmp.ge %p0, %blk, {qb}")
    A("@%p0 bra done")
    A(f"mul %t0, %blk, {br * d * 2}")
    A("add %t0, %t0, %q")
    A(f"copy_gm_to_cbuf_multi_nd2nz_b16 l1[{Q}], gm[%t0], 0, 1, {br}, {d}, 0, {d}, {br}, 1, 0")
    A("mov %j, 0")
    A("mov %slot, 0")
    s_phase("%j", "%slot")
    A.label("k_loop")
    A("add %jn, %j, 1")
    A(f"cmp.lt %p1, %jn, {nb}")
    A("@!%p1 bra pv")
    A("xor %sn, %slot, 1")
    s_phase("%jn", "%sn")               # S of the next key block while the vector cores do softmax
    A.label("pv")
    A("wait_flag_dev 1")
    A(f"copy_gm_to_cbuf_multi_nd2nz_b16 l1[{PL}], gm[%wpg], 0, 1, {br}, {bc}, 0, {bc}, {br}, 1, 0")
    A(f"mul %t0, %j, {bc * d * 2}")
    A("add %t0, %t0, %v")
    A(f"copy_gm_to_cbuf_multi_nd2nz_b16 l1[{VL}], gm[%t0], 0, 1, {bc}, {d}, 0, {d}, {bc}, 1, 0")
    A("set_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0")
    A("wait_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0")
    for kb in range(bc // 16):
        A(f"load_cbuf_to_ca.f16 l0a[{kb * 512}], l1[{PL + kb * br // 16 * 512}], 0, {br // 16}, 1, {bc // 16 - 1}, "
          "0, 0, 0")
    for kb in range(bc // 16):
        A(f"load_cbuf_to_cb.f16 l0b[{kb * d // 16 * 512}], l1[{VL + kb * 512}], 0, {d // 16}, {bc // 16}, 0, 0, 1, 0")
    A("set_flag PIPE_MTE1, PIPE_M, EVENT_ID0")
    A("wait_flag PIPE_MTE1, PIPE_M, EVENT_ID0")
    A(f"mad.f16 l0c[{PVC}], l0a[0], l0b[0], {br}, {bc}, {d}, 0, 0, 0, 1")
    A("set_flag PIPE_M, PIPE_FIX, EVENT_ID0")
    A("wait_flag PIPE_M, PIPE_FIX, EVENT_ID0")
    A(f"add %t0, %wsg, {2 * br * bc * 4}")
    A(f"copy_matrix_cc_to_gm.f32 gm[%t0], l0c[{PVC}], 0, {d}, {br}, {d}, {br}, 0, NoQuant, 0, 0, 1")
    A("ffts_cross_core_sync PIPE_FIX, 2, 2")
    A("pipe_barrier PIPE_ALL")
    A("xor %slot, %slot, 1")
    A("mov %j, %jn")
    A(f"cmp.lt %p1, %j, {nb}")
    A("@%p1 bra k_loop")
    A("add %blk, %blk, block_num")
    A("bra q_loop")
    A.label("done")
    A("ret")
    return "\n".join([f".kernel {name}_aic .cube {params}", "{"] + A.lines + ["}"]) + "\n"


def _attn_aiv(cfg, name, params, per_core) -> str:
    d, br, bc = cfg.d, cfg.br, cfg.bc
    qb, nb = cfg.sq // br, cfg.sk // bc
    R = br // 2
    SB = 0                                  # R x bc f32 scores / probabilities
    TMP = SB + R * bc * 4                   # R x 64 f32 folds
    P16 = TMP + R * 256                     # R x bc f16
    PVB = P16 + R * bc * 2                  # R x d f32 (P V of this step)
    O = PVB + R * d * 4                     # R x d f32 running output
    MV, MC, MN, LV, LC, AL = (O + R * d * 4 + i * 256 for i in range(6))
    O16 = AL + 256                          # R x d f16
    srow, orow = bc * 4, d * 4              # bytes per row
    sreps, oreps = R * bc // 64, R * d // 64
    A = _Asm()
    full = "set_vector_mask -1, -1"
    rows_mask = f"set_vector_mask 0, {(1 << R) - 1:#x}"     # R lanes of f32: one value per row

    def vec_rows(op: str, dst: int, *srcs: int) -> None:
        if len(srcs) == 2:
            A(f"{op}.f32 ub[{dst}], ub[{srcs[0]}], ub[{srcs[1]}], 1, 1, 1, 1, 8, 8, 8")
        else:
            A(f"{op}.f32 ub[{dst}], ub[{srcs[0]}], 1, 1, 1, 8, 8")

    def fold(op: str) -> None:
        """TMP[r] = op over the bc/64 chunks of row r of SB (64 lanes each); then one result per row."""
        A(f"{op}.f32 ub[{TMP}], ub[{SB}], ub[{SB + 256}], {R}, 1, 1, 1, 8, {srow // 32}, {srow // 32}")
        for c in range(2, bc // 64):
            A("pipe_barrier PIPE_V")
            A(f"{op}.f32 ub[{TMP}], ub[{TMP}], ub[{SB + c * 256}], {R}, 1, 1, 1, 8, 8, {srow // 32}")
        A("pipe_barrier PIPE_V")

    A("set_flag PIPE_V, PIPE_MTE2, EVENT_ID0")
    A("set_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A("set_flag PIPE_MTE3, PIPE_V, EVENT_ID1")
    A("shr %g, block_idx, 1")
    A(f"mul %wsg, %g, {per_core * 4}")
    A("add %wsg, %wsg, %ws")
    A(f"mul %wpg, %g, {br * bc * 2}")
    A("add %wpg, %wpg, %wp")
    A(f"mul %t0, subblock_idx, {R * bc * 4}")
    A("add %wsh, %wsg, %t0")                               # my rows of S slot 0
    A(f"mul %t0, subblock_idx, {R * bc * 2}")
    A("add %wph, %wpg, %t0")                               # my rows of P
    A(f"mul %t0, subblock_idx, {R * d * 4}")
    A(f"add %woh, %wsg, {2 * br * bc * 4}")
    A("add %woh, %woh, %t0")                               # my rows of P V
    A("mov %blk, %g")
    A("shr %ncube, block_num, 1")
    A.label("q_loop")
    A(f"cmp.ge %p0, %blk, {qb}")
    A("@%p0 bra done")
    # m = -inf, l = 0, O = 0
    A(f"vector_dup.f32 ub[{O}], 0.0, {oreps}, 1, 1, 8, 8")
    A(rows_mask)
    A(f"vector_dup.f32 ub[{MV}], -inf, 1, 1, 1, 8, 8")
    A(f"vector_dup.f32 ub[{LV}], 0.0, 1, 1, 1, 8, 8")
    A(full)
    A("mov %j, 0")
    A("mov %slot, 0")
    A.label("k_loop")
    A("wait_flag_dev 0")
    A("wait_flag PIPE_V, PIPE_MTE2, EVENT_ID0")
    A(f"mul %t0, %slot, {br * bc * 4}")
    A("add %t0, %t0, %wsh")
    A(f"copy_gm_to_ubuf ub[{SB}], gm[%t0], 0, 1, {R * srow // 32}, 0, 0")
    A("set_flag PIPE_MTE2, PIPE_V, EVENT_ID0")
    A("wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0")
    A(f"vmuls.f32 ub[{SB}], ub[{SB}], {cfg.softmax_scale!r}, {sreps}, 1, 1, 8, 8")
    A("pipe_barrier PIPE_V")
    fold("vmax")
    A(f"vcmax.f32 ub[{MC}], ub[{TMP}], {R}, 1, 1, 8, ONLY_VALUE")
    A("pipe_barrier PIPE_V")
    A(rows_mask)
    vec_rows("vmax", MN, MV, MC)                            # m_new = max(m_old, rowmax)
    A("pipe_barrier PIPE_V")
    vec_rows("vsub", AL, MV, MN)
    A("pipe_barrier PIPE_V")
    vec_rows("vexp", AL, AL)                                # alpha = exp(m_old - m_new)
    vec_rows("vcopy", MV, MN)
    A(full)
    A("set_flag PIPE_V, PIPE_S, EVENT_ID0")
    A("wait_flag PIPE_V, PIPE_S, EVENT_ID0")
    for r in range(R):                                      # per row: S - m_new, O * alpha
        A(f"ld.f32 %mr, ub[{MN + 4 * r}]")
        A("sub.f32 %mr, 0.0, %mr")
        A(f"vadds.f32 ub[{SB + r * srow}], ub[{SB + r * srow}], %mr, {bc // 64}, 1, 1, 8, 8")
        A(f"ld.f32 %ar, ub[{AL + 4 * r}]")
        A(f"vmuls.f32 ub[{O + r * orow}], ub[{O + r * orow}], %ar, {d // 64}, 1, 1, 8, 8")
    A("pipe_barrier PIPE_V")
    A(f"vexp.f32 ub[{SB}], ub[{SB}], {sreps}, 1, 1, 8, 8")
    A("pipe_barrier PIPE_V")
    fold("vadd")
    A(f"vcadd.f32 ub[{LC}], ub[{TMP}], {R}, 1, 1, 8, 0")
    A("pipe_barrier PIPE_V")
    A(rows_mask)
    vec_rows("vmul", LV, LV, AL)                            # l = l * alpha + rowsum(P)
    A("pipe_barrier PIPE_V")
    vec_rows("vadd", LV, LV, LC)
    A(full)
    A("wait_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A(f"vconv_f322f16r ub[{P16}], ub[{SB}], {sreps}, 1, 1, 4, 8")
    A("set_flag PIPE_V, PIPE_MTE3, EVENT_ID0")
    A("wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0")
    A(f"copy_ubuf_to_gm gm[%wph], ub[{P16}], 0, 1, {R * bc * 2 // 32}, 0, 0")
    A("set_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A("ffts_cross_core_sync PIPE_MTE3, 2, 1")
    A("wait_flag_dev 2")
    A(f"copy_gm_to_ubuf ub[{PVB}], gm[%woh], 0, 1, {R * orow // 32}, 0, 0")
    A("set_flag PIPE_MTE2, PIPE_V, EVENT_ID1")
    A("wait_flag PIPE_MTE2, PIPE_V, EVENT_ID1")
    A(f"vadd.f32 ub[{O}], ub[{O}], ub[{PVB}], {oreps}, 1, 1, 1, 8, 8, 8")
    A("set_flag PIPE_V, PIPE_MTE2, EVENT_ID0")
    A("xor %slot, %slot, 1")
    A("add %j, %j, 1")
    A(f"cmp.lt %p1, %j, {nb}")
    A("@%p1 bra k_loop")
    # O / l, to f16, out
    A("pipe_barrier PIPE_V")
    A("set_flag PIPE_V, PIPE_S, EVENT_ID0")
    A("wait_flag PIPE_V, PIPE_S, EVENT_ID0")
    for r in range(R):
        A(f"ld.f32 %lr, ub[{LV + 4 * r}]")
        A("div.f32 %lr, 1.0, %lr")
        A(f"vmuls.f32 ub[{O + r * orow}], ub[{O + r * orow}], %lr, {d // 64}, 1, 1, 8, 8")
    A("pipe_barrier PIPE_V")
    A("wait_flag PIPE_MTE3, PIPE_V, EVENT_ID1")
    A(f"vconv_f322f16r ub[{O16}], ub[{O}], {oreps}, 1, 1, 4, 8")
    A("set_flag PIPE_V, PIPE_MTE3, EVENT_ID1")
    A("wait_flag PIPE_V, PIPE_MTE3, EVENT_ID1")
    A(f"mul %t0, %blk, {br}")
    A(f"mul %t1, subblock_idx, {R}")
    A("add %t0, %t0, %t1")
    A(f"mul %t0, %t0, {d * 2}")
    A("add %t0, %t0, %o")
    A(f"copy_ubuf_to_gm gm[%t0], ub[{O16}], 0, 1, {R * d * 2 // 32}, 0, 0")
    A("set_flag PIPE_MTE3, PIPE_V, EVENT_ID1")
    A("pipe_barrier PIPE_V")
    A("add %blk, %blk, %ncube")
    A("bra q_loop")
    A.label("done")
    A("wait_flag PIPE_V, PIPE_MTE2, EVENT_ID0")
    A("wait_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A("wait_flag PIPE_MTE3, PIPE_V, EVENT_ID1")
    A("ret")
    return "\n".join([f".kernel {name}_aiv .vector {params}", "{"] + A.lines + ["}"]) + "\n"
