"""``kernlens run FILE --machine davinci-a2``: simulate an Ascend-like kernel.

    kernlens run gemm.asm --machine davinci-a2 --check --json
    {"cycles": 303983.0, "seconds": 0.000169, "pipes": {"M": {"busy_cycles": ..., "utilization": 0.87}, ...},
     "check": {"passed": true, "max_abs_err": 0.0009, "max_rel_err": ...}, ...}

Numerics run when ``--inputs``, ``--out`` or ``--check`` is given (GM parameters without an
input start as zeros); otherwise the run is timing-only: control flow, addresses, bounds and
sync are evaluated but no data is computed, and cross-pipe data races are not checked.
Undefined behaviour is printed as ``file:line:col: error: ...`` and makes the exit code 1.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from isa.errors import InputError

PIPE_ORDER = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")


def add_arguments(p) -> None:
    p.add_argument("--machine", default="davinci-a2", help="machine model name or TOML path (default davinci-a2)")
    p.add_argument("--kernel", help="kernel to run when the file has several")
    p.add_argument("--inputs", help=".npz with one array per parameter name (without %%; NAME or in_NAME keys, "
                   "so an --out file can be given back: its got_NAME arrays are ignored)")
    p.add_argument("--out", help="write the inputs (in_NAME) and every GM parameter's final contents (got_NAME) "
                   "to this .npz, named as a PTX run names them")
    p.add_argument("--trace", help="write a Chrome/Perfetto trace JSON here")
    p.add_argument("--cores", type=int, help="use at most this many cores of the machine")
    p.add_argument("--check", action="store_true",
                   help="build random inputs and the numpy reference from the kernel's .meta header and compare")
    p.add_argument("--seed", type=int, default=0, help="seed for --check inputs")
    p.add_argument("--json", action="store_true", help="print results as JSON")


#: options of ``kernlens run`` that only the PTX path reads (sim/cli.py defines them)
PTX_ONLY = {"launch": "--launch", "reference": "--reference", "rtol": "--rtol", "atol": "--atol", "heat": "--heat",
            "timing": "--timing", "plot": "--plot", "memory_model": "--memory-model",
            "sass": "--sass"}


def _progress():
    """A progress line on stderr for long runs (only when stderr is a terminal), as a PTX run shows."""
    if not sys.stderr.isatty():
        return None

    def show(steps: int, core: str, cores: int) -> None:
        show.shown = True
        sys.stderr.write(f"\r  simulating: {steps:,} instructions on {core} ({cores} in this launch; Ctrl-C stops, "
                         "keeping the results so far)")
        sys.stderr.flush()
    show.shown = False
    return show


def run_ascend(args) -> int:
    import isa
    from sim.ascend.check import compare, make_inputs, read_meta, reference
    from sim.ascend.machine import load_machine
    from sim.ascend.run import run_module
    from sim.ascend.trace import write_trace
    from sim.launch import read_npz

    given = [flag for dest, flag in PTX_ONLY.items() if getattr(args, dest, None) not in (None, False)]
    if given:
        raise InputError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for PTX runs; an Ascend-like run "
                         "takes --inputs NPZ or --check (the kernel's .meta header builds inputs and reference)")
    module = isa.load(args.file, isa="ascend")
    machine = load_machine(args.machine or "davinci-a2")
    meta = read_meta(module)
    inputs = {}
    if args.check:
        if meta is None:
            raise InputError("--check needs a kernel with a '.meta op=...' header (as `kernlens generate` writes)")
        inputs = make_inputs(meta, seed=args.seed if getattr(args, "seed", None) is not None else 0)
    if args.inputs:
        inputs.update({k[3:] if k.startswith("in_") else k: v for k, v in read_npz(args.inputs).items()
                       if not k.startswith("got_")})
    functional = bool(args.inputs or args.out or args.check)
    steps = getattr(args, "max_steps", None)
    if steps is not None and steps <= 0:
        raise InputError("--max-steps must be a positive number of steps")
    show = _progress()
    res = run_module(module, machine, kernel=getattr(args, "kernel", None), inputs=inputs, cores=args.cores, functional=functional,
                     trace=bool(getattr(args, "trace", None)), max_steps=steps, progress=show)
    if show is not None and show.shown:
        sys.stderr.write("\r\033[K")
    t = res.timing
    out = {
        "kernel": res.launch.kernel, "machine": machine.name, "core_type": res.launch.core_type,
        "cores": res.launch.blocks, "functional": functional,
        "label": "modelled",            # the timing figures; "instructions" and "gm" bytes are this run's counts
        "cycles": t.cycles, "seconds": t.seconds,
        "pipes": {p: {"busy_cycles": t.busy[p], "utilization": t.utilization[p]} for p in PIPE_ORDER},
        "flags": t.flag_waits, "stalls": dict(sorted(t.stalls.cycles.items(), key=lambda kv: -kv[1])),
        "instructions": res.launch.instructions_executed,
        "gm": {"bytes": t.gm_bytes, "unique_bytes": t.gm_unique_bytes, "l2_hit_rate": t.l2_hit_rate,
               "hbm_read_bytes": t.hbm_read_bytes, "hbm_writeback_bytes": t.hbm_writeback_bytes},
    }
    out["measured_counts"] = measured_counts(module, res.launch)
    if res.launch.vector_blocks:
        out["vector_cores"] = res.launch.vector_blocks
        out["pipes_by_core_kind"] = t.utilization_by_kind
    if meta and meta.get("op") == "gemm":
        work = 2 * meta["m"] * meta["n"] * meta["k"]
        peak_all = machine.peak_s8_ops if meta["dtype"] == "s8" else machine.peak_f16_flops
        peak_used = peak_all * res.launch.blocks / machine.cube_cores
        out["gemm"] = {"flops": work, "tflops": work / t.seconds / 1e12 if t.seconds else 0.0,
                       "peak_tflops": peak_all / 1e12, "peak_tflops_cores_used": peak_used / 1e12,
                       "fraction_of_peak": work / t.seconds / peak_all if t.seconds else 0.0,
                       "unit": "TOPS" if meta["dtype"] == "s8" else "TFLOP/s"}
    # what each figure is (as result.timing["labels"] of a PTX run): the timing model's figures are modelled,
    # the counts of this run exact
    out["labels"] = {"cycles": "modelled", "seconds": "modelled", "pipes": "modelled", "flags": "modelled",
                     "stalls": "modelled", "pipes_by_core_kind": "modelled", "instructions": "exact",
                     "gm.bytes": "exact", "gm.unique_bytes": "exact", "gm.l2_hit_rate": "modelled",
                     "gm.hbm_read_bytes": "modelled", "gm.hbm_writeback_bytes": "modelled",
                     **({"gemm": "modelled", "gemm.flops": "exact"} if "gemm" in out else {})}
    rc = 0
    if args.check:
        out["check"] = compare(res.outputs, reference(meta, inputs), meta)
        rc = 0 if out["check"]["passed"] else 1
    out["undefined_behaviour"] = [r.render() for r in res.reports]
    for r in res.reports:
        sys.stderr.write(r.render() + "\n")
    if res.reports:
        rc = 1
    if args.out:
        try:
            arrays = {f"in_{k}": np.asarray(v) for k, v in inputs.items()}
            arrays.update({f"got_{k}": np.asarray(v) for k, v in res.outputs.items()})
            np.savez(args.out, **arrays)
        except OSError as exc:
            raise InputError(f"cannot write {args.out}: {exc.strerror}") from None
    if args.trace:
        try:
            write_trace(args.trace, res, t, res.launch, module, machine.hz)
        except OSError as exc:
            raise InputError(f"cannot write {args.trace}: {exc.strerror}") from None
    if args.json:
        sys.stdout.write(json.dumps(out, indent=1) + "\n")
    else:
        sys.stdout.write(_text(out, functional))
    return rc


def measured_counts(module, launch) -> dict:
    """Per kernel (code segment) run: its executions by instruction class, all cores, from the
    run's per-instruction counts (``LaunchResult.pc_counts``) through the analyzer's report
    (``use_measured``: the figures a report gives when the kernel has been run)."""
    from analyzer.report import analyze_function

    out = {}
    for name, counts in launch.pc_counts.items():
        fn = module.function(name)
        cores = sum(1 for k in (launch.core_kernels or [name] * launch.blocks) if k == name)
        r = analyze_function(module, fn, machine=None)
        r.use_measured(dict(enumerate(counts)), "the simulator (kernlens run)",
                       dict(enumerate(launch.taken_counts.get(name, ()))), cores=cores,
                       core_type=fn.attributes[0] if fn.attributes else "cube")
        d = r.dynamic()
        out[name] = {"basis": d["basis"], "cores": cores, "instructions": d["instructions"]["value"],
                     "by_class": dict(sorted(((c, v) for c, v in d["mix"].items() if "_" not in c),
                                             key=lambda kv: -kv[1]))}
    return out


def _text(o: dict, functional: bool) -> str:
    cores = (f"{o['cores']} cube + {o['vector_cores']} vector cores (mix)" if "vector_cores" in o
             else f"{o['cores']} {o['core_type']} core(s)")
    lines = [f"kernel {o['kernel']} on {o['machine']}: {cores}",
             f"  cycles {o['cycles']:.0f}  time {o['seconds'] * 1e6:.2f} us  (modelled)",
             f"  instructions {o['instructions']:,} executed (counted in this run, all cores)"]
    for name, m in o.get("measured_counts", {}).items():
        lines.append(f"  {name if len(o['measured_counts']) > 1 else 'by class'} (measured, {m['cores']} cores): "
                     + ", ".join(f"{c} {v:,}" for c, v in m["by_class"].items()))
    if "gemm" in o:
        g = o["gemm"]
        lines.append(f"  {g['tflops']:.1f} {g['unit']} of {g['peak_tflops']:.1f} {g['unit']} peak "
                     f"({g['fraction_of_peak'] * 100:.1f} % of peak; the {o['cores']} cube core(s) used peak at "
                     f"{g['peak_tflops_cores_used']:.1f} {g['unit']}; modelled: {g['flops']:,} FLOPs over the "
                     "modelled time, peaks of the machine model)")
    lines.append("  pipe   busy cycles   utilisation  (modelled)")
    for p, v in o["pipes"].items():
        lines.append(f"  {p:<5} {v['busy_cycles']:>13.0f}   {v['utilization'] * 100:6.1f} %")
    for kind, pipes in o.get("pipes_by_core_kind", {}).items():
        lines.append(f"  {kind} cores: " + "  ".join(f"{p} {u * 100:.1f} %" for p, u in pipes.items()))
    if o.get("stalls"):
        lines.append("  stalls (cycles, modelled): " + ", ".join(f"{k} {v:.0f}" for k, v in list(o["stalls"].items())[:6]))
    if o["flags"]:
        lines.append("  flag waits (modelled): " + ", ".join(f"{k} {v['wait_cycles']:.0f} cycles/{v['waits']}"
                                                for k, v in sorted(o["flags"].items())))
    if "check" in o:
        c = o["check"]
        lines.append(f"  check {'PASSED' if c['passed'] else 'FAILED'}: max abs err {c['max_abs_err']:.3g}, "
                     f"max rel err {c['max_rel_err']:.3g} ({c['tolerance']})")
    if not functional:
        lines.append("  (timing-only run: no numerics and no data-race checks; give --check, --inputs or --out)")
    return "\n".join(lines) + "\n"
