"""Start-up (issue #15): a cold ``kernlens run`` of a small launch against the same launch run
warm, and a one-file ``validate-kernel``, each in fresh processes, against their goals.

Goals: a cold ``kernlens run`` of a small launch within 1.5x of the warm run; a one-file
``validate-kernel`` in <= 0.2 s.

Launches: the issue's own example, a 256x256x256 Triton fp16 GEMM (``tt_matmul_fp16`` of
``../shared/corpus`` with its manifest launch scaled to M = N = K = 256: grid 4 x 4 of 64 x 64
tiles; skipped, saying so, where ../shared is absent) and a bundled example (``dot_dp4a`` of
examples/manifest.json, a launch of 7,492 thread-instructions).

* cold: a fresh process from start to exit (interpreter, imports, parse, decode, run, report),
  ``python -m kernlens.cli run FILE --launch SPEC``; timed from outside (``bench/proc_time``:
  wall seconds, and user + system CPU seconds from ``wait4``). Three cache states, each stated:
  "empty cache" (``KERNLENS_CACHE`` a new, empty folder: parsed modules and inputs built from
  scratch; Lark's tables, the code of the dataclasses' methods and the machine model's tables read
  from the copies the first run left beside the code, ``isa/ptx/__pycache__``, ``isa/__pycache__``
  and ``sim/machines/__pycache__``, as Python's bytecode is: one priming run of each command line
  with its own empty folder leaves them), "warm cache" (the folder a previous process filled)
  and, for validate-kernel, "no cache" (``KERNLENS_NO_CACHE=1``: Lark's tables built, every
  dataclass method compiled and the machine model parsed too).
* warm: the same command line run again inside one process that has run it once
  (``kernlens.cli.main(argv)`` with stdout discarded), timed inside (``perf_counter`` and
  ``process_time``): what is left is the launch itself.

The "for scale" figures (``python -c`` of nothing, of numpy's import and of the imports of a PTX
run) end as the program ends, with ``os._exit`` (no interpreter teardown). Every figure is the best
of N (measured on this machine: its CPU count and load average are printed; on a shared machine wall
time is inflated, CPU time much less). Python's own bytecode cache is on, as after ``pip install``
(``PYTHONDONTWRITEBYTECODE`` is dropped for the children and one priming run writes
``__pycache__``): that cost is Python's, not kernlens's.

Run: .venv/bin/python bench/startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PY = sys.executable
from proc_time import ENV, measure  # noqa: E402

ENV = {k: v for k, v in ENV.items() if k not in ("PYTHONDONTWRITEBYTECODE", "KERNLENS_NO_CACHE")}
CORPUS = ROOT.parent / "shared" / "corpus"
VALIDATE = ROOT / "examples" / "ptx" / "hgemm_wmma.sm_90.ptx"
GOAL_RATIO = 1.5
GOAL_VALIDATE = 0.2
#: the modules every PTX ``kernlens run`` imports (a tensor-core kernel imports sim.ptx.tensor too): importing
#: them alone is the part of a cold run that no cache removes
RUN_IMPORTS = ("import numpy, kernlens.cli, sim.cli, sim.launch, sim.check, sim.ptx.run, sim.ptx.ops, "
               "sim.memory.heat, analyzer.report")

WARM = """
import contextlib, os, sys, time
from kernlens.cli import main
argv, n = sys.argv[2:], int(sys.argv[1])
best = []
with open(os.devnull, "w") as null:
    for i in range(n + 1):
        t, c = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
            rc = main(argv)
        best.append((time.perf_counter() - t, time.process_time() - c))
        assert rc in (0, 1), rc
print(min(b[0] for b in best[1:]), min(b[1] for b in best[1:]))
"""


def gemm_256_spec(out: Path) -> tuple[str, Path] | str:
    """(PTX path, launch spec path) of the issue's 256^3 Triton fp16 GEMM, or why it is skipped."""
    manifest = CORPUS / "manifest.json"
    if not manifest.exists():
        return f"skipped: {CORPUS} is absent (it ships with the team checkout, not with a clone)"
    (e,) = [x for x in json.loads(manifest.read_text())["entries"] if x["name"] == "tt_matmul_fp16"]
    n = 256
    launch = dict(e["launch"], grid=[n // 64, n // 64, 1])   # BLOCK_M = BLOCK_N = 64 (its constexprs)
    launch["args"] = [dict(a, shape=[n, n]) if "buffer" in a else
                      dict(a, value=n) if a["scalar"] in ("M", "N", "K") else a for a in launch["args"]]
    spec = dict(e, launch=launch, reference=f"{CORPUS / 'reference.py'}:{e['reference']}")
    spec.pop("perf_launch", None)
    out.write_text(json.dumps(spec))
    return str(CORPUS / e["ptx"]["sm_90"]), out


def best(runs):
    return min(r[0] for r in runs), min(r[1] for r in runs)


def cold(cmd: list[str], n: int, cache: str, no_cache: bool = False) -> dict[str, tuple[float, float]]:
    """Best (wall, CPU) of ``cmd`` in fresh processes, with an empty and with a warm disk cache
    (and with ``no_cache``, the cache off)."""
    def proc(env):
        wall, cpu, _, rc = measure(cmd, env=env)
        if rc not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)}: exit {rc}")
        return wall, cpu

    with tempfile.TemporaryDirectory(dir=cache) as d:
        proc(dict(ENV, KERNLENS_CACHE=d))            # priming: the copies beside the code, as after a first run
    empty = []
    for i in range(n):
        with tempfile.TemporaryDirectory(dir=cache) as d:
            empty.append(proc(dict(ENV, KERNLENS_CACHE=d)))
    warm_dir = tempfile.mkdtemp(dir=cache)
    env = dict(ENV, KERNLENS_CACHE=warm_dir)
    proc(env)                                        # fills the cache
    out = {"empty cache": best(empty), "warm cache": best([proc(env) for _ in range(n)])}
    if no_cache:
        out["no cache (KERNLENS_NO_CACHE=1)"] = best([proc(dict(ENV, KERNLENS_NO_CACHE="1")) for _ in range(n)])
    return out


def warm(argv: list[str], n: int, cache: str) -> tuple[float, float]:
    env = dict(ENV, KERNLENS_CACHE=tempfile.mkdtemp(dir=cache))
    out = subprocess.run([PY, "-c", WARM, str(n), *argv], env=env, cwd=ROOT, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"warm run of {' '.join(argv)} failed:\n{out.stderr[-2000:]}")
    w, c = map(float, out.stdout.split())
    return w, c


def report_run(label: str, argv: list[str], n: int, cache: str, floor: tuple[float, float],
               imports: tuple[float, float]) -> None:
    """Warm and cold figures of one ``kernlens`` command line; ``floor`` is (wall, CPU) of a bare
    ``python -c 'import numpy'``, below which no cold run can go, ``imports`` that of
    :data:`RUN_IMPORTS`."""
    w_wall, w_cpu = warm(argv, n, cache)
    c = cold([PY, "-m", "kernlens.cli", *argv], n, cache)
    print(f"{label}")
    print(f"  warm (run again in one process):  {w_wall:7.3f} s wall  {w_cpu:7.3f} s CPU")
    for state, (wall, cpu) in c.items():
        r, rc = wall / w_wall, cpu / w_cpu
        print(f"  cold, {state + ':':<27} {wall:7.3f} s wall  {cpu:7.3f} s CPU   {r:5.1f}x warm on wall, "
              f"{rc:5.1f}x on CPU (goal <= {GOAL_RATIO}x: {'met' if r <= GOAL_RATIO else 'NOT met'} on wall, "
              f"{'met' if rc <= GOAL_RATIO else 'NOT met'} on CPU)")
    extra = c["warm cache"][1] - w_cpu
    print(f"  (cold minus warm, warm cache: {extra:.3f} s CPU; importing a PTX run's modules alone takes "
          f"{imports[1]:.3f} s CPU, numpy {floor[1]:.3f} s of it)")
    if floor[1] + w_cpu > GOAL_RATIO * w_cpu:
        print(f"  (out of reach for this launch: the interpreter and numpy alone take {floor[1]:.3f} s CPU, "
              f"more than {GOAL_RATIO - 1:.1f}x its warm {w_cpu:.3f} s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n = args.repeat
    print(f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}; best of {n}; all figures measured "
          "on this machine")
    subprocess.run([PY, "-m", "compileall", "-q", "isa", "sim", "analyzer", "kernlens", "tui"],
                   env=ENV, cwd=ROOT, check=True, capture_output=True)   # __pycache__, as after pip install
    with tempfile.TemporaryDirectory() as first:     # the tables' copy beside the grammar, as after the first run
        subprocess.run([PY, "-c", "import isa.ptx.parser as p; p._lark()"], env=dict(ENV, KERNLENS_CACHE=first),
                       cwd=ROOT, check=True, capture_output=True)
    # numpy imported as kernlens's entry points import it: OpenBLAS asked for one thread
    # (kernlens.one_blas_thread) unless the caller chose a count
    blas = {} if any(v in ENV for v in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")) \
        else {"OPENBLAS_NUM_THREADS": "1"}
    # each snippet ends as the kernlens program does (kernlens.cli.exit_now: os._exit, no teardown of
    # the interpreter and its modules, ~0.02 s of CPU after numpy's import, measured), so that these
    # are parts of a cold run
    scale = {what: best([measure([PY, "-c", code + "; import os; os._exit(0)"], env=dict(ENV, **blas))[:2]
                         for _ in range(n)])
             for what, code in (("python -c pass", "pass"), ("python -c 'import numpy'", "import numpy"),
                                ("python -c 'import <the modules of a PTX run>'", RUN_IMPORTS))}
    floor = scale["python -c 'import numpy'"]
    imports = scale["python -c 'import <the modules of a PTX run>'"]
    with tempfile.TemporaryDirectory(prefix="kernlens-startup-") as cache:
        g = gemm_256_spec(Path(cache) / "tt_matmul_fp16_256.json")
        if isinstance(g, str):
            print(f"kernlens run tt_matmul_fp16 256x256x256 (the issue's example): {g}")
        else:
            report_run("kernlens run tt_matmul_fp16 at 256x256x256 (the issue's example; 16 CTAs of 128 threads)",
                       ["run", g[0], "--launch", str(g[1])], n, cache, floor, imports)
        report_run("kernlens run dot_dp4a (bundled example, examples/manifest.json#dot_dp4a)",
                   ["run", "examples/ptx/dot_dp4a.sm_90.ptx", "--launch", "examples/manifest.json#dot_dp4a"],
                   n, cache, floor, imports)
        v = cold([PY, "-m", "analyzer.cli", str(VALIDATE.relative_to(ROOT)), "-o", os.devnull], n, cache,
                 no_cache=True)
        print(f"validate-kernel {VALIDATE.name} (one file, fresh process)")
        for state, (wall, cpu) in v.items():
            print(f"  {state + ':':<36} {wall:7.3f} s wall  {cpu:7.3f} s CPU   (goal <= {GOAL_VALIDATE} s: "
                  f"{'met' if wall <= GOAL_VALIDATE else 'NOT met'} on wall, "
                  f"{'met' if cpu <= GOAL_VALIDATE else 'NOT met'} on CPU)")
    for what, (wall, cpu) in scale.items():
        print(f"for scale: {what:<36} {wall:7.3f} s wall  {cpu:7.3f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
