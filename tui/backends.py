"""Which simulators and timing models this checkout has, asked once, answered in words.

The Run and Timeline tabs call :func:`simulator` and :func:`timing`; each returns an
:class:`Availability` whose ``message`` says what is missing when ``ok`` is False, so the tab can
say so instead of pretending. Answers are cached: asking imports the simulators (about a second the
first time), so the app's loading worker asks once (:func:`prewarm`) and the UI thread never waits.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Availability:
    ok: bool
    message: str


def _has(module: str, attr: str | None = None) -> bool:
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return False
    return attr is None or hasattr(mod, attr)


@lru_cache(maxsize=None)
def simulator(isa: str) -> Availability:
    """The functional simulator for ``isa`` (``sim.run_kernel`` for PTX, ``sim.ascend`` for Ascend)."""
    if isa == "ascend":
        if _has("sim.ascend"):
            return Availability(True, "sim.ascend")
        return Availability(False, "The Ascend-like simulator (sim.ascend) is not in this checkout yet.")
    if _has("sim", "run_kernel") and _has("sim.launch"):
        return Availability(True, "sim.run_kernel")
    return Availability(False, "The PTX functional simulator (sim.run_kernel with sim.launch) is not in this "
                               "checkout yet, so kernels cannot be run from here.")


def _ptx_timing() -> bool:
    """``sim.run_kernel(..., timing="h200")`` exists (``sim.timing`` alone holds only its parts)."""
    import inspect

    try:
        import sim
    except ImportError:
        return False
    run = getattr(sim, "run_kernel", None)
    return run is not None and "timing" in inspect.signature(run).parameters


@lru_cache(maxsize=None)
def checker() -> Availability:
    if _has("sim.check"):
        return Availability(True, "sim.check")
    return Availability(False, "The numerical check (sim.check) is not available.")


@lru_cache(maxsize=None)
def timing(isa: str) -> Availability:
    """A timing model: the Ascend pipe timeline, or a PTX timing model when one exists."""
    if isa == "ascend":
        if _has("sim.ascend.run", "run_module") and _has("sim.ascend.timing", "simulate"):
            return Availability(True, "sim.ascend timing model")
        return Availability(False, "The Ascend pipe timing model (sim.ascend.run, sim.ascend.timing) is not in "
                                   "this checkout, so there is no timeline to draw.")
    if _ptx_timing():
        return Availability(True, "sim.timing (h200)")
    return Availability(False, "The timing model is not available: kernlens has no cycle model for PTX, so "
                               "there is no per-unit timeline or stall breakdown to show.")


def prewarm(isas) -> None:
    """Ask every question the tabs will ask for these ISAs (importing the simulators)."""
    checker()
    for isa in isas:
        simulator(isa)
        timing(isa)
