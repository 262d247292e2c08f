"""Stall accounting: every cycle something waits is charged to one named cause.

Both timing models (the H200 SM model, the Ascend-like core) record their waits here, so reports
and traces read one structure. A cause is a short name; :data:`NCU_NAMES` gives Nsight Compute's
warp-state name where one exists (``smsp__average_warps_issue_stalled_<name>_per_issue_active``)::

    s = Stalls()
    s.add("long_scoreboard", 276)       # a warp waited 276 cycles on a global load's result
    s.add("queue_full:MTE2", 12)        # an issue waited for a slot in the MTE2 queue
    s.per_issue(issues=100)             # {'long_scoreboard': 2.76, 'queue_full:MTE2': 0.12}

Queue-full stalls are recorded like any other (:meth:`sim.timing.units.Queue.admit`); a cause
``queue_full:<queue>`` keeps the queue's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: our cause -> Nsight Compute warp-stall reason (the H200 model uses these names directly)
NCU_NAMES = {
    "long_scoreboard": "long_scoreboard",     # waiting on L1TEX (global, local) results
    "short_scoreboard": "short_scoreboard",   # waiting on MIO results (shared memory, MUFU)
    "wait": "wait",                           # fixed-latency dependency
    "math_pipe_throttle": "math_pipe_throttle",  # the pipe the instruction needs is busy
    "mio_throttle": "mio_throttle",           # the MIO (shared memory) queue is full
    "lg_throttle": "lg_throttle",             # the local/global (LSU) queue is full
    "barrier": "barrier",                     # bar.sync: waiting for the CTA's other warps
    "membar": "membar",                       # a fence waits for outstanding stores
    "not_selected": "not_selected",           # ready, but the scheduler issued another warp
    "branch_resolving": "branch_resolving",
    "gmma": "gmma",                           # wgmma.wait_group: warpgroup MMA not finished
    "drain": "drain",                         # at exit, stores still draining
    "dispatch_stall": "dispatch_stall",
    "no_instruction": "no_instruction",
}


@dataclass
class Stalls:
    """Cycles and occurrences per cause (mutable while a model runs, then reported)."""

    cycles: dict[str, float] = field(default_factory=dict)
    count: dict[str, int] = field(default_factory=dict)

    def add(self, cause: str, cycles: float, n: int = 1) -> None:
        if cycles <= 0:
            return
        self.cycles[cause] = self.cycles.get(cause, 0.0) + cycles
        self.count[cause] = self.count.get(cause, 0) + n

    def merge(self, other: "Stalls", scale: float = 1.0) -> None:
        for k, v in other.cycles.items():
            self.cycles[k] = self.cycles.get(k, 0.0) + v * scale
        for k, v in other.count.items():
            self.count[k] = self.count.get(k, 0) + int(round(v * scale))

    def total(self) -> float:
        return sum(self.cycles.values())

    def per_issue(self, issues: float) -> dict[str, float]:
        """Cycles per cause divided by issued instructions: Nsight Compute's "warps stalled per
        issue" when the cycles are summed over warps."""
        if not issues:
            return {}
        return {k: v / issues for k, v in sorted(self.cycles.items(), key=lambda kv: -kv[1])}

    def top(self) -> str | None:
        return max(self.cycles, key=self.cycles.get) if self.cycles else None


__all__ = ["Stalls", "NCU_NAMES"]
