"""Hardware truth for the project's own example kernels (run on a machine with an NVIDIA GPU).

    python3 bench/device/example_truth.py run OUTDIR    # every example: inputs, GPU outputs bit for bit
    python3 bench/device/example_truth.py one NAME      # one launch of one kernel (under ncu / compute-sanitizer)

Inputs come from the same launch specs and seed rule kernlens uses (``examples/manifest.json``,
``sim.launch.build_inputs``), so a simulator run on the same spec sees the same bytes. Needs numpy
and cupy only: ``sim/launch.py`` is loaded by path, without importing the simulator.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
_spec = importlib.util.spec_from_file_location("kernlens_launch", ROOT / "sim" / "launch.py")
launch = importlib.util.module_from_spec(_spec)
sys.modules["kernlens_launch"] = launch
_spec.loader.exec_module(launch)

EXAMPLES = ["sgemm_tiled", "hgemm_wmma", "dot_dp4a", "reduce_sum", "hfma2_axpy"]
BUGS = ["oob_write", "missing_sync", "uninit_smem"]


def ptx_path(name: str) -> Path:
    p = ROOT / "examples" / "ptx" / f"{name}.sm_90.ptx"
    return p if p.exists() else ROOT / "examples" / "ptx" / "bugs" / f"{name}.sm_90.ptx"


def run_one(name: str):
    import cupy as cp

    spec = launch.load_launch(f"{ROOT / 'examples' / 'manifest.json'}#{name}")
    decoded = launch.build_inputs(spec, seed=launch.entry_seed(name))
    dev = launch.device_buffers(spec, decoded)
    gpu = {k: cp.asarray(v) for k, v in dev.items()}
    args = [gpu[a.name] if isinstance(a, launch.BufferArg) else a.numpy() for a in spec.args]
    fn = cp.RawModule(path=str(ptx_path(name))).get_function(name)
    fn(tuple(spec.grid), tuple(spec.block), tuple(args), shared_mem=spec.shared_bytes("sm_90"))
    cp.cuda.runtime.deviceSynchronize()
    return spec, decoded, dev, {k: v.get() for k, v in gpu.items()}


def main() -> int:
    mode = sys.argv[1]
    if mode == "one":
        run_one(sys.argv[2])
        return 0
    out = Path(sys.argv[2])
    arrays, summary = {}, {}
    for name in EXAMPLES:
        spec, decoded, dev, got = run_one(name)
        for a in spec.buffers:
            arrays[f"{name}.in_{a.name}"] = dev[a.name]
            if a.is_output:
                arrays[f"{name}.got_{a.name}"] = got[a.name]
        summary[name] = {"grid": list(spec.grid), "block": list(spec.block),
                         "outputs": [a.name for a in spec.outputs]}
        print(name, "ok", {a.name: float(np.abs(launch.decode(got[a.name], a.dtype)).sum()) for a in spec.outputs})
    np.savez_compressed(out / "examples_h200.npz", **arrays)
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    summary["_device"] = {"name": props["name"].decode(), "cc": f"{props['major']}.{props['minor']}",
                          "driver": cp.cuda.runtime.driverGetVersion(), "runtime": cp.cuda.runtime.runtimeGetVersion()}
    (out / "examples_h200.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
