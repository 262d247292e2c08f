"""Snapshots of the main screens (pytest-textual-snapshot). Regenerate after an intended change
with ``pytest tests/tui/test_snapshots.py --snapshot-update`` and review the SVG diffs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS, EXAMPLES, corpus_or_skip
from tui.app import InspectorApp

DATA = Path(__file__).parent / "data"
SIZE = (150, 40)


async def _wait(pilot):
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


WAIT = "wait for the workers"


def _then(*steps):
    """A ``run_before`` that waits for the app to load, then takes the steps in turn: a tuple of
    keys is pressed (and the screen refreshed), :data:`WAIT` waits for the workers again."""

    async def before(pilot):
        await _wait(pilot)
        for step in steps:
            if step == WAIT:
                await _wait(pilot)
            else:
                await pilot.press(*step)
                await pilot.pause()

    return before


def _corpus(name: str) -> str:
    corpus_or_skip()
    return str(CORPUS / "ptx" / name)


def test_code_view_triton_int8_at_the_mma(snap_compare):
    before = _then(("slash", *"mma", "enter"))

    assert snap_compare(InspectorApp([_corpus("tt_matmul_int8.sm_80.ptx")]), terminal_size=SIZE, run_before=before)


def test_overview_hgemm_half2(snap_compare):
    before = _then(("2",))

    assert snap_compare(InspectorApp([_corpus("hgemm_half2.sm_80.ptx")]), terminal_size=SIZE, run_before=before)


def test_loops_sgemm_smem_tiled(snap_compare):
    before = _then(("3",))

    assert snap_compare(InspectorApp([_corpus("sgemm_smem_tiled.sm_90.ptx")]), terminal_size=SIZE, run_before=before)


def test_run_tab_with_recorded_check_softmax(snap_compare):
    async def before(pilot):
        await _wait(pilot)
        await pilot.press("4")
        await pilot.click("#run-check-button")
        await _wait(pilot)

    assert snap_compare(InspectorApp([_corpus("softmax.sm_80.ptx")]), terminal_size=(150, 60), run_before=before)


def test_error_panel(snap_compare, monkeypatch):
    monkeypatch.chdir(DATA)

    before = _then()

    assert snap_compare(InspectorApp(["bad_opcode.ptx"]), terminal_size=(100, 20), run_before=before)


EXAMPLE_PTX = sorted((EXAMPLES / "ptx").glob("*.sm_80.ptx")) if (EXAMPLES / "ptx").exists() else []


@pytest.mark.parametrize("path", EXAMPLE_PTX, ids=[p.name for p in EXAMPLE_PTX])
def test_code_view_examples(snap_compare, path, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)

    before = _then(("slash", *"ld.global", "enter"))

    rel = str(path.relative_to(EXAMPLES.parent))
    assert snap_compare(InspectorApp([rel], source_dirs=["examples/cuda"]), terminal_size=SIZE, run_before=before)


# -- runs: the simulator's wall time is the one figure that changes between runs; it is pinned here
# (dataclasses.replace on the real result) so that the rest of the screen is compared exactly.

@pytest.fixture
def steady_clock(monkeypatch):
    import dataclasses

    from tui import runs, timeline

    real_sim, real_timing = runs.simulate, timeline.run_timing
    monkeypatch.setattr(runs, "simulate", lambda *a, **k: dataclasses.replace(real_sim(*a, **k), seconds=0.25))
    monkeypatch.setattr(timeline, "run_timing", lambda *a, **k: dataclasses.replace(real_timing(*a, **k), seconds=0.25))


def test_run_tab_oob_write_problem(snap_compare, steady_clock, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)

    before = _then(("r",), WAIT, WAIT)

    assert snap_compare(InspectorApp(["examples/ptx/bugs/oob_write.sm_90.ptx"]), terminal_size=(150, 44),
                        run_before=before)


def test_code_view_heat_column_sgemm_tiled(snap_compare, steady_clock, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)

    before = _then(("r",), WAIT, WAIT, ("g", *"105", "enter"))

    app = InspectorApp(["examples/ptx/sgemm_tiled.sm_90.ptx"], source_dirs=["examples/cuda"])
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_timeline_ascend_vadd(snap_compare, steady_clock, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)

    before = _then(("5",), WAIT, WAIT)

    assert snap_compare(InspectorApp(["examples/ascend/vadd_f16.asm"]), terminal_size=(150, 52), run_before=before)


def test_timeline_ptx_stand_in_run(snap_compare, monkeypatch):
    # the PTX Timeline tab's layout on a hand-made trace (tests/tui/test_ptx_timeline.py::_run), so the
    # picture does not move with the timing model's numbers
    from tests.tui.test_ptx_timeline import _run
    from tui import backends, timeline

    monkeypatch.chdir(EXAMPLES.parent)
    monkeypatch.setattr(backends, "timing", lambda isa: backends.Availability(True, "stand-in"))
    monkeypatch.setattr(timeline, "run_ptx_timing", lambda doc, spec, machine="h200": _run(doc))

    before = _then(("5",), WAIT, WAIT)

    app = InspectorApp(["examples/ptx/sgemm_tiled.sm_90.ptx"], launch="examples/manifest.json#sgemm_tiled")
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_code_view_sass_pane_sgemm_tiled(snap_compare, sass_tools, monkeypatch):
    """The SASS pane (v) beside the PTX, the cursor moved into it (x) from PTX line 110, whose four
    scalar ld.shared.f32 ptxas merged into one LDS.128 (ptxas 13.0, nvdisasm 13.2: the listing of
    other tool versions may differ, so the snapshot is skipped without these tools)."""
    monkeypatch.chdir(EXAMPLES.parent)

    before = _then(("v",), WAIT, ("g", *"110", "enter"), ("x",))

    app = InspectorApp(["examples/ptx/sgemm_tiled.sm_90.ptx"], source_dirs=["examples/cuda"])
    assert snap_compare(app, terminal_size=(200, 44), run_before=before)      # wide: the pane's listing shows
