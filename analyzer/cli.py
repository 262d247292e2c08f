"""``validate-kernel`` (and ``kernlens analyze``): what a kernel really executes, checked in CI.

    validate-kernel FILE... [--kernel NAME] [--expect EXPR]... [--forbid CLASS]... [--param K=V]...
                    [--grid X,Y,Z --block X,Y,Z] [--format text|json|sarif] [--cfg out.dot] [--sass]

Exit status: 0 when every expectation holds, 1 when one fails, 2 on bad input or usage.
Example::

    validate-kernel build/gemm.sm_90.ptx --expect 'TENSOR_CORE>=1' --forbid FP32_FMA --param K=4096
    validate-kernel build/gemm.sm_90a.ptx --sass --expect 'sass:HGMMA>=1' --expect 'sass:LDS.128>=1'
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from isa.errors import InputError, Span

from .dataflow import Launch
from .dynamic import ASSUMED_TRIPS
from .params import parse_assignments, parse_dims, resolve
from .patterns import Expectation, forbid, parse_expectation


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX (.ptx) or Ascend-like assembly files")
    p.add_argument("--kernel", action="append", default=[], metavar="NAME",
                   help="only this kernel (repeatable; default: every kernel)")
    p.add_argument("--expect", action="append", default=[], metavar="EXPR",
                   help="NAME OP N, e.g. 'TENSOR_CORE>=1' or 'ld.shared.v4>=1' (OP: >= <= == > <)")
    p.add_argument("--forbid", action="append", default=[], metavar="CLASS",
                   help="a class or opcode pattern that must not occur (NAME==0)")
    p.add_argument("--param", action="append", default=[], metavar="K=V",
                   help="kernel parameter value for trip counts (PTX name, index or source name)")
    p.add_argument("--grid", metavar="X,Y,Z", help="launch grid, for whole-launch totals")
    p.add_argument("--block", metavar="X,Y,Z", help="launch block, for whole-launch totals")
    p.add_argument("--machine", default="h200", help="machine model for the roofline (sim/machines/NAME.toml; PTX only, Ascend "
                        "reports have no roofline)")
    p.add_argument("--assume-iterations", "--assume-trips", dest="assume_trips", type=int, default=ASSUMED_TRIPS,
                   metavar="N", help="iterations assumed for loops whose count cannot be derived (default "
                   f"{ASSUMED_TRIPS}); every figure that rests on it is marked as an estimate")
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument("--cfg", metavar="OUT.dot", help="write the control-flow graphs as Graphviz DOT")
    p.add_argument("--precision-mode", metavar="MODE",
                   help="check floating-point instructions against a precision mode (sim.numerics.precision)")
    p.add_argument("--origin-dtype", metavar="DTYPE",
                   help="the model's original dtype (f16, bf16, f32) that the origin modes "
                        "(must_keep_origin_dtype, origin) must keep; a compiled kernel does not record it")
    p.add_argument("--lenient", action="store_true", help="accept unknown opcodes (reported as OTHER)")
    p.add_argument("--sass", action="store_true",
                   help="also compile with ptxas and read the SASS (registers, spills, SASS opcodes and classes; "
                        "expectations 'sass:NAME'); a note when ptxas/nvdisasm are not installed")
    p.add_argument("--plot", metavar="OUT.svg", help="draw the PTX kernels on the machine's roofline (SVG; static "
                   "intensity, the point at the rate the ceilings allow, marked 'estimated')")
    p.add_argument("-o", "--output", metavar="PATH", help="write the report here instead of stdout")


def run(args: argparse.Namespace) -> int:
    # The run builds IR trees and reports that live until the output is written: the cyclic
    # collector, left on, would scan them over and over (a fifth of the run time on the corpus).
    was = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if was:
            gc.enable()


def _run(args: argparse.Namespace) -> int:
    import isa

    from .render import render_json, render_sarif, render_text
    from .report import analyze_function

    expectations: list[Expectation] = [parse_expectation(e) for e in args.expect]
    expectations += [forbid(f) for f in args.forbid]
    given = parse_assignments(args.param)
    grid, block = parse_dims(args.grid, "--grid"), parse_dims(args.block, "--block")
    if (grid is None) != (block is None):
        raise InputError("--grid and --block go together (both or neither)")
    if args.assume_trips < 0:
        raise InputError("--assume-iterations must be >= 0")
    launch = Launch(grid, block)
    reports = []
    used_params: set[str] = set()
    want_sass = args.sass or any(e.name.startswith("sass:") for e in expectations)
    modules = [isa.load(Path(f), lenient=args.lenient, kernels=args.kernel or None) for f in args.files]
    if want_sass:
        import isa.sass

        ptx = [m for m in modules if m.isa == "ptx"]
        if ptx and isa.sass.available():
            isa.sass.listings(ptx)           # one batch of ptxas/nvdisasm calls for all the files
    for module in modules:
        fns = module.kernels
        if args.kernel:
            fns = [fn for fn in module.functions if fn.name in args.kernel and fn.body is not None]
        for fn in fns:
            params = resolve(module, fn, given, strict=False)
            used_params.update(k for k in given if _maps(module, fn, k))
            report = analyze_function(module, fn, params=params, launch=launch,
                                      machine=args.machine, assumed_trips=args.assume_trips, sass=want_sass)
            report.check(expectations)
            reports.append(report)
    if args.kernel:
        found = {r.name for r in reports}
        missing = [k for k in args.kernel if k not in found]
        if missing:
            raise InputError(f"no kernel named {', '.join(repr(m) for m in missing)} in {', '.join(args.files)}")
    if not reports:
        raise InputError(f"no kernels in {', '.join(args.files)}", Span(args.files[0]) if len(args.files) == 1 else None)
    unknown = [k for k in given if k not in used_params]
    if unknown:
        raise InputError(f"--param {unknown[0]}: no analysed kernel has a parameter of that name")
    precision = None
    if args.precision_mode is not None:  # sim.numerics (ml_dtypes: ~0.5 s to import) only when asked
        from . import precision as precision_mod

        precision = precision_mod.check(reports, args.precision_mode, origin_dtype=args.origin_dtype)
    elif args.origin_dtype is not None:
        raise InputError("--origin-dtype goes with --precision-mode (must_keep_origin_dtype or origin)")
    if args.cfg:
        dot = "".join(r.cfg.to_dot(r.estimate.counts, f"{r.name}") for r in reports)
        try:
            Path(args.cfg).write_text(dot)
        except OSError as exc:
            raise InputError(f"cannot write {args.cfg}: {exc.strerror}") from None
    if args.plot:
        _plot(args, reports)
    if args.format == "json":
        text = render_json(reports, precision=precision)
    elif args.format == "sarif":
        text = render_sarif(reports, precision=precision)
    else:
        text = render_text(reports, precision=precision)
    if args.output:
        try:
            Path(args.output).write_text(text)
        except OSError as exc:
            raise InputError(f"cannot write {args.output}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
    failed = any(not o.holds for r in reports for o in r.outcomes)
    if precision and precision["violations"]:
        failed = True
    return 1 if failed else 0


def _plot(args, reports) -> None:
    from .machine import load_machine
    from .plot import point_from_dynamic, write_roofline

    points, kinds = [], []
    for r in reports:
        dyn = r.dynamic()
        roof = dyn.get("roofline")
        if not roof:
            continue
        kinds += list(roof.get("kinds", {}))
        pt = point_from_dynamic(r.name, dyn)
        if pt is not None:
            points.append(pt)
    if not points:
        raise InputError(f"--plot: no PTX kernel with global memory traffic and counted work to place on the roofline "
                         f"(in {', '.join(args.files)})")
    write_roofline(args.plot, load_machine(args.machine), points, kinds=list(dict.fromkeys(kinds)))


def _maps(module, fn, key: str) -> bool:
    try:
        return bool(resolve(module, fn, {key: 0}, strict=True))
    except InputError:
        return False


def register(subparsers) -> None:
    """``kernlens analyze``: the same options as ``validate-kernel``."""
    p = subparsers.add_parser("analyze", help="classify instructions, count work and traffic, check expectations",
                              description=__doc__.splitlines()[0])
    add_arguments(p)
    p.set_defaults(func=run)


def main(argv: list[str] | None = None) -> int:
    from kernlens.cli import Parser, run_guarded

    parser = Parser(prog="validate-kernel", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run_guarded(run, parser.parse_args(argv), prog="validate-kernel")


if __name__ == "__main__":
    sys.exit(main())
