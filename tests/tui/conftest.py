"""Every Pilot key press and click in these tests waits until the app is quiet (:func:`settle`):
Textual's own wait after a press judges idleness by CPU time, and under load returned before a
message had bubbled to the app, so that a test could read the screen too early."""

from __future__ import annotations

import pytest

from tests.tui.pilot import settle


@pytest.fixture(autouse=True)
def settling_pilot(monkeypatch):
    from textual.pilot import Pilot

    press, click = Pilot.press, Pilot.click

    async def settled_press(self, *keys):
        await press(self, *keys)
        if keys:
            await settle(self.app, self, 1)

    async def settled_click(self, *args, **kwargs):
        got = await click(self, *args, **kwargs)
        await settle(self.app, self, 1)
        return got

    monkeypatch.setattr(Pilot, "press", settled_press)
    monkeypatch.setattr(Pilot, "click", settled_click)
