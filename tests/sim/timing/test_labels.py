"""Every figure of ``result.timing`` says whether it is exact, measured or modelled
(``result.timing["labels"]``, :mod:`sim.timing.labels`), and the text report says it per section."""

import json

import numpy as np

import isa
import sim
from sim.timing.labels import KINDS, label_of, unlabelled
from sim.timing.regs import Registers
from sim.timing.report import render
from tests.sim.timing.test_sm import _kernel

BODY = "\n".join(["    mov.f32 %f1, 0f3F800000;"] + ["    fma.rn.f32 %f1, %f1, %f1, %f1;"] * 8
                 + ["    st.global.f32 [%rd4], %f1;"])


def _timed(grid, **kw):
    out = np.zeros(grid * 32 * 40, np.float32)
    return sim.run_kernel(isa.loads(_kernel(BODY)), "k", grid, 32, [out, np.uint32(0)], timing="h200", **kw).timing


def test_every_field_has_a_label():
    for tm in (_timed(4), _timed(300)):                       # every CTA, and SM 0's sampled wave
        assert "labels" in tm
        assert unlabelled(tm) == []
        assert set(tm["labels"].values()) <= set(KINDS)
        json.dumps(tm)


def test_the_labels_say_what_each_figure_is():
    tm = _timed(4)
    lab = tm["labels"]
    for path in ("cycles", "seconds", "ipc", "bound", "memory.l2_hit_rate", "memory.dram_bytes_read",
                 "pipes.fma.utilization", "stalls.wait", "occupancy.achieved", "launch_overhead"):
        assert label_of(lab, path) == "modelled", path
    for path in ("ctas", "simulated_ctas", "sampled", "issued_warp_instructions", "work.fp32", "slowest_sm"):
        assert label_of(lab, path) == "exact", path
    assert label_of(lab, "predict_seconds") == "measured"
    # a sample's counts are scaled to the launch: a model, not a count
    big = _timed(300)
    assert big["sampled"] and label_of(big["labels"], "issued_warp_instructions") == "modelled"
    assert label_of(big["labels"], "work.fp32") == "modelled" and label_of(big["labels"], "ctas") == "exact"


def test_occupancy_is_exact_only_on_ptxas_registers(monkeypatch):
    import sim.timing.h200 as H

    tm = _timed(4)
    want = "exact" if tm["occupancy"]["registers_source"] == "ptxas" else "modelled"
    assert label_of(tm["labels"], "occupancy.theoretical") == want
    monkeypatch.setattr(H, "registers_per_thread", lambda module, name: Registers(40, "estimated"))
    est = _timed(4)
    assert est["occupancy"]["registers_source"] == "estimated"
    assert label_of(est["labels"], "occupancy.theoretical") == "modelled"
    assert label_of(est["labels"], "occupancy.registers_per_thread") == "modelled"
    assert "40 (estimated; modelled)" in render(est)


def test_the_text_report_labels_each_section():
    tm = _timed(4)
    text = render(tm)
    assert "GPU Speed Of Light (modelled)" in text and "Memory (modelled)" in text
    assert "Warp State (warps stalled per issued instruction; modelled)" in text
    assert f"{tm['issued_warp_instructions']:,.0f} (exact: counted in this run)" in text
    assert "/ %.1f%% (modelled)" % (100 * tm["occupancy"]["achieved"]) in text
    assert "measured on this machine, not a GPU time" in text
    sampled = render(_timed(300))
    assert "(modelled: counted in the sampled CTAs, scaled to the launch)" in sampled
