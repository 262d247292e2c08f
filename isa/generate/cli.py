"""``kernlens generate gemm|reduce|softmax --isa ascend ...``: write CATLASS-style kernels.

    kernlens generate gemm --isa ascend --dtype f16 --m 1024 --n 1024 --k 1024 --stages 2 -o gemm.asm
    kernlens generate reduce --isa ascend --op sum --dtype f16 --rows 4096 --cols 1000
"""

from __future__ import annotations

import sys

from isa.errors import InputError


def _triple(text: str) -> tuple[int, int, int]:
    try:
        parts = tuple(int(p) for p in text.split(","))
    except ValueError:
        raise InputError(f"tile '{text}' must be three integers m,n,k (e.g. 128,256,64)") from None
    if len(parts) != 3:
        raise InputError(f"tile '{text}' must be three integers m,n,k (e.g. 128,256,64)")
    return parts  # type: ignore[return-value]


def register(sub) -> None:
    p = sub.add_parser("generate", help="generate kernels (CATLASS-style templates)",
                       description="Generate Ascend-like kernels: GEMM on cube cores, reductions and softmax on "
                                   "vector cores. The header records operation, shapes, layouts and dtypes.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    g = kinds.add_parser("gemm", help="C = A @ B on cube cores")
    g.add_argument("--isa", default="ascend", choices=["ascend"])
    g.add_argument("--dtype", default="f16", choices=["f16", "bf16", "s8"])
    g.add_argument("--m", type=int, required=True)
    g.add_argument("--n", type=int, required=True)
    g.add_argument("--k", type=int, required=True)
    g.add_argument("--layout-a", default="row", choices=["row", "col"])
    g.add_argument("--layout-b", default="row", choices=["row", "col"])
    g.add_argument("--l1-tile", default="128,256,256", help="m,n,k of the L1 tile (default 128,256,256)")
    g.add_argument("--l0-tile", default="128,256,64", help="m,n,k of the L0 tile (default 128,256,64)")
    g.add_argument("--stages", type=int, default=2, choices=[1, 2])
    g.add_argument("--epilogue", default="none", choices=["none", "dequant", "requant"])
    g.add_argument("--scale", type=float, default=None,
                   help="dequant/requant scale (default 2^-7 for dequant, 2^-12 for requant)")
    g.add_argument("--offset", type=int, default=0, help="requant offset")
    g.add_argument("--name", help="kernel name")
    g.add_argument("-o", "--output", help="write here instead of standard output")
    g.set_defaults(func=run_gemm)
    for kind, helptext in (("reduce", "row reductions on vector cores"), ("softmax", "row softmax on vector cores")):
        r = kinds.add_parser(kind, help=helptext)
        r.add_argument("--isa", default="ascend", choices=["ascend"])
        if kind == "reduce":
            r.add_argument("--op", default="sum", choices=["sum", "max"])
        r.add_argument("--dtype", default="f16", choices=["f16", "f32"])
        r.add_argument("--rows", type=int, required=True)
        r.add_argument("--cols", type=int, required=True)
        r.add_argument("--name", help="kernel name")
        r.add_argument("-o", "--output", help="write here instead of standard output")
        r.set_defaults(func=run_reduce if kind == "reduce" else run_softmax)


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


def run_gemm(args) -> int:
    from .gemm import GemmConfig, gemm_kernel

    scale = args.scale if args.scale is not None else (2.0 ** -12 if args.epilogue == "requant" else 2.0 ** -7)
    cfg = GemmConfig(dtype=args.dtype, m=args.m, n=args.n, k=args.k, layout_a=args.layout_a,
                     layout_b=args.layout_b, l1_tile=_triple(args.l1_tile), l0_tile=_triple(args.l0_tile),
                     stages=args.stages, epilogue=args.epilogue, scale=scale, offset=args.offset)
    return _write(gemm_kernel(cfg, args.name), args.output)


def run_reduce(args) -> int:
    from .vector import ReduceConfig, reduce_kernel

    return _write(reduce_kernel(ReduceConfig(args.op, args.dtype, args.rows, args.cols), args.name), args.output)


def run_softmax(args) -> int:
    from .vector import SoftmaxConfig, softmax_kernel

    return _write(softmax_kernel(SoftmaxConfig(args.dtype, args.rows, args.cols), args.name), args.output)
