"""What the inspector's Pilot tests share: running an async test body, waiting for the app's
workers, pressing keys and waiting after each, skipping where the build has no PTX timing, and
reading the status line."""

from __future__ import annotations

import asyncio
import functools

import pytest
from textual.pilot import Pilot

# Textual's own methods, kept before tests/tui/conftest.py makes Pilot.press/click/pause settle
PRESS, CLICK, PAUSE = Pilot.press, Pilot.click, Pilot.pause


def sync(fn):
    """Run an async test body with asyncio (no async plugin is a dependency)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


async def settle(app, pilot, rounds: int = 2, limit: int = 300):
    """Wait until the app is quiet ``rounds`` checks in a row: no worker pending or running, and
    no message waiting in the queue of the app, its screen or any of their widgets, with a refresh
    (``pilot.pause``) before each check; at most ``limit`` checks.

    Textual's own waits decide "idle" by comparing CPU time with wall time, which a loaded
    machine fools (a starved process looks idle): a message still bubbling from a list, an input
    or a button up to the app, or a worker not started yet, could be missed, and a test that
    passes alone fail under load. Queues and worker states are what is really pending."""
    quiet = 0
    for _ in range(limit):
        await app.workers.wait_for_complete()
        await PAUSE(pilot)
        nodes = [app, *app.screen.walk_children(with_self=True)]
        busy = any(n.message_queue_size for n in nodes) or \
            any(w.state.name in ("PENDING", "RUNNING") for w in app.workers)
        quiet = 0 if busy else quiet + 1
        if quiet >= rounds:
            return


async def press(app, pilot, *keys: str):
    """Press each key in turn and :func:`settle` after it."""
    for key in keys:
        await pilot.press(key)
        await settle(app, pilot)


def needs_ptx_timing():
    """Skip the test where ``sim.run_kernel`` has no ``timing=`` (the H200 timing model) on this build."""
    from tui import backends

    if not backends.timing("ptx").ok:
        pytest.skip("sim.run_kernel has no timing= on this build (the H200 timing model is not in yet)")


async def ready(app, pilot):
    await settle(app, pilot, 1)


def status(app) -> str:
    return str(app.query_one("#status").render())
