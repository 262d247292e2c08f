"""``kernlens verify F.ptx --launch SPEC [--on-gpu]``: simulator, reference and (optionally) a real GPU.

    kernlens generate gemm --isa ptx --arch sm_90a --engine wgmma --dtype f16 --m 256 --n 256 --k 256 -o g.ptx
    kernlens verify g.ptx --launch g.launch.json --on-gpu --repeat 20

Without ``--on-gpu`` it simulates the launch and checks it against the spec's reference (as
``kernlens run``). With ``--on-gpu`` it also loads the PTX with CuPy (``kernlens[gpu]``), runs the same
inputs on the GPU, compares GPU and simulator outputs **bit for bit** (and both with the reference
within the spec's tolerances), and times the kernel (CUDA events, median of ``--repeat`` launches).
Without CuPy or a GPU, ``--on-gpu`` prints why and exits 2.

Exit status: 0 all agree; 1 a mismatch (GPU != simulator, a check failed, or undefined behaviour); 2 bad
input or no GPU.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from isa.errors import InputError, Span


@dataclass(frozen=True)
class Verdict:
    """What one verification found (``to_dict`` is what ``--json`` prints and examples/ record)."""

    kernel: str
    sim_ok: bool
    problems: tuple
    check: dict | None
    gpu: dict | None = None
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        gpu_ok = self.gpu is None or (self.gpu.get("bit_exact_vs_sim") and self.gpu.get("check_passed", True))
        return self.sim_ok and not self.problems and bool(gpu_ok)

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "ok": self.ok, "sim_ok": self.sim_ok,
                "problems": [str(p) for p in self.problems], "check": self.check, "gpu": self.gpu, **self.extra}


def simulate(ptx, spec, *, jobs: int = 1):
    """Simulate ``spec`` (a LaunchSpec) for ``ptx`` (a path, PTX text or a parsed Module) and check
    its reference; returns ``(Execution, OutputsReport | None)``."""
    import isa
    from isa import ir
    from sim import launch as L
    from sim.check import check_outputs
    from sim.cli import load_reference

    module = ptx if isinstance(ptx, ir.Module) else isa.load(ptx)
    ex = L.execute(module, spec, jobs=jobs) if jobs != 1 else L.execute(module, spec)
    report = None
    if spec.reference:
        ref = load_reference(spec.reference)({k: (v.copy() if isinstance(v, np.ndarray) else v)
                                              for k, v in ex.inputs.items()})
        report = check_outputs(ex.outputs, ref, {a.name: a.dtype for a in spec.buffers}, rtol=spec.rtol,
                               atol=spec.atol, per_output=spec.per_output)
    return ex, report


def gpu_available() -> str | None:
    """None when CuPy and a CUDA device are usable, else the reason."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "CuPy is not installed (pip install 'kernlens[gpu]', which needs a CUDA toolkit and driver)"
    try:
        import cupy

        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - driver errors have many types
        return f"CuPy found no CUDA device ({type(exc).__name__}: {exc})"
    return None if n > 0 else "CuPy found no CUDA device"


def run_on_gpu(ptx_text: str, spec, kernel: str, inputs: dict, *, repeat: int = 10, warmup: int = 2) -> dict:
    """Run one launch on the GPU with the decoded ``inputs``; returns device-storage outputs and times."""
    import cupy as cp

    from sim import launch as L

    mod = _load_module(cp, ptx_text)
    fn = mod.get_function(kernel)
    smem = spec.shared_bytes(_target(ptx_text))
    if smem > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = smem
    device = L.device_buffers(spec, inputs)
    dev = {}
    args = []
    for a in spec.args:
        if isinstance(a, L.TensorMapArg):
            raise ValueError(f"verify --on-gpu: tensor-map argument {a.name} is not supported on the GPU path yet")
        if isinstance(a, L.BufferArg):
            dev[a.name] = cp.asarray(device[a.name])
            args.append(dev[a.name])
        else:
            args.append(inputs[a.name] if a.name in inputs else a.numpy())
    fresh = {a.name: device[a.name].copy() for a in spec.buffers if a.is_output}

    def launch():
        fn(spec.grid, spec.block, tuple(args), shared_mem=smem)
    launch()
    cp.cuda.runtime.deviceSynchronize()
    outs = {a.name: cp.asnumpy(dev[a.name]) for a in spec.buffers if a.is_output}
    times = []
    for i in range(warmup + repeat):
        for name, arr in fresh.items():          # inout buffers start from the same values each time
            dev[name].set(arr)
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        launch()
        e.record()
        e.synchronize()
        if i >= warmup:
            times.append(cp.cuda.get_elapsed_time(s, e) * 1e-3)
    return {"outputs": outs, "seconds": float(np.median(times)), "seconds_min": float(np.min(times)),
            "repeat": repeat, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}


def _load_module(cp, text: str):
    """A CuPy module from PTX: assembled with ``ptxas -arch ARCH`` (:func:`_sass_arch`) when ptxas is
    on PATH (the driver JIT otherwise). CuPy loads a module from its file lazily, at the first
    ``get_function``, so the files stay in a folder removed when the process ends."""
    import atexit
    import os
    import shutil
    import subprocess
    import tempfile

    d = tempfile.mkdtemp(prefix="kernlens-gpu-")
    atexit.register(shutil.rmtree, d, True)
    src = os.path.join(d, "k.ptx")
    with open(src, "w") as fh:
        fh.write(text)
    ptxas, target = shutil.which("ptxas"), _sass_arch(cp, _target(text))
    if ptxas and target:
        out = os.path.join(d, "k.cubin")
        r = subprocess.run([ptxas, "-arch", target, src, "-o", out], capture_output=True, text=True)
        if r.returncode:
            raise InputError(f"ptxas rejected the kernel: {r.stderr.strip()[:400]}")
        return cp.RawModule(path=out)
    return cp.RawModule(path=src)


def _sass_arch(cp, target: str | None) -> str | None:
    """The ``ptxas -arch`` for this GPU: the PTX's own target when it is arch-specific (``sm_90a``),
    else the device's (a cubin for sm_80 does not load on sm_90; PTX for sm_80 assembles for sm_90)."""
    if target is None or target.endswith("a"):
        return target
    props = cp.cuda.runtime.getDeviceProperties(0)
    dev = props["major"] * 10 + props["minor"]
    want = int(target[3:]) if target[3:].isdigit() else dev
    return f"sm_{max(dev, want)}"


def _target(text: str) -> str | None:
    import re

    m = re.search(r"^\s*\.target\s+(\w+)", text, re.M)
    return m.group(1) if m else None


def verify(ptx_path: str, spec, *, on_gpu: bool = False, repeat: int = 10, jobs: int = 1) -> Verdict:
    from sim import launch as L

    text = Path(ptx_path).read_text()
    ex, report = simulate(ptx_path, spec, jobs=jobs)
    gpu = None
    if on_gpu:
        why = gpu_available()
        if why:
            raise InputError(f"--on-gpu: {why}", Span(ptx_path))
        got = run_on_gpu(text, spec, ex.kernel, ex.inputs, repeat=repeat)
        mism = {}
        for a in spec.outputs:
            g = np.ascontiguousarray(got["outputs"][a.name]).view(np.uint8)
            s = np.ascontiguousarray(ex.device[a.name]).view(np.uint8)
            esz = np.dtype(L.DEVICE_NP[a.dtype]).itemsize
            diff = (g.reshape(-1, esz) != s.reshape(-1, esz)).any(axis=1)
            mism[a.name] = int(diff.sum())
        gpu_check = None
        if spec.reference:
            from sim.check import check_outputs
            from sim.cli import load_reference

            ref = load_reference(spec.reference)(dict(ex.inputs))
            dec = L.decode_outputs(spec, got["outputs"])
            gpu_check = check_outputs(dec, ref, {a.name: a.dtype for a in spec.buffers}, rtol=spec.rtol,
                                      atol=spec.atol, per_output=spec.per_output)
        gpu = {"device": got["device"], "seconds": got["seconds"], "seconds_min": got["seconds_min"],
               "repeat": got["repeat"], "mismatched_elements_vs_sim": mism,
               "bit_exact_vs_sim": all(v == 0 for v in mism.values()),
               "check_passed": gpu_check.passed if gpu_check else None}
    return Verdict(ex.kernel, report is None or report.passed, tuple(ex.problems),
                   report.to_dict() if report else None, gpu, {"sim_seconds": ex.seconds})


# ---------------------------------------------------------------------------------------------- CLI
def register(subparsers):
    import argparse

    p = subparsers.add_parser("verify", help="check a kernel on the simulator, against its reference and on a GPU",
                              description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="PTX file")
    p.add_argument("--launch", required=True, metavar="SPEC", help="launch spec (F.launch.json, manifest.json#E)")
    p.add_argument("--on-gpu", action="store_true", help="also run on the GPU with CuPy and compare bit for bit")
    p.add_argument("--repeat", type=int, default=10, help="timed GPU launches (median reported)")
    p.add_argument("--jobs", type=int, default=1, help="simulator processes for the launch")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from sim import launch as L

    if not Path(args.file).exists():
        raise InputError(f"no such file: {args.file}", Span(args.file))
    spec = L.load_launch(args.launch)
    if args.on_gpu:                      # say so before spending time in the simulator
        why = gpu_available()
        if why:
            raise InputError(f"--on-gpu: {why}", Span(args.file))
    v = verify(args.file, spec, on_gpu=args.on_gpu, repeat=args.repeat, jobs=args.jobs)
    if args.json:
        print(json.dumps(v.to_dict(), indent=1, default=str))
    else:
        print(f"{args.file}: {v.kernel}")
        print(f"  simulator: {'no problems' if not v.problems else f'{len(v.problems)} problem(s)'}; "
              f"reference check {'PASS' if v.sim_ok else 'FAIL'}")
        for p in v.problems[:5]:
            print(f"    {p}")
        if v.gpu:
            g = v.gpu
            print(f"  gpu ({g['device']}): bit-exact vs simulator: {'yes' if g['bit_exact_vs_sim'] else 'NO'} "
                  f"(mismatched elements {g['mismatched_elements_vs_sim']}); reference check "
                  f"{'PASS' if g['check_passed'] else 'FAIL' if g['check_passed'] is False else '-'}")
            print(f"  gpu time: {g['seconds'] * 1e6:.1f} us median of {g['repeat']} (measured)")
        print("verify: OK" if v.ok else "verify: MISMATCH")
    return 0 if v.ok else 1
