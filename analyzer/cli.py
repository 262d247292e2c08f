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


#: PTX files longer than this are analysed batch by batch of kernels (:func:`isa.ptx.chunks.batches`):
#: memory stays that of one batch, and the text report is written as each batch is done.
STREAM_CHARS = 4 << 20
#: about how much kernel text one batch parses at a time
BATCH_CHARS = 1 << 20


def _modules(args, want_sass: bool, progress: "_Progress"):
    """Every module to analyse, one at a time: a big PTX file (more than :data:`STREAM_CHARS`)
    as one module per batch of its kernels, each with the file's lines and columns."""
    import isa
    from isa.ptx import chunks

    for f in args.files:
        path = Path(f)
        if args.kernel or want_sass or path.suffix.lower() in isa._ASCEND_SUFFIXES:
            yield isa.load(path, lenient=args.lenient, kernels=args.kernel or None)
            continue
        text = isa.read_text(path)
        if len(text) <= STREAM_CHARS or isa.detect_isa(text, f) != "ptx":
            yield isa.loads(text, f, lenient=args.lenient)
            continue
        found = chunks.entries(text)
        progress.start(f, len(found))
        for _names, piece in chunks.batches(text, max_chars=BATCH_CHARS, found=found):
            yield isa.loads(piece, f, lenient=args.lenient)
        del text


class _Progress:
    """Kernels analysed so far of a big file, on stderr: a bar redrawn in place on a terminal,
    else one line every :attr:`every` seconds (only once the file has taken that long)."""

    every = 10.0

    def __init__(self, prog: str, stream=None):
        import time

        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.prog, self.file, self.total, self.done = prog, None, 0, 0
        self.clock = time.monotonic
        self.t0 = self.last = self.clock()

    def start(self, file: str, total: int) -> None:
        self.file, self.total, self.done = file, total, 0
        self.t0 = self.last = self.clock()

    def step(self, n: int = 1) -> None:
        if self.file is None:
            return
        self.done += n
        now = self.clock()
        if now - self.last < (0.2 if self.tty else self.every) and self.done < self.total:
            return
        self.last = now
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
        text = (f"{self.prog}: {self.file}: [{bar}] {self.done:,}/{self.total:,} kernels, "
                f"{now - self.t0:.0f} s")
        if self.tty:
            self.stream.write("\r" + text + ("\n" if self.done >= self.total else ""))
        elif now - self.t0 >= self.every:
            self.stream.write(text + "\n")
        self.stream.flush()
        if self.done >= self.total:
            self.file = None


class _Output:
    """Where the report goes, written as each kernel is done: the text report kernel by kernel;
    JSON and SARIF keep only what their document needs (the kernels' JSON, the results)."""

    def __init__(self, args):
        self.format, self.path = args.format, args.output
        self.kernels: list[dict] = []     # JSON
        self.sarif: list[dict] = []       # SARIF results
        self.parts: list[str] = []        # text not written yet
        self.streaming = False            # a big file: text written as each kernel is done
        self.fh = None

    def add(self, report) -> None:
        from .render import render_text, sarif_results

        if self.format == "text":
            self.parts.append(render_text([report]))
            if self.streaming:
                self.flush()
        elif self.format == "json":
            self.kernels.append(report.to_json())
        else:
            self.sarif += sarif_results(report)

    def flush(self) -> None:
        if self.fh is None:
            if self.path:
                try:
                    self.fh = open(self.path, "w")
                except OSError as exc:
                    raise InputError(f"cannot write {self.path}: {exc.strerror}") from None
            else:
                self.fh = sys.stdout
        self.fh.write("".join(self.parts))
        self.fh.flush()
        self.parts.clear()

    def finish(self, precision) -> None:
        from .render import render_json_kernels, render_sarif_results, render_text

        if self.format == "text":
            if precision:
                self.parts.append(render_text([], precision=precision))
            self.flush()
            self.abandon()
            return
        if self.format == "json":
            text = render_json_kernels(self.kernels, precision=precision)
        else:
            text = render_sarif_results(self.sarif, precision=precision)
        if self.path:
            try:
                Path(self.path).write_text(text)
            except OSError as exc:
                raise InputError(f"cannot write {self.path}: {exc.strerror}") from None
        else:
            sys.stdout.write(text)

    def abandon(self) -> None:
        self.parts.clear()
        if self.fh is not None and self.fh is not sys.stdout:
            self.fh.close()


def _run(args: argparse.Namespace) -> int:
    from .report import analyze_function

    expectations: list[Expectation] = [parse_expectation(e) for e in args.expect]
    expectations += [forbid(f) for f in args.forbid]
    given = parse_assignments(args.param)
    grid, block = parse_dims(args.grid, "--grid"), parse_dims(args.block, "--block")
    if (grid is None) != (block is None):
        raise InputError("--grid and --block go together (both or neither)")
    if args.assume_trips < 0:
        raise InputError("--assume-iterations must be >= 0")
    if args.precision_mode is None and args.origin_dtype is not None:
        raise InputError("--origin-dtype goes with --precision-mode (must_keep_origin_dtype or origin)")
    launch = Launch(grid, block)
    used_params: set[str] = set()
    found: set[str] = set()
    failed = False
    want_sass = args.sass or any(e.name.startswith("sass:") for e in expectations)
    if want_sass:
        import isa

        modules = [isa.load(Path(f), lenient=args.lenient, kernels=args.kernel or None) for f in args.files]
        import isa.sass

        ptx = [m for m in modules if m.isa == "ptx"]
        if ptx and isa.sass.available():
            isa.sass.listings(ptx)           # one batch of ptxas/nvdisasm calls for all the files
    else:
        modules = None
    precision = None
    if args.precision_mode is not None:  # sim.numerics (ml_dtypes: ~0.5 s to import) only when asked
        from . import precision as precision_mod
    progress = _Progress(getattr(args, "prog", None) or "validate-kernel")
    out = _Output(args)
    dot = open_dot(args.cfg)
    points: list = []
    kinds: list = []

    def emit(report) -> None:
        nonlocal failed, precision
        found.add(report.name)
        failed = failed or any(not o.holds for o in report.outcomes)
        if args.precision_mode is not None:
            one = precision_mod.check([report], args.precision_mode, origin_dtype=args.origin_dtype)
            precision = one if precision is None else _merge_precision(precision, one)
        if dot is not None:
            dot.write(report.cfg.to_dot(report.estimate.counts, f"{report.name}"))
        if args.plot:
            _plot_point(report, points, kinds)
        out.streaming = progress.file is not None
        out.add(report)
        progress.step()

    try:
        for module in modules if modules is not None else _modules(args, want_sass, progress):
            fns = module.kernels
            if args.kernel:
                fns = [fn for fn in module.functions if fn.name in args.kernel and fn.body is not None]
            segments = []                    # Ascend: mix kernels are checked once, on both segments
            for fn in fns:
                params = resolve(module, fn, given, strict=False)
                used_params.update(k for k in given if _maps(module, fn, k))
                report = analyze_function(module, fn, params=params, launch=launch,
                                          machine=args.machine, assumed_trips=args.assume_trips, sass=want_sass)
                report.check(expectations)
                if module.isa == "ascend" and expectations:
                    segments.append(report)
                else:
                    emit(report)
            if segments:
                _check_mixes(module, segments, expectations)
                for report in segments:
                    emit(report)
            del module
            if modules is None:
                gc.collect()                 # the batch's IR and reports (the collector is off in run())
    except BaseException:
        out.abandon()
        raise
    finally:
        if dot is not None:
            dot.close()
    if args.kernel:
        missing = [k for k in args.kernel if k not in found]
        if missing:
            out.abandon()
            raise InputError(f"no kernel named {', '.join(repr(m) for m in missing)} in {', '.join(args.files)}")
    if not found:
        out.abandon()
        raise InputError(f"no kernels in {', '.join(args.files)}", Span(args.files[0]) if len(args.files) == 1 else None)
    unknown = [k for k in given if k not in used_params]
    if unknown:
        out.abandon()
        raise InputError(f"--param {unknown[0]}: no analysed kernel has a parameter of that name")
    if args.plot:
        _write_plot(args, points, kinds)
    out.finish(precision)
    if precision and precision["violations"]:
        failed = True
    return 1 if failed else 0


def _check_mixes(module, reports: list, expectations: list[Expectation]) -> None:
    """Each ``.mix`` kernel's expectations once, on its cube and vector segments together."""
    from isa.ascend.mix import mix_kernels

    from .report import check_mix

    by = {r.name: r for r in reports}
    for name, (cube, vector) in mix_kernels(module).items():
        if cube.name in by and vector.name in by:
            check_mix(name, by[cube.name], by[vector.name], expectations)


def open_dot(path):
    if not path:
        return None
    try:
        return open(path, "w")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None


def _merge_precision(a: dict, b: dict) -> dict:
    a["checked"] += b["checked"]
    a["violations"] += b["violations"]
    a["kernels"].update(b["kernels"])
    return a


def _plot_point(r, points: list, kinds: list) -> None:
    from .plot import point_from_dynamic

    dyn = r.dynamic()
    roof = dyn.get("roofline")
    if not roof:
        return
    kinds += list(roof.get("kinds", {}))
    pt = point_from_dynamic(r.name, dyn)
    if pt is not None:
        points.append(pt)


def _write_plot(args, points: list, kinds: list) -> None:
    from .machine import load_machine
    from .plot import write_roofline

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


def entry() -> None:
    """The ``validate-kernel`` program: :func:`main` on ``sys.argv``, then a quick exit
    (:func:`kernlens.cli.exit_now`)."""
    from kernlens.cli import exit_now

    exit_now(main())


if __name__ == "__main__":
    entry()
