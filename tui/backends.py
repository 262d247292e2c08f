"""The simulators and timing models the Run and Timeline tabs use, imported once.

The tabs call :func:`simulator` and :func:`timing`; each returns an :class:`Availability` (a tab
shows its ``message`` when ``ok`` is False: tests stand in a missing model that way). Answers are
cached: asking imports the simulators (about a second the first time), so the app's loading
worker asks once (:func:`prewarm`) and the UI thread never waits.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Availability:
    ok: bool
    message: str


@lru_cache(maxsize=None)
def simulator(isa: str) -> Availability:
    """The functional simulator for ``isa`` (``sim.ascend`` for Ascend-like, ``sim.run_kernel`` for PTX)."""
    if isa == "ascend":
        importlib.import_module("sim.ascend.run")
        return Availability(True, "sim.ascend")
    importlib.import_module("sim.launch")
    return Availability(True, "sim.run_kernel")


@lru_cache(maxsize=None)
def checker() -> Availability:
    importlib.import_module("sim.check")
    return Availability(True, "sim.check")


@lru_cache(maxsize=None)
def timing(isa: str) -> Availability:
    """The timing model: the Ascend-like pipe timeline, or the H200 model for PTX."""
    if isa == "ascend":
        importlib.import_module("sim.ascend.timing")
        return Availability(True, "sim.ascend timing model")
    importlib.import_module("sim.timing.h200")
    return Availability(True, "sim.timing (h200)")


def prewarm(isas) -> None:
    """Ask every question the tabs will ask for these ISAs (importing the simulators)."""
    checker()
    for isa in isas:
        simulator(isa)
        timing(isa)
