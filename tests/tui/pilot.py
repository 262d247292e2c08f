"""What the inspector's Pilot tests share: running an async test body, waiting for the app's
workers, pressing keys and waiting after each, skipping where the build has no PTX timing, and
reading the status line."""

from __future__ import annotations

import asyncio
import functools

import pytest


def sync(fn):
    """Run an async test body with asyncio (no async plugin is a dependency)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


async def settle(app, pilot, rounds: int = 2):
    """Wait for the app's workers and a refresh, ``rounds`` times (work that starts more work)."""
    for _ in range(rounds):
        await app.workers.wait_for_complete()
        await pilot.pause()


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
