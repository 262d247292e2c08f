"""Stages in the manner of LLVM-MCA: each asks "when may this instruction go, and if later than
asked, why?", and a :class:`Pipeline` takes the latest answer and charges the wait to its cause.

A stage is a small class with ``ready(item, t) -> (time, cause)`` (when it allows ``item`` offered
at ``t``; ``cause`` names the stall if ``time > t``) and ``commit(item, t)`` (the item went at ``t``:
update the stage's units). Stages hold units (:mod:`sim.timing.units`); back-pressure is explicit
because a full queue answers with the time a slot frees and the cause ``queue_full:<name>``::

    pipe = Pipeline([Scoreboard(...), PipeStage(...), QueueStage(...)], stalls)
    t_issue = pipe.offer(item, t)     # max over stages; stalls[cause] += t_issue - t

The H200 SM model (:mod:`sim.timing.sm`) runs its warps' instructions through such a pipeline;
the Ascend-like core can run its pipe queues through one too. Stages may be re-asked after another
stage moved the time (an answer is never earlier than the offer), so the pipeline iterates until
every stage agrees (at most a few rounds: times only grow).
"""

from __future__ import annotations

from typing import Protocol

from .stalls import Stalls
from .units import Queue, Unit


class Stage(Protocol):
    def ready(self, item, t: float) -> tuple[float, str | None]: ...

    def commit(self, item, t: float) -> None: ...


class Pipeline:
    """Stages in order; :meth:`offer` gives the time every stage allows and records the stall."""

    def __init__(self, stages, stalls: Stalls | None = None, max_rounds: int = 4):
        self.stages = list(stages)
        self.stalls = stalls if stalls is not None else Stalls()
        self.max_rounds = max_rounds

    def offer(self, item, t: float, weight: float = 1.0) -> float:
        t0 = t
        cause = None
        for _ in range(self.max_rounds):
            moved = False
            for s in self.stages:
                r, c = s.ready(item, t)
                if r > t:
                    t, cause, moved = r, c, True
            if not moved:
                break
        if t > t0 and cause is not None:
            self.stalls.add(cause, (t - t0) * weight)
        for s in self.stages:
            s.commit(item, t)
        return t


class UnitStage:
    """Offers ``item`` to the unit ``unit_of(item)`` for ``amount_of(item)`` units of work."""

    def __init__(self, units: dict[str, Unit], unit_of, amount_of=lambda item: 1.0, cause="pipe_busy"):
        self.units, self.unit_of, self.amount_of, self.cause = units, unit_of, amount_of, cause

    def ready(self, item, t):
        u = self.units.get(self.unit_of(item))
        if u is None or u.free_at <= t:
            return t, None
        return u.free_at, self.cause

    def commit(self, item, t):
        u = self.units.get(self.unit_of(item))
        if u is not None:
            u.reserve(t, self.amount_of(item))


class QueueStage:
    """An in-order queue of ``depth`` entries in front of a unit: full means wait for the oldest."""

    def __init__(self, queue: Queue, takes, leave_of):
        self.queue, self.takes, self.leave_of = queue, takes, leave_of

    def ready(self, item, t):
        if not self.takes(item):
            return t, None
        at = self.queue.slot_at(t)
        return (t, None) if at <= t else (at, f"queue_full:{self.queue.name}")

    def commit(self, item, t):
        if self.takes(item):
            self.queue.admit(t, self.leave_of(item, t))


__all__ = ["Stage", "Pipeline", "UnitStage", "QueueStage"]
