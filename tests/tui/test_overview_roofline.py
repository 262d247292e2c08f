"""The Overview tab puts the Timeline tab's timed run (the H200 timing model) on the roofline: its
executed work over modelled DRAM bytes and modelled time, against the roof at that intensity."""

from __future__ import annotations

from analyzer.machine import load_machine
from tests.conftest import EXAMPLES
from tests.tui.pilot import needs_ptx_timing, press, settle, sync
from tui import backends, timeline
from tui.app import InspectorApp
from tui.model import load_file
from tui.widgets.overview import modelled_point_markup

SIZE = (150, 50)
SGEMM = EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"
LAUNCH = f"{EXAMPLES / 'manifest.json'}#sgemm_tiled"


def _run() -> timeline.PtxTimelineRun:
    # 1e6 FP32 FLOP, 1e5 DRAM bytes (intensity 10), 1e-6 s: 1 TOP/s modelled
    tm = {"cycles": 1980.0, "seconds": 1e-6, "bound": "latency (long_scoreboard)", "sampled": True,
          "simulated_ctas": 4, "ctas": 1024, "work": {"fp32": 1e6},
          "memory": {"dram_bytes_read": 6e4, "dram_bytes_write": 4e4}}
    return timeline.PtxTimelineRun("sgemm_tiled", "h200", 1.98e9, tm, [], 0.5)


def test_modelled_point_against_the_roof_at_its_intensity():
    doc = load_file(str(SGEMM)).kernels[0]
    assert "open the Timeline tab" in modelled_point_markup(doc)[0]
    doc.timeline = _run()
    text = "\n".join(modelled_point_markup(doc))
    m = load_machine("h200")
    roof = min(m.peak("fp32"), 10 * m.dram_bw)          # FP32 only: the roof is the lower of the two
    assert "1.0 TOP/s at 10 OP per DRAM byte" in text
    assert "timing model, not measured, 4 of 1024 CTAs simulated" in text
    assert f"{100 * 1e12 / roof:.1f}% of the roof there" in text
    assert "bound: latency (long_scoreboard)" in text


@sync
async def test_overview_shows_the_point_once_the_timeline_ran(monkeypatch):
    monkeypatch.setattr(backends, "timing", lambda isa: backends.Availability(True, "stand-in"))
    monkeypatch.setattr(timeline, "run_ptx_timing", lambda doc, spec, machine="h200": _run())
    app = InspectorApp([str(SGEMM)], launch=LAUNCH)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "2")
        assert "open the Timeline tab" in str(app.query_one("#overview-body").render())
        await press(app, pilot, "5")
        await press(app, pilot, "2")
        body = str(app.query_one("#overview-body").render())
        assert "modelled on H200" in body and "1.0 TOP/s at 10 OP per DRAM byte" in body


@sync
async def test_overview_point_from_the_real_model():
    needs_ptx_timing()
    app = InspectorApp([str(SGEMM)], launch=LAUNCH)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "5")
        tm = app.doc.timeline.timing
        assert tm["work"] == {"fp32": 2304 * 64 * 2}          # 3 x 3 CTAs x 256 threads x 64 FFMA, exact
        await press(app, pilot, "2")
        body = str(app.query_one("#overview-body").render())
        dram = tm["memory"]["dram_bytes_read"] + tm["memory"]["dram_bytes_write"]
        assert f"at {294912 / dram:.3g} OP per DRAM byte" in body and "% of the roof there" in body
