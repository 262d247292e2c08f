"""The planted ordering bugs of ``examples/cuda/order`` and their fixed twins (``-DFIXED``).

Each bug is reported at its CUDA source line with its kind; each twin runs clean and passes its
reference; under the relaxed memory model a missing fence gives a wrong answer for some seed,
while the fixed twin gives an allowed result for every seed tried.
"""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import pytest

import isa
import sim
from sim import launch
from tests.conftest import EXAMPLES

MANIFEST = {e["name"]: e for e in json.loads((EXAMPLES / "manifest.json").read_text())["entries"]}
#: bug -> (problem kind, CUDA line the first report names, output that comes out wrong or None)
BUGS = {
    "last_block_bug": ("global_race", "last_block.cu:31", None),
    "publish_flag_bug": ("global_race", "publish_flag.cu:25", None),
    "cp_async_early_bug": ("async_race", "cp_async_early.cu:18", "out"),
    "wgmma_early_bug": ("async_race", "wgmma_early.cu:94", "C"),
}


def _reference(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location("examples_reference", EXAMPLES / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, MANIFEST[name]["reference"])


@lru_cache(maxsize=None)
def _module(name):
    return isa.load(EXAMPLES / MANIFEST[name]["ptx"]["sm_90"])


def run(name, model="sc", seed=0):
    spec = launch.load_launch(f"{EXAMPLES / 'manifest.json'}#{name}")
    ex = launch.execute(_module(name), spec, memory_model=model, memory_seed=seed)
    expected = _reference(name)(dict(ex.inputs))
    ok = {k: bool(np.allclose(ex.outputs[k], v, atol=1e-2, rtol=1e-2)) for k, v in expected.items()}
    return ex, ok


@pytest.mark.parametrize("name", sorted(BUGS))
def test_bug_is_reported_at_its_source_line(name):
    kind, line, wrong = BUGS[name]
    ex, ok = run(name)
    hits = [p for p in ex.problems if p.kind == kind]
    assert hits, [str(p) for p in ex.problems]
    assert any(p.source == line for p in hits), sorted({p.source for p in hits})
    if wrong is not None:
        assert not ok[wrong]          # the early read really sees the old bytes / registers
    p = next(p for p in hits if p.source == line)
    assert p.cta is not None and p.thread is not None and p.instruction


@pytest.mark.parametrize("name", sorted(BUGS))
def test_fixed_twin_is_clean_and_right(name):
    twin = name.replace("_bug", "_fixed")
    ex, ok = run(twin)
    assert ex.problems == (), [str(p) for p in ex.problems]
    assert all(ok.values()), ok


def test_last_block_race_names_both_instructions():
    ex, _ = run("last_block_bug")
    p = next(p for p in ex.problems if p.kind == "global_race")
    assert "last_block.cu:21" in p.message and "st.global.f32" in p.message and p.buffer.startswith("partial")
    assert p.cta == (7, 0, 0)


def test_missing_threadfence_gives_a_wrong_sum_under_the_relaxed_model():
    bug = [run("last_block_bug", "relaxed", s)[1]["out"] for s in range(4)]
    fixed = [run("last_block_fixed", "relaxed", s)[1]["out"] for s in range(4)]
    assert not all(bug) and all(fixed), (bug, fixed)


def test_published_flag_fixed_twin_never_sees_stale_data():
    data = 1.0 + np.arange(64)
    for s in range(12):
        out = run("publish_flag_fixed", "relaxed", s)[0].outputs["out"]
        assert np.array_equal(out, data) or not out.any(), (s, out)
    outs = [run("publish_flag_bug", "relaxed", s)[0].outputs["out"] for s in range(4)]
    assert any(o.any() and not np.array_equal(o, data) for o in outs)   # flag seen, data stale


def test_run_kernel_reports_the_seed():
    ex, _ = run("last_block_bug", "relaxed", 3)
    assert ex.stats["memory_model"] == "relaxed" and ex.stats["memory_seed"] == 3
    assert sim.run_kernel is not None
