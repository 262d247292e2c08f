"""Hardware truth for the PTX generators (run on a machine with an NVIDIA GPU, CuPy and ptxas).

    python3 bench/device/generated_truth.py prepare DIR        # here: write DIR/plan.json + the PTX/launch files
    python3 bench/device/generated_truth.py run DIR OUT        # there: run them, write OUT/generated.{npz,json}
    python3 bench/device/generated_truth.py dry DIR            # here: the CPU side of 'run' (inputs, specs)

``prepare`` generates two sets with ``isa.generate``: **check** (the test grid's configurations of
``tests/isa/generate/test_ptx_generators.py`` on and off the tile grid, a few larger wgmma/mma GEMMs,
reductions and softmax): each runs once on the GPU with the inputs of the seed rule
(``sim.launch.build_inputs``), and its outputs are stored bit for bit, to be compared with the
simulator by ``tests/sim/test_generated_h200.py``; **sweep**: wgmma f16 GEMMs at 4096^3 (the
configurations of ``examples/sweep/wgmma_f16_4096.toml``), each timed (CUDA events, median of 20
launches after 3 warm-ups, through ``sim.verify.run_on_gpu``: ptxas -arch sm_90a + CuPy RawModule)
and checked against a float32 torch product. Then cuBLAS (``torch.matmul``, f16 in, f16 out, the same
4096^3 nt product) is timed the same way. Every time is labelled measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SWEEP_TOML = ROOT / "examples" / "sweep" / "wgmma_f16_4096.toml"
TMA_SWEEP_TOML = ROOT / "examples" / "sweep" / "wgmma_f16_4096_tma.toml"
REPEAT, WARMUP = 20, 3


def _check_configs():
    """(name, config) of the check set."""
    from isa.generate import ptx_gemm as G
    from isa.generate import ptx_vector as V
    from tests.isa.generate.test_ptx_generators import GEMM, SIZES

    out = []
    for engine, dtype, arch, tile, warps, layout, stages in GEMM:
        for size in ("on", "off"):                      # exactly the test grid's sizes and epilogues
            m, n, k = SIZES[size]
            if size == "off":
                if engine == "fma":
                    k = 13
                if layout[1] == "n" and dtype != "f32":
                    n = 46
            beta = 0.5 if size == "off" and dtype != "s8" else (-2.0 if dtype == "s8" and size == "off" else 0.0)
            cfg = G.PtxGemmConfig(arch=arch, dtype=dtype, engine=engine, m=m, n=n, k=k, tile=tile, warps=warps,
                                  stages=stages, layout=layout, alpha=2.0 if size == "off" else 1.0, beta=beta)
            out.append(("gemm", cfg))
    for kw in (dict(tile=(128, 256, 64), warps=(2, 1), stages=4, m=256, n=512, k=256),
               dict(tile=(128, 128, 64), warps=(1, 1), stages=3, m=300, n=200, k=136),
               dict(tile=(128, 128, 32), warps=(2, 1), stages=4, m=256, n=256, k=512, layout="tn")):
        kw = dict(kw)
        out.append(("gemm", G.PtxGemmConfig(arch="sm_90a", dtype=kw.pop("dtype", "f16"), engine="wgmma",
                                            layout=kw.pop("layout", "nt"), **kw)))
    out.append(("gemm", G.PtxGemmConfig(arch="sm_90", dtype="bf16", engine="mma", m=256, n=256, k=256,
                                        tile=(128, 128, 32), warps=(2, 2), stages=3)))
    out.append(("gemm", G.PtxGemmConfig(arch="sm_90", dtype="f32", engine="fma", m=256, n=192, k=100,
                                        tile=(64, 64, 8), warps=(2, 2), stages=2)))
    for op in ("sum", "max"):
        for passes in (1, 2):
            out.append(("reduce", V.PtxReduceConfig(arch="sm_90", op=op, dtype="f32", rows=3, cols=3000,
                                                    passes=passes, threads=128, splits=2 if passes == 2 else None)))
    out.append(("reduce", V.PtxReduceConfig(arch="sm_80", op="sum", dtype="f16", rows=4, cols=1000, passes=1,
                                            threads=256)))
    for dt, passes in (("f32", 1), ("f16", 2)):
        out.append(("softmax", V.PtxSoftmaxConfig(arch="sm_90", dtype=dt, rows=5, cols=777, passes=passes,
                                                  threads=128)))
    return out


def _tma_configs():
    """(name, config) of the TMA check set (``--set tma``): the test grid's TMA staging
    configurations (``TMA`` of tests/isa/generate/test_ptx_generators.py) on and off the tile grid,
    and larger TMA-staged wgmma/mma GEMMs."""
    from isa.generate import ptx_gemm as G
    from tests.isa.generate.test_ptx_generators import TMA

    out = []
    for engine, dtype, arch, tile, warps, layout, stages in TMA:
        for size in ("on", "off"):                      # exactly test_gemm_tma_grid's sizes and epilogues
            m, n, k = (64, 64, 128) if size == "on" else (72 if layout[0] == "t" else 70,
                                                          56 if layout[1] == "n" else 45,
                                                          80 if dtype in ("s8", "e4m3") else 72)
            out.append(("gemm", G.PtxGemmConfig(arch=arch, dtype=dtype, engine=engine, m=m, n=n, k=k, tile=tile,
                                                warps=warps, stages=stages, layout=layout, staging="tma",
                                                beta=0.5 if size == "off" and dtype != "s8" else 0.0)))
    for kw in (dict(tile=(128, 256, 64), warps=(2, 1), stages=4, m=256, n=512, k=256),
               dict(tile=(128, 128, 64), warps=(1, 1), stages=3, m=300, n=200, k=136),
               dict(tile=(128, 128, 32), warps=(2, 1), stages=4, m=256, n=256, k=512, layout="tn")):
        kw = dict(kw)
        out.append(("gemm", G.PtxGemmConfig(arch="sm_90a", dtype="f16", engine="wgmma", staging="tma",
                                            layout=kw.pop("layout", "nt"), **kw)))
    out.append(("gemm", G.PtxGemmConfig(arch="sm_90", dtype="bf16", engine="mma", m=256, n=256, k=256,
                                        tile=(128, 128, 32), warps=(2, 2), stages=3, staging="tma")))
    return out


def _emit(op, cfg):
    from isa.generate import ptx_gemm as G
    from isa.generate import ptx_vector as V

    if op == "gemm":
        return G.gemm_ptx(cfg), G.launch_spec(cfg)
    if op == "reduce":
        return V.reduce_ptx(cfg), V.reduce_launch(cfg)
    return V.softmax_ptx(cfg), V.softmax_launch(cfg)


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:16]


def prepare(d: Path, which: str = "main") -> None:
    from sim.sweep import load_sweep, make_config

    d.mkdir(parents=True, exist_ok=True)
    plan = {"check": [], "sweep": [], "set": which}
    for i, (op, cfg) in enumerate(_check_configs() if which == "main" else _tma_configs()):
        text, spec = _emit(op, cfg)
        name = cfg.kernel_name
        tag = f"c{i:02d}.{name}"
        (d / f"{tag}.ptx").write_text(text)
        (d / f"{tag}.launch.json").write_text(json.dumps(spec, indent=1))
        plan["check"].append({"tag": tag, "kernel": name, "op": op, "ptx_sha256": _sha(text)})
    sw = load_sweep(SWEEP_TOML if which == "main" else TMA_SWEEP_TOML)
    for p in sw.points():
        cfg, gen, spec_of = make_config(p["op"], p["options"], p["size"])
        tag = f"{cfg.kernel_name}.{cfg.m}x{cfg.n}x{cfg.k}"
        (d / f"{tag}.ptx").write_text(gen(cfg))
        (d / f"{tag}.launch.json").write_text(json.dumps(spec_of(cfg), indent=1))
        plan["sweep"].append({"tag": tag, "kernel": cfg.kernel_name, "m": cfg.m, "n": cfg.n, "k": cfg.k,
                              "ptx_sha256": _sha(gen(cfg))})
    (d / "plan.json").write_text(json.dumps(plan, indent=1))
    print(f"prepared {len(plan['check'])} check kernels, {len(plan['sweep'])} sweep kernels in {d}")


def _spec(d: Path, tag: str):
    from sim import launch as L

    return L.load_launch(d / f"{tag}.launch.json")


def run(d: Path, out: Path, dry: bool = False, check_only: bool = False) -> int:
    from sim import launch as L

    plan = json.loads((d / "plan.json").read_text())
    if check_only:
        plan["sweep"] = []
    if not dry:
        import cupy as cp

        from sim.verify import run_on_gpu
    arrays, result = {}, {"check": {}, "sweep": [], "errors": []}
    t0 = time.time()
    for item in plan["check"]:
        tag, name = item["tag"], item["kernel"]
        spec = _spec(d, tag)
        inputs = L.build_inputs(spec, spec.seed_for(name))
        dev = L.device_buffers(spec, inputs)
        for a in spec.buffers:
            arrays[f"{tag}.in_{a.name}"] = dev[a.name]
        if dry:
            continue
        try:
            got = run_on_gpu((d / f"{tag}.ptx").read_text(), spec, name, inputs, repeat=5, warmup=1)
        except Exception as exc:  # noqa: BLE001 - record and go on
            result["errors"].append(f"{tag}: {type(exc).__name__}: {exc}"[:500])
            print("ERROR", tag, exc, flush=True)
            continue
        for k, v in got["outputs"].items():
            arrays[f"{tag}.got_{k}"] = v
        result["check"][tag] = {"kernel": name, "op": item["op"], "ptx_sha256": item["ptx_sha256"],
                                "seconds": got["seconds"], "repeat": 5,
                                "grid": list(spec.grid), "block": list(spec.block), "label": "measured"}
        print(f"check {tag}: {got['seconds'] * 1e6:.1f} us", flush=True)
    print(f"check set: {len(result['check'])} kernels in {time.time() - t0:.1f} s", flush=True)
    stem = "generated" if plan.get("set", "main") == "main" else f"generated_{plan['set']}"
    if not dry:
        _save(out, arrays, result, t0, stem)     # kept if a later phase hangs and is killed
    # ---- the sweep at 4096^3: one set of inputs (same shapes for every point), reference by torch
    if plan["sweep"]:
        first = plan["sweep"][0]
        spec0 = _spec(d, first["tag"])
        inputs = L.build_inputs(spec0, spec0.seed_for(first["kernel"]))
        ref = None
        if not dry:
            import torch

            A = torch.from_numpy(np.asarray(inputs["A"], np.float16)).cuda()
            B = torch.from_numpy(np.asarray(inputs["B"], np.float16)).cuda()
            ref = (A.float() @ B.float().T)
            scale = float(ref.abs().max())
        for item in plan["sweep"]:
            spec = _spec(d, item["tag"])
            assert [a.shape for a in spec.buffers] == [a.shape for a in spec0.buffers]
            if dry:
                continue
            try:
                got = run_on_gpu((d / f"{item['tag']}.ptx").read_text(), spec, item["kernel"], inputs,
                                 repeat=REPEAT, warmup=WARMUP)
            except Exception as exc:  # noqa: BLE001
                result["errors"].append(f"{item['tag']}: {type(exc).__name__}: {exc}"[:500])
                print("ERROR", item["tag"], exc, flush=True)
                continue
            C = torch.from_numpy(np.asarray(got["outputs"]["C"]).astype(np.float32)).cuda()
            err = float((C - ref).abs().max()) / scale
            within = bool(((C - ref).abs() <= spec.atol + spec.rtol * ref.abs()).all())
            flops = 2 * item["m"] * item["n"] * item["k"]
            row = {**item, "seconds": got["seconds"], "seconds_min": got["seconds_min"], "repeat": REPEAT,
                   "tflops": flops / got["seconds"] / 1e12, "max_abs_err_over_max_ref": err,
                   "within_tolerance": within, "rtol": spec.rtol, "atol": spec.atol,
                   "source": f"measured ({got['device']}, median of {REPEAT})"}
            result["sweep"].append(row)
            print(f"sweep {item['kernel']}: {got['seconds'] * 1e6:.1f} us, {row['tflops']:.1f} TFLOP/s, "
                  f"err {err:.2e}", flush=True)
        if not dry:
            m, n, k = first["m"], first["n"], first["k"]
            times = []
            for i in range(WARMUP + 50):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                D = torch.matmul(A, B.T)
                e.record()
                e.synchronize()
                if i >= WARMUP:
                    times.append(s.elapsed_time(e) * 1e-3)
            med = float(np.median(times))
            result["cublas"] = {"what": f"torch.matmul f16 {m}x{n}x{k} (A @ B.T, f16 out; cuBLAS)",
                                "seconds": med, "tflops": 2 * m * n * k / med / 1e12, "repeat": 50,
                                "torch": torch.__version__, "label": "measured"}
            best = max(result["sweep"], key=lambda r: r["tflops"]) if result["sweep"] else None
            if best:
                result["best"] = {"kernel": best["kernel"], "tflops": best["tflops"],
                                  "fraction_of_cublas": best["tflops"] / result["cublas"]["tflops"]}
            print("cublas", result["cublas"], "best", result.get("best"), flush=True)
            del D
    if dry:
        print(f"dry run: {len(arrays)} input arrays, {sum(a.nbytes for a in arrays.values()) / 1e6:.1f} MB")
        return 0
    _save(out, arrays, result, t0, stem)
    print(f"wrote {out}/{stem}.npz ({len(arrays)} arrays), {stem}.json; {len(result['errors'])} errors")
    return 0


def _save(out: Path, arrays: dict, result: dict, t0: float, stem: str = "generated") -> None:
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(0)
    ptxas = subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    result["_device"] = {"name": props["name"].decode(), "cc": f"{props['major']}.{props['minor']}",
                         "driver": cp.cuda.runtime.driverGetVersion(), "runtime": cp.cuda.runtime.runtimeGetVersion(),
                         "ptxas": ptxas[-1] if ptxas else None, "seconds": time.time() - t0}
    out.mkdir(parents=True, exist_ok=True)
    import hashlib

    # inputs are rebuilt by the seed rule: keep their digests, not their bytes (tests check them)
    result["inputs_sha256"] = {k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:16]
                               for k, v in arrays.items() if ".in_" in k}
    np.savez_compressed(out / f"{stem}.npz", **{k: v for k, v in arrays.items() if ".in_" not in k})
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1))


def main() -> int:
    mode = sys.argv[1]
    if mode == "prepare":
        prepare(Path(sys.argv[2]), "tma" if "--set=tma" in sys.argv or "tma" in sys.argv[3:] else "main")
        return 0
    if mode == "dry":
        return run(Path(sys.argv[2]), Path("/nonexistent"), dry=True)
    return run(Path(sys.argv[2]), Path(sys.argv[3]), check_only="--check-only" in sys.argv)


if __name__ == "__main__":
    sys.exit(main())
