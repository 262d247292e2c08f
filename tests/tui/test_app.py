"""Pilot-driven tests: navigation, search, go-to-line, tabs, loops, errors, the Run tab.

Each test asserts on what the screen shows (the status line, the rendered assembly rows, the
overview text), not only on internal state.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS, corpus_or_skip, corpus_ptx_files
from tests.tui.pilot import ready, status, sync
from tui.app import InspectorApp
from tui.synthetic import synthetic_ptx

DATA = Path(__file__).parent / "data"
SIZE = (150, 44)


def row_text(app, y: int) -> str:
    """The text of the assembly view's row ``y`` as drawn."""
    return app.query_one("#asm").render_line(y).text


def screen_text(app, selector: str) -> str:
    w = app.query_one(selector)
    return "\n".join(w.render_line(y).text for y in range(w.size.height))


@pytest.fixture(scope="module")
def int8():
    return str(corpus_or_skip() / "ptx" / "tt_matmul_int8.sm_80.ptx")


@sync
async def test_cursor_moves_with_j_k_and_the_status_follows(int8):
    app = InspectorApp([int8])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        asm = app.query_one("#asm")
        first = asm.line
        assert first == 12 and status(app).startswith("tt_matmul_int8  ·  line 12")
        await pilot.press("j", "j", "j", "down")
        assert asm.line == first + 4
        assert f"line {first + 4}" in status(app)
        await pilot.press("k", "up")
        assert asm.line == first + 2
        await pilot.press("pagedown")
        assert asm.line > first + 20
        # the drawn cursor row shows the PTX line number in the gutter
        y = asm.cursor - asm.scroll_offset.y
        assert f"{asm.line:>5}" in row_text(app, y)


@sync
async def test_search_finds_tensor_core_instructions_and_n_steps(int8):
    app = InspectorApp([int8])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("slash", *"mma", "enter")
        s = status(app)
        assert "/mma: 16 match(es), at 1" in s
        assert "mma.sync.aligned.m16n8k32" in s and "[tensor core]" in s
        asm = app.query_one("#asm")
        line1 = asm.line
        await pilot.press("n")
        assert asm.line > line1 and "at 2" in status(app)
        await pilot.press("N")
        assert asm.line == line1
        # the row on screen is the mma, annotated with its class and the Triton source line
        y = asm.cursor - asm.scroll_offset.y
        row = row_text(app, y)
        assert "mma.sync" in row and "tensor core" in row and ":26" in row
        # and the source pane marks the tl.dot line it came from
        src = app.query_one("#source")
        assert src.current == 26 and "tl.dot" in src.lines[25]


@sync
async def test_goto_line_and_source_pane(int8):
    app = InspectorApp([int8])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("g")
        await pilot.press(*"500", "enter")
        await pilot.pause()
        assert "line 500" in status(app) and "tt_matmul_int8.py:24" in status(app)
        assert app.query_one("#source").current == 24
        await pilot.press("s")  # hide the source pane
        assert not app.query_one("#source-pane").display
        await pilot.press("s")
        assert app.query_one("#source-pane").display


@sync
async def test_tabs_switch_with_number_keys_and_show_content(int8, monkeypatch):
    from tui import backends

    monkeypatch.setattr(backends, "timing", lambda isa: backends.Availability(
        False, "The timing model is not available: kernlens has no cycle model for PTX."))  # the build without one
    app = InspectorApp([int8])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        tabs = app.query_one("#tabs")
        await pilot.press("2")
        assert tabs.active == "overview"
        text = str(app.query_one("#overview-body").render())
        assert "Instruction mix by class" in text and "tensor core" in text
        assert "143 registers/thread" in text  # H200 truth for this entry
        assert any(l.strip().startswith("✓ mma.sync") for l in text.splitlines())
        assert not any(l.strip().startswith("✗") for l in text.splitlines())
        await pilot.press("5")
        assert tabs.active == "timeline"
        assert "timing model" in str(app.query_one("#timeline-body").render())
        await pilot.press("4")
        assert tabs.active == "run"
        assert "simulator: sim.run_kernel" in str(app.query_one("#run-sim").render())
        await pilot.press("1")
        assert tabs.active == "code" and app.focused is app.query_one("#asm")


@sync
async def test_loop_tree_jumps_to_the_loop(int8):
    app = InspectorApp([int8])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("3")
        tree = app.query_one("#loop-tree")
        loop = tree.root.children[0]
        assert str(loop.label).startswith("loop L")
        leaves = [str(c.label) for c in loop.children]
        assert any("tensor core" in t for t in leaves)
        tree.select_node(loop)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#tabs").active == "code"
        assert app.query_one("#asm").line == loop.data
        assert "loop depth 1" in status(app)


@sync
async def test_error_file_shows_a_panel_with_the_location(int8, monkeypatch):
    monkeypatch.chdir(DATA)
    app = InspectorApp(["bad_opcode.ptx", int8])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert app.query_one("#error-panel").display
        text = str(app.query_one("#error-body").render())
        assert "bad_opcode.ptx:14:2: error: unknown opcode 'fmaa'" in text
        assert "^" in text
        await pilot.press("right_square_bracket")  # next entry: the good kernel
        assert not app.query_one("#error-panel").display
        assert status(app).startswith("tt_matmul_int8")


@sync
async def test_large_synthetic_file_scrolls_and_switches_kernels(tmp_path):
    p = tmp_path / "synth.ptx"
    p.write_text(synthetic_ptx(4500, 3))
    app = InspectorApp([str(p)])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        asm = app.query_one("#asm")
        await pilot.press("end")
        assert asm.cursor == len(app.doc.lines) - 1
        assert asm.scroll_offset.y > 1000
        await pilot.press("right_square_bracket")
        assert status(app).startswith("synth_kernel_1")
        assert asm.cursor == 0 and asm.scroll_offset.y == 0
        await pilot.press("g", *str(app.doc.first_line + 700), "enter")
        await pilot.pause()
        assert asm.line == app.doc.first_line + 700
        # a line of another kernel in the same file switches kernel
        other = app.entries[2][1].first_line + 10
        await pilot.press("g", *str(other), "enter")
        await pilot.pause()
        assert status(app).startswith("synth_kernel_2") and f"line {other}" in status(app)


@sync
async def test_opening_every_corpus_file_at_once():
    corpus_or_skip()
    files = [str(f) for f in corpus_ptx_files()]
    app = InspectorApp(files)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert all(doc is not None for _, doc in app.entries)
        seen = set()
        for _ in range(len(app.entries)):
            seen.add(status(app).split("  ·  ")[0])
            await pilot.press("right_square_bracket")
        assert seen == {doc.name for _, doc in app.entries}
        assert "error" not in app.sub_title


@sync
async def test_check_recorded_outputs_shows_report_and_histogram(int8):
    app = InspectorApp([int8])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("4")
        await pilot.click("#run-check-button")
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = str(app.query_one("#run-report").render())
        assert "PASS C (s32, 96x64): 0/6144 outside" in text
        assert "Error histogram" in text and "6144" in text
