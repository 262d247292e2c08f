"""PTX GEMM generator (CUTLASS-style): ``D = alpha * A @ B + beta * C`` written over C.

    kernlens generate gemm --isa ptx --arch sm_90a --dtype f16 --engine wgmma --m 4096 --n 4096 --k 4096 \\
        --tile 128x256x64 --warps 2x1 --stages 4 -o gemm.ptx          # + gemm.launch.json

The kernel ``.entry NAME(A, B, C, M, N, K, alpha, beta)`` is general in M, N, K (edges of sizes that
are not multiples of the tile are zero-filled on load and predicated on store); the leading
dimensions must keep the 16/8/4-byte ``cp.async`` chunk the generator chose for the sizes it was
given (recorded in the header). Structure, as CUTLASS's sm80 multistage and sm90 mainloops:

* **staging**: every thread issues ``cp.async`` chunks (``src-size`` 0 zero-fills rows/columns past
  the edge) into ``stages`` shared buffers, ``stages-1`` tiles ahead; ``cp.async.wait_group`` +
  ``bar.sync`` per tile; wgmma with >= 3 stages keeps one batch in flight (``wgmma.wait_group 1``)
  and loads ``stages-2`` tiles ahead so no stage is overwritten while a wgmma reads it;
  ``--staging tma`` (sm_90/sm_90a, mma and wgmma) copies the same 16-byte chunks with
  ``cp.async.bulk ... mbarrier::complete_tx::bytes`` instead, each thread announcing its bytes with
  ``mbarrier.arrive.expect_tx`` on the stage's mbarrier (one per stage, after the stages) and every
  thread waiting with ``mbarrier.try_wait.parity``; chunks past the edge are zero-filled with
  ``st.shared.v4`` (bulk copies cannot zero-fill). Per-chunk copies keep the swizzled layouts (a
  tensor-map TMA would swizzle in hardware: ``cp.async.bulk.tensor``, not generated here);
* **shared layouts**: each operand tile is stored as panels of ``S`` = min(128, contiguous bytes)
  bytes, rows of one panel XOR-swizzled on 16-byte chunks (CUTLASS ``Swizzle<log2(S/16),4,3>``,
  the wgmma 32/64/128-byte swizzle modes), so ``ldmatrix`` rows and ``cp.async`` chunks hit distinct
  banks; the fma engine uses padded ``[k][m]`` tiles instead (``ld.shared.v4`` broadcasts);
* **engines**: ``fma`` (``fma.rn.f32`` register blocking, f32), ``mma`` (``ldmatrix`` +
  ``mma.sync.m16n8k16`` for f16/bf16, ``m16n8k32`` for s8 and e4m3 on sm_90), ``wgmma``
  (sm_90a; ``wgmma.mma_async`` m64nNk16/k32 with shared-memory descriptors);
* **epilogue**: ``alpha``/``beta`` in f32 (s32 for s8), conversion to the output type
  (f32 -> f32, f16 -> f16, bf16 -> bf16, e4m3 -> f16, s8 -> s32), predicated stores.

Layouts: ``--layout XY``, X for A and Y for B: ``n`` = stored as the math shape, row-major
(A ``M x K``, B ``K x N``), ``t`` = stored transposed (A ``K x M``, B ``N x K``). 8-bit types need
K contiguous in both (``nt``), as the tensor cores read them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from isa.errors import InputError

from .ptx_emit import Emitter, header, log2_exact

ARCHS = ("sm_80", "sm_90", "sm_90a")
DTYPES = ("f32", "f16", "bf16", "s8", "e4m3")
ENGINES = ("fma", "mma", "wgmma")
LAYOUTS = ("nn", "nt", "tn", "tt")
STAGINGS = ("cp.async", "tma")
ESIZE = {"f32": 4, "f16": 2, "bf16": 2, "s8": 1, "e4m3": 1}
OUT_DTYPE = {"f32": "f32", "f16": "f16", "bf16": "bf16", "s8": "s32", "e4m3": "f16"}
OSIZE = {"f32": 4, "f16": 2, "bf16": 2, "s32": 4}
#: engine -> dtype -> archs that run it
SUPPORT = {
    "fma": {"f32": ARCHS},
    "mma": {"f16": ARCHS, "bf16": ARCHS, "s8": ARCHS, "e4m3": ("sm_90", "sm_90a")},
    "wgmma": {"f16": ("sm_90a",), "bf16": ("sm_90a",), "s8": ("sm_90a",), "e4m3": ("sm_90a",)},
}
MAX_SMEM = {"sm_80": 163 * 1024, "sm_90": 227 * 1024, "sm_90a": 227 * 1024}


def supported_text() -> str:
    return "; ".join(f"{e}: " + ", ".join(f"{d} on {'/'.join(a)}" for d, a in m.items()) for e, m in SUPPORT.items())


@dataclass(frozen=True)
class PtxGemmConfig:
    arch: str
    dtype: str
    engine: str
    m: int
    n: int
    k: int
    tile: tuple[int, int, int] | None = None
    warps: tuple[int, int] | None = None
    stages: int | None = None
    layout: str = "nt"
    alpha: float = 1.0
    beta: float = 0.0
    name: str | None = None
    staging: str = "cp.async"   # or "tma": cp.async.bulk per 16-byte chunk + mbarrier (sm_90/sm_90a)

    # ------------------------------------------------------------------------------ derived
    @property
    def esize(self) -> int:
        return ESIZE[self.dtype]

    @property
    def out_dtype(self) -> str:
        return OUT_DTYPE[self.dtype]

    @property
    def bm(self) -> int:
        return self.resolved_tile[0]

    @property
    def resolved_tile(self) -> tuple[int, int, int]:
        if self.tile:
            return tuple(self.tile)
        if self.engine == "fma":
            return (64, 64, 8)
        kb = 128 if self.engine == "wgmma" else 64      # bytes of K per tile
        return (128, 128, kb // self.esize)

    @property
    def resolved_warps(self) -> tuple[int, int]:
        if self.warps:
            return tuple(self.warps)
        if self.engine == "wgmma":
            return (max(1, self.resolved_tile[0] // 64), 1)
        return (2, 2)

    @property
    def resolved_stages(self) -> int:
        return self.stages or (2 if self.engine == "fma" else 3)

    @property
    def threads(self) -> int:
        wm, wn = self.resolved_warps
        return wm * wn * (128 if self.engine == "wgmma" else 32)

    @property
    def kernel_name(self) -> str:
        if self.name:
            return self.name
        bm, bn, bk = self.resolved_tile
        wm, wn = self.resolved_warps
        tma = "_tma" if self.staging == "tma" else ""
        return (f"gemm_{self.engine}_{self.dtype}_{self.layout}_{bm}x{bn}x{bk}_w{wm}x{wn}_s{self.resolved_stages}"
                f"{tma}_{self.arch}")

    def grid(self) -> tuple[int, int, int]:
        bm, bn, _ = self.resolved_tile
        return (-(-self.n // bn), -(-self.m // bm), 1)


def _bad(msg: str, expected=None) -> InputError:
    return InputError(msg, expected=expected)


def validate(cfg: PtxGemmConfig) -> None:
    """Raise InputError (exit 2 at the CLI) naming what is supported."""
    if cfg.arch not in ARCHS:
        raise _bad(f"unknown arch {cfg.arch!r}", list(ARCHS))
    if cfg.dtype not in DTYPES:
        raise _bad(f"unknown dtype {cfg.dtype!r}", list(DTYPES))
    if cfg.engine not in ENGINES:
        raise _bad(f"unknown engine {cfg.engine!r}", list(ENGINES))
    if cfg.layout not in LAYOUTS:
        raise _bad(f"unknown layout {cfg.layout!r}", list(LAYOUTS))
    archs = SUPPORT[cfg.engine].get(cfg.dtype)
    if archs is None or cfg.arch not in archs:
        raise _bad(f"--engine {cfg.engine} --dtype {cfg.dtype} --arch {cfg.arch} is not supported; "
                   f"supported: {supported_text()}")
    if min(cfg.m, cfg.n, cfg.k) < 1:
        raise _bad("--m, --n and --k must be positive")
    if cfg.esize == 1 and cfg.layout != "nt":
        raise _bad(f"{cfg.dtype} operands must have K contiguous in both A and B: use --layout nt "
                   "(A M x K row-major, B N x K row-major)", ["nt"])
    bm, bn, bk = cfg.resolved_tile
    wm, wn = cfg.resolved_warps
    st = cfg.resolved_stages
    if not 1 <= st <= 4:
        raise _bad(f"--stages {st}: supported 1..4")
    if cfg.dtype == "s8" and (float(cfg.alpha) != int(cfg.alpha) or float(cfg.beta) != int(cfg.beta)):
        raise _bad(f"s8 GEMM computes the epilogue in s32: --alpha and --beta must be integers "
                   f"(got {cfg.alpha}, {cfg.beta})")
    if cfg.esize == 1 and cfg.k % 4:
        raise _bad(f"K={cfg.k}: {cfg.dtype} rows must be multiples of 4 bytes (K % 4 == 0) for cp.async")
    if cfg.esize == 2:
        for what, ld in _leading_dims(cfg):
            if ld % 2:
                raise _bad(f"{what}={ld}: {cfg.dtype} rows must be multiples of 4 bytes for cp.async (even size)")
    if cfg.engine == "fma":
        t = cfg.threads
        e = bm * bn // t if bm * bn % t == 0 else 0
        if e < 16 or e % 16 or (bm * bn) % t:
            raise _bad(f"fma tile {bm}x{bn} over {t} threads: each thread needs a multiple of 16 outputs "
                       f"(4x4 blocks); e.g. --tile 64x64x8 --warps 2x2 or --tile 128x128x8 --warps 4x2")
        tm, tn = _fma_micro(bm, bn, t)
        if tm is None:
            raise _bad(f"fma tile {bm}x{bn} over {t} threads has no micro-tile with TM, TN multiples of 4")
        if bk < 1:
            raise _bad(f"fma tile {bm}x{bn}x{bk}: BK must be positive")
    else:
        kbytes = bk * cfg.esize
        if kbytes % 32 or kbytes < 32:
            raise _bad(f"BK={bk}: {cfg.engine} needs BK x {cfg.esize} bytes to be a multiple of 32 "
                       f"(BK multiple of {32 // cfg.esize})")
        if bm % 16 or bn % 16 or bk % 8:
            raise _bad(f"tile {bm}x{bn}x{bk}: BM and BN must be multiples of 16")
        if cfg.engine == "mma":
            if bm % wm or bn % wn or (bm // wm) % 16 or (bn // wn) % 16:
                raise _bad(f"--warps {wm}x{wn} on tile {bm}x{bn}: the warp tile (BM/WM x BN/WN) must be "
                           f"multiples of 16 x 16")
            if wm * wn > 32:
                raise _bad("at most 32 warps (1024 threads)")
        else:
            if cfg.arch != "sm_90a":
                raise _bad("wgmma needs --arch sm_90a", ["sm_90a"])
            if bm % wm or (bm // wm) % 64:
                raise _bad(f"--warps {wm}x{wn} counts warpgroups for wgmma: BM/WM must be a multiple of 64 "
                           f"(tile {bm}x{bn})")
            nw = bn // wn if bn % wn == 0 else 0
            if not nw or nw % 8 or nw > 256:
                raise _bad(f"wgmma N per warpgroup BN/WN = {bn}/{wn} must be 8..256 in steps of 8")
            if cfg.layout[1] == "n" and (nw * cfg.esize) % min(128, bn * cfg.esize):
                raise _bad("B stored K x N (layout ?n): BN/WN x element bytes must be a multiple of 128")
            if cfg.layout[0] == "t" and ((bm // wm) * cfg.esize) % min(128, bm * cfg.esize):
                raise _bad("A stored K x M (layout t?): BM/WM x element bytes must be a multiple of 128")
            if wm * wn > 8:
                raise _bad("at most 8 warpgroups (1024 threads)")
    if cfg.staging not in STAGINGS:
        raise _bad(f"unknown staging {cfg.staging!r}", list(STAGINGS))
    if cfg.staging == "tma":
        if cfg.arch == "sm_80":
            raise _bad("--staging tma (cp.async.bulk + mbarrier) needs --arch sm_90 or sm_90a", ["sm_90", "sm_90a"])
        if cfg.engine == "fma":
            raise _bad("--staging tma stages the swizzled tiles of the mma and wgmma engines; the fma engine "
                       "transposes on copy: use --staging cp.async", ["cp.async"])
        for op in operands(cfg):
            if op.vec != 16:
                ld = dict(A=_leading_dims(cfg)[0], B=_leading_dims(cfg)[1])[op.name]
                raise _bad(f"--staging tma copies 16-byte chunks (cp.async.bulk sizes and addresses are multiples "
                           f"of 16): {op.name}'s leading dimension {ld[0]}={ld[1]} x {cfg.esize} B must be a "
                           f"multiple of 16")
    smem = stage_bytes(cfg) * st + mbarrier_bytes(cfg)
    if smem > MAX_SMEM[cfg.arch]:
        raise _bad(f"{st} stages of {stage_bytes(cfg)} B = {smem} B shared memory exceed the "
                   f"{MAX_SMEM[cfg.arch]} B of {cfg.arch}")


def _leading_dims(cfg) -> list[tuple[str, int]]:
    a = ("K", cfg.k) if cfg.layout[0] == "n" else ("M", cfg.m)
    b = ("N", cfg.n) if cfg.layout[1] == "n" else ("K", cfg.k)
    return [a, b]


def _fma_micro(bm, bn, t):
    e = bm * bn // t
    for tn in (8, 4, 16):
        tm = e // tn
        if e % tn == 0 and tm % 4 == 0 and tn % 4 == 0 and bm % tm == 0 and bn % tn == 0 and \
                (bm // tm) * (bn // tn) == t and tm <= 16:
            return tm, tn
    return None, None


# ---------------------------------------------------------------------------------- operands
@dataclass(frozen=True)
class Operand:
    """One operand's tile in shared memory: ``rows`` x ``cont`` elements (cont contiguous)."""

    name: str
    kmajor: bool          # contiguous dim is K
    rows: int
    cont: int
    esize: int
    vec: int              # cp.async chunk bytes
    offset: int           # byte offset of the tile in a stage
    padded: bool = False  # fma layouts: [k][mn + 4] f32, no swizzle
    transpose: bool = False  # fma: global tile is stored transposed in shared (element copies)
    pitch: int = 0        # fma: shared row pitch in bytes

    @property
    def S(self) -> int:
        return min(128, self.cont * self.esize)

    @property
    def nbytes(self) -> int:
        if self.padded:      # [k][mn + 4]: k rows
            return (self.cont if self.transpose else self.rows) * self.pitch
        return self.rows * self.cont * self.esize

    def smem_offset(self, row: int, cb: int) -> int:
        """Byte offset (in the stage) of global-tile element row ``row``, contiguous byte ``cb``."""
        if self.padded:
            if self.transpose:
                return self.offset + (cb // 4) * self.pitch + row * 4
            return self.offset + row * self.pitch + cb
        S = self.S
        off = (cb // S) * self.rows * S + row * S + cb % S
        return self.offset + swizzle(off, S)


def swizzle(off: int, S: int) -> int:
    mask = S // 16 - 1
    return off ^ (((off >> 7) & mask) << 4)


def _vec(ld_bytes: int, cont_bytes: int) -> int:
    for v in (16, 8, 4):
        if ld_bytes % v == 0 and cont_bytes % v == 0:
            return v
    return 4


def operands(cfg: PtxGemmConfig) -> tuple[Operand, Operand]:
    bm, bn, bk = cfg.resolved_tile
    e = cfg.esize
    la, lb = cfg.layout
    lda = cfg.k if la == "n" else cfg.m
    ldb = cfg.n if lb == "n" else cfg.k
    if cfg.engine == "fma":
        # shared As[k][BM+4], Bs[k][BN+4] (f32): A 'n' and B 't' are transposed on copy (4-byte chunks)
        pa, pb = (bm + 4) * 4, (bn + 4) * 4
        ta, tb = la == "n", lb == "t"
        A = Operand("A", la == "n", bm if la == "n" else bk, bk if la == "n" else bm, 4,
                    4 if ta else _vec(lda * 4, bm * 4), 0, True, ta, pa)
        a_bytes = bk * pa
        boff = -(-a_bytes // 128) * 128
        B = Operand("B", lb == "t", bn if lb == "t" else bk, bk if lb == "t" else bn, 4,
                    4 if tb else _vec(ldb * 4, bn * 4), boff, True, tb, pb)
        return A, B
    A = Operand("A", la == "n", bm if la == "n" else bk, bk if la == "n" else bm, e, 0, 0)
    A = Operand(A.name, A.kmajor, A.rows, A.cont, e, _vec(lda * e, A.cont * e), 0)
    a_bytes = -(-A.nbytes // 1024) * 1024
    B = Operand("B", lb == "t", bn if lb == "t" else bk, bk if lb == "t" else bn, e, 0, 0)
    B = Operand(B.name, B.kmajor, B.rows, B.cont, e, _vec(ldb * e, B.cont * e), a_bytes)
    return A, B


def stage_bytes(cfg: PtxGemmConfig) -> int:
    A, B = operands(cfg)
    end = B.offset + B.nbytes
    return -(-end // 1024) * 1024


def mbarrier_bytes(cfg: PtxGemmConfig) -> int:
    """Shared bytes after the stages for the per-stage mbarriers of TMA staging (8 B each)."""
    return 8 * cfg.resolved_stages if cfg.staging == "tma" else 0


def dynamic_shared_bytes(cfg: PtxGemmConfig) -> int:
    return stage_bytes(cfg) * cfg.resolved_stages + mbarrier_bytes(cfg)


# ---------------------------------------------------------------------------------- kernel
@dataclass
class _K:
    """Registers shared by the phases of one kernel."""

    em: Emitter
    cfg: PtxGemmConfig
    regs: dict = field(default_factory=dict)


def gemm_ptx(cfg: PtxGemmConfig) -> str:
    validate(cfg)
    em = Emitter()
    k = _K(em, cfg)
    bm, bn, bk = cfg.resolved_tile
    name = cfg.kernel_name
    R = k.regs
    ity = "s32" if cfg.dtype == "s8" else "f32"
    # ---- parameters and indices
    for p in ("A", "B", "C"):
        R[p] = em.reg("b64")
        em("ld.param.u64 {}, [{}_param_{}]", R[p], name, p)
        em("cvta.to.global.u64 {}, {}", R[p], R[p])
    for p in ("M", "N", "K"):
        R[p] = em.reg("b32")
        em("ld.param.u32 {}, [{}_param_{}]", R[p], name, p)
    for p in ("alpha", "beta"):
        R[p] = em.reg("b32" if ity == "s32" else "f32")
        em("ld.param.{} {}, [{}_param_{}]", ity, R[p], name, p)
    R["tid"] = em.reg("b32")
    em("mov.u32 {}, %tid.x", R["tid"])
    R["lane"], R["warp"] = em.reg("b32"), em.reg("b32")
    em("and.b32 {}, {}, 31", R["lane"], R["tid"])
    em("shr.u32 {}, {}, 5", R["warp"], R["tid"])
    R["m0"], R["n0"] = em.reg("b32"), em.reg("b32")
    cx, cy = em.reg("b32"), em.reg("b32")
    em("mov.u32 {}, %ctaid.x", cx)
    em("mov.u32 {}, %ctaid.y", cy)
    em("mul.lo.s32 {}, {}, {}", R["n0"], cx, bn)
    em("mul.lo.s32 {}, {}, {}", R["m0"], cy, bm)
    R["smem"] = em.reg("b32")
    em("mov.u32 {}, smem", R["smem"])
    R["KT"] = em.reg("b32")
    em("add.s32 {}, {}, {}", R["KT"], R["K"], bk - 1)
    em("div.u32 {}, {}, {}", R["KT"], R["KT"], bk)

    A, B = operands(cfg)
    loaders = [_setup_loader(k, A), _setup_loader(k, B)]
    if cfg.engine == "fma":
        compute = _setup_fma(k, A, B)
    elif cfg.engine == "mma":
        compute = _setup_mma(k, A, B)
    else:
        compute = _setup_wgmma(k, A, B)

    st = cfg.resolved_stages
    sb = stage_bytes(cfg)
    kload = em.reg("b32")
    em("mov.u32 {}, 0", kload)
    wr, rd = em.reg("b32"), em.reg("b32")
    em("mov.u32 {}, 0", wr)
    em("mov.u32 {}, 0", rd)

    tma = cfg.staging == "tma"
    if tma:                     # one mbarrier per stage after the stages, counting every thread
        bars = R["bars"] = em.reg("b32")
        em("add.s32 {}, {}, {}", bars, R["smem"], sb * st)
        p0 = em.reg("pred")
        em("setp.eq.u32 {}, {}, 0", p0, R["tid"])
        for i in range(st):
            em("@{} mbarrier.init.shared::cta.b64 [{}+{}], {}", p0, bars, 8 * i, cfg.threads)
        em("@{} fence.mbarrier_init.release.cluster", p0)
        em("bar.sync 0")

    def load_tile():
        if tma:
            _tma_tile(k, loaders, kload, wr, R["bars"])
        else:
            for ld in loaders:
                ld(kload, wr)
            em("cp.async.commit_group")
        em("add.s32 {}, {}, {}", kload, kload, bk)
        if st > 1:
            _advance_stage(em, wr, sb, st)

    pf = prefetch_distance(cfg)
    em.comment(f"prologue: {pf} tile(s) in flight")
    for _ in range(pf):
        load_tile()
    kt = em.reg("b32")
    em("mov.u32 {}, 0", kt)
    pskip = em.reg("pred")
    end = em.label("END")
    loop = em.label("MAIN")
    em("setp.lt.s32 {}, {}, 1", pskip, R["KT"])
    em("@{} bra {}", pskip, end)
    em.place(loop)
    if st == 1:
        em("bar.sync 0")
        load_tile()
        if tma:
            _tma_wait(k, rd, kt, R["bars"])
        else:
            em("cp.async.wait_group 0")
    elif tma:
        _tma_wait(k, rd, kt, R["bars"])
    else:
        em("cp.async.wait_group {}", pf - 1)
    if cfg.engine == "wgmma":
        em("fence.proxy.async.shared::cta")
    em("bar.sync 0")
    if st > 1:
        load_tile()
    compute(rd)
    if st > 1:
        _advance_stage(em, rd, sb, st)
    em("add.s32 {}, {}, 1", kt, kt)
    pl = em.reg("pred")
    em("setp.lt.s32 {}, {}, {}", pl, kt, R["KT"])
    em("@{} bra {}", pl, loop)
    em.place(end)
    if not tma:
        em("cp.async.wait_all")
    if cfg.engine == "wgmma":
        em("wgmma.wait_group.sync.aligned 0")
    k.epilogue()

    A_shape, B_shape = _shapes(cfg)
    hdr = [f"D = alpha * A @ B + beta * C: {cfg.engine} engine, {cfg.dtype} in, {cfg.out_dtype} out, "
           f"layout {cfg.layout} (A {'x'.join(map(str, A_shape))}, B {'x'.join(map(str, B_shape))})",
           f"tile {bm}x{bn}x{bk}, warps {'x'.join(map(str, cfg.resolved_warps))}"
           f"{' (warpgroups)' if cfg.engine == 'wgmma' else ''}, {st} stage(s) of {sb} B, {cfg.threads} threads",
           f"generated for M={cfg.m} N={cfg.n} K={cfg.k}; "
           + (f"TMA staging: cp.async.bulk 16-byte chunks completing on one mbarrier per stage"
              if tma else f"cp.async chunks A {A.vec} B, B {B.vec} B")
           + " (leading dimensions must stay multiples of these)",
           f"grid = (ceil(N/{bn}), ceil(M/{bm}), 1), block = ({cfg.threads}, 1, 1), "
           f"dynamic shared = {dynamic_shared_bytes(cfg)} B"]
    text = header(cfg.arch, hdr)
    params = [f"\t.param .u64 {name}_param_{p}" for p in "ABC"] + \
             [f"\t.param .u32 {name}_param_{p}" for p in "MNK"] + \
             [f"\t.param .{ity} {name}_param_{p}" for p in ("alpha", "beta")]
    text += ".extern .shared .align 1024 .b8 smem[];\n\n"
    text += f".visible .entry {name}(\n" + ",\n".join(params) + "\n)\n"
    text += f".maxntid {cfg.threads}, 1, 1\n{{\n"
    text += "\n".join(em.declarations()) + "\n\n"
    text += "\n".join(em.lines) + "\n\tret;\n}\n"
    return text


def prefetch_distance(cfg: PtxGemmConfig) -> int:
    """Tiles loaded ahead of the one computed: stages-1, except wgmma with >= 3 stages, which keeps
    one wgmma batch in flight (``wgmma.wait_group 1``) and so leaves one more stage untouched."""
    st = cfg.resolved_stages
    return st - 2 if cfg.engine == "wgmma" and st >= 3 else st - 1


def _advance_stage(em, reg, sb, st):
    p = em.reg("pred")
    em("add.s32 {}, {}, {}", reg, reg, sb)
    em("setp.ge.u32 {}, {}, {}", p, reg, sb * st)
    em("@{} mov.u32 {}, 0", p, reg)


def _shapes(cfg):
    a = (cfg.m, cfg.k) if cfg.layout[0] == "n" else (cfg.k, cfg.m)
    b = (cfg.k, cfg.n) if cfg.layout[1] == "n" else (cfg.n, cfg.k)
    return a, b


def _setup_loader(k: _K, op: Operand):
    """Precompute per-thread chunk registers; return ``load(k0_reg, stage_reg)``."""
    em, cfg, R = k.em, k.cfg, k.regs
    e = op.esize
    T = cfg.threads
    cpr = op.cont * e // op.vec                     # chunks per tile row
    total = op.rows * cpr
    n = -(-total // T)
    bm, bn, bk = cfg.resolved_tile
    is_a = op.name == "A"
    mn_extent = R["M"] if is_a else R["N"]
    mn0 = R["m0"] if is_a else R["n0"]
    ld = (R["K"] if op.kmajor else (R["M"] if is_a else R["N"]))
    ldb = em.reg("b64")                              # leading dimension in bytes
    em("mul.wide.u32 {}, {}, {}", ldb, ld, e)
    step = em.reg("b64")
    if op.kmajor:
        em("mov.u64 {}, {}", step, bk * e)
    else:
        em("mul.lo.s64 {}, {}, {}", step, ldb, bk)
    chunks = []
    em.comment(f"operand {op.name}: {op.rows} x {op.cont} tile, {n} chunk(s) of {op.vec} B per thread")
    for i in range(n):
        q, row, cb = em.reg("b32"), em.reg("b32"), em.reg("b32")
        em("add.s32 {}, {}, {}", q, R["tid"], i * T)
        em("div.u32 {}, {}, {}", row, q, cpr)
        em("rem.u32 {}, {}, {}", cb, q, cpr)
        em("mul.lo.s32 {}, {}, {}", cb, cb, op.vec)
        soff = _emit_smem_offset(em, op, row, cb, R["smem"])
        # global pointer = base + (r0 + row) * ld + (c0 * e + cb); k-index, fixed predicate
        grow, gcb = em.reg("b32"), em.reg("b32")
        kidx = em.reg("b32")
        pfix = em.reg("pred")
        if op.kmajor:
            em("add.s32 {}, {}, {}", grow, mn0, row)
            em("mov.u32 {}, {}", gcb, cb)
            em("div.u32 {}, {}, {}", kidx, cb, e)
            em("setp.lt.s32 {}, {}, {}", pfix, grow, mn_extent)
        else:
            em("mov.u32 {}, {}", grow, row)
            em("mad.lo.s32 {}, {}, {}, {}", gcb, mn0, e, cb)
            em("mov.u32 {}, {}", kidx, row)
            ce = em.reg("b32")
            em("div.u32 {}, {}, {}", ce, gcb, e)
            em("setp.lt.s32 {}, {}, {}", pfix, ce, mn_extent)
        g = em.reg("b64")
        t64 = em.reg("b64")
        em("cvt.u64.u32 {}, {}", t64, grow)
        em("mul.lo.s64 {}, {}, {}", g, t64, ldb)
        em("cvt.u64.u32 {}, {}", t64, gcb)
        em("add.s64 {}, {}, {}", g, g, t64)
        em("add.s64 {}, {}, {}", g, g, R[op.name])
        pin = None
        if (i + 1) * T > total:          # fewer chunks than threads: the rest skip the copy
            pin = em.reg("pred")
            em("setp.lt.u32 {}, {}, {}", pin, q, total)
        chunks.append((soff, kidx, pfix, g, pin))
    cache = "cg" if op.vec == 16 else "ca"

    def load(k0, stage):
        if cfg.staging == "tma":
            return [(_chunk_pred(em, R, kidx, k0, pfix), soff, g, pin, step) for soff, kidx, pfix, g, pin in chunks]
        for soff, kidx, pfix, g, pin in chunks:
            t, ss, sa = em.reg("b32"), em.reg("b32"), em.reg("b32")
            p = em.reg("pred")
            em("add.s32 {}, {}, {}", t, kidx, k0)
            em("setp.lt.and.s32 {}, {}, {}, {}", p, t, R["K"], pfix)
            em("selp.b32 {}, {}, 0, {}", ss, op.vec, p)
            em("add.s32 {}, {}, {}", sa, soff, stage)
            em("{}cp.async.{}.shared.global [{}], [{}], {}, {}", f"@{pin} " if pin else "", cache, sa, g, op.vec, ss)
            em("add.s64 {}, {}, {}", g, g, step)
    return load


def _chunk_pred(em, R, kidx, k0, pfix) -> str:
    """True where a chunk lies inside the matrix (its K index < K and its row/column in range)."""
    t, p = em.reg("b32"), em.reg("pred")
    em("add.s32 {}, {}, {}", t, kidx, k0)
    em("setp.lt.and.s32 {}, {}, {}, {}", p, t, R["K"], pfix)
    return p


def _tma_tile(k: _K, loaders, k0: str, stage: str, bars: str) -> None:
    """TMA staging of one tile (``cp.async.bulk``, PTX ISA 9.7.9.25.4.1): every thread copies its
    16-byte chunks with ``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`` on
    the stage's mbarrier, after announcing their bytes with ``mbarrier.arrive.expect_tx`` (the
    mbarrier counts every thread's arrival, so the phase completes when all threads have arrived
    and all their bytes have landed; an arrival always precedes its own copies, so the tx-count
    never goes negative). Chunks outside the matrix are zero-filled with ``st.shared.v4`` instead
    (bulk copies have no zero-fill), which the wgmma's ``fence.proxy.async`` orders before it."""
    em, cfg = k.em, k.cfg
    sb = stage_bytes(cfg)
    parts = [c for ld in loaders for c in ld(k0, stage)]
    tx, ss = em.reg("b32"), em.reg("b32")
    em("mov.u32 {}, 0", tx)
    live = []
    for p, soff, g, pin, step in parts:
        if pin is not None:
            q = em.reg("pred")
            em("and.pred {}, {}, {}", q, p, pin)
            z = em.reg("pred")
            em("not.pred {}, {}", z, p)
            em("and.pred {}, {}, {}", z, z, pin)
            live.append((q, z, False, soff, g, step))
        else:
            live.append((p, p, True, soff, g, step))
        em("selp.b32 {}, 16, 0, {}", ss, live[-1][0])
        em("add.s32 {}, {}, {}", tx, tx, ss)
    mb, idx, st64 = em.reg("b32"), em.reg("b32"), em.reg("b64")
    em("div.u32 {}, {}, {}", idx, stage, sb)
    em("mad.lo.s32 {}, {}, 8, {}", mb, idx, bars)
    em("mbarrier.arrive.expect_tx.shared::cta.b64 {}, [{}], {}", st64, mb, tx)
    zero = k.regs.get("zero")
    if zero is None:
        zero = k.regs["zero"] = em.reg("b32")
        em("mov.u32 {}, 0", zero)
    for q, z, neg, soff, g, step in live:
        sa = em.reg("b32")
        em("add.s32 {}, {}, {}", sa, soff, stage)
        em("@{} cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{}], [{}], 16, [{}]", q, sa, g, mb)
        em("@{}{} st.shared.v4.u32 [{}], {{{}, {}, {}, {}}}", "!" if neg else "", z, sa, zero, zero, zero, zero)
        em("add.s64 {}, {}, {}", g, g, step)


def _tma_wait(k: _K, stage: str, tile: str, bars: str) -> None:
    """Wait until the tile in ``stage`` (the ``tile``-th loaded) has landed: its stage's mbarrier
    completes phase ``tile / stages``; ``mbarrier.try_wait.parity`` with that phase's parity."""
    em, cfg = k.em, k.cfg
    st, sb = cfg.resolved_stages, stage_bytes(cfg)
    mb, idx, par, pw = em.reg("b32"), em.reg("b32"), em.reg("b32"), em.reg("pred")
    em("div.u32 {}, {}, {}", idx, stage, sb)
    em("mad.lo.s32 {}, {}, 8, {}", mb, idx, bars)
    em("div.u32 {}, {}, {}", par, tile, st)
    em("and.b32 {}, {}, 1", par, par)
    again = em.label("WAIT")
    em.place(again)
    em("mbarrier.try_wait.parity.shared::cta.b64 {}, [{}], {}", pw, mb, par)
    em("@!{} bra {}", pw, again)


def _emit_smem_offset(em, op: Operand, row: str, cb: str, base: str) -> str:
    """Shared address (window) of tile element (row, contiguous byte cb), stage 0."""
    out = em.reg("b32")
    if op.padded:
        if op.transpose:
            t = em.reg("b32")
            em("shr.u32 {}, {}, 2", t, cb)
            em("mul.lo.s32 {}, {}, {}", out, t, op.pitch)
            em("mad.lo.s32 {}, {}, 4, {}", out, row, out)
        else:
            em("mad.lo.s32 {}, {}, {}, {}", out, row, op.pitch, cb)
    else:
        S = op.S
        t, u = em.reg("b32"), em.reg("b32")
        em("shr.u32 {}, {}, {}", t, cb, log2_exact(S))
        em("mul.lo.s32 {}, {}, {}", t, t, op.rows * S)
        em("mad.lo.s32 {}, {}, {}, {}", t, row, S, t)
        em("and.b32 {}, {}, {}", u, cb, S - 1)
        em("add.s32 {}, {}, {}", t, t, u)
        em("shr.u32 {}, {}, 7", u, t)
        em("and.b32 {}, {}, {}", u, u, S // 16 - 1)
        em("shl.b32 {}, {}, 4", u, u)
        em("xor.b32 {}, {}, {}", out, t, u)
    em("add.s32 {}, {}, {}", out, out, op.offset)
    em("add.s32 {}, {}, {}", out, out, base)
    return out


# ---------------------------------------------------------------------------------- fma
def _setup_fma(k: _K, A: Operand, B: Operand):
    em, cfg, R = k.em, k.cfg, k.regs
    bm, bn, bk = cfg.resolved_tile
    T = cfg.threads
    tm, tn = _fma_micro(bm, bn, T)
    tx_n = bn // tn
    ga, gb = tm // 4, tn // 4                      # groups of 4 rows / cols
    tx, ty = em.reg("b32"), em.reg("b32")
    em("rem.u32 {}, {}, {}", tx, R["tid"], tx_n)
    em("div.u32 {}, {}, {}", ty, R["tid"], tx_n)
    abase, bbase = em.reg("b32"), em.reg("b32")
    em("mad.lo.s32 {}, {}, 16, {}", abase, ty, R["smem"])
    em("add.s32 {}, {}, {}", abase, abase, A.offset)
    em("mad.lo.s32 {}, {}, 16, {}", bbase, tx, R["smem"])
    em("add.s32 {}, {}, {}", bbase, bbase, B.offset)
    acc = [[em.reg("f32") for _ in range(tn)] for _ in range(tm)]
    for row in acc:
        for r in row:
            em("mov.f32 {}, 0f00000000", r)
    a = em.regs("f32", tm)
    b = em.regs("f32", tn)
    # thread rows: group gi covers rows gi*(BM/ga) + ty*4 .. +3
    rows = [gi * (bm // ga) + j for gi in range(ga) for j in range(4)]
    cols = [gi * (bn // gb) + j for gi in range(gb) for j in range(4)]

    def compute(stage):
        pa, pb = em.reg("b32"), em.reg("b32")
        em("add.s32 {}, {}, {}", pa, abase, stage)
        em("add.s32 {}, {}, {}", pb, bbase, stage)
        for kk in range(bk):
            for gi in range(ga):
                em("ld.shared.v4.f32 {{{}}}, [{}+{}]", ", ".join(a[4 * gi:4 * gi + 4]), pa,
                   kk * A.pitch + gi * (bm // ga) * 4)
            for gi in range(gb):
                em("ld.shared.v4.f32 {{{}}}, [{}+{}]", ", ".join(b[4 * gi:4 * gi + 4]), pb,
                   kk * B.pitch + gi * (bn // gb) * 4)
            for i in range(tm):
                for j in range(tn):
                    em("fma.rn.f32 {}, {}, {}, {}", acc[i][j], a[i], b[j], acc[i][j])

    rbase, cbase = em.reg("b32"), em.reg("b32")
    em("mad.lo.s32 {}, {}, 4, {}", rbase, ty, R["m0"])
    em("mad.lo.s32 {}, {}, 4, {}", cbase, tx, R["n0"])
    # epilogue entries: single elements (fma outputs are f32; pairs only for adjacent columns)
    entries = []
    for i, r in enumerate(rows):
        for j in range(0, tn, 2):
            entries.append((acc[i][j], acc[i][j + 1], r, cols[j]))   # relative to (m0 + 4*ty, n0 + 4*tx)
    k.epilogue = lambda: _epilogue(k, rbase, cbase, entries, "f32")
    return compute


# ---------------------------------------------------------------------------------- mma
def _lane_parts(em, lane):
    j, r = em.reg("b32"), em.reg("b32")
    em("shr.u32 {}, {}, 3", j, lane)
    em("and.b32 {}, {}, 7", r, lane)
    return j, r


def _xor_of_row(em, r, S):
    """X(r) = (((r*S) >> 7) & (S/16-1)) << 4 for the lane's row-in-8 ``r``."""
    x = em.reg("b32")
    em("mul.lo.s32 {}, {}, {}", x, r, S)
    em("shr.u32 {}, {}, 7", x, x)
    em("and.b32 {}, {}, {}", x, x, S // 16 - 1)
    em("shl.b32 {}, {}, 4", x, x)
    return x


def _ldmatrix_regs(k: _K, op: Operand, w0: str, count: int, is_a: bool):
    """Lane address registers for an operand's ldmatrix.x4 loads.

    Returns ``addr(kc, t) -> (reg, imm)``: the shared address of the x4 load number ``t``
    (A: m16 block t, B: n16 pair t) for k-chunk ``kc`` (32 bytes of K), stage 0.
    """
    em, R = k.em, k.regs
    S = op.S
    j, r = _lane_parts(em, R["lane"])
    X = _xor_of_row(em, r, S)
    bit0, bit1 = em.reg("b32"), em.reg("b32")
    em("and.b32 {}, {}, 1", bit0, j)
    em("shr.u32 {}, {}, 1", bit1, j)
    base = em.reg("b32")
    em("add.s32 {}, {}, {}", base, R["smem"], op.offset)
    if op.kmajor:
        # A: matrix j = (rows +8*(j&1), kbytes +16*(j>>1)); B: (rows +8*(j>>1), kbytes +16*(j&1))
        rowsel, hsel = (bit0, bit1) if is_a else (bit1, bit0)
        row = em.reg("b32")
        em("mad.lo.s32 {}, {}, 8, {}", row, rowsel, r)
        em("add.s32 {}, {}, {}", row, row, w0)
        h16x = em.reg("b32")
        em("shl.b32 {}, {}, 4", h16x, hsel)
        em("xor.b32 {}, {}, {}", h16x, h16x, X)
        rowoff = em.reg("b32")
        em("mad.lo.s32 {}, {}, {}, {}", rowoff, row, S, base)
        regs = {}
        for v in range(S // 32):
            L = em.reg("b32")
            em("xor.b32 {}, {}, {}", L, h16x, v * 32)
            em("add.s32 {}, {}, {}", L, L, rowoff)
            regs[v] = L

        def addr(kc, t):
            kb = kc * 32
            return regs[(kb % S) // 32], (kb // S) * op.rows * S + t * 16 * S
        return addr
    # MN-major, .trans: A matrix j = (k +8*(j>>1), mn +8*(j&1)); B: (k +8*(j&1), mn +8*(j>>1))
    ksel, msel = (bit1, bit0) if is_a else (bit0, bit1)
    krow = em.reg("b32")
    em("mad.lo.s32 {}, {}, 8, {}", krow, ksel, r)
    kro = em.reg("b32")
    em("mad.lo.s32 {}, {}, {}, {}", kro, krow, S, base)
    regs = []
    for t in range(count):
        cb, pnl, inp = em.reg("b32"), em.reg("b32"), em.reg("b32")
        em("mad.lo.s32 {}, {}, 16, {}", cb, msel, w0)      # w0 here is in bytes
        em("add.s32 {}, {}, {}", cb, cb, t * 32)
        em("shr.u32 {}, {}, {}", pnl, cb, log2_exact(S))
        em("and.b32 {}, {}, {}", inp, cb, S - 1)
        em("xor.b32 {}, {}, {}", inp, inp, X)
        L = em.reg("b32")
        em("mad.lo.s32 {}, {}, {}, {}", L, pnl, op.rows * S, kro)
        em("add.s32 {}, {}, {}", L, L, inp)
        regs.append(L)

    def addr(kc, t):
        return regs[t], kc * 16 * S
    return addr


MMA_INSTR = {
    "f16": ("m16n8k16", "f32.f16.f16.f32"),
    "bf16": ("m16n8k16", "f32.bf16.bf16.f32"),
    "s8": ("m16n8k32", "s32.s8.s8.s32"),
    "e4m3": ("m16n8k32", "f32.e4m3.e4m3.f32"),
}


def _setup_mma(k: _K, A: Operand, B: Operand):
    em, cfg, R = k.em, k.cfg, k.regs
    bm, bn, bk = cfg.resolved_tile
    wm, wn = cfg.resolved_warps
    wtm, wtn = bm // wm, bn // wn
    MI, NI = wtm // 16, wtn // 8
    e = cfg.esize
    wmi, wni = em.reg("b32"), em.reg("b32")
    em("rem.u32 {}, {}, {}", wmi, R["warp"], wm)
    em("div.u32 {}, {}, {}", wni, R["warp"], wm)
    wm0, wn0 = em.reg("b32"), em.reg("b32")
    em("mul.lo.s32 {}, {}, {}", wm0, wmi, wtm)
    em("mul.lo.s32 {}, {}, {}", wn0, wni, wtn)

    def w0_for(op, w):
        if op.kmajor:
            return w
        b = em.reg("b32")
        em("mul.lo.s32 {}, {}, {}", b, w, e)
        return b
    a_addr = _ldmatrix_regs(k, A, w0_for(A, wm0), MI, True)
    b_addr = _ldmatrix_regs(k, B, w0_for(B, wn0), NI // 2, False)
    integer = cfg.dtype == "s8"
    kind = "b32" if integer else "f32"
    acc = [[em.regs(kind, 4) for _ in range(NI)] for _ in range(MI)]
    for row in acc:
        for quad in row:
            for r in quad:
                em("mov.{} {}, 0{}", "b32" if integer else "f32", r, "" if integer else "f00000000")
    af = [em.regs("b32", 4) for _ in range(MI)]
    bf = [em.regs("b32", 4) for _ in range(NI // 2)]
    shape, types = MMA_INSTR[cfg.dtype]
    a_trans = "" if A.kmajor else ".trans"
    b_trans = "" if B.kmajor else ".trans"

    def compute(stage):
        for kc in range(bk * e // 32):
            regs = {}
            for mi in range(MI):
                reg, imm = a_addr(kc, mi)
                if reg not in regs:
                    regs[reg] = em.reg("b32")
                    em("add.s32 {}, {}, {}", regs[reg], reg, stage)
                em("ldmatrix.sync.aligned.m8n8.x4{}.shared.b16 {{{}}}, [{}+{}]", a_trans, ", ".join(af[mi]),
                   regs[reg], imm)
            for nj in range(NI // 2):
                reg, imm = b_addr(kc, nj)
                if reg not in regs:
                    regs[reg] = em.reg("b32")
                    em("add.s32 {}, {}, {}", regs[reg], reg, stage)
                em("ldmatrix.sync.aligned.m8n8.x4{}.shared.b16 {{{}}}, [{}+{}]", b_trans, ", ".join(bf[nj]),
                   regs[reg], imm)
            for mi in range(MI):
                for ni in range(NI):
                    b2 = bf[ni // 2][2 * (ni % 2):2 * (ni % 2) + 2]
                    d = ", ".join(acc[mi][ni])
                    em("mma.sync.aligned.{}.row.col.{} {{{}}}, {{{}}}, {{{}}}, {{{}}}", shape, types, d,
                       ", ".join(af[mi]), ", ".join(b2), d)

    g, q = em.reg("b32"), em.reg("b32")
    em("shr.u32 {}, {}, 2", g, R["lane"])
    em("and.b32 {}, {}, 3", q, R["lane"])
    rbase, cbase = em.reg("b32"), em.reg("b32")
    em("add.s32 {}, {}, {}", rbase, R["m0"], wm0)
    em("add.s32 {}, {}, {}", rbase, rbase, g)
    em("add.s32 {}, {}, {}", cbase, R["n0"], wn0)
    em("mad.lo.s32 {}, {}, 2, {}", cbase, q, cbase)
    entries = []
    for mi in range(MI):
        for ni in range(NI):
            c = acc[mi][ni]
            entries.append((c[0], c[1], mi * 16, ni * 8))
            entries.append((c[2], c[3], mi * 16 + 8, ni * 8))
    k.epilogue = lambda: _epilogue(k, rbase, cbase, entries, "s32" if integer else "f32")
    return compute


# ---------------------------------------------------------------------------------- wgmma
WGMMA_TYPES = {"f16": ("k16", "f32.f16.f16"), "bf16": ("k16", "f32.bf16.bf16"),
               "s8": ("k32", "s32.s8.s8"), "e4m3": ("k32", "f32.e4m3.e4m3")}
SWZ_FIELD = {128: 1, 64: 2, 32: 3}


def _desc_hi(op: Operand) -> int:
    S = op.S
    if op.kmajor:
        lbo, sbo = 16, 8 * S
    else:
        lbo, sbo = op.rows * S, 8 * S
    return ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | SWZ_FIELD[S] << 62


def _setup_wgmma(k: _K, A: Operand, B: Operand):
    em, cfg, R = k.em, k.cfg, k.regs
    bm, bn, bk = cfg.resolved_tile
    wm, wn = cfg.resolved_warps
    e = cfg.esize
    gm, nw = bm // wm, bn // wn
    MT = gm // 64
    kstep, types = WGMMA_TYPES[cfg.dtype]
    wg = em.reg("b32")
    em("shr.u32 {}, {}, 2", wg, R["warp"])
    wgm, wgn = em.reg("b32"), em.reg("b32")
    em("rem.u32 {}, {}, {}", wgm, wg, wm)
    em("div.u32 {}, {}, {}", wgn, wg, wm)

    def desc_base(op, idx, extent):
        # byte offset of this warpgroup's slice in the tile
        off = em.reg("b32")
        S = op.S
        if op.kmajor:
            em("mul.lo.s32 {}, {}, {}", off, idx, extent * S)
        else:
            em("mul.lo.s32 {}, {}, {}", off, idx, (extent * e // S) * op.rows * S)
        em("add.s32 {}, {}, {}", off, off, R["smem"])
        em("add.s32 {}, {}, {}", off, off, op.offset)
        em("shr.u32 {}, {}, 4", off, off)
        d = em.reg("b64")
        em("cvt.u64.u32 {}, {}", d, off)
        hi = em.reg("b64")
        em("mov.b64 {}, {}", hi, _desc_hi(op))
        em("or.b64 {}, {}, {}", d, d, hi)
        return d
    da = desc_base(A, wgm, gm)
    db = desc_base(B, wgn, nw)

    def koff(op, kc, mt=0):
        S = op.S
        if op.kmajor:
            kb = kc * 32
            return (kb // S) * op.rows * S + kb % S + mt * 64 * S
        return kc * (32 // e) * S + (mt * 64 * e // S) * op.rows * S
    integer = cfg.dtype == "s8"
    kind = "b32" if integer else "f32"
    acc = [em.regs(kind, nw // 2) for _ in range(MT)]
    for regs in acc:
        for r in regs:
            em("mov.{} {}, 0{}", "b32" if integer else "f32", r, "" if integer else "f00000000")
    ptrue = em.reg("pred")
    em("setp.eq.u32 {}, {}, {}", ptrue, R["tid"], R["tid"])
    ta = 0 if A.kmajor else 1
    tb = 0 if B.kmajor else 1

    def compute(stage):
        s4 = em.reg("b64")
        t = em.reg("b32")
        em("shr.u32 {}, {}, 4", t, stage)
        em("cvt.u64.u32 {}, {}", s4, t)
        dA, dB = em.reg("b64"), em.reg("b64")
        em("wgmma.fence.sync.aligned")
        for kc in range(bk * e // 32):
            em("add.s64 {}, {}, {}", dB, db, s4)
            em("add.s64 {}, {}, {}", dB, dB, koff(B, kc) >> 4)
            for mt in range(MT):
                em("add.s64 {}, {}, {}", dA, da, s4)
                em("add.s64 {}, {}, {}", dA, dA, koff(A, kc, mt) >> 4)
                d = ", ".join(acc[mt])
                if integer:
                    tail = f"{ptrue}"
                elif e == 1:
                    tail = f"{ptrue}, 1, 1"
                else:
                    tail = f"{ptrue}, 1, 1, {ta}, {tb}"
                em("wgmma.mma_async.sync.aligned.m64n{}{}.{} {{{}}}, {}, {}, {}", nw, kstep, types, d, dA, dB, tail)
        em("wgmma.commit_group.sync.aligned")
        em("wgmma.wait_group.sync.aligned {}", 1 if prefetch_distance(cfg) < cfg.resolved_stages - 1 else 0)

    g, q = em.reg("b32"), em.reg("b32")
    em("shr.u32 {}, {}, 2", g, R["lane"])
    em("and.b32 {}, {}, 3", q, R["lane"])
    w4 = em.reg("b32")
    em("and.b32 {}, {}, 3", w4, R["warp"])
    rbase, cbase = em.reg("b32"), em.reg("b32")
    em("mad.lo.s32 {}, {}, {}, {}", rbase, wgm, gm, R["m0"])
    em("mad.lo.s32 {}, {}, 16, {}", rbase, w4, rbase)
    em("add.s32 {}, {}, {}", rbase, rbase, g)
    em("mad.lo.s32 {}, {}, {}, {}", cbase, wgn, nw, R["n0"])
    em("mad.lo.s32 {}, {}, 2, {}", cbase, q, cbase)
    entries = []
    for mt in range(MT):
        for i in range(0, nw // 2, 2):
            entries.append((acc[mt][i], acc[mt][i + 1], mt * 64 + 8 * ((i >> 1) & 1), 8 * (i >> 2)))
    k.epilogue = lambda: _epilogue(k, rbase, cbase, entries, "s32" if integer else "f32")
    return compute


# ---------------------------------------------------------------------------------- epilogue
def _epilogue(k: _K, rbase: str, cbase: str, entries, acc_type: str) -> None:
    """Store pairs (acc0 at (rbase+dr, cbase+dc), acc1 at column +1) as alpha*acc + beta*C."""
    em, cfg, R = k.em, k.cfg, k.regs
    out = cfg.out_dtype
    osz = OSIZE[out]
    use_beta = cfg.beta != 0
    pair = cfg.n % 2 == 0
    em.comment(f"epilogue: alpha * acc{' + beta * C' if use_beta else ''} -> {out}")
    rowp, colp = {}, {}
    for _, _, dr, dc in entries:
        if dr not in rowp:
            r, p, ptr = em.reg("b32"), em.reg("pred"), em.reg("b64")
            em("add.s32 {}, {}, {}", r, rbase, dr)
            em("setp.lt.s32 {}, {}, {}", p, r, R["M"])
            t = em.reg("b64")
            em("mul.wide.u32 {}, {}, {}", ptr, r, R["N"])
            em("cvt.u64.u32 {}, {}", t, cbase)
            em("add.s64 {}, {}, {}", ptr, ptr, t)
            em("shl.b64 {}, {}, {}", ptr, ptr, log2_exact(osz))
            em("add.s64 {}, {}, {}", ptr, ptr, R["C"])
            rowp[dr] = (p, ptr)
        if dc not in colp:
            c, p0, p1 = em.reg("b32"), em.reg("pred"), em.reg("pred")
            em("add.s32 {}, {}, {}", c, cbase, dc)
            em("setp.lt.s32 {}, {}, {}", p0, c, R["N"])
            em("add.s32 {}, {}, 1", c, c)
            em("setp.lt.s32 {}, {}, {}", p1, c, R["N"])
            colp[dc] = (p0, p1)
    for a0, a1, dr, dc in entries:
        prow, ptr = rowp[dr]
        p0, p1 = colp[dc]
        q0, q1 = em.reg("pred"), em.reg("pred")
        em("and.pred {}, {}, {}", q0, prow, p0)
        em("and.pred {}, {}, {}", q1, prow, p1)
        vals = _alpha_beta(k, [a0, a1], acc_type, ptr, dc * osz, pair, q0, q1)
        _store(k, vals, out, ptr, dc * osz, pair, q0, q1)


#: the epilogue's spelling per accumulator type: register kind, alpha multiply, zeroing, beta multiply-add
_EPILOGUE = {"s32": ("b32", "mul.lo.s32", "mov.u32 {}, 0", "mad.lo.s32"),
             "f32": ("f32", "mul.f32", "mov.f32 {}, 0f00000000", "fma.rn.f32")}


def _alpha_beta(k, accs, acc_type, ptr, off, pair, q0, q1):
    em, cfg, R = k.em, k.cfg, k.regs
    out = cfg.out_dtype
    osz = OSIZE[out]
    addr, addr1 = f"[{ptr}+{off}]", f"[{ptr}+{off + osz}]"
    kind, mul, zero, fma = _EPILOGUE["s32" if acc_type == "s32" else "f32"]
    vals = []
    for a in accs:
        v = em.reg(kind)
        em(mul + " {}, {}, {}", v, a, R["alpha"])
        vals.append(v)
    if cfg.beta != 0:
        c = em.regs(kind, 2)
        for r in c:
            em(zero, r)
        if acc_type == "s32" or out == "f32":
            t = "s32" if acc_type == "s32" else "f32"
            if pair:
                em("@{} ld.global.v2.%s {{{}, {}}}, {}" % t, q0, c[0], c[1], addr)
            else:
                em("@{} ld.global.%s {}, {}" % t, q0, c[0], addr)
                em("@{} ld.global.%s {}, {}" % t, q1, c[1], addr1)
        else:
            h = em.regs("b16", 2)
            for r in h:
                em("mov.b16 {}, 0", r)
            em("@{} ld.global.b16 {}, {}", q0, h[0], addr)
            em("@{} ld.global.b16 {}, {}", q1, h[1], addr1)
            for hh, cc in zip(h, c):
                if out == "bf16":              # bf16 -> f32 is exact: the bits shifted up
                    w = em.reg("b32")
                    em("cvt.u32.u16 {}, {}", w, hh)
                    em("shl.b32 {}, {}, 16", w, w)
                    em("mov.b32 {}, {}", cc, w)
                else:
                    em("cvt.f32.f16 {}, {}", cc, hh)
        for v, cc in zip(vals, c):
            em(fma + " {}, {}, {}, {}", v, cc, R["beta"], v)
    return vals


def _store(k, vals, out, ptr, off, pair, q0, q1):
    em = k.em
    osz = OSIZE[out]
    addr, addr1 = f"[{ptr}+{off}]", f"[{ptr}+{off + osz}]"
    if out in ("f32", "s32"):
        t = "f32" if out == "f32" else "s32"
        if pair:
            em("@{} st.global.v2.{} [{}], {{{}, {}}}", q0, t, addr[1:-1], vals[0], vals[1])
        else:
            em("@{} st.global.{} {}, {}", q0, t, addr, vals[0])
            em("@{} st.global.{} {}, {}", q1, t, addr1, vals[1])
        return
    h = em.regs("b16", 2)
    for hh, v in zip(h, vals):
        em("cvt.rn.{}.f32 {}, {}", out, hh, v)
    if pair:
        w = em.reg("b32")
        em("mov.b32 {}, {{{}, {}}}", w, h[0], h[1])
        em("@{} st.global.b32 {}, {}", q0, addr, w)
    else:
        em("@{} st.global.b16 {}, {}", q0, addr, h[0])
        em("@{} st.global.b16 {}, {}", q1, addr1, h[1])


# ---------------------------------------------------------------------------------- launch spec
A_INIT = {"f32": "randn", "f16": "randn", "bf16": "randn", "s8": "randint(-128,127)", "e4m3": "randn"}


def tolerance(cfg: PtxGemmConfig) -> dict:
    """Stated tolerances: exact for s8; otherwise the output format's rounding plus the f32
    accumulation error (inputs ~ N(0,1), so |D| ~ sqrt(K)). A K-long f32 sum rounds each partial sum
    (|S_k| ~ sqrt(k)) to 2^-24 relative, so its error is a random walk of standard deviation about
    2^-24 K / sqrt(2); 6 x 2^-24 K covers the largest of millions of outputs (measured: a 2048^3 SGEMM's
    largest error is 4.9e-4, 0.69 of this bound; 512^3 1.1e-4, 0.63)."""
    if cfg.dtype == "s8":
        return {"rtol": 0.0, "atol": 0.0}
    s = math.sqrt(cfg.k) * max(1.0, abs(cfg.alpha)) + abs(cfg.beta)
    if cfg.out_dtype == "f32":
        return {"rtol": 1e-5, "atol": 2e-6 * s + 6 * 2.0 ** -24 * cfg.k * max(1.0, abs(cfg.alpha))}
    fmt = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}[cfg.out_dtype]
    return {"rtol": 2 * fmt, "atol": 2 * fmt * s + 2e-6 * s}


def launch_spec(cfg: PtxGemmConfig) -> dict:
    a_shape, b_shape = _shapes(cfg)
    st = cfg.resolved_stages
    ity = "s32" if cfg.dtype == "s8" else "f32"
    alpha = int(cfg.alpha) if ity == "s32" else float(cfg.alpha)
    beta = int(cfg.beta) if ity == "s32" else float(cfg.beta)
    c_init = ("randint(-1000,1000)" if ity == "s32" else "randn") if cfg.beta != 0 else "zeros"
    return {
        "name": cfg.kernel_name,
        "entry": cfg.kernel_name,
        "reference": f"isa.generate.reference:gemm_{cfg.layout}",
        "tolerance": tolerance(cfg),
        "generator": {"op": "gemm", "isa": "ptx", "arch": cfg.arch, "dtype": cfg.dtype, "engine": cfg.engine,
                      "m": cfg.m, "n": cfg.n, "k": cfg.k, "tile": list(cfg.resolved_tile),
                      "warps": list(cfg.resolved_warps), "stages": st, "layout": cfg.layout,
                      "alpha": cfg.alpha, "beta": cfg.beta, "out_dtype": cfg.out_dtype, "staging": cfg.staging,
                      "flops": 2 * cfg.m * cfg.n * cfg.k},
        "launch": {
            "grid": list(cfg.grid()), "block": [cfg.threads, 1, 1],
            "dynamic_shared_bytes": dynamic_shared_bytes(cfg),
            "args": [
                {"buffer": "A", "dtype": cfg.dtype, "shape": list(a_shape), "init": A_INIT[cfg.dtype], "role": "in"},
                {"buffer": "B", "dtype": cfg.dtype, "shape": list(b_shape), "init": A_INIT[cfg.dtype], "role": "in"},
                {"buffer": "C", "dtype": cfg.out_dtype, "shape": [cfg.m, cfg.n], "init": c_init,
                 "role": "inout" if cfg.beta != 0 else "out"},
                {"scalar": "M", "dtype": "u32", "value": cfg.m},
                {"scalar": "N", "dtype": "u32", "value": cfg.n},
                {"scalar": "K", "dtype": "u32", "value": cfg.k},
                {"scalar": "alpha", "dtype": ity, "value": alpha},
                {"scalar": "beta", "dtype": ity, "value": beta},
            ],
        },
    }
