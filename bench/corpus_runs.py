"""The corpus launches the benches run (bench/sim_speed.py, bench/race_cost.py; the timed H200 launches
of bench/timing_h200.py and bench/timing_speed.py): which
manifest entries, each kernel loaded for its target with its launch, inputs and dynamic shared
memory, and fresh argument arrays for every run (a run writes its outputs into them)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"


@dataclass
class CorpusRun:
    entry: dict               # the manifest entry
    target: str               # the PTX target it runs (the one asked for where the entry has it)
    module: object            # isa.ir.Module
    launch: dict
    inputs: dict
    dynamic_shared: int

    @property
    def name(self) -> str:
        return self.entry["name"]

    def args(self) -> list:
        """New argument values for one launch (buffers as fresh arrays, scalars as they are)."""
        import reference as R

        return [np.array(R.encode(self.inputs[a["buffer"]], a["dtype"])) if "buffer" in a else self.inputs[a["scalar"]]
                for a in self.launch["args"]]

    def run(self, args: list | None = None, **options):
        """``sim.run_kernel`` of this launch on ``args`` (default: fresh ones, :meth:`args`)."""
        import sim

        return sim.run_kernel(self.module, self.entry["entry"], self.launch["grid"], self.launch["block"],
                              self.args() if args is None else args, self.dynamic_shared, **options)


def manifest() -> dict | None:
    """../shared/corpus/manifest.json, parsed; None (after saying so on stderr) where the corpus is not
    present (the benches then exit 2)."""
    if not (CORPUS / "manifest.json").exists():
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return None
    return json.loads((CORPUS / "manifest.json").read_text())


def corpus_runs(target: str, only: str = "", every: bool = False) -> list[CorpusRun] | None:
    """The manifest's GEMMs (``every``: all entries; ``only``: the comma-separated names), or None
    where ../shared/corpus is not present."""
    if not (CORPUS / "manifest.json").exists():
        return None
    for p in (str(CORPUS), str(ROOT)):
        if p not in sys.path:
            sys.path.insert(0, p)
    import reference as R

    import isa

    out = []
    for e in json.loads((CORPUS / "manifest.json").read_text())["entries"]:
        if only:
            if e["name"] not in only.split(","):
                continue
        elif not every and "gemm" not in e["themes"]:
            continue
        t = target if target in e["ptx"] else next(iter(e["ptx"]))
        launch = e["launch"]
        dyn = launch["dynamic_shared_bytes"]
        out.append(CorpusRun(e, t, isa.load(CORPUS / e["ptx"][t]), launch,
                             R.build_inputs(launch, R.entry_seed(e["name"])),
                             dyn.get(t, 0) if isinstance(dyn, dict) else dyn))
    return out


def timed_launch(entry: dict, which: str, *, profile: bool = False, base: Path = CORPUS):
    """The manifest entry's ``which`` launch ("launch" or "perf_launch") run by ``sim.launch.execute``
    with ``timing="h200"`` (bench/timing_h200.py, bench/timing_speed.py, bench/timing_unseen.py):
    ``(ex.timing, wall s, cpu s, spec, cProfile.Profile or None)``; wall (``perf_counter``) and this
    process's CPU seconds (``process_time``) are measured around the run only, not the loading.
    ``base``: the folder of the entry's manifest (default the corpus)."""
    import isa
    from sim import launch as L

    ent = dict(entry)
    ent["launch"] = entry[which]
    spec = L.spec_from_entry(ent, source=str(base / "manifest.json"), base=base)
    ptx = entry["ptx"].get("sm_90") or next(iter(entry["ptx"].values()))
    module = isa.load(str(base / ptx))
    seed = L.entry_seed(entry["name"], which == "perf_launch")
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    w0, c0 = time.perf_counter(), time.process_time()
    ex = L.execute(module, spec, entry["entry"], timing="h200", seed=seed)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    if prof is not None:
        prof.disable()
    return ex.timing, wall, cpu, spec, prof


def timed_launches(entries: list[dict], kernels, whiches, *, profile: bool = False, base: Path = CORPUS):
    """:func:`timed_launch` of each entry's ``whiches`` launches it has (``kernels``: only those
    names, where given), in manifest order, yielding ``(entry, which, result)``; a launch that fails
    is printed as failed and skipped (a bench reports and goes on)."""
    for e in entries:
        if kernels and e["name"] not in kernels:
            continue
        for which in whiches:
            if which not in e:
                continue
            try:
                got = timed_launch(e, which, profile=profile, base=base)
            except Exception as exc:  # noqa: BLE001 - a bench reports and goes on
                print(f"{e['name']:30s} {which[:6]:6s} failed: {type(exc).__name__}: {exc}")
                continue
            yield e, which, got


@dataclass(frozen=True)
class Scores:
    """How a set of bench rows compares with the H200 (the one scoring of bench/timing_h200.py and
    bench/timing_unseen.py): MAPE of cycles, how many within +-35 %, top stall equal to ncu's, L2 hit rate
    within 10 points (ncu's over-100 % rates counted as 100), and, where rows carry them, ncu's top-3 stall
    reasons also in the model's top 3 and the mean total-variation distance of the stall mixes."""
    n: int
    mape: float
    within: int
    top: int
    l2ok: int
    l2n: int
    top3: float
    tv: float
    worst: dict


def scores(rows: list[dict]) -> Scores | None:
    sel = [r for r in rows if r["error"] is not None]
    if not sel:
        return None
    l2 = [r for r in sel if r["l2_hit_model"] is not None and r["l2_hit_ncu"] is not None]
    dd = [r for r in sel if r.get("stall_tv") is not None]
    return Scores(
        n=len(sel), mape=100 * sum(abs(r["error"]) for r in sel) / len(sel),
        within=sum(abs(r["error"]) <= 0.35 for r in sel),
        top=sum(r["top_stall"] == r["ncu_top_stall"] for r in sel if r["ncu_top_stall"]),
        l2ok=sum(abs(r["l2_hit_model"] - min(100.0, r["l2_hit_ncu"])) <= 10 for r in l2), l2n=len(l2),
        top3=sum(r["top3_shared"] for r in dd) / (3 * len(dd)) if dd else float("nan"),
        tv=sum(r["stall_tv"] for r in dd) / len(dd) if dd else float("nan"),
        worst=max(sel, key=lambda r: abs(r["error"])))
