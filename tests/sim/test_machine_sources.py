"""Every number of the H200 machine model cites its source, and assumptions are marked (issue #10):
``sim/machines/h200.toml`` holds each number as ``{ value, source }``; a source names the measurement
(``h200.md [section]`` of ../shared/facts, ncu data, the project's microbenchmarks) or is marked
``[assumed]`` (spelled out), ``[derived]`` (arithmetic on cited numbers) or ``[fitted]`` (on what).
The sections and microbenchmark entries a source names must exist."""

from __future__ import annotations

import json
import re

import pytest

from sim import machines
from tests.conftest import EXAMPLES, SHARED

MARKS = ("[assumed]", "[derived]", "[fitted]")
CITES = ("h200.md", "ncu_deep", "ncu_metrics", "examples/h200/", "issue #10", "bench/ptxas_ifconv.py")


def _numbers(tab: dict, path=()):
    """(dotted name, entry or None) for every number; None: a bare number without a source."""
    for k, v in tab.items():
        here = path + (k,)
        if isinstance(v, dict) and "value" in v:
            yield ".".join(here), v
        elif isinstance(v, dict):
            yield from _numbers(v, here)
        elif isinstance(v, bool):
            continue
        elif isinstance(v, (int, float)) or (isinstance(v, list) and any(isinstance(x, (int, float)) for x in v)):
            yield ".".join(here), None


def _h200():
    return list(_numbers(machines.load("h200")[1]))


def test_every_h200_number_has_a_source_that_cites_or_is_marked():
    entries = _h200()
    assert len(entries) > 60
    bare = [n for n, e in entries if e is None]
    assert bare == [], f"numbers without {{value, source}}: {bare}"
    bad = []
    for name, e in entries:
        src = str(e.get("source", "")).strip()
        marked = next((m for m in MARKS if m in src), None)
        if not src or not (marked or any(c in src for c in CITES)):
            bad.append(name)
        elif marked == "[assumed]" and len(src.split("]", 1)[1].strip()) < 20:
            bad.append(f"{name} (the assumption is not spelled out)")
    assert bad == []


def test_fitted_numbers_say_on_what_they_were_fitted():
    fitted = [(n, e["source"]) for n, e in _h200() if "[fitted]" in e["source"]]
    assert {n for n, _ in fitted} >= {"latency_cycles.global_dram", "hierarchy.launch_overhead",
                                      "hierarchy.dram_queue_latency"}
    for name, src in fitted:
        assert any(w in src for w in ("calibration", "ncu_deep", "ncu_metrics", "see there")), name


def test_cited_microbenchmark_entries_exist():
    mb = json.loads((EXAMPLES / "h200" / "microbench.json").read_text())
    keys = set(mb["launches"]) | {k for k in mb if k != "launches"}
    cited = {m for _, e in _h200() for m in re.findall(r"microbench\.json \[([^\]]+)\]", e["source"])}
    assert cited and cited <= keys, cited - keys


def test_cited_facts_sections_exist():
    facts = SHARED / "facts" / "h200.md"
    if not facts.exists():
        pytest.skip("../shared/facts/h200.md is not present (it ships with the team checkout, not with a clone)")
    heads = [ln.lstrip("#").strip() for ln in facts.read_text().splitlines() if ln.startswith("## ")]
    cited = {m for _, e in _h200() for m in re.findall(r"h200\.md \[([^\]]+)\]", e["source"])}
    assert cited
    missing = [c for c in cited if not any(h.startswith(c) for h in heads)]
    assert missing == []


def test_the_timing_model_reads_the_l2_size_and_warp_limit_from_the_model():
    """The L2 capacity and the warps per SM were constants in sim/timing/h200.py beside their cited
    values in the toml (l2_bytes 62,914,560; max_warps_per_sm 64): a change of the model must reach them."""
    import inspect

    from sim.timing import h200

    text = inspect.getsource(h200)
    assert "62914560" not in text and "/ 64.0" not in text
    # the L1 floor and the replay thresholds come from [hierarchy] / [replay] (they were 16384, 0.05, 0.1, 0.95)
    code = "\n".join(ln.split("#")[0] for ln in text.splitlines())
    assert not any(c in code for c in ("16384", "0.05", "0.1 *", "0.95")), "a number of h200.toml back in the code"


def test_the_schedule_constants_come_from_the_model():
    """MAX_INFLIGHT_REGISTERS, MAX_IF_BODY and MAX_BLOCK were code constants without a toml source."""
    import inspect

    from sim.timing import schedule

    raw = machines.load("h200")[1]
    sched = {k: v["value"] for k, v in raw["schedule"].items()}
    assert (schedule.MAX_INFLIGHT_REGISTERS, schedule.MAX_IF_BODY, schedule.MAX_BLOCK) == (
        sched["max_inflight_registers"], sched["max_if_body"], sched["max_block"]) == (12, 8, 4000)
    # ptxas's choices are not published: assumed, except the if-conversion limit, measured with ptxas
    assert all(str(v["source"]).startswith("[assumed]") for k, v in raw["schedule"].items() if k != "max_if_body")
    assert raw["schedule"]["max_if_body"]["source"].startswith("bench/ptxas_ifconv.py (measured")
    assert set(raw["replay"]) == {"l2_hit_replay_points", "dram_replay_share", "dram_max_utilisation"}
    assert "= 16\n" not in inspect.getsource(schedule)


def test_the_bench_docstring_lists_every_fitted_number():
    """bench/timing_h200.py's docstring names the model's fitted numbers and what each was fitted on; it
    said launch_overhead was "the only fitted number" while the toml had eight."""
    import sys

    from tests.conftest import ROOT

    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import timing_h200
    finally:
        sys.path.remove(str(ROOT / "bench"))
    doc = timing_h200.__doc__
    fit = timing_h200.fitted_constants()
    assert len(fit) >= 8 and "only fitted" not in doc
    for name, _, _ in fit:
        assert f"``{name.split('.')[-1]}``" in doc, name
