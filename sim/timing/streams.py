"""Per-warp instruction streams, gathered from the PTX simulator's events for the timing model.

A listener of every instruction (:class:`WarpStreams`) files each event's warps under their global
warp id (``cta * warps_per_cta + warp``), in ``seq`` order, as one :class:`WarpStream` per warp
(``pcs[i]``, ``accesses[i]``). An access is ``None`` for non-memory instructions, else a tuple of
:class:`Access` parts (``space, kind, cost, extra``):

* global/local loads, stores, atomics: ``cost`` = 32-byte sectors the warp touches
  (:func:`sim.memory.banks.global_sectors`); ``extra`` = the 128-byte lines of a load (a tuple of
  ``line * 16 + sector mask``, for the sectored L1 model), a store's ``(lines, partial, key)``: the 128-byte
  lines it touches, the sectors it writes only part of (the L2 merges those bytes into the sector:
  ``hierarchy.l2_write_partial_cycles``) and its first line encoded as a load's (the dirty line's key in
  the L2 reuse distances: DRAM write-backs), or, for an atomic, the most lanes
  that hit one address (same-address serialisation);
* shared memory: ``cost`` = wavefronts, ``extra`` = the ideal wavefronts
  (:func:`sim.memory.banks.shared_costs`; ldmatrix and wgmma descriptors included).

It also keeps every distinct global sector read and written (for the L2/DRAM footprint) and the
counts of shared wavefronts. The timing model never looks at values, only at these facts.
"""

from __future__ import annotations

from functools import partial
from itertools import repeat
from typing import NamedTuple

import numpy as np

from sim.arrays import distinct
from sim.memory.banks import event_global_sectors, event_shared_costs


class Access(NamedTuple):
    """One part of a warp's memory instruction, as the SM replay prices it."""

    space: str          # "g" global or local, "s" shared, "c" constant or parameter
    kind: str           # "load", "store", "atomic", "async_load", "async_store"; "merged": inside a vector load
    cost: int           # g: 32-byte sectors; s: wavefronts
    extra: object       # g: a load's 128-byte lines (tuple of line * 16 + sector mask), a store's (line count, partly written sectors, first line key), an atomic's most
    #                     lanes on one address; s: the conflict-free wavefronts; merged: the leader pc


class WarpStream(NamedTuple):
    """One warp's instructions in the order it runs them: ``pcs[i]`` and ``accesses[i]`` (a tuple of
    :class:`Access`, or ``None`` for an instruction that touches no memory the model prices)."""

    pcs: list
    accesses: list

    @classmethod
    def of(cls, records) -> "WarpStream":
        """From ``(pc, access)`` pairs (hand-made streams in tests)."""
        if isinstance(records, WarpStream):
            return records
        return cls([r[0] for r in records], [r[1] for r in records])

    def reordered(self, index) -> "WarpStream":
        """The same instructions at positions ``index`` (:func:`sim.timing.schedule.reorder_index`)."""
        ix = index.tolist() if hasattr(index, "tolist") else list(index)
        pcs, acc = self.pcs, self.accesses
        return WarpStream([pcs[i] for i in ix], [acc[i] for i in ix])

_SPACE = {"global": "g", "local": "g", "shared": "s", "const": "c", "param": "c"}

#: ``Access._make`` without its Python frame (what it does: ``tuple.__new__(Access, parts)``), for the
#: about 1.2 M accesses one 2048^3 hgemm_cp_async perf launch files
_new_access = partial(tuple.__new__, Access)


class WarpStreams:
    """Listener of every instruction; :attr:`streams` (global warp id -> :class:`WarpStream`)
    is assembled from the events on first use (one stable sort of all warp-instructions by warp,
    instead of a Python append per warp and event)."""

    memory_only = False

    def __init__(self, warps_per_cta: int, merged: dict | None = None):
        self.wpc = warps_per_cta
        self.merged = merged or {}      # pc -> sim.timing.vectorize.Merge (ptxas's vector loads)
        self._lead: dict[int, set] = {}  # leader pc -> warps whose last run of it was a vector load
        self.read_sectors: list[np.ndarray] = []
        self.write_sectors: list[np.ndarray] = []
        self.shared_wavefronts = 0
        self.shared_ideal = 0
        self.events = 0
        self.global_sectors = 0         # sector accesses of global loads, stores and atomics
        self.atomic_counts: dict[int, list] = {}   # 32-byte sector -> [L2 atomic operations, first CTA, shared by CTAs, pcs]
        self.atomic_seq: dict[int, list] = {}      # global warp id -> its atomics in order: per instruction ((sector, operations), ...)
        self._rpc: list = []            # per record: its pc; streams hold records by index
        self._racc: list = []           # per record: its accesses (a tuple of Access) or None
        self._plain: dict[int, int] = {}  # pc -> record of its non-memory executions
        self._gw: list[np.ndarray] = []   # per event: global warp ids
        self._rid: list = []              # per event: a record (non-memory) or the first of len(gw)
        self._streams: dict | None = None
        self._pcs: dict | None = None     # global warp id -> its stream's pcs (an array), with _rix
        self._rix: dict | None = None     # global warp id -> its stream's records, in order (_index)
        self._nidx = -1                   # events when _rix was made

    def __call__(self, ev) -> None:
        self.events += 1
        self._streams = None
        gw = ev.ctas * self.wpc + ev.warps
        pc = ev.pc
        if not ev.accesses:
            rid = self._plain.get(pc)
            if rid is None:
                rid = self._plain[pc] = len(self._rpc)
                self._rpc.append(pc)
                self._racc.append(None)
            self._gw.append(gw)
            self._rid.append(rid)
            return
        n = len(gw)
        per = None                      # per warp: its parts (several accesses, or not every warp)
        only = None                     # one access of every warp: its costs, one per warp
        pos = None
        if len(ev.accesses) > 1 or len(ev.accesses[0].warps) != n:
            pos = {g: i for i, g in enumerate(gw.tolist())}
            per = [[] for _ in range(n)]
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
                    wf, ideal, _ = event_shared_costs(p, width, kind == "load", act)
                    self.shared_wavefronts += int(wf.sum())
                    self.shared_ideal += int(ideal.sum())
                    costs = list(map(_new_access, zip(repeat(sp), repeat(kind), wf.tolist(), ideal.tolist())))
            elif sp == "g":
                secs = event_global_sectors(p, p.width, act)
                self.global_sectors += int(np.sum(secs))
                a = p.addresses.astype(np.int64)
                ids = distinct(a[act] >> 5)
                (self.write_sectors if kind == "store" else self.read_sectors).append(ids)
                if kind == "atomic":
                    self.write_sectors.append(ids)
                    # per 32-byte sector: [L2 atomic operations, first CTA, CTAs > 1, pcs]. The L2 performs
                    # a warp's atomics to one sector as one operation per lane that shares an address
                    # (distinct words of the sector go together, as atomic_spread's 1.5 x 16,896 L2 red
                    # sectors say), and operations to one sector one after the other, whichever words
                    # they touch (examples/h200/pipe_atomic: 2, 4 or 8 hot words of one sector take the
                    # time of one hot word, 472,840-473,463 cycles against 472,913)
                    hot = self.atomic_counts
                    seq = self.atomic_seq
                    ctas = np.broadcast_to(p.ctas, (len(a),))
                    for row, m, cta, g in zip(a, act, ctas.tolist(), (ctas * self.wpc + p.warps).tolist()):
                        u, c = distinct(row[m], return_counts=True)
                        ops: dict = {}
                        for x, n in zip((u >> 5).tolist(), c.tolist()):
                            if n > ops.get(x, 0):
                                ops[x] = n
                        seq.setdefault(g, []).append(tuple(ops.items()))
                        for x, n in ops.items():
                            h = hot.get(x)
                            if h is None:
                                hot[x] = [n, cta, False, {pc}]
                            else:
                                h[0] += n
                                h[2] = h[2] or h[1] != cta
                                h[3].add(pc)
                    extra = [_max_same(a[i][act[i]]) for i in range(len(a))]
                elif kind in ("load", "async_load"):
                    extra = _line_sectors(np.where(act, a >> 5, -1))
                else:                   # stores: (128-byte lines they touch, sectors they write only partly,
                    #                              their first line as a load's: the L2 key of the dirty line)
                    extra = list(zip(_distinct_per_row(np.where(act, a >> 7, -1)).tolist(),
                                     _partial_sectors(a, act, p.width).tolist(),
                                     _first_line(np.where(act, a >> 5, -1)).tolist()))
                costs = list(map(_new_access, zip(repeat(sp), repeat(kind), secs.tolist(), extra)))
            else:
                costs = [Access(sp, kind, 1, 0)] * len(p.warps)
            if pos is None:
                only = costs
            else:
                pg = (p.ctas * self.wpc + p.warps).tolist()
                for g, c in zip(pg, costs):
                    per[pos[g]].append(c)
        base = len(self._rpc)
        self._rpc.extend([pc] * len(gw))
        if per is not None:
            self._racc.extend([tuple(parts) if parts else None for parts in per])
        elif only is not None:
            self._racc.extend([(c,) for c in only])
        else:                           # an access in no space the model prices
            self._racc.extend([None] * len(gw))
        self._gw.append(gw)
        self._rid.append(-1 - base)      # records base .. base + n - 1, one per warp

    @property
    def streams(self) -> dict[int, WarpStream]:
        """Global warp id -> its instructions in order (:class:`WarpStream`)."""
        if self._streams is None:
            self._index()
            self._streams = {w: self.stream(w) for w in self._rix}
        return self._streams

    def pcs(self, warp: int) -> np.ndarray:
        """The pcs of ``warp``'s stream, in order (an int64 array; empty for a warp never seen)."""
        self._index()
        got = self._pcs.get(warp)
        return got if got is not None else np.zeros(0, np.int64)

    def stream(self, warp: int, index=None) -> WarpStream:
        """``warp``'s stream (empty for a warp never seen), or ``stream(warp).reordered(index)``
        built at once from the records (no list of the execution order first)."""
        self._index()
        r = self._rix.get(warp)
        if r is None:
            return WarpStream([], [])
        if index is not None:
            r = r[np.asarray(index, np.int64)]
        return WarpStream(self._rec_pc[r].tolist(), self._recs[r].tolist())

    def _index(self) -> None:
        """Per warp, the records of its stream in order (``_rix``) and their pcs (``_pcs``): one stable
        sort of all warp-instructions by warp; kept until the next event."""
        if self._rix is not None and self._nidx == self.events:
            return
        self._streams = None
        self._pcs, self._rix, self._nidx = {}, {}, self.events
        self._recs = np.fromiter(self._racc, dtype=object, count=len(self._racc))
        self._rec_pc = np.array(self._rpc, np.int64)
        if not self._gw:
            return
        gw = np.concatenate(self._gw)
        rid = np.concatenate([np.full(len(g), r, np.int64) if r >= 0 else np.arange(-1 - r, -1 - r + len(g))
                              for g, r in zip(self._gw, self._rid)])
        order = np.argsort(gw, kind="stable")       # each warp's events stay in execution order
        gs, rs = gw[order], rid[order]
        cut = np.flatnonzero(gs[1:] != gs[:-1]) + 1
        lo = np.concatenate([[0], cut])
        hi = np.concatenate([cut, [len(gs)]])
        for a, b in zip(lo.tolist(), hi.tolist()):
            w = int(gs[a])
            r = self._rix[w] = rs[a:b]
            self._pcs[w] = self._rec_pc[r]

    def _merged_costs(self, p, mg, pc: int, act) -> list:
        """Costs of a load ptxas merges (:mod:`sim.timing.vectorize`): the leader carries the vector
        access where every active lane is aligned to its width; a follower of a merged leader costs
        ``Access("s", "merged", 0, leader pc)``."""
        a = p.addresses.astype(np.int64)
        m = np.ones(a.shape, bool) if act is None else np.asarray(act, bool)
        pg = (p.ctas * self.wpc + p.warps).tolist()
        if mg.leader == pc:
            wf, ideal, _ = event_shared_costs(p, mg.lane_bytes, True, act)
            vwf, vid, _ = event_shared_costs(p, mg.width, True, act)
            ok = np.all((a % mg.width == 0) | ~m, axis=1)
            wf, ideal = np.where(ok, vwf, wf), np.where(ok, vid, ideal)
            self.shared_wavefronts += int(wf.sum())
            self.shared_ideal += int(ideal.sum())
            lead = self._lead.setdefault(pc, set())
            for g, o in zip(pg, ok.tolist()):
                (lead.add if o else lead.discard)(g)
            return [Access("s", "load", int(x), int(y)) for x, y in zip(wf.tolist(), ideal.tolist())]
        lead = self._lead.get(mg.leader, ())
        out = []
        wf = ideal = None
        for i, g in enumerate(pg):
            if g in lead:
                out.append(Access("s", "merged", 0, mg.leader))
                continue
            if wf is None:
                wf, ideal, _ = event_shared_costs(p, mg.lane_bytes, True, act)
            self.shared_wavefronts += int(wf[i])
            self.shared_ideal += int(ideal[i])
            out.append(Access("s", "load", int(wf[i]), int(ideal[i])))
        return out

    def footprint(self, bases=None, ends=None, scale: float = 1.0) -> tuple[float, float]:
        """(distinct sectors read, written) by the warps seen, times ``scale`` (the launch's CTAs
        over those seen) but at most each touched buffer's size (``bases``/``ends``: byte addresses)."""
        out = []
        for lst in (self.read_sectors, self.write_sectors):
            ids = distinct(np.concatenate(lst)) if lst else np.zeros(0, np.int64)
            if bases is None or not len(ids):
                out.append(float(len(ids)) * scale)
                continue
            k = np.searchsorted(np.asarray(bases, np.int64) >> 5, ids, side="right") - 1
            tot = 0.0
            for b in distinct(k):
                n = int(np.count_nonzero(k == b))
                cap = (int(ends[b]) - int(bases[b]) + 31) // 32 if b >= 0 else n
                tot += min(n * scale, max(cap, n))
            out.append(tot)
        return out[0], out[1]

    def granule_factor(self, granule_sectors: int = 2) -> float:
        """DRAM bytes fetched per distinct sector read, when the DRAM moves ``granule_sectors``
        aligned sectors at a time: 1.0 for dense reads, up to ``granule_sectors`` when every
        sector read is alone in its granule (a sampled launch gives the same ratio as the whole)."""
        if not self.read_sectors or granule_sectors <= 1:
            return 1.0
        ids = distinct(np.concatenate(self.read_sectors))
        if not len(ids):
            return 1.0
        return granule_sectors * len(distinct(ids // granule_sectors)) / len(ids)

    def dram_time_factor(self, granule_sectors: int = 2, line_overhead: float = 0.0, line_sectors: int = 4) -> float:
        """DRAM time per distinct sector read, in units of 32 bytes at the DRAM bandwidth, when the
        DRAM moves ``granule_sectors`` aligned sectors at a time and each 128-byte line it fetches
        costs ``line_overhead`` bytes beside its granules (hierarchy.dram_line_overhead), scaled so
        that a line fetched whole costs its 128 bytes (the bandwidth was measured on dense copies): a
        line of which one 64-byte granule is read costs (64 + o) / (128 + o) of a whole one, not half.
        With no overhead this is :meth:`granule_factor`."""
        if not self.read_sectors or granule_sectors <= 1:
            return 1.0
        ids = distinct(np.concatenate(self.read_sectors))
        if not len(ids):
            return 1.0
        gbytes = 32 * granule_sectors
        grans = distinct(ids // granule_sectors)
        lines = len(distinct(grans // max(1, line_sectors // granule_sectors)))
        full = 32 * line_sectors
        cost = (gbytes * len(grans) + line_overhead * lines) * full / (full + line_overhead)
        return cost / (32 * len(ids))


def _distinct_lines(keys: np.ndarray) -> list[tuple]:
    """Per row of ``keys``: its distinct non-negative values, ascending, as a tuple (one sort)."""
    s = np.sort(keys, axis=1)
    new = s >= 0
    new[:, 1:] &= s[:, 1:] != s[:, :-1]
    flat = s[new].tolist()
    ends = np.cumsum(new.sum(axis=1)).tolist()
    out, lo = [], 0
    for hi in ends:
        out.append(tuple(flat[lo:hi]))
        lo = hi
    return out


def _line_sectors(sectors: np.ndarray) -> list[tuple]:
    """Per row of 32-byte sector ids (negative = inactive lane): its distinct 128-byte lines, ascending,
    each as ``line * 16 + mask``, ``mask`` the 4-bit set of the line's sectors the row touches (the L1
    is sectored: a line is allocated whole but filled, and hit, sector by sector)."""
    s = np.sort(sectors, axis=1)
    valid = s >= 0
    new = valid.copy()
    new[:, 1:] &= s[:, 1:] != s[:, :-1]
    line = s >> 2
    start = valid.copy()
    start[:, 1:] &= line[:, 1:] != line[:, :-1]
    bits = np.where(new, np.left_shift(1, s & 3), 0).ravel()
    first = np.flatnonzero(start.ravel())
    if not len(first):
        return [()] * len(s)
    masks = np.add.reduceat(bits, first)          # distinct sectors of a line: their bits sum to the OR
    enc = (line.ravel()[first] << 4 | masks).tolist()
    out, lo = [], 0
    for hi in np.cumsum(start.sum(axis=1)).tolist():
        out.append(tuple(enc[lo:hi]))
        lo = hi
    return out


def _distinct_per_row(keys: np.ndarray) -> np.ndarray:
    """Distinct non-negative values in each row of ``keys`` (negative = none)."""
    if keys.shape[1] == 0:
        return np.zeros(len(keys), np.int64)
    s = np.sort(keys, axis=1)
    new = np.ones(s.shape, bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    return (new & (s >= 0)).sum(axis=1)


def _first_line(sectors: np.ndarray) -> np.ndarray:
    """Per row of 32-byte sector ids (negative = inactive lane): the lowest 128-byte line it touches,
    encoded as a load's first line is (``line * 16 + sector mask``, :func:`_line_sectors`), so that a
    store and a load of the same bytes are one key in the L2 reuse distances; -1 for an empty row."""
    if sectors.shape[1] == 0:
        return np.full(len(sectors), -1, np.int64)
    big = np.iinfo(np.int64).max
    lo = np.where(sectors >= 0, sectors, big).min(axis=1)
    line = np.where(lo == big, -1, lo >> 2)
    inl = (sectors >= 0) & ((sectors >> 2) == line[:, None])
    mask = np.bitwise_or.reduce(np.where(inl, np.left_shift(1, sectors & 3), 0), axis=1)
    return np.where(line >= 0, line * 16 + mask, -1)


def _partial_sectors(a: np.ndarray, act: np.ndarray, width: int) -> np.ndarray:
    """Per row of byte addresses (one row per warp, ``act`` its active lanes, each lane writing ``width``
    bytes): the 32-byte sectors the row writes only part of (fewer than 32 distinct bytes; lanes writing
    the same address count once). A warp storing 4 bytes every 32 (write_strided_8) writes 32 sectors
    partly; 4 bytes per lane side by side (write_strided_1) or 16 (st.v4) write whole sectors."""
    n = len(a)
    w = int(width or 4)
    if n == 0 or a.shape[1] == 0 or w >= 32:
        return np.zeros(n, np.int64)
    rows = np.broadcast_to(np.arange(n)[:, None], a.shape)[act]
    keys = distinct(rows.astype(np.int64) * (1 << 44) + (a[act] & ((1 << 44) - 1)))   # distinct (row, address)
    sec, cnt = distinct(keys >> 5, return_counts=True)                                   # per (row, sector)
    part = sec[cnt * w < 32] >> 39                                                         # their rows
    return np.bincount(part, minlength=n).astype(np.int64)


def _max_same(a: np.ndarray) -> int:
    if a.size == 0:
        return 0
    _, c = distinct(a, return_counts=True)
    return int(c.max())


__all__ = ["Access", "WarpStream", "WarpStreams"]
