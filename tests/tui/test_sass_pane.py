"""The SASS pane (v) beside the PTX, and jumping between the two (x, Enter), driven by Pilot.

Uses the project's own sgemm_tiled example (no ../shared); compiling needs ptxas + nvdisasm, the
note shown without them is checked by pointing kernlens at tools that do not exist.
"""

from __future__ import annotations

from tests.conftest import EXAMPLES
from tests.tui.pilot import ready, status, sync
from tui.app import InspectorApp

SGEMM = str(EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx")
SIZE = (160, 44)


def pane_text(app) -> str:
    w = app.query_one("#sass")
    return "\n".join(w.render_line(y).text for y in range(w.size.height))


async def open_sass(app, pilot):
    """The file loaded, then ``v``: the SASS pane open (its listing compiled, or the note)."""
    await ready(app, pilot)
    await pilot.press("v")
    await ready(app, pilot)


@sync
async def test_sass_pane_follows_the_ptx_cursor_and_jumps_both_ways(sass_tools):
    app = InspectorApp([SGEMM])
    async with app.run_test(size=SIZE) as pilot:
        await open_sass(app, pilot)
        view = app.query_one("#sass")
        assert app.query_one("#sass-pane").display and view.rows
        assert "SASS instructions" in str(app.query_one("#sass-title").render()) and "registers" in \
            str(app.query_one("#sass-title").render())
        # the PTX line of an LDS.128: the pane marks its rows and the status counts them
        lead = next(r.ptx_line for r in view.rows if "LDS.128" in r.text)
        assert app.goto(lead)
        await pilot.pause()
        assert view.current == lead and any("LDS.128" in view.rows[i].text for i in view.rows_of(lead))
        assert "SASS instruction" in status(app)
        assert "LDS.128" in pane_text(app)
        # x: into the SASS, at the first instruction of that line; the status names it
        await pilot.press("x")
        await pilot.pause()
        assert view.has_focus and view.rows[view.cursor].ptx_line == lead
        assert f"from PTX line {lead}" in status(app)
        # move down to an instruction of another PTX line, Enter: back to the PTX at that line
        for _ in range(40):
            await pilot.press("j")
            if view.rows[view.cursor].ptx_line not in (None, lead):
                break
        other = view.rows[view.cursor].ptx_line
        assert other not in (None, lead)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#asm").line == other and app.query_one("#asm").has_focus
        # v again: the pane closes
        await pilot.press("v")
        await pilot.pause()
        assert not app.query_one("#sass-pane").display


@sync
async def test_sass_pane_without_tools_shows_the_note(no_sass_tools):
    app = InspectorApp([SGEMM])
    async with app.run_test(size=SIZE) as pilot:
        await open_sass(app, pilot)
        assert "SASS needs ptxas" in pane_text(app)
        await pilot.press("x")
        await pilot.pause()
        assert app.query_one("#asm").has_focus or not app.query_one("#sass").rows
