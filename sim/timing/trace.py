"""Slices on tracks, and the Chrome / Perfetto trace JSON they become.

A :class:`Slice` is one span of work on one track (a pipe of an Ascend-like core, a sub-partition or
unit of an SM, a warp); tracks are grouped into processes (a core, an SM). :func:`chrome_trace`
writes the ``traceEvents`` form that chrome://tracing and ui.perfetto.dev read, with cycles turned
into microseconds at the model's clock::

    {"ph": "X", "pid": 0, "tid": 3, "name": "fma.rn.f32", "ts": 0.0121, "dur": 0.0005,
     "args": {"line": 57, "start_cycle": 24.0, "cycles": 1.0}}

Flows (``(from_slice, to_slice)`` pairs) become arrows (``ph`` ``s``/``f``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


class Interval:
    """What every slice of scheduled work has, PTX's (:class:`Slice`) and the Ascend-like core's
    (:class:`sim.ascend.timing.Slice`): ``start``..``end`` in cycles."""

    __slots__ = ()
    start: float
    end: float

    @property
    def cycles(self) -> float:
        return self.end - self.start

    @property
    def shown_end(self) -> float:
        """At least one cycle long, for drawing only."""
        return max(self.end, self.start + 1)


@dataclass(frozen=True)
class Slice(Interval):
    """``start``..``end`` in cycles on ``track`` of ``process``; ``end`` may equal ``start``."""

    process: str
    track: str
    name: str
    start: float
    end: float
    cat: str = ""
    args: dict = field(default_factory=dict, compare=False, hash=False)


def chrome_trace(slices, hz: float, flows=(), meta: dict | None = None, track_order=None) -> dict:
    """The trace dict (``traceEvents``) of ``slices``; processes and tracks get stable ids in
    order of first appearance (or ``track_order``: track names first)."""
    us = 1e6 / hz
    pids: dict[str, int] = {}
    tids: dict[tuple[str, str], int] = {}
    out = []
    order = {t: i for i, t in enumerate(track_order or ())}
    for s in sorted(slices, key=lambda s: (s.process, order.get(s.track, len(order)), s.track)):
        if s.process not in pids:
            pids[s.process] = len(pids)
            out.append({"ph": "M", "name": "process_name", "pid": pids[s.process], "args": {"name": s.process}})
        key = (s.process, s.track)
        if key not in tids:
            tids[key] = len([k for k in tids if k[0] == s.process])
            pid, tid = pids[s.process], tids[key]
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": s.track}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}})
    for s in slices:
        out.append({"ph": "X", "pid": pids[s.process], "tid": tids[(s.process, s.track)], "name": s.name,
                    "ts": s.start * us, "dur": (s.shown_end - s.start) * us, "cat": s.cat,
                    "args": {"start_cycle": s.start, "cycles": s.cycles, **s.args}})
    for i, (a, b) in enumerate(flows):
        common = {"name": a.name, "cat": "flow", "id": i + 1}
        out.append({"ph": "s", "pid": pids[a.process], "tid": tids[(a.process, a.track)], "ts": a.start * us,
                    **common})
        out.append({"ph": "f", "bp": "e", "pid": pids[b.process], "tid": tids[(b.process, b.track)],
                    "ts": b.start * us, **common})
    return {"traceEvents": out, "displayTimeUnit": "ns", "otherData": {"clock_hz": hz, **(meta or {})}}


def write_chrome_trace(path: str, slices, hz: float, flows=(), meta: dict | None = None) -> None:
    with open(path, "w") as fh:
        json.dump(chrome_trace(slices, hz, flows, meta), fh)


__all__ = ["Slice", "chrome_trace", "write_chrome_trace"]
