"""``validate-kernel`` (and ``kernlens analyze``): what a kernel really executes, checked in CI.

    validate-kernel FILE... [--kernel NAME] [--expect EXPR]... [--forbid CLASS]... [--param K=V]...
                    [--grid X,Y,Z --block X,Y,Z] [--format text|json|sarif] [--cfg out.dot] [--sass]

Exit status: 0 when every expectation holds, 1 when one fails, 2 on bad input or usage.
Example::

    validate-kernel build/gemm.sm_90.ptx --expect 'TENSOR_CORE>=1' --forbid FP32_FMA --param K=4096
    validate-kernel build/gemm.sm_90a.ptx --sass --expect 'sass:HGMMA>=1' --expect 'sass:LDS.128>=1'
"""

from __future__ import annotations

if __name__ == "__main__":   # ``python -m analyzer.cli``: the program imports this module itself, paused
    from kernlens.cli import validate_entry

    validate_entry()         # (ends the process)

import argparse
import gc
import sys

from kernlens import one_blas_thread, paths

one_blas_thread()    # before anything imports numpy

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
    p.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                   help="worker processes for the kernel batches of a big PTX file (more than 4 MB; default 0: "
                        "one per CPU; 1: none, all in this process); the report is the same")


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


#: PTX files longer than this are analysed batch by batch of kernels (:class:`isa.ptx.chunks.Split`):
#: memory stays that of one batch, and the text report is written as each batch is done.
STREAM_CHARS = 4 << 20
#: about how much kernel text one batch parses at a time
BATCH_CHARS = 1 << 20


#: the generations a batch's end collects where a big file is parsed whole with the other kernels
#: blanked. A batch of :class:`isa.ptx.chunks.Split` is not collected at all: its IR and reports
#: form no reference cycles (reference counting frees them as the next batch starts;
#: ``tests/analyzer/test_big_speed.py`` holds that), so a collection would only walk live objects
_YOUNG = 1


def _results(args, job: "_Job", progress: "_Progress"):
    """``(records, used parameter names)`` of every module to analyse, one module at a time: a
    big PTX file (more than :data:`STREAM_CHARS`) batch by batch of its kernels (each module with
    the file's lines and columns), in ``--jobs`` worker processes when there is more than one."""
    import isa
    from isa.ptx import chunks

    for f in args.files:
        path = paths.text(f)                  # str(Path(f)): the name a module loaded from the file gives
        if args.kernel or job.want_sass or paths.suffix(f).lower() in isa._ASCEND_SUFFIXES:
            yield _analyse(isa.load_file(path, lenient=args.lenient, kernels=args.kernel or None), job)
            gc.collect()             # the module's IR and reports (the collector is off in run())
            continue
        text = isa.read_text(path)
        if len(text) <= STREAM_CHARS or isa.detect_isa(text, f) != "ptx":
            yield _analyse(isa.loads(text, f, lenient=args.lenient), job)
            gc.collect()
            continue
        found = chunks.entries(text)
        progress.start(f, len(found))
        split = chunks.Split.make(text, f, found, lenient=args.lenient)
        if split is None:            # parsed as the whole file with the other kernels blanked: its errors
            for _names, piece in chunks.batches(text, max_chars=BATCH_CHARS, found=found):
                yield _analyse(isa.loads(piece, f, lenient=args.lenient, cache=False), job)
                gc.collect(_YOUNG)
            continue
        ranges = split.batches(BATCH_CHARS)
        jobs = min(chunks.jobs_wanted(getattr(args, "jobs", None)), len(ranges))
        if jobs <= 1:
            for i, j in ranges:
                yield _analyse(split.module(i, j), job)
            continue
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs, _worker_init, (split, job)) as pool:
            for (i, j), got in zip(ranges, pool.imap(_worker_batch, ranges)):
                # a batch whose parse or analysis raised an error is done again here, to raise it
                yield got if got is not None else _analyse(split.module(i, j), job)
        del text, split


_WORKER: list = []


def _worker_init(split, job) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is the parent's: it ends the pool
    _WORKER[:] = [split, job]


def _worker_batch(rng: tuple[int, int]):
    from isa.errors import KernlensError

    split, job = _WORKER
    try:
        got = _analyse(split.module(*rng), job)
    except KernlensError:
        return None
    return got


class _Job:
    """What analysing one module needs (the parsed options), and what each report leaves behind."""

    def __init__(self, args, expectations, given, launch, want_sass, precision_mod):
        self.args, self.expectations, self.given, self.launch = args, expectations, given, launch
        self.want_sass, self.precision_mod = want_sass, precision_mod


class _Record:
    """What the output needs of one kernel's report, in a form that crosses processes."""

    __slots__ = ("name", "failed", "payload", "precision", "dot", "point", "kinds", "params")

    def __init__(self, report, job: _Job):
        from .render import render_text, sarif_results

        args = job.args
        self.name = report.name
        self.params: tuple[str, ...] = ()     # the kernel's parameters as --param takes them (set by _analyse)
        self.failed = any(not o.holds for o in report.outcomes)
        self.precision = None
        if args.precision_mode is not None:
            self.precision = job.precision_mod.check([report], args.precision_mode, origin_dtype=args.origin_dtype)
        self.dot = report.cfg.to_dot(report.estimate.counts, f"{report.name}") if args.cfg else None
        self.point, self.kinds = _plot_point(report) if args.plot else (None, [])
        if args.format == "text":
            self.payload = render_text([report])
        elif args.format == "json":
            self.payload = report.to_json()
        else:
            self.payload = sarif_results(report)


def _analyse(module, job: _Job) -> tuple[list[_Record], set[str]]:
    """The records of ``module``'s kernels (of ``--kernel`` ones) in order, and which ``--param``
    names map to a parameter of one of them."""
    from .report import analyze_function

    args, given = job.args, job.given
    fns = module.kernels
    if args.kernel:
        fns = [fn for fn in module.functions if fn.name in args.kernel and fn.body is not None]
    used: set[str] = set()
    reports, segments = [], []       # Ascend: mix kernels are checked once, on both segments
    for fn in fns:
        params = resolve(module, fn, given, strict=False)
        used.update(k for k in given if _maps(module, fn, k))
        report = analyze_function(module, fn, params=params, launch=job.launch,
                                  machine=args.machine, assumed_trips=args.assume_trips, sass=job.want_sass)
        report.check(job.expectations)
        if module.isa == "ascend" and job.expectations:
            segments.append((report, fn))
        else:
            reports.append(_named(_Record(report, job), module, fn))
    if segments:
        _check_mixes(module, [r for r, _ in segments], job.expectations)
        reports += [_named(_Record(r, job), module, fn) for r, fn in segments]
    return reports, used


def _named(record: _Record, module, fn) -> _Record:
    """``record`` with its kernel's parameter names (PTX name and source name) for --param's error."""
    from .params import source_names

    src = source_names(module, fn)
    record.params = tuple(f"{p.name} ({s})" if s else p.name for p, s in zip(fn.params, src))
    return record


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

    def add(self, record: "_Record") -> None:
        if self.format == "text":
            self.parts.append(record.payload)
            if self.streaming:
                self.flush()
        elif self.format == "json":
            self.kernels.append(record.payload)
        else:
            self.sarif += record.payload

    def flush(self) -> None:
        if self.fh is None:
            if self.path:
                try:
                    self.fh = open(self.path, "w")
                except OSError as exc:
                    raise InputError(f"cannot write {self.path}: {exc.strerror}", Span(self.path)) from None
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
                with open(paths.text(self.path), "w") as out:
                    out.write(text)
            except OSError as exc:
                raise InputError(f"cannot write {self.path}: {exc.strerror}", Span(self.path)) from None
        else:
            sys.stdout.write(text)

    def abandon(self) -> None:
        self.parts.clear()
        if self.fh is not None and self.fh is not sys.stdout:
            self.fh.close()


def _run(args: argparse.Namespace) -> int:
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
    if getattr(args, "jobs", None) is not None and args.jobs < 0:
        raise InputError("--jobs must be >= 0 (0: one per CPU)")
    launch = Launch(grid, block)
    used_params: set[str] = set()
    found: set[str] = set()
    known_params: set[str] = set()
    failed = False
    want_sass = args.sass or any(e.name.startswith("sass:") for e in expectations)
    if want_sass:
        import isa

        modules = [isa.load_file(paths.text(f), lenient=args.lenient, kernels=args.kernel or None)
                   for f in args.files]
        import isa.sass

        ptx = [m for m in modules if m.isa == "ptx"]
        if ptx and isa.sass.available():
            isa.sass.listings(ptx)           # one batch of ptxas/nvdisasm calls for all the files
    else:
        modules = None
    precision = None
    precision_mod = None
    if args.precision_mode is not None:  # sim.numerics (ml_dtypes: ~0.5 s to import) only when asked
        from . import precision as precision_mod
    job = _Job(args, expectations, given, launch, want_sass, precision_mod)
    progress = _Progress(getattr(args, "prog", None) or "validate-kernel")
    out = _Output(args)
    dot = open_dot(args.cfg)
    points: list = []
    kinds: list = []

    def emit(record: _Record) -> None:
        nonlocal failed, precision
        found.add(record.name)
        known_params.update(record.params)
        failed = failed or record.failed
        if record.precision is not None:
            precision = record.precision if precision is None else _merge_precision(precision, record.precision)
        if dot is not None:
            dot.write(record.dot)
        if record.point is not None:
            points.append(record.point)
        kinds.extend(record.kinds)
        out.streaming = progress.file is not None
        out.add(record)
        progress.step()

    try:
        batches = (_analyse(m, job) for m in modules) if modules is not None else _results(args, job, progress)
        for records, used in batches:
            used_params |= used
            for record in records:
                emit(record)
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
        raise InputError(f"--param {unknown[0]}: no analysed kernel has a parameter of that name (parameters: "
                         f"{', '.join(sorted(known_params)) or 'none'})")
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
        raise InputError(f"cannot write {path}: {exc.strerror}", Span(path)) from None


def _merge_precision(a: dict, b: dict) -> dict:
    a["checked"] += b["checked"]
    a["violations"] += b["violations"]
    a["kernels"].update(b["kernels"])
    return a


def _plot_point(r) -> tuple:
    """(the roofline point of a report or None, the kinds of peak its work runs at)."""
    from .plot import point_from_dynamic

    dyn = r.dynamic()
    roof = dyn.get("roofline")
    if not roof:
        return None, []
    return point_from_dynamic(r.name, dyn), list(roof.get("kinds", {}))


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
    """The ``validate-kernel`` program (:func:`kernlens.cli.validate_entry`, which the installed
    command calls): :func:`main` on ``sys.argv``, then a quick exit."""
    from kernlens.cli import validate_entry

    validate_entry()
