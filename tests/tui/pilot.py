"""What the inspector's Pilot tests share: running an async test body, waiting for the app's
workers, and reading the status line."""

from __future__ import annotations

import asyncio
import functools


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


async def ready(app, pilot):
    await settle(app, pilot, 1)


def status(app) -> str:
    return str(app.query_one("#status").render())
