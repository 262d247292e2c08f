"""CATLASS-style GEMM generator for the Ascend-like assembly (cube cores).

Mirrors CATLASS ``BasicMatmul`` + ``BlockMmad`` (``MmadAtlasA2Pingpong``): blocks of
``L1 tile`` (m x n) are spread over cube cores by ``GemmIdentityBlockSwizzle<3, 0>``; per block
the K loop moves GM -> L1 (ND -> NZ on the fly, ``copy_gm_to_cbuf_multi_nd2nz``), L1 -> L0A/L0B
(``load_cbuf_to_ca/cb``, transposing where the layout needs it), ``mad`` into L0C, and FixPipe
(``copy_matrix_cc_to_gm``) converts and writes C. With ``stages=2`` L1 and L0A/L0B are ping-pong
buffers with the CATLASS flag pattern; f16/bf16 also use the unit flag between ``mad`` and FixPipe.

    text = gemm_kernel(GemmConfig(dtype="f16", m=1024, n=1024, k=1024, stages=2))
"""

from __future__ import annotations

from dataclasses import dataclass

from isa.errors import InputError

SIZE = {"f16": 2, "bf16": 2, "s8": 1}
L1_BYTES, L0A_BYTES, L0B_BYTES, L0C_BYTES = 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024


@dataclass(frozen=True)
class GemmConfig:
    dtype: str = "f16"
    m: int = 256
    n: int = 256
    k: int = 256
    layout_a: str = "row"
    layout_b: str = "row"
    l1_tile: tuple[int, int, int] = (128, 256, 256)
    l0_tile: tuple[int, int, int] = (128, 256, 64)
    stages: int = 2
    epilogue: str = "none"
    scale: float = 0.0078125      # dequant / requant scale (10-bit mantissa: exact in QUANT_PRE)
    offset: int = 0               # requant offset

    @property
    def out_dtype(self) -> str:
        if self.dtype == "s8":
            return {"none": "s32", "dequant": "f16", "requant": "s8"}[self.epilogue]
        return self.dtype

    @property
    def quant(self) -> str:
        if self.dtype == "s8":
            return {"none": "NoQuant", "dequant": "DEQF16", "requant": "REQ8"}[self.epilogue]
        return {"f16": "F322F16", "bf16": "F322BF16"}[self.dtype]

    def quant_pre(self) -> int:
        import numpy as np
        bits = int(np.array([self.scale], dtype=np.float32).view(np.uint32)[0])
        off = self.offset & 0x1FF
        return bits | (off << 37) | (1 << 46)


def check(cfg: GemmConfig) -> None:
    """Raise InputError with a clear message when the configuration cannot work."""
    if cfg.dtype not in SIZE:
        raise InputError(f"--dtype {cfg.dtype} is not supported for gemm", expected=sorted(SIZE))
    if cfg.layout_a not in ("row", "col") or cfg.layout_b not in ("row", "col"):
        raise InputError("--layout-a/--layout-b must be row or col")
    if cfg.stages not in (1, 2):
        raise InputError(f"--stages must be 1 or 2, got {cfg.stages}")
    if cfg.epilogue not in ("none", "dequant", "requant"):
        raise InputError(f"--epilogue must be none, dequant or requant, got {cfg.epilogue}")
    if cfg.epilogue != "none" and cfg.dtype != "s8":
        raise InputError(f"--epilogue {cfg.epilogue} converts s32 accumulators; it needs --dtype s8")
    for v, nm in ((cfg.m, "m"), (cfg.n, "n"), (cfg.k, "k")):
        if v < 1:
            raise InputError(f"--{nm} must be positive, got {v}")
    size = SIZE[cfg.dtype]
    c0 = 32 // size
    tm, tn, tk = cfg.l1_tile
    tm0, tn0, tk0 = cfg.l0_tile
    if (tm0, tn0) != (tm, tn):
        raise InputError(f"--l0-tile m,n ({tm0},{tn0}) must equal --l1-tile m,n ({tm},{tn}) (one L0C tile per block)")
    need = 32 if size == 1 else 16
    for v, nm in ((tm, "m"), (tn, "n")):
        if v <= 0 or v % need:
            raise InputError(f"tile {nm}={v} must be a positive multiple of {need} for {cfg.dtype}")
    for v, nm in ((tk, "L1 k"), (tk0, "L0 k")):
        if v <= 0 or v % c0:
            raise InputError(f"tile {nm}={v} must be a positive multiple of {c0} for {cfg.dtype} (C0 = 32 B)")
    if tk % tk0:
        raise InputError(f"--l1-tile k={tk} must be a multiple of --l0-tile k={tk0}")
    s = cfg.stages
    checks = [
        ("L1", s * (tm * tk + tk * tn) * size, L1_BYTES, f"{s} x ({tm}x{tk} + {tk}x{tn}) x {size} B"),
        ("L0A", s * tm * tk0 * size, L0A_BYTES, f"{s} x {tm}x{tk0} x {size} B"),
        ("L0B", s * tk0 * tn * size, L0B_BYTES, f"{s} x {tk0}x{tn} x {size} B"),
        ("L0C", tm * tn * 4, L0C_BYTES, f"{tm}x{tn} x 4 B accumulators"),
    ]
    for buf, used, cap, how in checks:
        if used > cap:
            raise InputError(f"tiles do not fit {buf}: {how} = {used} bytes > {cap} bytes ({cap // 1024} KB); "
                             f"choose smaller tiles or --stages 1")


class _Asm:
    def __init__(self):
        self.lines: list[str] = []
        self.n = 0

    def __call__(self, line: str) -> None:
        self.lines.append("    " + line)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{base}_{self.n}"


def header(op: str, **kv) -> str:
    return ".meta " + " ".join([f"op={op}"] + [f"{k}={v}" for k, v in kv.items()])


def swizzle(A, mt: int, nt: int, tm: int, tn: int) -> None:
    """``GemmIdentityBlockSwizzle<3, 0>``: block ``%blk`` -> tile origin ``%m0``, ``%n0`` (groups of
    3 block rows walk along n)."""
    A(f"div %g, %blk, {3 * nt}")
    A(f"rem %ing, %blk, {3 * nt}")
    A("mul %mi, %g, 3")
    A(f"sub %rows, {mt}, %mi")
    A("min %rows, %rows, 3")
    A("rem %t0, %ing, %rows")
    A("add %mi, %mi, %t0")
    A("div %ni, %ing, %rows")
    A(f"mul %m0, %mi, {tm}")
    A(f"mul %n0, %ni, {tn}")


def gemm_kernel(cfg: GemmConfig, name: str | None = None, *, params: str | None = None, store=None,
                prologue=None, header_line: str | None = None) -> str:
    """The assembly text of a GEMM kernel ``C[m,n] = A[m,k] @ B[k,n]``.

    For fused kernels (:mod:`isa.generate.fused`): ``params`` replaces the parameter list,
    ``store(A, unit, acc)`` emits the L0C store of a block instead of the FixPipe to ``%c``
    (``%m0``, ``%n0``, ``%mact``, ``%nact``, ``%M1`` are set), ``prologue(A)`` runs once at the start,
    ``header_line`` replaces the ``.meta`` line."""
    check(cfg)
    size = SIZE[cfg.dtype]
    c0 = 32 // size
    osize = {"f16": 2, "bf16": 2, "s8": 1, "s32": 4}[cfg.out_dtype]
    M, N, K = cfg.m, cfg.n, cfg.k
    tm, tn, tk = cfg.l1_tile
    tk0 = cfg.l0_tile[2]
    S = cfg.stages
    mt, nt = -(-M // tm), -(-N // tn)
    total = mt * nt
    a_l1 = tm * tk * size
    b_l1 = tk * tn * size
    a_l0 = tm * tk0 * size
    b_l0 = tk0 * tn * size
    unit = S == 2 and cfg.dtype != "s8"       # CATLASS: unit flag off for int8
    acc = "s32" if cfg.dtype == "s8" else "f32"
    name = name or f"gemm_{cfg.dtype}_{M}x{N}x{K}_s{S}"
    lines = [
        ".arch davinci-a2",
        header_line or header("gemm", m=M, n=N, k=K, dtype=cfg.dtype, out=cfg.out_dtype, layout_a=cfg.layout_a,
                              layout_b=cfg.layout_b, l1_tile=",".join(map(str, cfg.l1_tile)),
                              l0_tile=",".join(map(str, cfg.l0_tile)), stages=S, epilogue=cfg.epilogue,
                              scale=cfg.scale, offset=cfg.offset),
        f"// C[{M}x{N}] ({cfg.out_dtype}) = A[{M}x{K}] ({cfg.layout_a}-major) @ B[{K}x{N}] ({cfg.layout_b}-major), "
        f"{cfg.dtype} in, {acc} accumulate; {total} blocks of {tm}x{tn}, swizzle <3,0>",
        f".kernel {name} .cube " + (params or f"(.gm .{cfg.dtype} %a[{M * K}], .gm .{cfg.dtype} %b[{K * N}], "
                                            f".gm .{cfg.out_dtype} %c[{M * N}])"),
        "{",
    ]
    A = _Asm()
    tr = "transpose"
    # ---- prologue: every buffer starts free ----
    for s in range(S):
        A(f"set_flag PIPE_MTE1, PIPE_MTE2, EVENT_ID{s}")
    for s in range(S):
        A(f"set_flag PIPE_M, PIPE_MTE1, EVENT_ID{s}")
    A("set_flag PIPE_FIX, PIPE_M, EVENT_ID0")
    if cfg.epilogue != "none":
        A(f"set_quant_pre {cfg.quant_pre():#x}")
    if prologue is not None:
        prologue(A)
    A("mov %l1s, 0")
    A("mov %l0s, 0")
    A("mov %blk, block_idx")
    A.label("block_loop")
    A(f"cmp.ge %p0, %blk, {total}")
    A("@%p0 bra done")
    swizzle(A, mt, nt, tm, tn)
    A(f"sub %mact, {M}, %m0")
    A(f"min %mact, %mact, {tm}")
    A(f"sub %nact, {N}, %n0")
    A(f"min %nact, %nact, {tn}")
    A("add %M1, %mact, 15")
    A("shr %M1, %M1, 4")
    A("add %N1, %nact, 15")
    A("shr %N1, %N1, 4")
    A("wait_flag PIPE_FIX, PIPE_M, EVENT_ID0")
    A("mov %kk, 0")
    A.label("k_loop")
    A(f"sub %kact, {K}, %kk")
    A(f"min %kact, %kact, {tk}")
    # L1 stage addresses
    A(f"mul %l1a, %l1s, {a_l1}")
    A(f"mul %l1b, %l1s, {b_l1}")
    A(f"add %l1b, %l1b, {S * a_l1}")
    A("wait_flag PIPE_MTE1, PIPE_MTE2, %l1s")
    # GM -> L1, ND -> NZ
    if cfg.layout_a == "row":
        A(f"mul %t0, %m0, {K}")
        A("add %t0, %t0, %kk")
        A(f"mul %t0, %t0, {size}")
        A("add %t0, %t0, %a")
        A(f"copy_gm_to_cbuf_multi_nd2nz_b{8 * size} l1[%l1a], gm[%t0], 0, 1, %mact, %kact, 0, {K}, {tm}, 1, 0")
    else:
        A(f"mul %t0, %kk, {M}")
        A("add %t0, %t0, %m0")
        A(f"mul %t0, %t0, {size}")
        A("add %t0, %t0, %a")
        A(f"copy_gm_to_cbuf_multi_nd2nz_b{8 * size} l1[%l1a], gm[%t0], 0, 1, %kact, %mact, 0, {M}, {tk}, 1, 0")
    if cfg.layout_b == "row":
        A(f"mul %t0, %kk, {N}")
        A("add %t0, %t0, %n0")
        A(f"mul %t0, %t0, {size}")
        A("add %t0, %t0, %b")
        A(f"copy_gm_to_cbuf_multi_nd2nz_b{8 * size} l1[%l1b], gm[%t0], 0, 1, %kact, %nact, 0, {N}, {tk}, 1, 0")
    else:
        A(f"mul %t0, %n0, {K}")
        A("add %t0, %t0, %kk")
        A(f"mul %t0, %t0, {size}")
        A("add %t0, %t0, %b")
        A(f"copy_gm_to_cbuf_multi_nd2nz_b{8 * size} l1[%l1b], gm[%t0], 0, 1, %nact, %kact, 0, {K}, {tn}, 1, 0")
    A("set_flag PIPE_MTE2, PIPE_MTE1, %l1s")
    A("wait_flag PIPE_MTE2, PIPE_MTE1, %l1s")
    A("mov %kk0, 0")
    A.label("k0_loop")
    A("sub %k0act, %kact, %kk0")
    A(f"min %k0act, %k0act, {tk0}")
    A(f"add %K1, %k0act, {c0 - 1}")
    A(f"div %K1, %K1, {c0}")
    A(f"mul %l0a, %l0s, {a_l0}")
    A(f"mul %l0b, %l0s, {b_l0}")
    A(f"div %kb0, %kk0, {c0}")          # first C0 block of this L0 step inside the L1 tile
    A("wait_flag PIPE_M, PIPE_MTE1, %l0s")
    _unrolled_loads(A, cfg, size, c0, tm, tn, tk, tk0)
    A.label("tail_loads")
    # ---- L1 -> L0A (ZZ) ----
    A("mov %kb, 0")
    A.label("lda_loop")
    A("mul %t1, %kb, 512")
    A("add %t1, %t1, %l0a")
    if cfg.layout_a == "row":
        A("add %t2, %kb0, %kb")
        A(f"mul %t2, %t2, {tm // 16}")
        A("sub %t3, %K1, 1")
        A(f"load_cbuf_to_ca.{cfg.dtype} l0a[%t1], l1[%l1a], %t2, %M1, 1, %t3, 0, 0, 0")
    elif size == 2:
        A("add %t2, %kb0, %kb")
        A("sub %t3, %K1, 1")
        A(f"load_cbuf_to_ca.{cfg.dtype} l0a[%t1], l1[%l1a], %t2, %M1, {tk // 16}, %t3, 0, 1, 0")
    else:  # 8-bit column-major A: 32x32 transposing squares
        A("div %t2, %kk0, 16")
        A("mul %t4, %kb, 2")
        A("add %t2, %t2, %t4")
        A("add %t3, %M1, 1")
        A("shr %t3, %t3, 1")
        A("mul %t4, %K1, 2")
        A("sub %t5, %K1, 1")
        A(f"load_cbuf_to_ca_{tr}.{cfg.dtype} l0a[%t1], l1[%l1a], %t2, %t3, {tk // 16}, %t4, %t5")
    A("add %kb, %kb, 1")
    A("cmp.lt %p1, %kb, %K1")
    A("@%p1 bra lda_loop")
    # ---- L1 -> L0B (ZN) ----
    A("mov %kb, 0")
    A.label("ldb_loop")
    A("mul %t1, %kb, %N1")
    A("mul %t1, %t1, 512")
    A("add %t1, %t1, %l0b")
    if cfg.layout_b == "col":
        A("add %t2, %kb0, %kb")
        A(f"mul %t2, %t2, {tn // 16}")
        A(f"load_cbuf_to_cb.{cfg.dtype} l0b[%t1], l1[%l1b], %t2, %N1, 1, 0, 0, 0, 0")
    elif size == 2:
        A("add %t2, %kb0, %kb")
        A(f"load_cbuf_to_cb.{cfg.dtype} l0b[%t1], l1[%l1b], %t2, %N1, {tk // 16}, 0, 0, 1, 0")
    else:  # 8-bit row-major B: 32x32 transposing squares
        A("div %t2, %kk0, 16")
        A("mul %t4, %kb, 2")
        A("add %t2, %t2, %t4")
        A("add %t3, %N1, 1")
        A("shr %t3, %t3, 1")
        A(f"load_cbuf_to_cb_{tr}.{cfg.dtype} l0b[%t1], l1[%l1b], %t2, %t3, {tk // 16}, 2, 0")
    A("add %kb, %kb, 1")
    A("cmp.lt %p1, %kb, %K1")
    A("@%p1 bra ldb_loop")
    A.label("loads_done")
    A("set_flag PIPE_MTE1, PIPE_M, %l0s")
    A("wait_flag PIPE_MTE1, PIPE_M, %l0s")
    # ---- mad ----
    A("cmp.eq %t1, %kk, 0")
    A("cmp.eq %t2, %kk0, 0")
    A("and %init, %t1, %t2")
    if unit:
        A(f"add %t1, %kk, {tk}")
        A(f"cmp.ge %t1, %t1, {K}")
        A(f"add %t2, %kk0, {tk0}")
        A("cmp.ge %t2, %t2, %kact")
        A("and %t1, %t1, %t2")
        A("add %uf, %t1, 2")
        A(f"mad.{cfg.dtype} l0c[0], l0a[%l0a], l0b[%l0b], %mact, %k0act, %nact, %uf, 0, 0, %init")
    else:
        A(f"mad.{cfg.dtype} l0c[0], l0a[%l0a], l0b[%l0b], %mact, %k0act, %nact, 0, 0, 0, %init")
    A("set_flag PIPE_M, PIPE_MTE1, %l0s")
    if S == 2:
        A("xor %l0s, %l0s, 1")
    A(f"add %kk0, %kk0, {tk0}")
    A("cmp.lt %p1, %kk0, %kact")
    A("@%p1 bra k0_loop")
    A("set_flag PIPE_MTE1, PIPE_MTE2, %l1s")
    if S == 2:
        A("xor %l1s, %l1s, 1")
    A(f"add %kk, %kk, {tk}")
    A(f"cmp.lt %p1, %kk, {K}")
    A("@%p1 bra k_loop")
    # ---- FixPipe: L0C -> GM with conversion ----
    if store is not None:
        store(A, unit, acc)
    else:
        A(f"mul %t0, %m0, {N}")
        A("add %t0, %t0, %n0")
        A(f"mul %t0, %t0, {osize}")
        A("add %t0, %t0, %c")
        A("shl %t1, %M1, 4")
        if unit:
            A(f"copy_matrix_cc_to_gm.{acc} gm[%t0], l0c[0], 0, %nact, %mact, {N}, %t1, 3, {cfg.quant}, 0, 0, 1")
        else:
            A("set_flag PIPE_M, PIPE_FIX, EVENT_ID0")
            A("wait_flag PIPE_M, PIPE_FIX, EVENT_ID0")
            A(f"copy_matrix_cc_to_gm.{acc} gm[%t0], l0c[0], 0, %nact, %mact, {N}, %t1, 0, {cfg.quant}, 0, 0, 1")
    A("set_flag PIPE_FIX, PIPE_M, EVENT_ID0")
    A("add %blk, %blk, block_num")
    A("bra block_loop")
    A.label("done")
    for s in range(S):
        A(f"wait_flag PIPE_MTE1, PIPE_MTE2, EVENT_ID{s}")
    for s in range(S):
        A(f"wait_flag PIPE_M, PIPE_MTE1, EVENT_ID{s}")
    A("wait_flag PIPE_FIX, PIPE_M, EVENT_ID0")
    A("ret")
    return "\n".join(lines + A.lines + ["}"]) + "\n"


def _unrolled_loads(A, cfg: GemmConfig, size, c0, tm, tn, tk, tk0) -> None:
    """Straight-line L1 -> L0 loads for a full L0 k step (the common case); tails take the loops."""
    kc = tk0 // c0
    dt = cfg.dtype
    A(f"cmp.eq %p2, %k0act, {tk0}")
    A("@!%p2 bra tail_loads")
    if cfg.layout_a == "row":
        A(f"mul %t2, %kb0, {tm // 16 * 512}")
        A("add %t2, %t2, %l1a")
        for kb in range(kc):
            A(f"load_cbuf_to_ca.{dt} l0a[%l0a+{kb * 512}], l1[%t2+{kb * tm // 16 * 512}], 0, %M1, 1, {kc - 1}, 0, 0, 0")
    elif size == 2:
        A("mul %t2, %kb0, 512")
        A("add %t2, %t2, %l1a")
        for kb in range(kc):
            A(f"load_cbuf_to_ca.{dt} l0a[%l0a+{kb * 512}], l1[%t2+{kb * 512}], 0, %M1, {tk // 16}, {kc - 1}, 0, 1, 0")
    else:
        A("mul %t2, %kk0, 32")
        A("add %t2, %t2, %l1a")
        A("add %t3, %M1, 1")
        A("shr %t3, %t3, 1")
        for kb in range(kc):
            A(f"load_cbuf_to_ca_transpose.{dt} l0a[%l0a+{kb * 512}], l1[%t2+{kb * 1024}], 0, %t3, {tk // 16}, "
              f"{2 * kc}, {kc - 1}")
    A("mul %t4, %N1, 512")
    A("mov %t1, %l0b")
    if cfg.layout_b == "col":
        A(f"mul %t2, %kb0, {tn // 16 * 512}")
        A("add %t2, %t2, %l1b")
        for kb in range(kc):
            A(f"load_cbuf_to_cb.{dt} l0b[%t1], l1[%t2+{kb * tn // 16 * 512}], 0, %N1, 1, 0, 0, 0, 0")
            A("add %t1, %t1, %t4")
    elif size == 2:
        A("mul %t2, %kb0, 512")
        A("add %t2, %t2, %l1b")
        for kb in range(kc):
            A(f"load_cbuf_to_cb.{dt} l0b[%t1], l1[%t2+{kb * 512}], 0, %N1, {tk // 16}, 0, 0, 1, 0")
            A("add %t1, %t1, %t4")
    else:
        A("mul %t2, %kk0, 32")
        A("add %t2, %t2, %l1b")
        A("add %t3, %N1, 1")
        A("shr %t3, %t3, 1")
        for kb in range(kc):
            A(f"load_cbuf_to_cb_transpose.{dt} l0b[%t1], l1[%t2+{kb * 1024}], 0, %t3, {tk // 16}, 2, 0")
            A("add %t1, %t1, %t4")
    A("bra loads_done")
