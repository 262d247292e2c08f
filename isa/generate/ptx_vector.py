"""PTX row reductions and row softmax (warp shuffles, one and two passes).

    kernlens generate reduce --isa ptx --arch sm_90 --op sum --dtype f16 --rows 4096 --cols 1000 --passes 2
    kernlens generate softmax --isa ptx --arch sm_80 --dtype f32 --rows 512 --cols 3000 --passes 1

**reduce** ``out[r] = sum|max_c x[r, c]`` (f32 accumulation, f32 out). One pass: one CTA per row;
threads stride over the columns, ``shfl.sync.bfly`` folds each warp, warp partials meet in shared
memory and warp 0 folds them. Two passes (one launch): ``splits`` CTAs per row each write a partial
to a workspace; the last CTA to arrive (an ``atom.global.add`` ticket after a ``fence.acq_rel.gpu``)
folds the partials in index order, so the result does not depend on CTA timing, and re-arms the
ticket for the next launch.

**softmax** ``y[r, :] = exp(x - max) / sum exp(x - max)``. One pass: the online form (running max
and rescaled sum per thread, merged pairwise across lanes and warps), then the write pass; two
passes: a max pass and a sum pass, then the write pass. ``ex2.approx.ftz.f32`` of ``(x - max) *
log2(e)``; the output in the input type.
"""

from __future__ import annotations

from dataclasses import dataclass

from isa.errors import InputError

from .ptx_emit import Emitter, header

ARCHS = ("sm_80", "sm_90", "sm_90a")
DTYPES = ("f32", "f16")
LOG2E = 0x3FB8AA3B          # log2(e) as f32 bits
NEG_INF = 0xFF800000


@dataclass(frozen=True)
class PtxReduceConfig:
    arch: str
    op: str                 # sum | max
    dtype: str
    rows: int
    cols: int
    passes: int = 1
    threads: int = 256
    splits: int | None = None
    name: str | None = None

    @property
    def resolved_splits(self) -> int:
        if self.passes == 1:
            return 1
        return self.splits or max(2, min(32, -(-self.cols // (self.threads * 8))))

    @property
    def kernel_name(self) -> str:
        return self.name or f"reduce_{self.op}_{self.dtype}_p{self.passes}_t{self.threads}_{self.arch}"


@dataclass(frozen=True)
class PtxSoftmaxConfig:
    arch: str
    dtype: str
    rows: int
    cols: int
    passes: int = 1
    threads: int = 256
    name: str | None = None

    @property
    def kernel_name(self) -> str:
        return self.name or f"softmax_{self.dtype}_p{self.passes}_t{self.threads}_{self.arch}"


def _validate(cfg, op=None):
    if cfg.arch not in ARCHS:
        raise InputError(f"unknown arch {cfg.arch!r}", expected=list(ARCHS))
    if cfg.dtype not in DTYPES:
        raise InputError(f"--dtype {cfg.dtype}: PTX reduce/softmax support f32 and f16", expected=list(DTYPES))
    if op is not None and op not in ("sum", "max"):
        raise InputError(f"--op {op}: supported sum, max", expected=["sum", "max"])
    if cfg.passes not in (1, 2):
        raise InputError(f"--passes {cfg.passes}: supported 1 or 2", expected=["1", "2"])
    if cfg.threads % 32 or not 32 <= cfg.threads <= 1024:
        raise InputError(f"--threads {cfg.threads}: a multiple of 32 in 32..1024")
    if cfg.rows < 1 or cfg.cols < 1:
        raise InputError("--rows and --cols must be positive")


def _f(bits: int) -> str:
    return f"0f{bits & 0xFFFFFFFF:08X}"


class _Vec:
    """Shared pieces: parameters, strided column loops, warp and CTA folds."""

    def __init__(self, cfg, params: list[tuple[str, str]]):
        self.cfg = cfg
        self.em = Emitter()
        self.R = {}
        em, R, name = self.em, self.R, cfg.kernel_name
        for p, t in params:
            R[p] = em.reg("b64" if t == "u64" else "b32")
            em("ld.param.{} {}, [{}_param_{}]", t, R[p], name, p)
            if t == "u64":
                em("cvta.to.global.u64 {}, {}", R[p], R[p])
        R["tid"], R["lane"], R["warp"] = em.reg("b32"), em.reg("b32"), em.reg("b32")
        em("mov.u32 {}, %tid.x", R["tid"])
        em("and.b32 {}, {}, 31", R["lane"], R["tid"])
        em("shr.u32 {}, {}, 5", R["warp"], R["tid"])
        R["row"] = em.reg("b32")
        em("mov.u32 {}, %ctaid.y", R["row"])
        R["red"] = em.reg("b32")
        em("mov.u32 {}, red", R["red"])
        self.params = params

    def row_ptr(self, base: str, esize: int) -> str:
        em, R = self.em, self.R
        p = em.reg("b64")
        em("mul.wide.u32 {}, {}, {}", p, R["row"], R["cols"])
        em("shl.b64 {}, {}, {}", p, p, esize.bit_length() - 1)
        em("add.s64 {}, {}, {}", p, p, base)
        return p

    def load(self, rowp: str, c: str, dtype: str) -> str:
        em = self.em
        off = em.reg("b64")
        v = em.reg("f32")
        if dtype == "f32":
            em("mul.wide.u32 {}, {}, 4", off, c)
            em("add.s64 {}, {}, {}", off, off, rowp)
            em("ld.global.f32 {}, [{}]", v, off)
        else:
            h = em.reg("b16")
            em("mul.wide.u32 {}, {}, 2", off, c)
            em("add.s64 {}, {}, {}", off, off, rowp)
            em("ld.global.b16 {}, [{}]", h, off)
            em("cvt.f32.f16 {}, {}", v, h)
        return v

    def loop(self, begin: str, end: str, body) -> None:
        """for (c = begin + tid; c < end; c += threads) body(c)"""
        em, R = self.em, self.R
        c, p = em.reg("b32"), em.reg("pred")
        top, done = em.label("COL"), em.label("COLEND")
        em("add.s32 {}, {}, {}", c, begin, R["tid"])
        em("setp.ge.u32 {}, {}, {}", p, c, end)
        em("@{} bra {}", p, done)
        em.place(top)
        body(c)
        em("add.s32 {}, {}, {}", c, c, self.cfg.threads)
        em("setp.lt.u32 {}, {}, {}", p, c, end)
        em("@{} bra {}", p, top)
        em.place(done)

    def warp_fold(self, vals: list[str], combine) -> None:
        em = self.em
        for off in (16, 8, 4, 2, 1):
            other = []
            for v in vals:
                t = em.reg("f32")
                em("shfl.sync.bfly.b32 {}, {}, {}, 31, -1", t, v, off)
                other.append(t)
            combine(vals, other)

    def cta_fold(self, vals: list[str], combine, identity: list[int]) -> None:
        """Fold ``vals`` over the CTA; the result ends in ``vals`` of every thread."""
        em, R = self.em, self.R
        nw = self.cfg.threads // 32
        n = len(vals)
        self.warp_fold(vals, combine)
        p0 = em.reg("pred")
        em("setp.eq.u32 {}, {}, 0", p0, R["lane"])
        a = em.reg("b32")
        em("mad.lo.s32 {}, {}, {}, {}", a, R["warp"], 4 * n, R["red"])
        for i, v in enumerate(vals):
            em("@{} st.shared.f32 [{}+{}], {}", p0, a, 4 * i, v)
        em("bar.sync 0")
        pin = em.reg("pred")
        em("setp.lt.u32 {}, {}, {}", pin, R["lane"], nw)
        b = em.reg("b32")
        em("mad.lo.s32 {}, {}, {}, {}", b, R["lane"], 4 * n, R["red"])
        for i, v in enumerate(vals):
            em("mov.f32 {}, {}", v, _f(identity[i]))
            em("@{} ld.shared.f32 {}, [{}+{}]", pin, v, b, 4 * i)
        self.warp_fold(vals, combine)      # every warp folds the same partials: all threads agree
        em("bar.sync 0")

    def finish(self, comment: list[str], extra_params: str = "") -> str:
        cfg = self.cfg
        name = cfg.kernel_name
        params = [f"\t.param .{t} {name}_param_{p}" for p, t in self.params]
        text = header(cfg.arch, comment)
        text += f".visible .entry {name}(\n" + ",\n".join(params) + "\n)\n"
        text += f".maxntid {cfg.threads}, 1, 1\n{{\n"
        text += "\n".join(self.em.declarations()) + "\n"
        text += f"\t.shared .align 16 .b8 red[{cfg.threads // 32 * 8 + 16}];\n\n"
        text += "\n".join(self.em.lines) + "\n\tret;\n}\n"
        return text


def _combine(op):
    def f(em):
        def c(vals, other):
            for v, o in zip(vals, other):
                em("{}.f32 {}, {}, {}", "add" if op == "sum" else "max", v, v, o)
        return c
    return f


# ---------------------------------------------------------------------------------- reduce
def reduce_ptx(cfg: PtxReduceConfig) -> str:
    _validate(cfg, cfg.op)
    two = cfg.passes == 2
    params = [("x", "u64"), ("out", "u64")] + ([("ws", "u64"), ("cnt", "u64")] if two else []) + \
             [("rows", "u32"), ("cols", "u32")]
    k = _Vec(cfg, params)
    em, R = k.em, k.R
    es = 4 if cfg.dtype == "f32" else 2
    ident = 0 if cfg.op == "sum" else NEG_INF
    combine = _combine(cfg.op)(em)
    acc = em.reg("f32")
    em("mov.f32 {}, {}", acc, _f(ident))
    begin, end = em.reg("b32"), em.reg("b32")
    splits = cfg.resolved_splits
    if two:
        chunk = em.reg("b32")
        em("add.s32 {}, {}, {}", chunk, R["cols"], splits - 1)
        em("div.u32 {}, {}, {}", chunk, chunk, splits)
        cx = em.reg("b32")
        em("mov.u32 {}, %ctaid.x", cx)
        em("mul.lo.s32 {}, {}, {}", begin, cx, chunk)
        em("add.s32 {}, {}, {}", end, begin, chunk)
        em("min.u32 {}, {}, {}", end, end, R["cols"])
    else:
        em("mov.u32 {}, 0", begin)
        em("mov.u32 {}, {}", end, R["cols"])
    rowp = k.row_ptr(R["x"], es)

    def body(c):
        v = k.load(rowp, c, cfg.dtype)
        combine([acc], [v])
    k.loop(begin, end, body)
    k.cta_fold([acc], combine, [ident])
    p0 = em.reg("pred")
    em("setp.eq.u32 {}, {}, 0", p0, R["tid"])
    done = em.label("DONE")
    pn = em.reg("pred")
    em("not.pred {}, {}", pn, p0)
    em("@{} bra {}", pn, done)
    o = em.reg("b64")
    em("mul.wide.u32 {}, {}, 4", o, R["row"])
    em("add.s64 {}, {}, {}", o, o, R["out"])
    if not two:
        em("st.global.f32 [{}], {}", o, acc)
    else:
        # partial -> ws[row * splits + ctaid.x]; ticket; the last CTA folds the partials in order
        wsr = em.reg("b64")
        em("mul.wide.u32 {}, {}, {}", wsr, R["row"], 4 * splits)
        em("add.s64 {}, {}, {}", wsr, wsr, R["ws"])
        cx = em.reg("b32")
        em("mov.u32 {}, %ctaid.x", cx)
        w1 = em.reg("b64")
        em("mul.wide.u32 {}, {}, 4", w1, cx)
        em("add.s64 {}, {}, {}", w1, w1, wsr)
        em("st.global.f32 [{}], {}", w1, acc)
        em("fence.acq_rel.gpu")
        ca = em.reg("b64")
        em("mul.wide.u32 {}, {}, 4", ca, R["row"])
        em("add.s64 {}, {}, {}", ca, ca, R["cnt"])
        t = em.reg("b32")
        em("atom.global.add.u32 {}, [{}], 1", t, ca)
        pl = em.reg("pred")
        em("setp.ne.u32 {}, {}, {}", pl, t, splits - 1)
        em("@{} bra {}", pl, done)
        em("fence.acq_rel.gpu")
        tot = em.reg("f32")
        em("mov.f32 {}, {}", tot, _f(ident))
        for s in range(splits):
            v = em.reg("f32")
            em("ld.global.cg.f32 {}, [{}+{}]", v, wsr, 4 * s)
            combine([tot], [v])
        em("st.global.f32 [{}], {}", o, tot)
        em("st.global.u32 [{}], 0", ca)
    em.place(done)
    # fix the out pointer scale (row * 4 bytes)
    text = k.finish([f"out[r] = {cfg.op}_c x[r, c]: {cfg.dtype} in, f32 accumulation and out, "
                     f"{cfg.passes} pass(es){f', {splits} CTAs per row' if two else ''}",
                     f"grid = ({splits}, rows, 1), block = ({cfg.threads}, 1, 1); generated for "
                     f"rows={cfg.rows} cols={cfg.cols}"])
    return text


def reduce_launch(cfg: PtxReduceConfig) -> dict:
    splits = cfg.resolved_splits
    args = [{"buffer": "x", "dtype": cfg.dtype, "shape": [cfg.rows, cfg.cols], "init": "randn", "role": "in"},
            {"buffer": "out", "dtype": "f32", "shape": [cfg.rows], "init": "zeros", "role": "out"}]
    if cfg.passes == 2:
        args += [{"buffer": "ws", "dtype": "f32", "shape": [cfg.rows * splits], "init": "zeros", "role": "inout"},
                 {"buffer": "cnt", "dtype": "u32", "shape": [cfg.rows], "init": "zeros", "role": "inout"}]
    args += [{"scalar": "rows", "dtype": "u32", "value": cfg.rows},
             {"scalar": "cols", "dtype": "u32", "value": cfg.cols}]
    import math
    tol = {"rtol": 1e-5, "atol": 1e-5 * math.sqrt(cfg.cols)} if cfg.op == "sum" else {"rtol": 0.0, "atol": 0.0}
    return {"name": cfg.kernel_name, "entry": cfg.kernel_name,
            "reference": f"isa.generate.reference:reduce_{cfg.op}", "tolerance": tol,
            "generator": {"op": "reduce", "isa": "ptx", "arch": cfg.arch, "reduce": cfg.op, "dtype": cfg.dtype,
                          "rows": cfg.rows, "cols": cfg.cols, "passes": cfg.passes, "threads": cfg.threads,
                          "splits": splits},
            "launch": {"grid": [splits, cfg.rows, 1], "block": [cfg.threads, 1, 1], "dynamic_shared_bytes": 0,
                       "args": args}}


# ---------------------------------------------------------------------------------- softmax
def softmax_ptx(cfg: PtxSoftmaxConfig) -> str:
    _validate(cfg)
    k = _Vec(cfg, [("x", "u64"), ("y", "u64"), ("rows", "u32"), ("cols", "u32")])
    em, R = k.em, k.R
    es = 4 if cfg.dtype == "f32" else 2
    xp = k.row_ptr(R["x"], es)
    yp = k.row_ptr(R["y"], es)
    zero = em.reg("b32")
    em("mov.u32 {}, 0", zero)
    log2e = em.reg("f32")
    em("mov.f32 {}, {}", log2e, _f(LOG2E))

    def exp_of(diff):
        t = em.reg("f32")
        em("mul.f32 {}, {}, {}", t, diff, log2e)
        em("ex2.approx.ftz.f32 {}, {}", t, t)
        return t

    m, s = em.reg("f32"), em.reg("f32")
    em("mov.f32 {}, {}", m, _f(NEG_INF))
    em("mov.f32 {}, 0f00000000", s)
    if cfg.passes == 1:
        def merge(vals, other):               # (m, s) (+) (m2, s2)
            mv, sv = vals
            m2, s2 = other
            mn = em.reg("f32")
            em("max.f32 {}, {}, {}", mn, mv, m2)
            d1, d2, mz = em.reg("f32"), em.reg("f32"), em.reg("f32")
            pinf = em.reg("pred")               # both empty (-inf): subtract 0, not -inf (no NaN)
            em("setp.eq.f32 {}, {}, {}", pinf, mn, _f(NEG_INF))
            em("selp.f32 {}, 0f00000000, {}, {}", mz, mn, pinf)
            em("sub.f32 {}, {}, {}", d1, mv, mz)
            em("sub.f32 {}, {}, {}", d2, m2, mz)
            e1, e2 = exp_of(d1), exp_of(d2)
            em("mul.f32 {}, {}, {}", sv, sv, e1)
            em("fma.rn.f32 {}, {}, {}, {}", sv, s2, e2, sv)
            em("mov.f32 {}, {}", mv, mn)

        def body(c):
            v = k.load(xp, c, cfg.dtype)
            one = em.reg("f32")
            em("mov.f32 {}, 0f3F800000", one)
            merge([m, s], [v, one])
        k.loop(zero, R["cols"], body)
        k.cta_fold([m, s], merge, [NEG_INF, 0])
    else:
        cmax = _combine("max")(em)
        csum = _combine("sum")(em)
        k.loop(zero, R["cols"], lambda c: cmax([m], [k.load(xp, c, cfg.dtype)]))
        k.cta_fold([m], cmax, [NEG_INF])

        def body(c):
            v = k.load(xp, c, cfg.dtype)
            d = em.reg("f32")
            em("sub.f32 {}, {}, {}", d, v, m)
            csum([s], [exp_of(d)])
        k.loop(zero, R["cols"], body)
        k.cta_fold([s], csum, [0])
    inv = em.reg("f32")
    em("rcp.rn.f32 {}, {}", inv, s)

    def write(c):
        v = k.load(xp, c, cfg.dtype)
        d = em.reg("f32")
        em("sub.f32 {}, {}, {}", d, v, m)
        y = exp_of(d)
        em("mul.f32 {}, {}, {}", y, y, inv)
        off = em.reg("b64")
        em("mul.wide.u32 {}, {}, {}", off, c, es)
        em("add.s64 {}, {}, {}", off, off, yp)
        if cfg.dtype == "f32":
            em("st.global.f32 [{}], {}", off, y)
        else:
            h = em.reg("b16")
            em("cvt.rn.f16.f32 {}, {}", h, y)
            em("st.global.b16 [{}], {}", off, h)
    k.loop(zero, R["cols"], write)
    return k.finish([f"y = softmax(x) over each row: {cfg.dtype} in and out, f32 math, "
                     f"{'online (one pass for max and sum)' if cfg.passes == 1 else 'two passes (max, then sum)'}"
                     f" + a write pass; ex2.approx.ftz",
                     f"grid = (1, rows, 1), block = ({cfg.threads}, 1, 1); generated for rows={cfg.rows} "
                     f"cols={cfg.cols}"])


def softmax_launch(cfg: PtxSoftmaxConfig) -> dict:
    tol = {"rtol": 1e-5, "atol": 1e-6} if cfg.dtype == "f32" else {"rtol": 2e-3, "atol": 1e-5}
    return {"name": cfg.kernel_name, "entry": cfg.kernel_name, "reference": "isa.generate.reference:softmax",
            "tolerance": tol,
            "generator": {"op": "softmax", "isa": "ptx", "arch": cfg.arch, "dtype": cfg.dtype, "rows": cfg.rows,
                          "cols": cfg.cols, "passes": cfg.passes, "threads": cfg.threads},
            "launch": {"grid": [1, cfg.rows, 1], "block": [cfg.threads, 1, 1], "dynamic_shared_bytes": 0,
                       "args": [{"buffer": "x", "dtype": cfg.dtype, "shape": [cfg.rows, cfg.cols], "init": "randn(3)",
                                 "role": "in"},
                                {"buffer": "y", "dtype": cfg.dtype, "shape": [cfg.rows, cfg.cols], "init": "zeros",
                                 "role": "out"},
                                {"scalar": "rows", "dtype": "u32", "value": cfg.rows},
                                {"scalar": "cols", "dtype": "u32", "value": cfg.cols}]}}
