"""Memory ordering of one launch: the global race detector and the relaxed memory (store buffers).

**Race detector** (``global_race``, on by default). Every global byte remembers its last writer
and last reader (thread, PTX instruction, the CTA's barrier epoch, the CTA's release clock).
Two accesses by different threads, at least one a write and not both strong (atomics, volatile,
``.relaxed``/``.acquire``/``.release``), race unless
happens-before orders them:

* same thread: program order;
* same CTA: a ``bar.sync``/``barrier.sync`` (or an mbarrier phase) completed between them, or a
  release/acquire between two of its threads (any scope; :meth:`Order._within_cta`);
* different CTAs: release/acquire through a synchronising location. A release is a fence at gpu
  or sys scope (``membar.gl``, ``fence.sc.gpu``, ``fence.acq_rel.gpu``) or a ``.release`` atomic or
  store; the next *strong* write of the CTA (an atomic, ``st.volatile``/``.relaxed``/``.release``)
  publishes the CTA's clocks at that location. A strong read that observes the location acquires
  them: at once for ``.acquire`` (``ld.acquire``, ``atom.acq_rel``), else at the CTA's next fence
  or barrier (the fence + relaxed-read pattern; a barrier after the observing atomic, as CUDA's
  threadFenceReduction sample does, counts too). Clocks are per CTA (vector clocks over CTAs).

A write that races is reported at the second instruction with the first one's PTX and source
line. Only the last reader of a byte is remembered, so a write is checked against that reader.

**Relaxed memory** (``memory_model="relaxed", seed=N``; the default ``"sc"`` makes every store
visible at once, as before). A global store goes into a store buffer: it is visible to its own
warp at once, to every other warp (observer) after a seeded random delay of simulator steps;
a load returns, per location, the value visible to its observer at a random time up to DELAY
steps back, but never before its last acquire nor before its last read of that location (reads
of one location never go back, which keeps coherence, CoRR). Fences drain and order: a fence (or ``.release``)
makes the thread's buffered stores, and those it has observed, visible at its scope (``.cta``:
the CTA's warps; ``.gpu``/``.sys``: everyone) at once; a fence (or ``.acquire``) makes later loads
of the observer read at least what is visible now. ``bar.sync`` does both at CTA scope; atomics
read and write the latest value (L2). Kernel end drains everything. :meth:`Order.pending` lists
what is still buffered (the timing model's interface).
"""

from __future__ import annotations

import numpy as np

from sim.arrays import distinct
from .memory import GLOBAL_BASE

SHADOW_LIMIT = 1 << 27          # global bytes above which the race detector is off (shadow memory)
MAX_LOG = 4096                  # buffered stores kept; older ones count as drained
DELAY = (4, 48)                 # steps: store-buffer delays and read lags, uniform in [0, 4) or, half the
                                # time, in [0, 48) (a heavy tail: some stores stay buffered long)


class Order:
    """Per-launch ordering state; ``M`` is the machine."""

    #: steps after which a buffered store is visible to every observer without a fence (delay and read lag)
    horizon = 2 * DELAY[1]

    def __init__(self, M, races: bool, relaxed: bool, seed: int = 0):
        self.M = M
        self.relaxed = relaxed
        self.seed = int(seed)
        size = M.gmem.data.size
        self.races = races and size <= SHADOW_LIMIT
        from isa.ptx.memorder import ordering

        self.sem = [ordering(c, mods) for c, mods in M.canon]
        self.reset()

    def release(self) -> None:
        """Free the launch-sized shadows and logs (:meth:`reset` makes them again for the next launch)."""
        for name in ("w_who", "w_bar", "w_rel", "w_pc", "r_who", "r_bar", "r_rel", "r_pc", "buffered"):
            if hasattr(self, name):
                setattr(self, name, None)
        self.log, self.vis_all, self.vis_cta = [], [], []
        self.vc, self.sync, self.pending_acq, self.cta_rel = {}, {}, {}, {}

    def reset(self) -> None:
        M = self.M
        n = M.ncta
        self.bar = np.ones(n, np.int32)
        self.rel = np.zeros(n, np.int32)
        self.vc: dict[int, np.ndarray] = {}
        self.sync: dict[int, np.ndarray] = {}
        self.pending_acq: dict[int, np.ndarray] = {}
        self.cta_rel: dict[int, tuple[int, int]] = {}     # global byte -> (CTA, thread) of its last releasing write
        self.cta_fenced: set[tuple[int, int]] = set()     # threads with a release fence since their last strong write
        self.cta_pending: dict[tuple[int, int], bool] = {}   # threads whose strong read saw a release: acquire at a fence
        if self.races:
            size = M.gmem.data.size
            self.w_who = np.zeros(size, np.int32)
            self.w_bar = np.zeros(size, np.int32)
            self.w_rel = np.zeros(size, np.int32)
            self.w_pc = np.zeros(size, np.int32)
            self.r_who = np.zeros(size, np.int32)
            self.r_bar = np.zeros(size, np.int32)
            self.r_rel = np.zeros(size, np.int32)
            self.r_pc = np.zeros(size, np.int32)
        self._rng = self._hoist_rng = None  # made on first draw (rng, hoist_rng): a launch that never
                                            # draws does not import numpy.random (~12 ms CPU)
        self.hoist_pending: set[int] = set()
        self.late = False                   # the load being read is a hoisted pair's: performed late
        self.log: list[tuple] = []          # (lo, hi, old bytes, writer observer, writer cta, time, entry id)
        self.vis_all: list = []             # per entry: time from which every observer sees it
        self.vis_cta: list = []             # per entry: time from which its CTA's observers see it
        self.buffered = np.zeros(M.gmem.data.size if self.relaxed else 1, np.int16)
        self.floor: dict[tuple[int, int], int] = {}
        self.acq: dict[int, int] = {}           # observer -> step of its last gpu/sys-scope acquire
        self.acq_cta: dict[int, int] = {}       # observer -> step of its last cta-scope acquire
        self.entries = 0

    # ------------------------------------------------------------------ clocks
    def row(self, c: int) -> np.ndarray:
        r = self.vc.get(c)
        if r is None:
            r = self.vc[c] = np.zeros(self.M.ncta, np.int32)
        return r

    def _join_pending(self, ctas) -> None:
        for c in ctas:
            p = self.pending_acq.pop(int(c), None)
            if p is not None:
                np.maximum(self.row(int(c)), p, out=self.row(int(c)))

    def barrier(self, ctas: np.ndarray) -> None:
        """A barrier completed for the (launch) CTAs ``ctas``."""
        self.bar[ctas] += 1
        if self.pending_acq:
            self._join_pending(ctas)
        if self.relaxed:
            for c in np.asarray(ctas).tolist():
                self._drain(None, int(c), cta_scope=True)

    def fence(self, pc: int, lanes: np.ndarray) -> None:
        o = self.sem[pc]
        M = self.M
        ctas = distinct(M.cta_linear[lanes])
        if o.beyond_cta:
            if o.release:
                self.rel[ctas] += 1
            if o.acquire and self.pending_acq:
                self._join_pending(ctas)
        if self.races:                  # within a CTA, at any scope: fence + strong write / strong read + fence
            who = zip(M.cta_linear[lanes].tolist(), M.local[lanes].tolist())
            if o.acquire and self.cta_pending:
                got = {c for c, t in who if self.cta_pending.pop((c, t), False)}
                if got:
                    self.bar[np.array(sorted(got))] += 1
                who = zip(M.cta_linear[lanes].tolist(), M.local[lanes].tolist())
            if o.release:
                self.cta_fenced.update(who)
        if self.relaxed:
            for w in distinct(self.observer(lanes)).tolist():
                self._drain(w, int(w) // M.warps_per_cta, cta_scope=not o.beyond_cta)

    def fence_op(self, pc: int, canon: str, ms):
        def run(m):
            lanes = self.M.lanes_of(m)
            if len(lanes):
                self.fence(pc, lanes)
        return run

    # ------------------------------------------------------------------ race detector
    def access(self, pc: int, kind: str, lanes: np.ndarray, addr: np.ndarray, width: int) -> None:
        """A global access (``load``, ``store`` or ``atomic``) of ``width`` bytes per lane."""
        M = self.M
        o = self.sem[pc]
        ctas = M.cta_linear[lanes].astype(np.int64)
        if o.strong and kind != "load" and o.release and o.beyond_cta:
            self.rel[distinct(ctas)] += 1
        flat0 = (addr.astype(np.int64) - GLOBAL_BASE)
        if o.strong and o.beyond_cta and kind == "atomic":
            self._rmw_chain(flat0, ctas, o.acquire)       # in thread order, as the atomics apply
        elif o.strong and o.beyond_cta and kind == "load":
            self._observe(flat0, ctas, o.acquire)
        if o.strong and self.races:
            self._within_cta(kind, o, lanes, ctas, flat0)
        if self.races:
            self._check(pc, kind, lanes, ctas, flat0, width)
        if o.strong and o.beyond_cta and kind == "store":
            self._publish(flat0, ctas)

    def _within_cta(self, kind, o, lanes, ctas, flat0) -> None:
        """Release/acquire between threads of one CTA (any scope): a strong read or atomic that
        observes a location whose last strong write released (``.release``, or a release fence
        before it) by another thread of its CTA orders the CTA's accesses before it against those
        after it, at once for an acquire, else at the reader's next acquire fence. Kept per CTA,
        like barriers (a new epoch): accesses of third threads around that point count as ordered
        too (a known over-approximation: races can be missed there, none is invented)."""
        M = self.M
        thr = M.local[lanes].tolist()
        cs = ctas.tolist()
        fl = flat0.tolist()
        if kind != "store" and self.cta_rel:
            bump = set()
            for f, c, t in zip(fl, cs, thr):
                r = self.cta_rel.get(f)
                if r is not None and r[0] == c and r[1] != t:
                    if o.acquire:
                        bump.add(c)
                    else:
                        self.cta_pending[(c, t)] = True
            if bump:
                self.bar[np.array(sorted(bump))] += 1
        if kind != "load":
            for f, c, t in zip(fl, cs, thr):
                if o.release or (c, t) in self.cta_fenced:
                    self.cta_rel[f] = (c, t)
                else:
                    self.cta_rel.pop(f, None)
                self.cta_fenced.discard((c, t))

    def _rmw_chain(self, flat0, ctas, acquire: bool) -> None:
        """Atomics of one instruction, lane by lane: each reads what the earlier ones published
        (a chain of read-modify-writes carries every release before it) and publishes its own."""
        seen = set()
        for f, c in zip(flat0.tolist(), ctas.tolist()):
            if (f, c) in seen:
                continue
            seen.add((f, c))
            self._observe(np.array([f]), np.array([c]), acquire)
            self._publish(np.array([f]), np.array([c]))

    def _observe(self, flat0, ctas, acquire: bool) -> None:
        if not self.sync:
            return
        for f, c in set(zip(flat0.tolist(), ctas.tolist())):
            s = self.sync.get(f)
            if s is None:
                continue
            if acquire:
                np.maximum(self.row(c), s, out=self.row(c))
            else:
                p = self.pending_acq.get(c)
                self.pending_acq[c] = s.copy() if p is None else np.maximum(p, s)

    def _publish(self, flat0, ctas) -> None:
        for f, c in set(zip(flat0.tolist(), ctas.tolist())):
            mine = self.row(c).copy()
            mine[c] = max(mine[c], self.rel[c])
            if not mine.any():
                continue
            s = self.sync.get(f)
            self.sync[f] = mine if s is None else np.maximum(s, mine)

    def _check(self, pc, kind, lanes, ctas, flat0, width) -> None:
        M = self.M
        idx = (flat0[:, None] + np.arange(width)).reshape(-1)
        gt = (ctas * M.tpc + M.local[lanes]).astype(np.int32) + 1
        me = np.repeat(gt, width)
        mc = np.repeat(ctas, width)
        atomic = kind == "atomic" or self.sem[pc].strong     # strong: atomics, volatile, relaxed, ...
        pw = self.w_who[idx]
        hit = (pw != 0) & (pw != me)
        if hit.any():
            self._conflicts(pc, kind, "write", hit, idx, me, mc, lanes, width, pw, self.w_bar, self.w_rel,
                            self.w_pc, atomic)
        if kind != "load":
            pr = self.r_who[idx]
            hr = (pr != 0) & (pr != me)
            if hr.any():
                self._conflicts(pc, kind, "read", hr, idx, me, mc, lanes, width, pr, self.r_bar, self.r_rel,
                                self.r_pc, atomic)
            self.w_who[idx] = me
            self.w_bar[idx] = self.bar[mc]
            rel = self.rel[mc]
            self.w_rel[idx] = -rel - 1 if atomic else rel
            self.w_pc[idx] = pc
            if not atomic:
                clash = self.w_who[idx] != me      # two lanes of this instruction wrote one byte
                if clash.any():
                    k = np.flatnonzero(clash)
                    self._report(pc, kind, lanes[k // width], idx[k], "write", self.w_who[idx[k]], pc)
        else:
            self.r_who[idx] = me
            self.r_bar[idx] = self.bar[mc]
            self.r_rel[idx] = -self.rel[mc] - 1 if atomic else self.rel[mc]
            self.r_pc[idx] = pc

    def _conflicts(self, pc, kind, prev_kind, hit, idx, me, mc, lanes, width, who, bar, rel, pcs, atomic):
        M = self.M
        k = np.flatnonzero(hit)
        i = idx[k]
        pwho = who[k] - 1
        pc_cta = pwho // M.tpc
        prel = rel[i]
        patomic = prel < 0
        prel = np.where(patomic, -prel - 1, prel)
        cur = mc[k]
        same = pc_cta == cur
        ordered = np.where(same, self.bar[cur] > bar[i], False)
        cross = np.flatnonzero(~same)
        if len(cross):
            known = np.zeros(len(cross), np.int32)
            for c in distinct(cur[cross]).tolist():
                r = self.vc.get(c)
                if r is None:
                    continue
                sel = cur[cross] == c
                known[sel] = r[pc_cta[cross][sel]]
            ordered[cross] = known > prel[cross]
        if atomic:
            ordered |= patomic               # two strong accesses (morally strong) do not race
        elif prev_kind == "read" and kind == "load":
            ordered[:] = True
        race = ~ordered
        if race.any():
            r = np.flatnonzero(race)
            # one report per lane
            lane_i = k[r] // width
            _, first = distinct(lane_i, return_index=True)
            r = r[first]
            self._report(pc, kind, lanes[k[r] // width], i[r], prev_kind, who[k[r]], pcs[i[r]])

    def _report(self, pc, kind, lanes, flat, prev_kind, prev_who, prev_pc) -> None:
        M = self.M
        if M.problems.room("global_race", pc) <= 0:
            M.problems.count_only("global_race", pc, len(lanes))
            return
        it = iter(zip(np.asarray(prev_who).tolist(), np.broadcast_to(prev_pc, (len(lanes),)).tolist()))
        verb = {"load": "load from", "store": "store to", "atomic": "atomic on"}[kind]

        def msg(a):
            who, ppc = next(it)
            g = who - 1
            c, t = g // M.tpc, g % M.tpc
            gx, gy = M.grid[0], M.grid[1]
            bx, by = M.block[0], M.block[1]
            cta = (c % gx, (c // gx) % gy, c // (gx * gy))
            thr = (t % bx, (t // bx) % by, t // (bx * by))
            ins = M.instructions[int(ppc)]
            src = M.source_of(ins)
            where = f"line {ins.span.line}" + (f" ({src})" if src else "")
            how = "no happens-before order (no barrier in one CTA; across CTAs, no fence + flag release/acquire)"
            return (f"{verb} global 0x{a:x} conflicts with the {prev_kind} by thread {thr} of CTA {cta} at "
                    f"{where} `{str(ins).strip()}`: {how}")
        M.report("global_race", pc, lanes, msg, addresses=np.asarray(flat) + GLOBAL_BASE,
                 buffer=lambda a: M.gmem.describe(a))

    # ------------------------------------------------------------------ relaxed memory
    def observer(self, lanes: np.ndarray) -> np.ndarray:
        """Observer (launch-wide warp index) of each lane."""
        M = self.M
        return (M.cta_linear[lanes] * M.warps_per_cta + M.warp_in_cta[lanes]).astype(np.int64)

    def _delay(self, eid: int, obs: np.ndarray) -> np.ndarray:
        x = (np.uint64(self.seed) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(eid) * np.uint64(0xBF58476D1CE4E5B9)
             ^ obs.astype(np.uint64) * np.uint64(0x94D049BB133111EB))
        x ^= x >> np.uint64(31)
        x *= np.uint64(0xD6E8FEB86D2EB1AB)
        x ^= x >> np.uint64(29)
        span = np.where((x >> np.uint64(40)) & np.uint64(1), np.uint64(DELAY[1]), np.uint64(DELAY[0]))
        return (x % span).astype(np.int64)

    @property
    def rng(self) -> np.random.Generator:
        """The read lags' draws, from the seed since the last :meth:`reset`."""
        if self._rng is None:
            self._rng = np.random.default_rng(self.seed)
        return self._rng

    @property
    def hoist_rng(self) -> np.random.Generator:
        """The hoisting draws, apart from the read lags."""
        if self._hoist_rng is None:
            self._hoist_rng = np.random.default_rng([self.seed, 1])
        return self._hoist_rng

    def _lag(self) -> int:
        return int(self.rng.integers(0, DELAY[int(self.rng.integers(0, 2))]))

    def visible(self, e: int, obs: int) -> int:
        """Step from which buffered store ``e`` is visible to observer ``obs``."""
        lo, hi, old, wobs, wcta, t, eid = self.log[e]
        if obs == wobs:
            return t
        v = t + int(self._delay(eid, np.array([obs]))[0])
        v = min(v, self.vis_all[e])
        if obs // self.M.warps_per_cta == wcta:
            v = min(v, self.vis_cta[e])
        return v

    def write(self, lanes: np.ndarray, flat: np.ndarray, old: np.ndarray) -> None:
        """Buffer global stores: ``flat`` [n] start bytes, ``old`` [n, w] bytes they replace."""
        M = self.M
        obs = self.observer(lanes)
        w = old.shape[1]
        now = M.steps
        ctas = M.cta_linear[lanes].tolist()
        for k, f in enumerate(flat.tolist()):
            self.log.append((f, f + w, old[k].copy(), int(obs[k]), ctas[k], now, self.entries))
            self.vis_all.append(1 << 62)
            self.vis_cta.append(1 << 62)
            self.entries += 1
            for word in range(f // 4, (f + w + 3) // 4):
                self.floor[(int(obs[k]), word)] = now
        self.buffered[(flat[:, None] + np.arange(w)).reshape(-1)] += 1
        if len(self.log) > MAX_LOG:
            drop = len(self.log) - MAX_LOG
            for lo, hi, *_ in self.log[:drop]:
                self.buffered[lo:hi] -= 1
            del self.log[:drop], self.vis_all[:drop], self.vis_cta[:drop]

    def read(self, lanes: np.ndarray, flat: np.ndarray, vals: np.ndarray) -> np.ndarray:
        """Values [n, w] bytes a relaxed load sees (``vals``: the latest, changed in place)."""
        w = vals.shape[1]
        idx = flat[:, None] + np.arange(w)
        hit = np.flatnonzero((self.buffered[idx] > 0).any(axis=1))
        if len(hit) == 0:
            return vals
        M = self.M
        now = M.steps
        obs = self.observer(lanes)
        for k in hit.tolist():
            o = int(obs[k])
            f = int(flat[k])
            words = range(f // 4, (f + w + 3) // 4)
            wfloor = max(self.floor.get((o, x), 0) for x in words)
            lag = now - self._lag() if not self.late else now + DELAY[1]
            tau_all = max(wfloor, self.acq.get(o, 0), lag)         # stores of other CTAs
            tau_cta = max(tau_all, self.acq_cta.get(o, 0))          # stores of this CTA's warps
            cta = o // M.warps_per_cta
            decided = np.zeros(w, bool)
            newest = tau_all
            for e in range(len(self.log) - 1, -1, -1):
                lo, hi, old, wobs, wcta, *_ = self.log[e]
                if hi <= f or lo >= f + w:
                    continue
                a, b = max(lo, f), min(hi, f + w)
                sl = slice(a - f, b - f)
                v = self.visible(e, o)
                if v <= (tau_cta if wcta == cta else tau_all):
                    und = ~decided[sl]
                    if und.any():
                        newest = max(newest, v)
                    decided[sl] = True
                else:
                    und = ~decided[sl]
                    vals[k, sl][und] = old[a - lo:b - lo][und]
                if decided.all():
                    break
            for x in words:
                self.floor[(o, x)] = newest
        return vals

    def _drain(self, obs: int | None, cta: int, cta_scope: bool) -> None:
        """Observer ``obs`` (None: every observer of CTA ``cta``) fences: its stores and those it
        sees now become visible at the scope now; its later loads read at least what it sees now."""
        M = self.M
        now = M.steps
        wpc = M.warps_per_cta
        mine = set(range(cta * wpc, (cta + 1) * wpc)) if obs is None else {obs}
        for e, (lo, hi, old, wobs, wcta, t, eid) in enumerate(self.log):
            own = wobs in mine
            seen = own or any(self.visible(e, o) <= now for o in mine)
            if seen:
                if cta_scope:
                    if wcta == cta:
                        self.vis_cta[e] = min(self.vis_cta[e], now)
                else:
                    self.vis_all[e] = min(self.vis_all[e], now)
        for o in mine:
            if cta_scope:
                self.acq_cta[o] = now
            else:
                self.acq[o] = now

    def pending(self) -> list[dict]:
        """Buffered global stores not yet visible to every observer: ``{'address', 'bytes',
        'writer_cta', 'writer_warp', 'step'}`` each (the timing model's view of the store buffers)."""
        out = []
        now = self.M.steps
        for e, (lo, hi, old, wobs, wcta, t, eid) in enumerate(self.log):
            if self.vis_all[e] > now:
                out.append({"address": GLOBAL_BASE + lo, "bytes": hi - lo, "writer_cta": wcta,
                            "writer_warp": wobs % self.M.warps_per_cta, "step": t})
        return out


# ---------------------------------------------------------------------------------- load buffering
def hoist_stores(M) -> int:
    """Relaxed memory only: a weak or ``.relaxed`` global store right after a weak or ``.relaxed``
    global load of the same thread, reading no register the load writes (no dependence), may be
    performed before it, as the PTX memory model allows (no order between them without a fence,
    a dependence or acquire/release). At run time, for a seeded half of the executions and when
    no active thread's two accesses touch the same 16-byte span, the store goes first and the path
    then lets a sibling path run before it loads (the load stays pending while other threads run).
    That is what produces load buffering's weak outcome (T0 r0=x; y=1 | T1 r1=y; x=1 with
    r0 = r1 = 1). Returns the number of such pairs."""
    from isa.ptx.registers import registers

    o = M.order
    n = 0
    for pc in range(len(M.prog) - 1):
        c1, m1 = M.canon[pc]
        c2, m2 = M.canon[pc + 1]
        if c1 != "ld" or c2 != "st" or "global" not in m1 or "global" not in m2:
            continue
        s1, s2 = o.sem[pc], o.sem[pc + 1]
        if s1.acquire or s2.release or M.prog[pc][0] != 0 or M.prog[pc + 1][0] != 0:
            continue
        i1, i2 = M.instructions[pc], M.instructions[pc + 1]
        w1 = set(registers(i1).writes)
        r2 = set(registers(i2).reads) | ({i2.guard.register} if i2.guard is not None else set())
        if w1 & r2:
            continue
        a1 = next((x for x in i1.operands if isinstance(x, _Address)), None)
        a2 = next((x for x in i2.operands if isinstance(x, _Address)), None)
        if a1 is None or a2 is None:
            continue
        M.prog[pc] = (1, _hoisted(M, pc, M.prog[pc][1], M.prog[pc + 1][1], M.address(a1, i1)[1],
                                  M.address(a2, i2)[1]))
        n += 1
    return n


from isa.ir import Address as _Address  # noqa: E402


def _hoisted(M, pc, load, store, afn1, afn2):
    pending = M.order.hoist_pending     # id() of stack entries whose store went first, load to come

    def run(M, stack, top):
        m = top.arg
        key = id(top)
        if key in pending:              # resumed after a sibling ran: the load, then past the store
            pending.discard(key)
            late_load(m)
            top.pc = pc + 2
            return
        lanes = M.lanes_of(m)
        sub = None if m is None else lanes
        a1 = afn1(sub).astype(np.int64)
        a2 = afn2(sub).astype(np.int64)
        apart = bool(np.all((a1 // 16 != a2 // 16) & ((a1 + 15) // 16 != a2 // 16) & (a1 // 16 != (a2 + 15) // 16)))
        if not apart or top.rpc == pc + 1 or M.order.hoist_rng.integers(0, 2) == 0:
            load(m)
            top.pc = pc + 1
            return
        M.pc_warps[pc + 1] += top.warps
        M.pc_threads[pc + 1] += top.threads
        store(m)
        for j in range(len(stack) - 2, -1, -1):       # a sibling path runs before the load
            e = stack[j]
            if e.threads and id(e) not in M.parked_ids and id(e) not in pending and not (e.mask & top.mask).any():
                stack[j:] = stack[j + 1:] + [e]
                pending.add(key)
                return
        late_load(m)
        top.pc = pc + 2

    def late_load(m):
        """The load after its store went first: performed late, it reads what is visible DELAY steps on."""
        M.order.late = True
        try:
            load(m)
        finally:
            M.order.late = False
    return run
