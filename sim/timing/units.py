"""Hardware units and queues with back-pressure, in cycles (floats: rates may be fractional).

A :class:`Unit` is a pipe with an initiation interval: it accepts one piece of work when it is free
and stays busy for the work's occupancy; it keeps its busy time for utilisation figures. A
:class:`Queue` holds at most ``depth`` entries that have entered and not yet left; admitting one when
it is full waits for the oldest to leave, and the wait is the caller's queue-full stall::

    fma = Unit("fma", interval=2.0)              # 16 lanes per sub-partition: a warp every 2 clk
    start = fma.reserve(10.0)                    # 10.0; the unit is then busy until 12.0
    start = fma.reserve(11.0)                    # 12.0: one cycle of pipe throttle
    q = Queue("store", depth=2)
    t, waited = q.admit(0.0, leave=300.0)        # (0.0, 0.0)
    q.admit(0.0, leave=300.0); q.admit(5.0, leave=600.0)   # third entry waits: (300.0, 295.0)

Units hold no reporting code; stages and models read ``busy`` and record stalls themselves.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right, insort
from dataclasses import dataclass, field


@dataclass(slots=True)
class Unit:
    """A pipe: ``interval`` cycles of occupancy per unit of work, ``free_at`` the next free cycle."""

    name: str
    interval: float = 1.0
    free_at: float = 0.0
    busy: float = 0.0
    work: int = 0

    def reserve(self, t: float, amount: float = 1.0) -> float:
        """Start time of ``amount`` units of work offered at ``t`` (at or after ``t``)."""
        start = t if t >= self.free_at else self.free_at
        occ = self.interval * amount
        self.free_at = start + occ
        self.busy += occ
        self.work += 1
        return start

    def utilization(self, cycles: float, copies: int = 1) -> float:
        return self.busy / (cycles * copies) if cycles > 0 else 0.0


@dataclass(slots=True)
class Queue:
    """At most ``depth`` entries in flight; each entry leaves at the time given when it entered."""

    name: str
    depth: int
    _leaves: list = field(default_factory=list)
    full_waits: int = 0
    full_cycles: float = 0.0
    entered: int = 0

    def admit(self, t: float, leave: float | None = None) -> tuple[float, float]:
        """Enter at ``t`` or when a slot frees: ``(entry time, cycles waited)``. ``leave`` is the
        entry's leave time (``None``: set it later with :meth:`push`)."""
        lv = self._leaves
        while lv and lv[0] <= t:
            heapq.heappop(lv)
        at = t
        if len(lv) >= self.depth:
            at = heapq.heappop(lv)
            while lv and lv[0] <= at:
                heapq.heappop(lv)
            self.full_waits += 1
            self.full_cycles += at - t
        if leave is not None:
            heapq.heappush(lv, max(leave, at))
        self.entered += 1
        return at, at - t

    def slot_at(self, t: float) -> float:
        """Earliest time at or after ``t`` when an entry could be admitted."""
        pending = sorted(x for x in self._leaves if x > t)
        return t if len(pending) < self.depth else pending[len(pending) - self.depth]

    def push(self, leave: float) -> None:
        heapq.heappush(self._leaves, leave)

    def drained_at(self, t: float) -> float:
        """When every entry in flight at ``t`` has left (a fence waits for this)."""
        return max([t] + self._leaves)

    def __len__(self) -> int:
        return len(self._leaves)


@dataclass(slots=True)
class IssueQueue:
    """An instruction queue between a warp scheduler and a shared unit (the MIO's per-sub-partition
    queues): at most ``depth`` instructions that were issued and not yet dispatched downstream.
    Different instruction kinds may enter only below their own ``limit`` (a *watermark*, e.g. global
    and local loads stop at a lower fill than shared-memory ones, so that shared memory still issues
    while the L1 is backed up); a warp whose next instruction finds its limit reached waits for the
    oldest entries to leave, and that wait is its throttle stall::

        q = IssueQueue("lsu", depth=2)
        q.enter(0.0, leave=10.0); q.enter(0.0, leave=20.0)
        q.slot_at(5.0)              # 10.0: full until the first entry leaves
        q.slot_at(5.0, limit=1)     # 20.0: below a watermark of 1 only when both have left

    Times offered must not decrease (the event-driven models process events in time order). The
    slot is one figure, ``full_at``, kept by :meth:`enter`: the depth-th latest leave time of all the
    entries that entered, where that is after the last entry (else a time at or before it; 0 before
    ``depth`` entered). At a ``t`` at or after the last entry the entries in flight are those leaving
    after ``t``: the queue is full until ``full_at`` and the slot at ``t`` is ``max(t, full_at)``
    (:meth:`slot_at`; the replay, :meth:`sim.timing.sm.SM.run`, reads it without a call)."""

    name: str
    depth: int
    _leaves: list = field(default_factory=list)   # leave times of the entries in flight, ascending
    entered: int = 0
    full_at: float = 0.0          # full until then (the depth-th latest leave time entered)

    def _prune(self, t: float) -> list:
        lv = self._leaves
        if lv and lv[0] <= t:
            del lv[:bisect_right(lv, t)]
        return lv

    def slot_at(self, t: float, limit: int | None = None) -> float:
        """Earliest time at or after ``t`` when fewer than ``limit`` (default: the depth) entries are in
        flight."""
        lv = self._prune(t)
        if limit is None or limit >= self.depth:
            return self.full_at if self.full_at > t else t
        n = len(lv)
        return t if n < limit else lv[n - limit]

    def enter(self, t: float, leave: float) -> None:
        """An instruction entered at ``t`` (a slot is free: :meth:`slot_at`) and leaves at ``leave``."""
        lv = self._leaves
        if lv and lv[0] <= t:
            del lv[:bisect_right(lv, t)]      # _prune, without a second call (once per LSU issue)
        insort(lv, leave if leave > t else t)
        if len(lv) >= self.depth:
            self.full_at = lv[len(lv) - self.depth]
        self.entered += 1

    def __len__(self) -> int:
        return len(self._leaves)


@dataclass(slots=True)
class LoadedLatency:
    """A server of finite rate seen through the waiting time its load adds to a round trip (the L2
    slices behind an SM's read requests): work arriving at ``rho`` x ``capacity`` per cycle waits
    ``q rho / (1 - rho)`` cycles (an M/M/1 queue; ``rho`` at most ``max_rho``). ``rho`` is the
    arrival rate over the last ``window`` cycles (an exponentially weighted sum of the work offered,
    its own included), so the wait follows the requests' own rate as a warp's loads see it: light
    traffic waits almost nothing, traffic near the capacity waits much more than a fixed latency,
    bursts longer than the window wait as a queue that full would::

        ld = LoadedLatency("l2_read", capacity=40.0, q=130.0, window=1000.0)
        ld.wait(0.0, 512.0)            # 1.7: 512 B in the last 1000 cycles, rho 0.013
        for t in range(0, 1000, 16):   # 32 B per cycle for 1000 cycles: rho about 0.5
            w = ld.wait(float(t), 512.0)

    Times offered may go backwards a little (the event-driven models offer work at issue or at the
    t-stage): such work adds to the sum without decaying it."""

    name: str
    capacity: float               # work per cycle (bytes per cycle for the L2)
    q: float                      # cycles: the wait at rho = 1/2
    window: float                 # cycles
    max_rho: float = 0.95
    min_window: float = 0.0       # cycles: the least span a rate is measured over (the first arrivals')
    _t0: float | None = None
    _sum: float = 0.0
    _t: float = 0.0
    waited: float = 0.0           # total wait handed out (for tests and reports)
    offered: float = 0.0          # total work offered

    def rho(self) -> float:
        """The utilisation the last arrival saw (its own work included), at most ``max_rho``: the
        weighted sum over the window's weight since the first arrival (at least ``min_window``)."""
        span = self.window * (1.0 - math.exp((self._t0 - self._t) / self.window)) if self._t0 is not None else 0.0
        span = max(span, self.min_window, 1.0)        # a rate is measured over at least a cycle
        r = self._sum / (span * self.capacity) if self.capacity > 0 else self.max_rho
        return r if r < self.max_rho else self.max_rho

    def wait(self, t: float, amount: float) -> float:
        """The waiting time of ``amount`` work arriving at ``t``."""
        if self._t0 is None:
            self._t0 = self._t = t
        if t > self._t:
            self._sum *= math.exp((self._t - t) / self.window)
            self._t = t
        self._sum += amount
        self.offered += amount
        r = self.rho()
        w = self.q * r / (1.0 - r)
        self.waited += w
        return w


__all__ = ["Unit", "Queue", "IssueQueue", "LoadedLatency"]
