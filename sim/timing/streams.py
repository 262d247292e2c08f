"""Per-warp instruction streams, gathered from the PTX simulator's events for the timing model.

A listener of every instruction (:class:`WarpStreams`) files each event's warps under their global
warp id (``cta * warps_per_cta + warp``), in ``seq`` order, as ``(pc, access)`` records. ``access``
is ``None`` for non-memory instructions, else a tuple of parts ``(space, kind, cost, extra)``:

* global/local loads, stores, atomics: ``cost`` = 32-byte sectors the warp touches
  (:func:`sim.memory.banks.global_sectors`); ``extra`` = the 128-byte lines of a load (a tuple, for
  the L1 model), the number of 128-byte lines a store touches, or, for an atomic, the most lanes
  that hit one address (same-address serialisation);
* shared memory: ``cost`` = wavefronts, ``extra`` = the ideal wavefronts
  (:func:`sim.memory.banks.shared_costs`; ldmatrix and wgmma descriptors included).

It also keeps every distinct global sector read and written (for the L2/DRAM footprint) and the
counts of shared wavefronts. The timing model never looks at values, only at these facts.
"""

from __future__ import annotations

import numpy as np

from sim.memory.banks import global_sectors, shared_costs

_SPACE = {"global": "g", "local": "g", "shared": "s", "const": "c", "param": "c"}


class WarpStreams:
    memory_only = False

    def __init__(self, warps_per_cta: int, merged: dict | None = None):
        self.wpc = warps_per_cta
        self.merged = merged or {}      # pc -> sim.timing.vectorize.Merge (ptxas's vector loads)
        self._lead: dict[int, set] = {}  # leader pc -> warps whose last run of it was a vector load
        self.streams: dict[int, list] = {}
        self.read_sectors: list[np.ndarray] = []
        self.write_sectors: list[np.ndarray] = []
        self.shared_wavefronts = 0
        self.shared_ideal = 0
        self.events = 0
        self.global_sectors = 0         # sector accesses of global loads, stores and atomics

    def __call__(self, ev) -> None:
        self.events += 1
        gw = (ev.ctas * self.wpc + ev.warps).tolist()
        pc = ev.pc
        streams = self.streams
        if not ev.accesses:
            for g in gw:
                s = streams.get(g)
                if s is None:
                    s = streams[g] = []
                s.append((pc, None))
            return
        per = [[] for _ in gw]
        pos = {g: i for i, g in enumerate(gw)} if len(ev.accesses) > 1 or len(ev.accesses[0].warps) != len(gw) \
            else None
        for p in ev.accesses:
            sp = _SPACE.get(p.space)
            if sp is None or p.addresses is None:
                continue
            kind = p.kind
            act = p.active
            if sp == "s":
                width = p.width if p.width in (1, 2, 4, 8, 16) else (16 if p.width > 16 else 4)
                mg = self.merged.get(pc) if kind == "load" else None
                if mg is not None:
                    costs = self._merged_costs(p, mg, pc, act)
                else:
                    wf, ideal, _ = shared_costs(p.addresses, width, kind == "load", act)
                    self.shared_wavefronts += int(wf.sum())
                    self.shared_ideal += int(ideal.sum())
                    costs = [(sp, kind, int(a), int(b)) for a, b in zip(wf.tolist(), ideal.tolist())]
            elif sp == "g":
                secs = global_sectors(p.addresses, p.width, act)
                self.global_sectors += int(np.sum(secs))
                a = p.addresses.astype(np.int64)
                ids = np.unique(a[act] >> 5)
                (self.write_sectors if kind == "store" else self.read_sectors).append(ids)
                if kind == "atomic":
                    self.write_sectors.append(ids)
                    extra = [_max_same(a[i][act[i]]) for i in range(len(a))]
                elif kind in ("load", "async_load"):
                    lines = np.where(act, a >> 7, -1)
                    extra = [tuple(np.unique(r[r >= 0]).tolist()) for r in lines]
                else:                   # stores: the 128-byte lines they touch (L1 t-stage lookups)
                    lines = np.where(act, a >> 7, -1)
                    extra = [int(np.unique(r[r >= 0]).size) for r in lines]
                costs = [(sp, kind, int(c), e) for c, e in zip(np.atleast_1d(secs).tolist(), extra)]
            else:
                costs = [(sp, kind, 1, 0)] * len(p.warps)
            if pos is None:
                for i, c in enumerate(costs):
                    per[i].append(c)
            else:
                pg = (p.ctas * self.wpc + p.warps).tolist()
                for g, c in zip(pg, costs):
                    per[pos[g]].append(c)
        for g, parts in zip(gw, per):
            s = streams.get(g)
            if s is None:
                s = streams[g] = []
            s.append((pc, tuple(parts) if parts else None))

    def _merged_costs(self, p, mg, pc: int, act) -> list:
        """Costs of a load ptxas merges (:mod:`sim.timing.vectorize`): the leader carries the vector
        access where every active lane is aligned to its width; a follower of a merged leader costs
        ``("s", "merged", 0, leader pc)``."""
        a = p.addresses.astype(np.int64)
        m = np.ones(a.shape, bool) if act is None else np.asarray(act, bool)
        pg = (p.ctas * self.wpc + p.warps).tolist()
        if mg.leader == pc:
            wf, ideal, _ = shared_costs(a, mg.lane_bytes, True, act)
            vwf, vid, _ = shared_costs(a, mg.width, True, act)
            ok = np.all((a % mg.width == 0) | ~m, axis=1)
            wf, ideal = np.where(ok, vwf, wf), np.where(ok, vid, ideal)
            self.shared_wavefronts += int(wf.sum())
            self.shared_ideal += int(ideal.sum())
            lead = self._lead.setdefault(pc, set())
            for g, o in zip(pg, ok.tolist()):
                (lead.add if o else lead.discard)(g)
            return [("s", "load", int(x), int(y)) for x, y in zip(wf.tolist(), ideal.tolist())]
        lead = self._lead.get(mg.leader, ())
        out = []
        wf = ideal = None
        for i, g in enumerate(pg):
            if g in lead:
                out.append(("s", "merged", 0, mg.leader))
                continue
            if wf is None:
                wf, ideal, _ = shared_costs(a, mg.lane_bytes, True, act)
            self.shared_wavefronts += int(wf[i])
            self.shared_ideal += int(ideal[i])
            out.append(("s", "load", int(wf[i]), int(ideal[i])))
        return out

    def footprint(self, bases=None, ends=None, scale: float = 1.0) -> tuple[float, float]:
        """(distinct sectors read, written) by the warps seen, times ``scale`` (the launch's CTAs
        over those seen) but at most each touched buffer's size (``bases``/``ends``: byte addresses)."""
        out = []
        for lst in (self.read_sectors, self.write_sectors):
            ids = np.unique(np.concatenate(lst)) if lst else np.zeros(0, np.int64)
            if bases is None or not len(ids):
                out.append(float(len(ids)) * scale)
                continue
            k = np.searchsorted(np.asarray(bases, np.int64) >> 5, ids, side="right") - 1
            tot = 0.0
            for b in np.unique(k):
                n = int(np.count_nonzero(k == b))
                cap = (int(ends[b]) - int(bases[b]) + 31) // 32 if b >= 0 else n
                tot += min(n * scale, max(cap, n))
            out.append(tot)
        return out[0], out[1]


def _max_same(a: np.ndarray) -> int:
    if a.size == 0:
        return 0
    _, c = np.unique(a, return_counts=True)
    return int(c.max())


__all__ = ["WarpStreams"]
