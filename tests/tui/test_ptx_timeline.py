"""The Timeline tab on PTX: lanes and stall cycles per line from the H200 timing model's trace.

The layout functions are checked on hand-made trace slices; the Pilot tests drive the tab with a
stand-in timing run (``timeline.run_ptx_timing`` monkeypatched) and, when ``sim.run_kernel`` takes
``timing=``, with the real model on ``examples/manifest.json#sgemm_tiled``.
"""

from __future__ import annotations

from sim.timing.trace import Slice
from tests.conftest import EXAMPLES
from tui import backends, timeline
from tests.tui.pilot import needs_ptx_timing, press, settle, sync
from tui.app import InspectorApp
from tui.model import load_file

SIZE = (150, 50)
SGEMM = EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"
LAUNCH = f"{EXAMPLES / 'manifest.json'}#sgemm_tiled"


def _line(doc, opcode: str) -> int:
    """The PTX line of the first instruction with this opcode."""
    for line in sorted(doc.line_instrs):
        if doc.lines[line - doc.first_line].split()[:1] == [opcode]:
            return line
    raise AssertionError(opcode)


def _doc():
    return load_file(str(SGEMM)).kernels[0]


def _run(doc) -> timeline.PtxTimelineRun:
    fma, lds, add = _line(doc, "fma.rn.f32"), _line(doc, "ld.shared.f32"), _line(doc, "add.s32")
    sp0, sp1 = "SM 0 sub-partition 0", "SM 0 sub-partition 1"
    s = [  # warp 0: lds at 0, fma at 1 (ready), fma at 30 (waited 28 on the load); warp 1: add at 0, fma at 5 (4)
        Slice(sp0, "warp 0", "ld.shared.f32", 0, 23, "issue", {"line": lds}),
        Slice(sp0, "warp 0", "fma.rn.f32", 1, 5, "issue", {"line": fma}),
        Slice(sp0, "warp 0", "fma.rn.f32", 30, 34, "issue", {"line": fma}),
        Slice(sp1, "warp 1", "add.s32", 0, 2, "issue", {"line": add}),
        Slice(sp1, "warp 1", "fma.rn.f32", 5, 9, "issue", {"line": fma}),
    ]
    tm = {"cycles": 40.0, "seconds": 40 / 1.98e9, "bound": "latency", "sampled": False}
    return timeline.PtxTimelineRun("sgemm_tiled", "h200", 1.98e9, tm, s, 0.5)


def test_stalls_by_line_are_issue_gaps_per_warp():
    doc = _doc()
    run = _run(doc)
    assert timeline.stalls_by_line(run) == {_line(doc, "fma.rn.f32"): 28.0 + 4.0}
    assert timeline.stall_heat(run) == {_line(doc, "fma.rn.f32"): 1.0}


def test_lanes_are_units_per_sub_partition():
    doc = _doc()
    lanes = timeline.ptx_lanes(_run(doc), doc, 40)         # one cycle per cell
    got = [(l.track[-1], l.unit, l.issues) for l in lanes]
    assert got == [("0", "fp32", 2), ("0", "lsu", 1), ("1", "fp32", 1), ("1", "int", 1)]
    fp32 = lanes[0].cells
    assert fp32[1] == timeline.BUSY and fp32[30] == timeline.BUSY and fp32[2:30].strip() == ""
    wide = timeline.ptx_lanes(_run(doc), doc, 8)            # 5 cycles per cell: one issue is "part"
    assert wide[1].cells == timeline.PART


@sync
async def test_timeline_tab_draws_a_timed_ptx_run(monkeypatch):
    monkeypatch.setattr(backends, "timing", lambda isa: backends.Availability(True, "stand-in"))
    monkeypatch.setattr(timeline, "run_ptx_timing", lambda doc, spec, machine="h200": _run(doc))
    app = InspectorApp([str(SGEMM)], launch=LAUNCH)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "5")
        head = str(app.query_one("#timeline-body").render())
        assert "sgemm_tiled on h200: 40 cycles" in head and "latency-bound" in head and "modelled" in head
        lanes = str(app.query_one("#timeline-lanes").render()).splitlines()
        assert lanes[2].startswith("SM 0 · SMSP 0") and lanes[2].split()[5] == "fp32"
        assert any(l.split()[:1] == ["lsu"] for l in lanes) and any("SMSP 1" in l for l in lanes)
        prompts = app.query_one("#timeline-problems").prompts()
        fma = _line(app.doc, "fma.rn.f32")
        assert prompts == [f"line {fma:>5}            32 stall cycles  100.0%"]
        assert app.query_one("#asm").heat == {fma: 1.0}          # the heat column shows the stalls
        app.query_one("#timeline-problems").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#tabs").active == "code" and app.query_one("#asm").line == fma


@sync
async def test_timeline_without_a_launch_says_what_it_needs(monkeypatch, tmp_path):
    monkeypatch.setattr(backends, "timing", lambda isa: backends.Availability(True, "stand-in"))
    copy = tmp_path / "k.ptx"                 # outside any manifest, and no --launch
    copy.write_text(SGEMM.read_text())
    app = InspectorApp([str(copy)])
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("5")
        body = str(app.query_one("#timeline-body").render())
        assert "needs a launch" in body and "--launch" in body


@sync
async def test_timeline_runs_the_real_model():
    needs_ptx_timing()
    app = InspectorApp([str(SGEMM)], launch=LAUNCH)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "5")
        run = app.doc.timeline
        assert isinstance(run, timeline.PtxTimelineRun) and run.cycles > 0 and run.slices
        head = str(app.query_one("#timeline-body").render())
        assert f"{run.cycles:,.0f} cycles" in head
        assert "fp32" in str(app.query_one("#timeline-lanes").render())
        assert app.query_one("#timeline-problems").prompts()


def test_the_header_and_lanes_name_the_traced_sm():
    """The trace is of the SM that sets the time (``timing['slowest_sm']``), not always SM 0."""
    from tui.widgets.timeline_panel import ptx_header_markup, ptx_lanes_markup

    doc = _doc()
    run = _run(doc)
    run.slices = [Slice(s.process.replace("SM 0 ", "SM 3 "), s.track, s.name, s.start, s.end, s.cat, s.args)
                  for s in run.slices]
    run.timing["slowest_sm"] = 3
    assert "lanes show SM 3's sub-partitions, the SM that sets the time" in ptx_header_markup(run)
    text = ptx_lanes_markup(run, doc, 40)
    assert "SM 3 · SMSP 0" in text and "SM 3 · SMSP 1" in text and "SM 0" not in text
