"""``kernlens sweep SWEEP.toml``: generated kernels x problem sizes, on a Dask cluster.

    kernlens sweep examples/sweep/wgmma_f16.toml                   # a LocalCluster, one worker per core
    kernlens sweep S.toml --scheduler tcp://HOST:8786 -o out/s     # an existing cluster
    kernlens sweep S.toml --workers 2 --json

A sweep file names a generator, the options every point shares, the options to vary (their cartesian
product) and the problem sizes::

    [sweep]
    name = "wgmma f16 tiles"
    op = "gemm"                        # gemm | reduce | softmax (the PTX generators)
    predict = "h200"                   # the timing model, or "none"
    check = "auto"                     # auto: check outputs where the predicted launch ran every CTA,
                                       # and at check_size otherwise; "none"
    check_size = {m = 96, n = 80, k = 72}
    measure = "auto"                   # auto: on the GPU when CuPy finds one; "none"
    measured = "../h200/generated.json"    # earlier measurements (kernel + size -> seconds), optional

    [base]
    arch = "sm_90a"
    engine = "wgmma"
    dtype = "f16"

    [vary]                             # every combination of these lists ...
    stages = [3, 4]

    [[variant]]                        # ... with each of these option sets (optional)
    tile = "128x256x64"
    warps = "2x1"

    [[size]]
    m = 4096
    n = 4096
    k = 4096

Every point generates its PTX (``isa.generate``), assembles it with ``ptxas`` when present, checks its
outputs on the simulator against the reference (``sim.verify.simulate``), predicts its time with the
timing model (``timing="h200"``; big launches simulate a deterministic sample of CTAs) and, with a
GPU, is measured (``sim.verify.run_on_gpu``; serially in this process after the cluster's work, since
points running side by side on one GPU would time each other). Points are Dask tasks
(``distributed``, extra ``kernlens[sweep]``); the results are a table, a Parquet file, and, where
measurements exist, an SVG plot of predicted against measured time with the Spearman rank correlation
and the gap between the predicted best and the measured best. Every time says whether it is
``modelled`` or ``measured``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from isa.errors import InputError, Span

OPS = ("gemm", "reduce", "softmax")
SIZE_KEYS = {"gemm": ("m", "n", "k"), "reduce": ("rows", "cols"), "softmax": ("rows", "cols")}
CONNECT_TIMEOUT = "10s"      # how long --scheduler ADDR may take to answer
NEEDS = "kernlens sweep runs on Dask: pip install 'kernlens[sweep]' (dask, distributed, pyarrow)"


# ---------------------------------------------------------------------------------------------- file
@dataclass(frozen=True)
class Sweep:
    """A parsed SWEEP.toml."""

    name: str
    op: str
    base: dict
    vary: dict
    sizes: tuple
    predict: str = "h200"
    check: str = "auto"
    check_size: dict | None = None
    measure: str = "auto"
    variants: tuple = ({},)       # option sets, each combined with every combination of vary
    measured: tuple = ()          # rows {kernel, size..., seconds} read from the 'measured' file
    repeat: int = 20
    source: str = "<sweep>"

    def points(self) -> list[dict]:
        """One dict per point: generator options (base, then one combination of vary) and size."""
        keys = list(self.vary)
        out = []
        for variant, combo in itertools.product(self.variants, itertools.product(*(self.vary[k] for k in keys))):
            opts = dict(self.base, **variant, **dict(zip(keys, combo)))
            for size in self.sizes:
                out.append({"op": self.op, "options": opts, "size": dict(size), "predict": self.predict,
                            "check": self.check, "check_size": self.check_size})
        return out


def _err(msg: str, path: str, expected=None) -> InputError:
    return InputError(msg, Span(path), expected=expected)


def load_sweep(path: str | Path) -> Sweep:
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise _err(f"no such file: {path}", str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise _err(f"{path}: not valid TOML: {exc}", str(path)) from None
    src = str(path)
    head = raw.get("sweep", {})
    unknown = set(raw) - {"sweep", "base", "vary", "variant", "size"}
    if unknown:
        raise _err(f"unknown table(s) {', '.join(sorted(unknown))}", src, ["sweep", "base", "vary", "variant", "size"])
    variants = raw.get("variant", [{}])
    if isinstance(variants, dict) or not variants or not all(isinstance(v, dict) for v in variants):
        raise _err("[[variant]] must be an array of tables", src)
    clash = {k for v in variants for k in v} & set(raw.get("vary", {}))
    if clash:
        raise _err(f"{', '.join(sorted(clash))} given both in [vary] and in [[variant]]", src)
    op = head.get("op", "gemm")
    if op not in OPS:
        raise _err(f"[sweep] op = {op!r}", src, list(OPS))
    vary = raw.get("vary", {})
    for k, v in vary.items():
        if not isinstance(v, list) or not v:
            raise _err(f"[vary] {k} must be a non-empty list", src)
    sizes = raw.get("size", [])
    if isinstance(sizes, dict):
        sizes = [sizes]
    if not sizes:
        raise _err("no [[size]] given", src)
    for s in sizes:
        if set(s) != set(SIZE_KEYS[op]):
            raise _err(f"[[size]] {s} must give exactly {', '.join(SIZE_KEYS[op])}", src)
    check_size = head.get("check_size")
    if check_size is not None and set(check_size) != set(SIZE_KEYS[op]):
        raise _err(f"check_size must give exactly {', '.join(SIZE_KEYS[op])}", src)
    for key, allowed in (("predict", ("h200", "none")), ("check", ("auto", "none")),
                         ("measure", ("auto", "none"))):
        if head.get(key, allowed[0]) not in allowed:
            raise _err(f"[sweep] {key} = {head[key]!r}", src, list(allowed))
    measured = ()
    if head.get("measured"):
        mpath = (path.parent / head["measured"]).resolve()
        if mpath.exists():
            measured = tuple(read_measured(mpath))
    return Sweep(name=head.get("name", path.stem), op=op, base=dict(raw.get("base", {})), vary=vary,
                 sizes=tuple(sizes), predict=head.get("predict", "h200"), check=head.get("check", "auto"),
                 check_size=check_size, measure=head.get("measure", "auto"), variants=tuple(variants),
                 measured=measured,
                 repeat=int(head.get("repeat", 20)), source=src)


def read_measured(path: Path) -> list[dict]:
    """Measured times from a JSON file: ``{"sweep": [{"kernel", "m", "n", "k", "seconds"}, ...]}``
    (what ``bench/device/generated_truth.py`` writes) or such a list at the top."""
    obj = json.loads(Path(path).read_text())
    rows = obj.get("sweep", []) if isinstance(obj, dict) else obj
    return [r for r in rows if "kernel" in r and "seconds" in r]


# ------------------------------------------------------------------------------------------ points
def make_config(op: str, options: dict, size: dict):
    """The generator's config for one point (``InputError`` for options it does not take)."""
    from isa.generate import ptx_gemm as G
    from isa.generate import ptx_vector as V

    opts = dict(options)
    try:
        if op == "gemm":
            from isa.generate.cli import _dims

            arch = opts.pop("arch", None) or ("sm_90a" if opts.get("engine") == "wgmma" else "sm_90")
            dtype = opts.pop("dtype", "f16")
            engine = opts.pop("engine", None) or ("fma" if dtype == "f32" else "wgmma" if arch == "sm_90a" else "mma")
            tile = opts.pop("tile", None)
            warps = opts.pop("warps", None)
            cfg = G.PtxGemmConfig(arch=arch, dtype=dtype, engine=engine,
                                  tile=_dims(tile, 3, "tile") if isinstance(tile, str) else tile,
                                  warps=_dims(warps, 2, "warps") if isinstance(warps, str) else warps,
                                  **opts, **size)
            return cfg, G.gemm_ptx, G.launch_spec
        cls = V.PtxReduceConfig if op == "reduce" else V.PtxSoftmaxConfig
        cfg = cls(**dict({"arch": "sm_90", "dtype": "f32", "passes": 1, "threads": 256}, **opts), **size)
        if op == "reduce":
            return cfg, V.reduce_ptx, V.reduce_launch
        return cfg, V.softmax_ptx, V.softmax_launch
    except TypeError as exc:
        raise InputError(f"{op} does not take these options: {exc}") from None


def _ptxas(text: str, arch: str) -> str | None:
    """None when ptxas accepted the kernel (or is absent: see ``ptxas`` in the row), else its error."""
    exe = shutil.which("ptxas")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        Path(src).write_text(text)
        r = subprocess.run([exe, "-arch", arch, src, "-o", os.path.join(d, "k.cubin")], capture_output=True,
                           text=True)
        return r.stderr.strip()[:300] if r.returncode else None


def evaluate(point: dict) -> dict:
    """One point, start to end (a Dask task): generate, assemble, check, predict. Never raises: a
    point that fails says why in ``error``."""
    import isa
    from sim import launch as L
    from sim.verify import simulate

    t0 = time.perf_counter()
    size = point["size"]
    row = {"op": point["op"], **{k: v for k, v in point["options"].items()}, **size}
    for k in ("tile", "warps"):
        if isinstance(row.get(k), (list, tuple)):
            row[k] = "x".join(str(x) for x in row[k])
    row.update(kernel=None, error=None, ptxas=None, checked_at=None, check_passed=None, problems=None,
               predicted_s=None, predicted_bound=None, predicted_sampled=None, measured_s=None,
               measured_source=None)
    try:
        cfg, gen, spec_of = make_config(point["op"], point["options"], size)
        text = gen(cfg)
        row["kernel"] = cfg.kernel_name
        if "flops" in spec_of(cfg).get("generator", {}):
            row["flops"] = spec_of(cfg)["generator"]["flops"]
        err = _ptxas(text, cfg.arch)
        row["ptxas"] = "absent" if shutil.which("ptxas") is None else ("ok" if err is None else err)
        module = isa.load(text)
        spec = L.spec_from_entry(spec_of(cfg))
        ex = None
        if point["predict"] != "none":
            ex = L.execute(module, spec, timing=point["predict"])
            tm = ex.timing
            row.update(predicted_s=tm["seconds"], predicted_bound=tm["bound"], predicted_sampled=tm["sampled"])
        if point["check"] != "none":
            if ex is not None and ex.complete:
                ref_ex, report = _check(module, spec, ex)
                row["checked_at"] = "x".join(str(v) for v in size.values())
            elif point.get("check_size"):
                small, _, _ = make_config(point["op"], point["options"], point["check_size"])
                ref_ex, report = simulate(gen(small), L.spec_from_entry(spec_of(small)))
                row["checked_at"] = "x".join(str(v) for v in point["check_size"].values())
            elif ex is None:
                ref_ex, report = simulate(module, spec)
                row["checked_at"] = "x".join(str(v) for v in size.values())
            else:
                ref_ex = report = None
            if report is not None:
                row["check_passed"] = bool(report.passed)
            if ref_ex is not None:
                row["problems"] = len(ref_ex.problems)
    except Exception as exc:  # noqa: BLE001 - a point's failure is part of the result, not the end of the sweep
        row["error"] = f"{type(exc).__name__}: {exc}"[:400]
    row["point_seconds"] = time.perf_counter() - t0
    return row


def _check(module, spec, ex):
    """Check a finished Execution against its spec's reference (as ``sim.verify.simulate`` does)."""
    import numpy as np

    from sim.check import check_outputs
    from sim.cli import load_reference

    if not spec.reference:
        return ex, None
    ref = load_reference(spec.reference)({k: (v.copy() if isinstance(v, np.ndarray) else v)
                                          for k, v in ex.inputs.items()})
    return ex, check_outputs(ex.outputs, ref, {a.name: a.dtype for a in spec.buffers}, rtol=spec.rtol,
                             atol=spec.atol, per_output=spec.per_output)


def measure_on_gpu(row: dict, point: dict, repeat: int) -> None:
    """Time one point on the GPU (CuPy) at its size; fills ``measured_s``."""
    from sim import launch as L
    from sim.verify import run_on_gpu

    cfg, gen, spec_of = make_config(point["op"], point["options"], point["size"])
    spec = L.spec_from_entry(spec_of(cfg))
    inputs = L.build_inputs(spec, spec.seed_for(cfg.kernel_name))
    got = run_on_gpu(gen(cfg), spec, cfg.kernel_name, inputs, repeat=repeat)
    row.update(measured_s=got["seconds"], measured_source=f"measured ({got['device']}, median of {repeat})")


def attach_measured(rows: list[dict], measured) -> None:
    """Fill ``measured_s`` from earlier measurements (same kernel name and size)."""
    for r in rows:
        if r.get("measured_s") is not None or not r.get("kernel"):
            continue
        for m in measured:
            if m["kernel"] == r["kernel"] and all(m.get(k, r.get(k)) == r.get(k) for k in ("m", "n", "k", "rows", "cols")):
                r["measured_s"] = float(m["seconds"])
                r["measured_source"] = m.get("source", "measured (file)")
                break


# ------------------------------------------------------------------------------------------ figures
def rank_correlation(a, b) -> float:
    """Spearman's rho (ties get their mean rank); nan under 2 points or a constant side."""
    import numpy as np

    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.size < 2:
        return float("nan")

    def ranks(x):
        order = np.argsort(x, kind="stable")
        r = np.empty(x.size)
        r[order] = np.arange(x.size, dtype=float)
        for v in np.unique(x):                 # average ties
            sel = x == v
            r[sel] = r[sel].mean()
        return r
    ra, rb = ranks(a), ranks(b)
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def summary(rows: list[dict]) -> dict:
    """Per problem size: points with both times, Spearman, and the best-config gap
    (measured time of the predicted best / measured best - 1)."""
    out = {}
    groups: dict = {}
    for r in rows:
        if r.get("predicted_s") and r.get("measured_s") and not r.get("error"):
            key = "x".join(str(r[k]) for k in ("m", "n", "k", "rows", "cols") if k in r)
            groups.setdefault(key, []).append(r)
    for key, rs in groups.items():
        pred_best = min(rs, key=lambda r: r["predicted_s"])
        meas_best = min(rs, key=lambda r: r["measured_s"])
        out[key] = {"points": len(rs),
                    "spearman": rank_correlation([r["predicted_s"] for r in rs], [r["measured_s"] for r in rs]),
                    "predicted_best": pred_best["kernel"], "measured_best": meas_best["kernel"],
                    "best_gap": pred_best["measured_s"] / meas_best["measured_s"] - 1.0,
                    "measured_best_s": meas_best["measured_s"]}
    return out


def scatter_svg(rows: list[dict], title: str) -> str:
    """Predicted (modelled) against measured time, log-log, one dot per point, the y = x line."""
    from xml.sax.saxutils import escape

    pts = [(r["measured_s"], r["predicted_s"], r["kernel"]) for r in rows
           if r.get("measured_s") and r.get("predicted_s") and not r.get("error")]
    W, H, L_, R_, T_, B_ = 640, 480, 80, 20, 40, 60
    if not pts:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}"><text x="20" y="40">' \
               f'{escape(title)}: no point has both a measured and a predicted time</text></svg>\n'
    vals = [v for p in pts for v in p[:2]]
    lo, hi = math.log10(min(vals)) - 0.05, math.log10(max(vals)) + 0.05

    def x(v):
        return L_ + (math.log10(v) - lo) / (hi - lo) * (W - L_ - R_)

    def y(v):
        return H - B_ - (math.log10(v) - lo) / (hi - lo) * (H - T_ - B_)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
         f'<line x1="{L_}" y1="{H - B_}" x2="{W - R_}" y2="{H - B_}" stroke="black"/>',
         f'<line x1="{L_}" y1="{T_}" x2="{L_}" y2="{H - B_}" stroke="black"/>',
         f'<line x1="{x(10 ** lo)}" y1="{y(10 ** lo)}" x2="{x(10 ** hi)}" y2="{y(10 ** hi)}" stroke="#999" '
         f'stroke-dasharray="4 3"/>',
         f'<text x="{W / 2}" y="{H - 15}" text-anchor="middle">measured time (s, log)</text>',
         f'<text x="15" y="{H / 2}" text-anchor="middle" transform="rotate(-90 15 {H / 2})">'
         f'predicted time (s, modelled, log)</text>']
    for e in range(math.ceil(lo * 4), math.floor(hi * 4) + 1):
        v = 10 ** (e / 4)
        s.append(f'<text x="{x(v)}" y="{H - B_ + 14}" text-anchor="middle">{v:.3g}</text>')
        s.append(f'<text x="{L_ - 4}" y="{y(v) + 4}" text-anchor="end">{v:.3g}</text>')
    for mv, pv, name in pts:
        s.append(f'<circle cx="{x(mv):.1f}" cy="{y(pv):.1f}" r="4" fill="#d62728"><title>{escape(name)}: '
                 f'measured {mv:.4g} s, predicted {pv:.4g} s</title></circle>')
    s.append("</svg>")
    return "\n".join(s) + "\n"


def write_parquet(rows: list[dict], path: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"writing Parquet needs pyarrow: {NEEDS}") from None
    cols = sorted({k for r in rows for k in r}, key=lambda k: next(i for i, r in enumerate(rows) if k in r))
    table = {}
    for c in cols:
        vals = [r.get(c) for r in rows]
        kinds = {type(v) for v in vals if v is not None}
        if len(kinds) > 1 and not kinds <= {int, float, bool}:
            vals = [None if v is None else str(v) for v in vals]
        elif kinds == {int, float} or kinds == {int, float, bool}:
            vals = [None if v is None else float(v) for v in vals]
        table[c] = vals
    pq.write_table(pa.table(table), str(path))


# ---------------------------------------------------------------------------------------------- run
def client_for(scheduler: str | None, workers: int | None):
    """A ``distributed.Client``: to ``scheduler``, else to a new LocalCluster (one single-threaded
    worker process per core, or ``workers``)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError(NEEDS) from None
    if scheduler:
        try:
            return Client(scheduler, timeout=CONNECT_TIMEOUT), None
        except (OSError, TimeoutError) as exc:
            raise InputError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
    n = workers or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster), cluster


def run_sweep(sweep: Sweep, client, *, progress=None, measure: bool | None = None) -> list[dict]:
    """Every point of ``sweep`` as a Dask task on ``client``; rows in point order. ``progress(done,
    total, row)`` after each point. Then measurement on the GPU (when asked and present), then the
    earlier measurements of the sweep file."""
    from distributed import as_completed

    points = sweep.points()
    futures = client.map(evaluate, points, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    rows: list = [None] * len(points)
    for done, fut in enumerate(as_completed(futures), 1):
        row = fut.result()
        rows[index[fut.key]] = row
        if progress:
            progress(done, len(points), row)
    if measure is None:
        from sim.verify import gpu_available

        measure = sweep.measure == "auto" and gpu_available() is None
    if measure:
        for row, point in zip(rows, points):
            if not row.get("error"):
                try:
                    measure_on_gpu(row, point, sweep.repeat)
                except Exception as exc:  # noqa: BLE001
                    row["error"] = f"gpu: {type(exc).__name__}: {exc}"[:400]
    attach_measured(rows, sweep.measured)
    return rows


def table(rows: list[dict], title: str):
    from rich.table import Table

    t = Table(title=title)
    for c in ("kernel", "size", "ptxas", "check", "predicted (modelled)", "measured", "error"):
        t.add_column(c, overflow="fold")
    for r in rows:
        size = "x".join(str(r[k]) for k in ("m", "n", "k", "rows", "cols") if k in r)
        chk = "-" if r.get("check_passed") is None else (
            ("PASS" if r["check_passed"] and not r.get("problems") else "FAIL") + f" @{r['checked_at']}")
        pred = "-" if r.get("predicted_s") is None else f"{r['predicted_s'] * 1e6:.1f} us" + \
            (" (sampled)" if r.get("predicted_sampled") else "")
        meas = "-" if r.get("measured_s") is None else f"{r['measured_s'] * 1e6:.1f} us"
        t.add_row(r.get("kernel") or "?", size, str(r.get("ptxas") or "-")[:40], chk, pred, meas,
                  (r.get("error") or "")[:80])
    return t


def register(subparsers):
    import argparse

    p = subparsers.add_parser("sweep", help="generate, check, predict and measure many kernel variants on Dask",
                              description=__doc__.split("\n\n")[0],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="SWEEP.toml")
    p.add_argument("--scheduler", metavar="ADDR", help="an existing Dask scheduler (tcp://HOST:8786); default a "
                   "LocalCluster on this machine")
    p.add_argument("--workers", type=int, help="LocalCluster worker processes (default: one per core)")
    p.add_argument("-o", "--output", metavar="PREFIX", help="write PREFIX.parquet, PREFIX.json and PREFIX.svg "
                   "(default: beside the sweep file, its name without .toml)")
    p.add_argument("--no-measure", action="store_true", help="do not run on a GPU even when one is present")
    p.add_argument("--json", action="store_true", help="print one JSON object (rows and summary)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    sweep = load_sweep(args.file)
    try:
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError(NEEDS, Span(args.file)) from None
    from rich.console import Console

    err = Console(stderr=True)
    t0 = time.perf_counter()
    client, cluster = client_for(args.scheduler, args.workers)
    try:
        nworkers = len(client.scheduler_info().get("workers", {}))
        total = len(sweep.points())
        err.print(f"sweep {sweep.name}: {total} points on {nworkers} Dask worker(s) "
                  f"({args.scheduler or 'LocalCluster'})")
        if err.is_terminal:
            from rich.progress import Progress

            with Progress(console=err, transient=True) as bar:
                task = bar.add_task("points", total=total)
                rows = run_sweep(sweep, client, progress=lambda d, n, r: bar.update(task, completed=d),
                                 measure=False if args.no_measure else None)
        else:
            rows = run_sweep(sweep, client, progress=lambda d, n, r: err.print(
                f"  [{d}/{n}] {r.get('kernel') or '?'} {'error' if r.get('error') else 'ok'}"),
                measure=False if args.no_measure else None)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    wall = time.perf_counter() - t0
    prefix = Path(args.output) if args.output else Path(args.file).with_suffix("")
    prefix.parent.mkdir(parents=True, exist_ok=True)
    summ = summary(rows)
    write_parquet(rows, prefix.with_name(prefix.name + ".parquet"))
    result = {"sweep": sweep.name, "points": len(rows), "wall_seconds": wall, "workers": nworkers,
              "summary": summ, "rows": rows}
    prefix.with_name(prefix.name + ".json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    if any(r.get("measured_s") for r in rows):
        prefix.with_name(prefix.name + ".svg").write_text(scatter_svg(rows, f"{sweep.name}: predicted vs measured"))
    if args.json:
        print(json.dumps(result, indent=1, default=str))
    else:
        from rich.console import Console

        out = Console(width=max(120, shutil.get_terminal_size().columns))
        out.print(table(rows, f"{sweep.name} ({len(rows)} points, {wall:.1f} s wall, {nworkers} workers)"))
        for size, s in summ.items():
            out.print(f"{size}: {s['points']} points measured; Spearman rho(predicted, measured) = "
                      f"{s['spearman']:.3f}; predicted best {s['predicted_best']} is "
                      f"{s['best_gap'] * 100:.1f} % slower than the measured best {s['measured_best']}")
        if not summ:
            out.print("no measurements (no GPU here and none in the sweep file): predicted times only")
        out.print(f"wrote {prefix}.parquet, {prefix}.json" + (f", {prefix}.svg" if any(
            r.get("measured_s") for r in rows) else ""))
    bad = [r for r in rows if r.get("error") or r.get("check_passed") is False or r.get("problems")]
    return 1 if bad else 0


__all__ = ["Sweep", "load_sweep", "evaluate", "run_sweep", "summary", "rank_correlation", "scatter_svg",
           "write_parquet", "client_for"]
