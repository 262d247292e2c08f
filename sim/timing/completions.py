"""Where the functional semantics completed each asynchronous operation, for the timing model.

The PTX simulator decides when ``cp.async``, bulk and tensor (TMA) copies and ``wgmma`` complete
(:mod:`sim.ptx.completion`: at the ``cp.async.wait_group`` / ``cp.async.bulk.wait_group`` /
``wgmma.wait_group`` that covers their group, at the mbarrier wait whose phase needs them, or at the
end of the CTA) and tells listeners with ``on_async`` (:class:`sim.ptx.completion.AsyncEvent`).
:class:`AsyncLog` keeps those pairs as stream positions: ``waits[(warp, position)]`` is the set of
``(warp, position)`` issues that the instruction at that position of that warp's stream observed
complete. The SM replay (:mod:`sim.timing.sm`) makes such an instruction wait until the modelled
completion of those issues, instead of counting commit groups itself: one definition of when
asynchronous work completes, the functional one. Warps are global ids (``cta * warps_per_cta +
warp``); positions index :class:`sim.timing.streams.WarpStreams` streams (``warp_seq``).

A successful mbarrier wait by any warp (an ``'observe'`` event) waits for the issues that completed
the phase it observed.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np


class AsyncLog:
    """Listener of :class:`sim.ptx.completion.AsyncEvent` (``on_async``)."""

    def __init__(self):
        self.waits: dict[tuple[int, int], set[tuple[int, int]]] = defaultdict(set)
        self.issues: set[tuple[int, int]] = set()
        self.at_end: set[tuple[int, int]] = set()       # completed at the end of the CTA
        self.events = 0

    def on_async(self, ev) -> None:
        self.events += 1
        if ev.warps is None or ev.seq is None:
            return
        src = set(zip(ev.warps.tolist(), ev.seq.tolist()))
        if ev.kind == "observe":           # a successful mbarrier wait: the issues that completed its phase
            for w, s in zip(ev.at_warps.tolist(), ev.at_seq.tolist()):
                self.waits[(w, s)] |= src
            return
        if ev.kind == "issue":
            self.issues |= src
            return
        if ev.at_warps is None:
            self.at_end |= src
            return
        # a commit group (cp.async, bulk, wgmma) is the issuing warp's own; an mbarrier phase is
        # observed by the waiting warps of the issuer's CTA
        by_cta: dict[int, set] = defaultdict(set)
        by_warp: dict[int, set] = defaultdict(set)
        for (w, s), c in zip(zip(ev.warps.tolist(), ev.seq.tolist()), ev.ctas.tolist()):
            by_cta[c].add((w, s))
            by_warp[w].add((w, s))
        for w, s, c in zip(ev.at_warps.tolist(), ev.at_seq.tolist(), ev.at_ctas.tolist()):
            got = by_cta.get(c) if ev.mbarrier else by_warp.get(w)
            if got:
                self.waits[(w, s)] |= got

    def by_warp(self, replay_index=None) -> dict[int, dict[int, tuple]]:
        """warp -> {position: issues it waits for} (what :meth:`sim.timing.sm.SM.run` takes).
        ``replay_index(warp)``: the stream positions in the order the SM replays them
        (:func:`sim.timing.schedule.reorder_index`, ``None`` where it keeps the order); positions are
        mapped into that order."""
        maps: dict[int, list | None] = {}

        def pos(w: int, s: int) -> int:
            if replay_index is None:
                return s
            if w in maps:
                m = maps[w]
            else:                   # the inverse permutation (None: the warp's stream keeps its order)
                ix = replay_index(w)
                m = None
                if ix is not None:
                    ix = np.asarray(ix, np.int64)
                    inv = np.empty(len(ix), np.int64)
                    inv[ix] = np.arange(len(ix))
                    m = inv.tolist()
                maps[w] = m
            return m[s] if m is not None and 0 <= s < len(m) else s

        out: dict[int, dict[int, tuple]] = defaultdict(dict)
        for (w, s), src in self.waits.items():
            out[w][pos(w, s)] = tuple(sorted((v, pos(v, t)) for v, t in src))
        return dict(out)
