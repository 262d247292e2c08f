"""``kernlens generate gemm|reduce|softmax --isa ascend|ptx ...``: write CATLASS/CUTLASS-style kernels.

    kernlens generate gemm --isa ascend --dtype f16 --m 1024 --n 1024 --k 1024 --stages 2 -o gemm.asm
    kernlens generate reduce --isa ascend --op sum --dtype f16 --rows 4096 --cols 1000
    kernlens generate gemm --isa ptx --arch sm_90a --engine wgmma --dtype f16 --m 4096 --n 4096 --k 4096 \
        --tile 128x256x64 --warps 2x1 --stages 4 -o gemm.ptx       # also writes gemm.launch.json
    kernlens run gemm.ptx --launch gemm.launch.json

``--isa ascend`` is the default (as before); PTX-only options given with it are an error, and so are
Ascend-only ones with ``--isa ptx``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from isa.errors import InputError

#: options only the PTX generators read (dest -> flag)
PTX_GEMM_ONLY = {"arch": "--arch", "engine": "--engine", "tile": "--tile", "warps": "--warps", "layout": "--layout",
                 "alpha": "--alpha", "beta": "--beta", "staging": "--staging"}
ASCEND_GEMM_ONLY = {"layout_a": "--layout-a", "layout_b": "--layout-b", "l1_tile": "--l1-tile",
                    "l0_tile": "--l0-tile", "epilogue": "--epilogue", "scale": "--scale", "offset": "--offset"}
PTX_VEC_ONLY = {"arch": "--arch", "passes": "--passes", "threads": "--threads", "splits": "--splits"}


def _triple(text: str) -> tuple[int, int, int]:
    try:
        parts = tuple(int(p) for p in text.split(","))
    except ValueError:
        raise InputError(f"tile '{text}' must be three integers m,n,k (e.g. 128,256,64)") from None
    if len(parts) != 3:
        raise InputError(f"tile '{text}' must be three integers m,n,k (e.g. 128,256,64)")
    return parts  # type: ignore[return-value]


def register(sub) -> None:
    p = sub.add_parser("generate", help="generate kernels (CATLASS/CUTLASS-style templates)",
                       description="Generate Ascend-like kernels (--isa ascend, the default: GEMM on cube cores, "
                                   "reductions and softmax on vector cores) or PTX kernels (--isa ptx: GEMM on "
                                   "fma/mma.sync/wgmma, reductions and softmax with warp shuffles; -o F.ptx also "
                                   "writes F.launch.json). The header records operation, shapes, layouts and dtypes.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    g = kinds.add_parser("gemm", help="C = A @ B on cube cores")
    g.add_argument("--isa", default="ascend", choices=["ascend", "ptx"])
    g.add_argument("--dtype", default="f16", choices=["f32", "f16", "bf16", "s8", "e4m3"],
                   help="ascend: f16, bf16, s8; ptx: f32 (fma), f16, bf16, s8, e4m3")
    g.add_argument("--arch", choices=["sm_80", "sm_90", "sm_90a"], help="ptx: target (default sm_90a for wgmma, "
                   "else sm_90)")
    g.add_argument("--engine", choices=["fma", "mma", "wgmma"], help="ptx: fma (f32), mma (mma.sync), wgmma "
                   "(sm_90a); default wgmma on sm_90a, fma for f32, else mma")
    g.add_argument("--tile", help="ptx: BMxBNxBK (e.g. 128x128x32)")
    g.add_argument("--warps", help="ptx: WMxWN warps (warpgroups for wgmma)")
    g.add_argument("--layout", choices=["nn", "nt", "tn", "tt"],
                   help="ptx: A then B, n = stored as the math shape (A MxK, B KxN), t = transposed; default nt")
    g.add_argument("--staging", choices=["cp.async", "tma"], help="ptx: global-to-shared staging: cp.async "
                   "(default) or tma (cp.async.bulk 16-byte chunks completing on per-stage mbarriers; sm_90/sm_90a, "
                   "mma and wgmma engines)")
    g.add_argument("--alpha", type=float, help="ptx: D = alpha*A@B + beta*C (default 1)")
    g.add_argument("--beta", type=float, help="ptx: default 0 (C is not read)")
    g.add_argument("--m", type=int, required=True)
    g.add_argument("--n", type=int, required=True)
    g.add_argument("--k", type=int, required=True)
    g.add_argument("--layout-a", choices=["row", "col"], help="ascend (default row)")
    g.add_argument("--layout-b", choices=["row", "col"], help="ascend (default row)")
    g.add_argument("--l1-tile", help="ascend: m,n,k of the L1 tile (default 128,256,256)")
    g.add_argument("--l0-tile", help="ascend: m,n,k of the L0 tile (default 128,256,64)")
    g.add_argument("--stages", type=int, help="ascend: 1 or 2 (default 2); ptx: 1..4 (default 3, fma 2)")
    g.add_argument("--epilogue", choices=["none", "dequant", "requant"], help="ascend (default none)")
    g.add_argument("--scale", type=float, default=None,
                   help="dequant/requant scale (default 2^-7 for dequant, 2^-12 for requant)")
    g.add_argument("--offset", type=int, help="ascend: requant offset (default 0)")
    g.add_argument("--name", help="kernel name")
    g.add_argument("-o", "--output", help="write here instead of standard output")
    g.set_defaults(func=run_gemm)
    for kind, helptext in (("reduce", "row reductions on vector cores"), ("softmax", "row softmax on vector cores")):
        r = kinds.add_parser(kind, help=helptext)
        r.add_argument("--isa", default="ascend", choices=["ascend", "ptx"])
        if kind == "reduce":
            r.add_argument("--op", default="sum", choices=["sum", "max"])
        r.add_argument("--dtype", default="f16", choices=["f16", "f32"])
        r.add_argument("--rows", type=int, required=True)
        r.add_argument("--cols", type=int, required=True)
        r.add_argument("--arch", choices=["sm_80", "sm_90", "sm_90a"], help="ptx: target (default sm_90)")
        r.add_argument("--passes", type=int, help="ptx: 1 or 2 (default 1)")
        r.add_argument("--threads", type=int, help="ptx: threads per CTA (default 256)")
        if kind == "reduce":
            r.add_argument("--splits", type=int, help="ptx, two passes: CTAs per row")
        r.add_argument("--name", help="kernel name")
        r.add_argument("-o", "--output", help="write here instead of standard output")
        r.set_defaults(func=run_reduce if kind == "reduce" else run_softmax)
    e = kinds.add_parser("gemm-epilogue", help="mix kernel: A @ B on cube cores, + bias, activation, f16 or int8 "
                         "on vector cores (GM workspace, cross-core flags)")
    for dim in ("m", "n", "k"):
        e.add_argument(f"--{dim}", type=int, required=True)
    e.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    e.add_argument("--act", default="relu", choices=["none", "relu"])
    e.add_argument("--out", default="s8", choices=["f16", "s8"], help="s8: sat(rint(f16(y * scale)))")
    e.add_argument("--scale", type=float, default=0.0625)
    e.add_argument("--l1-tile", default="128,256,256")
    e.add_argument("--l0-tile", default="128,256,64")
    e.add_argument("--stages", type=int, default=2)
    e.add_argument("--name", help="kernel name")
    e.add_argument("-o", "--output", help="write here instead of standard output")
    e.set_defaults(func=run_gemm_epilogue)
    f = kinds.add_parser("flash-attention", help="mix kernel: O = softmax(Q K^T / sqrt(d)) V, QK^T and PV on cube "
                         "cores, online softmax on vector cores")
    f.add_argument("--sq", type=int, required=True, help="query rows")
    f.add_argument("--sk", type=int, required=True, help="key/value rows")
    f.add_argument("--d", type=int, default=64, choices=[64, 128], help="head dimension")
    f.add_argument("--br", type=int, default=64, choices=[32, 64], help="query rows per cube task")
    f.add_argument("--bc", type=int, default=128, help="keys per step (64, 128, 192, 256)")
    f.add_argument("--name", help="kernel name")
    f.add_argument("-o", "--output", help="write here instead of standard output")
    f.set_defaults(func=run_flash_attention)
    c = kinds.add_parser("conv2d", help="conv2d on cube cores: img2col (Load3Dv2) into L0A, mad, FixPipe")
    for opt, default in (("cin", None), ("h", None), ("w", None), ("cout", None), ("kh", 3), ("kw", 3),
                         ("stride", 1), ("pad", 1), ("tm", 64)):
        c.add_argument(f"--{opt}", type=int, required=default is None, default=default)
    c.add_argument("--name", help="kernel name")
    c.add_argument("-o", "--output", help="write here instead of standard output")
    c.set_defaults(func=run_conv2d)


def _write(text: str, path: str | None) -> int:
    if path:
        try:
            with open(path, "w") as fh:
                fh.write(text)
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
    return 0


def _reject(args, options: dict, isa: str) -> None:
    given = [flag for dest, flag in options.items() if getattr(args, dest, None) is not None]
    if given:
        raise InputError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to --isa {isa}")


def _dims(text: str | None, n: int, what: str):
    if text is None:
        return None
    try:
        parts = tuple(int(p) for p in text.lower().replace(",", "x").split("x"))
    except ValueError:
        parts = ()
    if len(parts) != n or min(parts) < 1:
        raise InputError(f"{what} '{text}' must be {n} positive integers joined by x "
                         f"(e.g. {'128x128x32' if n == 3 else '2x2'})")
    return parts


def _write_ptx(text: str, spec: dict, path: str | None) -> int:
    _write(text, path)
    if path:
        out = Path(path)
        launch = out.with_name(out.name[:-4] if out.name.endswith(".ptx") else out.name)
        launch = launch.with_name(launch.name + ".launch.json")
        _write(json.dumps(spec, indent=1) + "\n", str(launch))
    return 0


def ptx_gemm_config(args):
    from .ptx_gemm import PtxGemmConfig

    arch = args.arch or ("sm_90a" if args.engine == "wgmma" else "sm_90")
    engine = args.engine or ("fma" if args.dtype == "f32" else "wgmma" if arch == "sm_90a" else "mma")
    return PtxGemmConfig(arch=arch, dtype=args.dtype, engine=engine, m=args.m, n=args.n, k=args.k,
                         tile=_dims(args.tile, 3, "--tile"), warps=_dims(args.warps, 2, "--warps"),
                         stages=args.stages, layout=args.layout or "nt",
                         alpha=1.0 if args.alpha is None else args.alpha,
                         beta=0.0 if args.beta is None else args.beta, name=args.name,
                         staging=args.staging or "cp.async")


def run_gemm(args) -> int:
    if args.isa == "ptx":
        from .ptx_gemm import gemm_ptx, launch_spec

        _reject(args, ASCEND_GEMM_ONLY, "ptx")
        cfg = ptx_gemm_config(args)
        return _write_ptx(gemm_ptx(cfg), launch_spec(cfg), args.output)
    from .gemm import GemmConfig, gemm_kernel

    _reject(args, PTX_GEMM_ONLY, "ascend")
    if args.dtype not in ("f16", "bf16", "s8"):
        raise InputError(f"--dtype {args.dtype}: the Ascend-like GEMM supports f16, bf16, s8",
                         expected=["f16", "bf16", "s8"])
    stages = 2 if args.stages is None else args.stages
    if stages not in (1, 2):
        raise InputError(f"--stages {stages}: the Ascend-like GEMM supports 1 or 2", expected=["1", "2"])
    epilogue = args.epilogue or "none"
    scale = args.scale if args.scale is not None else (2.0 ** -12 if epilogue == "requant" else 2.0 ** -7)
    cfg = GemmConfig(dtype=args.dtype, m=args.m, n=args.n, k=args.k, layout_a=args.layout_a or "row",
                     layout_b=args.layout_b or "row", l1_tile=_triple(args.l1_tile or "128,256,256"),
                     l0_tile=_triple(args.l0_tile or "128,256,64"),
                     stages=stages, epilogue=epilogue, scale=scale, offset=args.offset or 0)
    return _write(gemm_kernel(cfg, args.name), args.output)


def _ptx_vec(args, kind):
    from . import ptx_vector as V

    arch = args.arch or "sm_90"
    common = dict(arch=arch, dtype=args.dtype, rows=args.rows, cols=args.cols, passes=args.passes or 1,
                  threads=args.threads or 256, name=args.name)
    if kind == "reduce":
        cfg = V.PtxReduceConfig(op=args.op, splits=args.splits, **common)
        return _write_ptx(V.reduce_ptx(cfg), V.reduce_launch(cfg), args.output)
    cfg = V.PtxSoftmaxConfig(**common)
    return _write_ptx(V.softmax_ptx(cfg), V.softmax_launch(cfg), args.output)


def run_reduce(args) -> int:
    if args.isa == "ptx":
        return _ptx_vec(args, "reduce")
    from .vector import ReduceConfig, reduce_kernel

    _reject(args, PTX_VEC_ONLY, "ascend")
    return _write(reduce_kernel(ReduceConfig(args.op, args.dtype, args.rows, args.cols), args.name), args.output)


def run_gemm_epilogue(args) -> int:
    from .fused import EpilogueConfig, gemm_epilogue_kernel

    cfg = EpilogueConfig(m=args.m, n=args.n, k=args.k, dtype=args.dtype, l1_tile=_triple(args.l1_tile),
                         l0_tile=_triple(args.l0_tile), stages=args.stages, act=args.act, out=args.out,
                         scale=args.scale)
    return _write(gemm_epilogue_kernel(cfg, args.name), args.output)


def run_conv2d(args) -> int:
    from .conv import ConvConfig, conv2d_kernel

    cfg = ConvConfig(cin=args.cin, h=args.h, w=args.w, cout=args.cout, kh=args.kh, kw=args.kw, stride=args.stride,
                     pad=args.pad, tm=args.tm)
    return _write(conv2d_kernel(cfg, args.name), args.output)


def run_flash_attention(args) -> int:
    from .fused import AttentionConfig, flash_attention_kernel

    cfg = AttentionConfig(sq=args.sq, sk=args.sk, d=args.d, br=args.br, bc=args.bc)
    return _write(flash_attention_kernel(cfg, args.name), args.output)


def run_softmax(args) -> int:
    if args.isa == "ptx":
        return _ptx_vec(args, "softmax")
    from .vector import SoftmaxConfig, softmax_kernel

    _reject(args, PTX_VEC_ONLY, "ascend")
    return _write(softmax_kernel(SoftmaxConfig(args.dtype, args.rows, args.cols), args.name), args.output)
