"""kernlens run: simulate one kernel launch, report what it executed, check its outputs.

    kernlens run sgemm.sm_90.ptx --kernel sgemm_naive --launch spec.json \\
        [--inputs in.npz] [--out out.npz] [--reference mod:func] [--json]
    kernlens run ptx/sgemm_naive.sm_90.ptx --launch manifest.json#sgemm_naive

A PTX file runs on the functional SIMT simulator (``sim.run_kernel``); ``--machine davinci-a2``
or an ``.asm`` file goes to the Ascend-like simulator (``sim.ascend.cli``).  Inputs are the
spec's (the corpus seed rule) unless ``--inputs`` gives them.  With a reference (``--reference``,
or the manifest entry's ``reference.py`` function) the outputs are checked (``sim.check``).

Exit status: 0 = ran, no undefined behaviour, check passed (or no reference);
1 = the check failed or undefined behaviour was found; 2 = bad input.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
from dataclasses import asdict, is_dataclass

import numpy as np

# what every run (PTX or Ascend-like) uses, imported with this module: the kernlens program imports
# it with the collector paused (kernlens.cli.import_paused): 7.5-9 -> 4.3-5.2 ms of collections in a
# cold dot_dp4a run on a loaded machine (measured)
from analyzer.dataflow import Launch
from analyzer.report import analyze_function
from isa.errors import InputError, Span
from kernlens import paths
from sim import launch as L

PTX_MACHINES = ("h200",)
ASCEND_MACHINES = ("davinci-a2",)
ASCEND_SUFFIXES = (".asm",)
#: options sim.ascend.cli adds that the PTX path has no use for
ASCEND_ONLY = {"trace": "--trace", "cores": "--cores", "check": "--check"}


class _KeepFirst:
    """A parser proxy for another module's ``add_arguments``: options this module already
    defines are kept as they are instead of clashing."""

    def __init__(self, parser: argparse.ArgumentParser):
        self._parser = parser

    def add_argument(self, *names, **kw):
        taken = self._parser._option_string_actions
        if any(n in taken for n in names if n.startswith("-")) or \
                any(not n.startswith("-") and any(a.dest == n for a in self._parser._actions) for n in names):
            return None
        return self._parser.add_argument(*names, **kw)

    def __getattr__(self, name):
        return getattr(self._parser, name)


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "run", help="simulate a kernel launch and check its outputs",
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="PTX file (or Ascend-like .asm)")
    p.add_argument("--kernel", "-k", metavar="NAME", help="entry point (default: the launch's, "
                   "or the file's only kernel)")
    p.add_argument("--launch", metavar="SPEC", help="launch spec JSON, or manifest.json#ENTRY")
    p.add_argument("--inputs", metavar="NPZ", help="input arrays (NAME or in_NAME keys)")
    p.add_argument("--out", metavar="NPZ", help="write inputs (in_NAME) and outputs (got_NAME)")
    p.add_argument("--reference", metavar="MODULE:FUNCTION",
                   help="reference taking a dict of decoded inputs, returning expected outputs "
                        "(MODULE may be a .py path)")
    p.add_argument("--rtol", type=float, help="relative tolerance (default: the spec's, else per dtype)")
    p.add_argument("--atol", type=float, help="absolute tolerance")
    p.add_argument("--seed", type=int, help="input seed (default: crc32 of the entry name); with --memory-model "
                   "relaxed it also seeds the order in which store buffers drain (default 0)")
    p.add_argument("--memory-model", choices=("sc", "relaxed"), default=None,
                   help="sc (default): every store visible at once; relaxed: global stores sit in store "
                        "buffers and drain in a seeded random order (a missing fence gives a wrong answer)")
    p.add_argument("--machine", metavar="NAME", help="h200 (PTX, default) or davinci-a2 (Ascend-like)")
    p.add_argument("--heat", type=int, nargs="?", const=10, metavar="N",
                   help="show the N PTX lines with the most shared wavefronts / global sectors")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--max-steps", type=int, metavar="N",
                   help="stop a run after N steps (PTX: one instruction for the threads of a batch of CTAs on one "
                        "path, default 5,000,000 per batch; Ascend-like: instructions per core, default "
                        "20,000,000); where each warp or core loops is reported and results kept")
    p.add_argument("--timing", metavar="MODEL", help="also predict the launch's time on a timing model (h200)")
    p.add_argument("--sample", choices=("auto", "all"), default="auto",
                   help="with --timing: simulate a deterministic sample of a big launch's CTAs (auto) or all")
    p.add_argument("--trace", metavar="OUT.json", help="with --timing: write a Chrome/Perfetto trace")
    p.add_argument("--plot", metavar="OUT.svg", help="with --timing: draw the kernel on the machine's roofline "
                   "(SVG) by its arithmetic intensity and modelled time (modelled, not measured)")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="simulate the launch's CTAs in N processes (0 = all cores); same outputs")
    p.add_argument("--sass", action="store_true",
                   help="cost shared loads/stores as the SASS ptxas emits them (merged LDS.128...; needs ptxas "
                        "and nvdisasm, a note otherwise)")
    importlib.import_module("sim.ascend.cli").add_arguments(_KeepFirst(p))
    p.set_defaults(func=run)
    return p


def _is_ascend(args) -> bool:
    m = (args.machine or "").lower()
    if m.endswith(".toml"):  # a machine model file: only the Ascend-like simulator reads those
        return True
    return m in ASCEND_MACHINES or (not m and paths.suffix(args.file).lower() in ASCEND_SUFFIXES)


def run(args) -> int:
    if _is_ascend(args):
        return int(importlib.import_module("sim.ascend.cli").run_ascend(args) or 0)
    if args.machine and args.machine.lower() not in PTX_MACHINES:
        raise InputError(f"unknown machine {args.machine!r}", expected=list(PTX_MACHINES + ASCEND_MACHINES))
    return run_ptx(args)


# ----------------------------------------------------------------------------------------------
# PTX
# ----------------------------------------------------------------------------------------------

def _read_module(path: str, kernel: str | None = None):
    """The PTX module of ``path``; with ``kernel``, only that kernel's definition is parsed beside
    the module-level declarations (:mod:`isa.ptx.chunks`): one kernel of a big file runs at once."""
    import isa

    text = isa.read_text(path)        # the one wording for missing, binary or non-UTF-8 files (validate, fmt too)
    return isa.loads(text, path, isa="ptx", kernels=[kernel] if kernel else None)


def load_reference(ref: str):
    """``module:function`` or ``path/to/file.py:function`` -> the callable."""
    mod_name, sep, fn_name = ref.rpartition(":")
    if not sep or not mod_name or not fn_name:
        raise InputError(f"--reference must be MODULE:FUNCTION, got {ref!r}")
    try:
        if mod_name.endswith(".py") or paths.exists(mod_name):
            spec = importlib.util.spec_from_file_location(paths.stem(mod_name) + "_reference", mod_name)
            if spec is None or spec.loader is None:
                raise ImportError(mod_name)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(mod_name)
    except (ImportError, OSError, SyntaxError) as exc:
        raise InputError(f"cannot load reference module {mod_name!r}: {exc}") from None
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise InputError(f"reference module {mod_name!r} has no function {fn_name!r}")
    return fn


def _progress():
    """A progress line on stderr for long runs (only when stderr is a terminal)."""
    _progress.shown = False
    if not sys.stderr.isatty():
        return None

    def show(steps: int, batch: int, batches: int) -> None:
        _progress.shown = True
        sys.stderr.write(f"\r  simulating: {steps:,} steps, batch {batch}/{batches} of CTAs (Ctrl-C stops, "
                         "keeping the results so far)")
        sys.stderr.flush()
    return show


_progress.shown = False


def run_ptx(args) -> int:
    from sim.check import check_outputs
    from sim.memory.heat import MemoryHeat

    given = [flag for dest, flag in ASCEND_ONLY.items() if getattr(args, dest, None) not in (None, False)
             and not (dest == "trace" and getattr(args, "timing", None))]
    if given:
        trace = " (on PTX, --trace goes with --timing h200: the timing model's trace)" if "--trace" in given else ""
        raise InputError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for Ascend-like runs "
                         f"(--machine davinci-a2){trace}; a PTX run checks against --reference or the manifest's "
                         "reference")
    if not args.launch:
        raise InputError("a PTX run needs --launch SPEC.json (or manifest.json#ENTRY)", Span(args.file))
    spec = L.load_launch(args.launch, args.kernel)
    module = _read_module(args.file, args.kernel or spec.kernel)
    fn = L.kernel_function(module, spec, args.kernel)
    decoded = L.load_inputs(spec, args.inputs) if args.inputs else None
    import os

    plan, sass_note = None, None
    if getattr(args, "sass", False):
        import isa.sass

        sass_note = isa.sass.note()
        if sass_note is None:
            plan = isa.sass.shared_plan(module)
    heat = MemoryHeat(shared_plan=plan) if args.heat or plan is not None else None
    if args.max_steps is not None and args.max_steps <= 0:
        raise InputError("--max-steps must be a positive number of steps")
    timing = getattr(args, "timing", None)
    if timing and timing.lower() not in PTX_MACHINES:
        raise InputError(f"unknown timing model {timing!r}", expected=list(PTX_MACHINES))
    model = getattr(args, "memory_model", None) or "sc"
    ex = L.execute(module, spec, fn.name, inputs=decoded, seed=args.seed, listeners=[heat] if heat else [],
                   memory_model=model, memory_seed=args.seed or 0,
                   jobs=1 if timing else ((os.cpu_count() or 1) if args.jobs == 0 else max(1, args.jobs)),
                   max_steps=args.max_steps if args.max_steps is not None else "auto", progress=_progress(),
                   **({"timing": timing.lower(), "sample": args.sample,
                      "trace": bool(getattr(args, "trace", None))} if timing else {}))
    if _progress.shown:
        sys.stderr.write("\r\033[K")
    if sass_note:
        print(f"note: {sass_note}; shared-memory costs follow the PTX accesses", file=sys.stderr)
    decoded, got, seconds = ex.inputs, ex.outputs, ex.seconds
    tm = dict(ex.timing) if ex.timing else None
    slices = tm.pop("_slices", []) if tm else []
    if tm and getattr(args, "trace", None):
        from sim.timing.sm import load_params
        from sim.timing.trace import write_chrome_trace

        try:
            write_chrome_trace(args.trace, slices, load_params(timing.lower()).hz,
                               meta={"kernel": fn.name, "cycles": tm["cycles"], "label": "modelled",
                                     # the SM whose replay is traced: the slowest, which sets the time
                                     "traced_sm": tm.get("slowest_sm", 0),
                                     "traced": f"SM {tm.get('slowest_sm', 0)}, the SM that sets the kernel's time"})
        except OSError as exc:
            raise InputError(f"cannot write {args.trace}: {exc.strerror or exc}", Span(args.trace)) from None

    if getattr(args, "plot", None):
        _plot_timing(args.plot, fn.name, tm, timing)

    report = None
    ref_name = args.reference or spec.reference
    partial = None                       # a sampled timing run computed only some CTAs: what it ran
    if not ex.complete and tm and tm.get("sampled"):
        partial = (f"{tm['simulated_ctas']:,} of {tm['ctas']:,} CTAs ran (the timing model's sample; "
                   "--sample all runs every CTA)")
    if ref_name and not ex.complete:
        ref_name = None                  # a sampled timing run computed only some CTAs' outputs
    if ref_name:
        ref_fn = load_reference(ref_name)
        ref_in = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in decoded.items()}
        try:
            expected = ref_fn(ref_in)
        except Exception as exc:  # a user's reference failing is bad input, not a crash
            raise InputError(f"reference {ref_name} raised {type(exc).__name__}: {exc}") from None
        if not isinstance(expected, dict):
            raise InputError(f"reference {ref_name} returned {type(expected).__name__}, not a dict")
        dtypes = {a.name: a.dtype for a in spec.buffers}
        report = check_outputs(got, expected, dtypes,
                               rtol=args.rtol if args.rtol is not None else spec.rtol,
                               atol=args.atol if args.atol is not None else spec.atol,
                               per_output=spec.per_output)
    if args.out:
        arrays = {f"in_{k}": np.asarray(v) for k, v in decoded.items()}
        arrays.update({f"got_{k}": v for k, v in got.items()})
        try:
            np.savez(args.out, **arrays)
        except OSError as exc:
            raise InputError(f"cannot write {args.out}: {exc.strerror or exc}", Span(args.out)) from None

    problems = list(ex.problems)
    stats = dict(ex.stats)
    stats.pop("taken_by_instruction", None)           # (branch counts: the inspector's measured loops)
    work = measured_work(module, fn, spec, stats.pop("threads_by_instruction", None),
                         complete=ex.complete and not any(p.kind in ("max_steps", "interrupted") for p in problems),
                         stats=stats)
    ok = not problems and (report is None or report.passed)
    if args.json:
        out = {"file": args.file, "kernel": fn.name, "grid": list(spec.grid), "block": list(spec.block),
               "dynamic_shared_bytes": spec.shared_bytes(module.target), "seconds": seconds,
               "stats": stats, "measured_work": work, "problems": [_problem_dict(p) for p in problems],
               "check": report.to_dict() if report else None, "ok": ok}
        if partial:
            out["partial"] = partial     # stats, problems and outputs are of the sampled CTAs only
        if tm:
            out["timing"] = tm
        if heat and args.heat:
            out["heat"] = {str(line): s.to_dict() for line, s in sorted(heat.by_line(fn).items())}
        print(json.dumps(_plain(out), indent=1))
    else:
        print(_render_text(args.file, fn, spec, module, stats, seconds, problems, report, heat if args.heat else None,
                           args.heat, work, partial=partial,
                           skipped_reference=(args.reference or spec.reference) if partial else None))
        if tm:
            from sim.timing.report import render

            print(render(tm))
            if not ex.complete:
                print("  (outputs not checked: a sampled run computes only the sampled CTAs; --sample all for all)")
    return 0 if ok else 1


def measured_work(module, fn, spec, threads_by_instruction, complete: bool = True, stats=None) -> dict | None:
    """FLOPs, bytes, intensity and roofline of this launch from the analyzer with the run's
    measured execution counts (``basis: 'measured'``); None when the run stopped early or ran only
    a sample of the CTAs (its counts are not the launch's)."""
    if not threads_by_instruction or not complete:
        return None
    r = analyze_function(module, fn, launch=Launch(tuple(spec.grid), tuple(spec.block)))
    r.use_measured(threads_by_instruction, "the functional simulator (kernlens run)")
    d = r.dynamic()
    roof = d.get("roofline") or {}
    # the bytes the simulator moved (an atomic counts its read and its write)
    gbytes = int((stats or {}).get("bytes_by_space", {}).get("global", 0)) if stats is not None \
        else d["bytes"].get("global", {}).get("value", 0)
    ops = d["flops"]["value"] + d["int_ops"]["value"]
    intensity = ops / gbytes if gbytes else None
    ridge = roof.get("ridge")
    bound = None if intensity is None or not ridge else ("memory" if intensity < ridge else "compute")
    return {"basis": d["basis"], "per": d["per"], "note": d["notes"][0],
            "flops": d["flops"]["value"], "flops_by_dtype": d["flops"]["by_dtype"],
            "int_ops": d["int_ops"]["value"], "global_bytes": gbytes,
            "intensity": intensity, "bound": bound, "ridge": ridge, "machine": roof.get("machine")}


def _plot_timing(path: str, kernel: str, tm: dict | None, machine: str | None) -> None:
    """``--plot``: the timed run's modelled point on the roofline of ``machine`` (:mod:`analyzer.plot`)."""
    if not tm:
        raise InputError("--plot needs --timing h200 (the point is placed by the modelled time)", Span(path))
    from analyzer.machine import load_machine
    from analyzer.plot import point_from_timing, write_roofline

    pt = point_from_timing(kernel, tm)
    if pt is None:
        raise InputError(f"--plot: kernel '{kernel}' does no counted work or moves no modelled DRAM bytes: "
                         "it has no place on the roofline", Span(path))
    sampled = f", {tm['simulated_ctas']} of {tm['ctas']} CTAs simulated" if tm.get("sampled") else ""
    write_roofline(path, load_machine(machine.lower()), [pt], kinds=list(tm["work"]),
                   title=f"{kernel} on the {machine.upper()} roofline: modelled time, not measured{sampled}")


def _problem_dict(p) -> dict:
    return _plain(asdict(p) if is_dataclass(p) else {"message": str(p)})


def _plain(obj):
    """JSON-friendly copy (numpy scalars/arrays, tuples, non-finite floats)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        return _plain(obj.item())
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return str(obj)
    return obj


def _render_text(path, fn, spec, module, stats, seconds, problems, report, heat, heat_n, work=None, *,
                 partial: str | None = None, skipped_reference: str | None = None) -> str:
    lines = [f"{path}: {fn.name} grid={list(spec.grid)} block={list(spec.block)} "
             f"dynamic_shared={spec.shared_bytes(module.target)} B"]
    if partial:
        lines.append(f"  counts and problems below are of part of the launch: {partial}")
    ti = stats.get("thread_instructions", 0)
    rate = f" ({ti / seconds / 1e6:.2f} M thread-instructions/s)" if seconds > 0 and ti else ""
    lines.append(f"  simulated in {seconds:.3f} s{rate}")
    if stats.get("memory_model") == "relaxed":
        lines.append(f"  memory model: relaxed, seed {stats.get('memory_seed')} (rerun with --memory-model relaxed "
                     f"--seed {stats.get('memory_seed')} to reproduce)")
    lines.append(f"  counts (exact: counted by the functional simulator, {'the CTAs run' if partial else 'whole launch'}):")
    for key in ("warp_instructions", "thread_instructions", "shared_load_wavefronts",
                "shared_store_wavefronts", "global_load_sectors", "global_store_sectors", "global_atomic_sectors"):
        if key in stats:
            if key != "global_atomic_sectors" or stats[key]:
                lines.append(f"  {key:<24} {stats[key]}")
    if isinstance(stats.get("bytes_by_space"), dict):
        parts = ", ".join(f"{k} {v}" for k, v in sorted(stats["bytes_by_space"].items()) if v)
        lines.append(f"  {'bytes_by_space':<24} {parts or '-'}")
    ops = stats.get("opcodes")
    if isinstance(ops, dict) and ops:
        top = sorted(ops.items(), key=lambda kv: -kv[1])[:8]
        lines.append(f"  top opcodes (warp-instructions {'of the CTAs run' if partial else 'per launch'}): "
                     + ", ".join(f"{k} {v}" for k, v in top))
    if work:
        dt = ", ".join(f"{k} {v:,}" for k, v in work["flops_by_dtype"].items())
        inten = f"{work['intensity']:.2f} FLOP/B" if work["intensity"] is not None else "-"
        lines.append(f"  work per launch (measured: the counts of this run): FLOPs {work['flops']:,}"
                     + (f" ({dt})" if dt else "") + f", int ops {work['int_ops']:,}, global bytes "
                     f"{work['global_bytes']:,}, intensity {inten}"
                     + (f", {work['bound']}-bound on {work['machine']} (roofline, modelled: global bytes taken as "
                        "DRAM bytes; --timing h200 models the caches)" if work.get("bound") else ""))
    if problems:
        lines.append(f"undefined behaviour: {len(problems)} problem(s)")
        lines += ["  " + str(p) for p in problems]
    else:
        lines.append("undefined behaviour: none found")
    if heat:
        sites = sorted(heat.by_line(fn).items(), key=lambda kv: -(kv[1].shared_wavefronts + kv[1].global_sectors))
        lines.append("memory heat (PTX line: shared wavefronts / ideal, global sectors / ideal):")
        for line, s in sites[:heat_n]:
            src = (module.source_line(line) or "").strip()
            lines.append(f"  {line:>5}: {s.shared_wavefronts:>8} / {s.shared_ideal:<8} "
                         f"{s.global_sectors:>8} / {s.global_ideal_sectors:<8} {src[:60]}")
    if report:
        lines.append(report.render())
    elif skipped_reference:
        lines.append(f"check: not run against {skipped_reference}: only {partial}")
    else:
        lines.append("check: no reference (give --reference MODULE:FUNCTION)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - `python -m sim.cli`
    from kernlens.cli import main as kmain
    return kmain(["run", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
