"""Pilot in these tests waits until the app is quiet (:func:`tests.tui.pilot.settle`) after each
key, each click and each pause. Textual's own waits judge idleness by CPU time against wall time;
on a loaded machine (a starved process looks idle) they returned early: keys typed after ``/`` or
``g`` reached the code view before the input had the focus and were lost, and a message still on
its way to the app was missed, so that a test passing alone failed under load. With Textual's idle
wait made to return at once (what load makes of it), 22 of the 56 tests outside the snapshots
failed without this, and none with it (57 passed)."""

from __future__ import annotations

import pytest

from tests.tui.pilot import CLICK, PAUSE, PRESS, settle


@pytest.fixture(autouse=True)
def settling_pilot(monkeypatch):
    from textual.pilot import Pilot

    async def press(self, *keys):
        for key in keys:                 # one at a time: a key may move the focus for the next
            await PRESS(self, key)
            await settle(self.app, self, 1)

    async def click(self, *args, **kwargs):
        got = await CLICK(self, *args, **kwargs)
        await settle(self.app, self, 1)
        return got

    async def pause(self, delay=None):
        await PAUSE(self, delay)
        await settle(self.app, self, 1)

    monkeypatch.setattr(Pilot, "press", press)
    monkeypatch.setattr(Pilot, "click", click)
    monkeypatch.setattr(Pilot, "pause", pause)
