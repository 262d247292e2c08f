"""Runs the PTX ISA test programs of ``examples/ptx/isa/`` on a GPU and saves their outputs.

    python bench/device/isa_truth.py examples/ptx/isa OUTDIR     # on the H200 (CuPy + ptxas)

Each program (see ``bench/device/isa_programs.py``) is assembled with ``ptxas -arch=sm_90a``
and launched as one CTA of 32 threads with ``(out, in)``: ``in`` is ``input.npy``, ``out``
``32*words`` zeroed u32 words (``// kernlens-isa: threads=32 words=N`` in the file).  The
outputs go to ``OUTDIR/h200.npz`` (one uint32 array per program) with ``OUTDIR/h200.log``
naming the device and any program that failed; the project keeps them as
``examples/ptx/isa/h200.npz``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np


def header(text: str) -> dict:
    m = re.search(r"// kernlens-isa: (.*)", text)
    return {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}


def run_one(path: Path, out_dir: Path) -> None:
    """One program in this process (a fault poisons the CUDA context, so each gets its own)."""
    import cupy as cp

    h = header(path.read_text())
    cubin = out_dir / (path.stem + ".cubin")
    subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", str(cubin)], check=True, capture_output=True, text=True)
    inp = cp.asarray(np.load(path.parent / "input.npy"))
    k = cp.RawModule(path=str(cubin)).get_function("k")
    res = cp.zeros(h["threads"] * h["words"], cp.uint32)
    k((1,), (h["threads"],), (res, inp))
    cp.cuda.runtime.deviceSynchronize()
    np.save(out_dir / (path.stem + ".npy"), cp.asnumpy(res))
    cubin.unlink(missing_ok=True)


def main(src: str, out: str) -> None:
    import cupy as cp

    src_dir, out_dir = Path(src), Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    dev = cp.cuda.runtime.getDeviceProperties(0)
    log = [f"device: {dev['name'].decode()} cc {dev['major']}.{dev['minor']}"]
    results = {}
    work = out_dir / "work"
    work.mkdir(exist_ok=True)
    for path in sorted(src_dir.glob("*.ptx")):
        r = subprocess.run([sys.executable, __file__, "--one", str(path), str(work)], capture_output=True, text=True)
        got = work / (path.stem + ".npy")
        if r.returncode == 0 and got.exists():
            results[path.stem] = np.load(got)
            got.unlink()
            log.append(f"ok {path.stem}")
        else:
            log.append(f"FAILED {path.stem}: {(r.stderr or '').strip().splitlines()[-1:]}")
    work.rmdir()
    np.savez_compressed(out_dir / "h200.npz", **results)
    (out_dir / "h200.log").write_text("\n".join(log) + "\n")
    print("\n".join(log))


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        run_one(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main(sys.argv[1], sys.argv[2])
