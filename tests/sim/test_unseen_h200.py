"""The never-seen kernels (``examples/unseen``) against what an H200 did with them
(``examples/h200/unseen``, from ``bench/device/unseen_truth.sh``), and the rule that keeps them unseen.

* every small launch, simulated, gives the H200's outputs bit for bit (device storage, ``unseen.npz``
  ``<name>.got_*``) from the very inputs the H200 got (``<name>.in_*``);
* the truth file holds the corpus's ncu metric set for every launch and small and perf size;
* nothing the timing model reads (``sim/``, its machine file) names these kernels or their files, so
  no number of the model can have been fitted on them (bench/timing_unseen.py prints the figures).
"""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]
UNSEEN = ROOT / "examples" / "unseen"
TRUTH = ROOT / "examples" / "h200" / "unseen"
ENTRIES = {e["name"]: e for e in json.loads((UNSEEN / "manifest.json").read_text())["entries"]}


@lru_cache(maxsize=None)
def _h200() -> dict:
    with np.load(TRUTH / "unseen.npz") as z:
        return {k: z[k] for k in z.files}


@lru_cache(maxsize=None)
def _run(name: str):
    import isa
    from sim import launch as L

    e = ENTRIES[name]
    spec = L.spec_from_entry(e, source=str(UNSEEN / "manifest.json"), base=UNSEEN)
    return spec, L.execute(isa.load(UNSEEN / e["ptx"]["sm_90"]), spec, e["entry"])


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_simulated_outputs_equal_the_h200s_bit_for_bit(name):
    from sim import launch as L

    spec, ex = _run(name)
    h = _h200()
    assert not ex.problems, ex.problems
    for a in spec.args:                      # the inputs are the ones the H200 got
        if isinstance(a, L.BufferArg):
            want = h[f"{name}.in_{a.name}"]
            got = L.device_buffers(spec, ex.inputs)[a.name]
            assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8)), a.name
    for a in spec.outputs:
        gpu = h[f"{name}.got_{a.name}"]
        sim = ex.device[a.name]
        assert sim.dtype == gpu.dtype and sim.shape == gpu.shape
        differ = np.flatnonzero(sim.view(np.uint8).reshape(sim.size, -1) != gpu.view(np.uint8).reshape(gpu.size, -1))
        assert differ.size == 0, (f"{a.name}: {np.unique(differ // sim.itemsize).size} of {sim.size} values differ "
                                  f"from the H200's (first at {differ[0] // sim.itemsize})")


def test_the_h200_outputs_passed_the_reference_and_every_launch_was_profiled():
    doc = json.loads((TRUTH / "unseen.json").read_text())
    got = {(r["entry"], r["which"]): r for r in doc["launches"]}
    assert set(got) == {(n, w) for n in ENTRIES for w in ("launch", "perf_launch")}
    for (name, which), r in got.items():
        m = r["metrics"]
        assert set(doc["metrics_used"]) <= set(m), (name, which)
        assert m["gpc__cycles_elapsed.max"] > 4000, (name, which)      # a launch costs at least that much
        assert list(r["grid"]) == list(ENTRIES[name][which]["grid"])
        if which == "launch":
            assert r["check"] == "pass", (name, r["outputs"])
    assert not doc["unmatched_ncu_rows"]


def test_the_metric_set_is_the_corpus_s_two_sets():
    if not (CORPUS / "h200" / "ncu_deep.json").exists():
        pytest.skip("../shared/corpus not present")
    spec = importlib.util.spec_from_file_location("unseen_truth", ROOT / "bench" / "device" / "unseen_truth.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    basic = json.loads((CORPUS / "h200" / "ncu_metrics.json").read_text())["metrics_used"]
    deep = json.loads((CORPUS / "h200" / "ncu_deep.json").read_text())["metrics_used"]
    assert mod.NCU_METRICS_BASIC == basic
    assert set(mod.NCU_METRICS_DEEP) == set(deep)
    assert json.loads((TRUTH / "unseen.json").read_text())["metrics_used"] == mod.CORPUS_METRICS


def test_the_timing_model_never_reads_the_unseen_kernels():
    """The rule of examples/unseen: no fitting on them. Nothing under sim/ (the model, its machine
    file with every fitted number and its citation) may name their folder, truth or kernels."""
    needles = ["examples/unseen", "h200/unseen", "unseen.json", "unseen.npz", *ENTRIES]
    files = [p for p in (ROOT / "sim").rglob("*") if p.suffix in (".py", ".toml", ".json", ".md") and p.is_file()]
    assert any(p.name == "h200.toml" for p in files)
    hits = [(p.relative_to(ROOT).as_posix(), n) for p in files for n in needles if n in p.read_text(errors="replace")]
    assert not hits, f"the timing model names never-seen kernels (they must stay out of any fitting): {hits}"
    fit = (ROOT / "bench" / "timing_h200.py").read_text()
    assert "unseen" not in fit, "bench/timing_h200.py (the calibration/held-out report) must not read the unseen set"
