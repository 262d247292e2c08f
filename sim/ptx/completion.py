"""Asynchronous operations and their completion: ``cp.async`` groups, bulk copies, ``wgmma``
and mbarrier phases, as the PTX ISA defines them (ISA 9.7.9.25, 9.7.13.15, 9.7.15.6)::

    cp.async.cg.shared.global [%r16], [%rd4], 16;   # issue: source read, destination NOT written
    cp.async.commit_group;                          # the thread's uncommitted copies form a group
    cp.async.wait_group 1;                          # all but the newest group complete: writes land
    mbarrier.try_wait.parity.shared::cta.b64 P1, [%r4], %r7;   # bulk copies tracked by the
                                                    # barrier complete here (complete_tx), not at issue

Writes land when an operation completes, at the latest point the ISA allows: the wait that
observes it (``cp.async.wait_group``/``wait_all``, ``cp.async.bulk.wait_group``,
``wgmma.wait_group``, an mbarrier wait whose phase needs it), or the end of the CTA. Until then the
destination keeps its old bytes (a kernel that reads it early gets the old data, as it could on
hardware) and every generic-proxy access to bytes an in-flight operation writes (or, for a store,
reads) is an ``async_race``. ``wgmma.mma_async`` computes at issue, chains later ``wgmma`` on the
same accumulator registers through a shadow copy, and writes the registers at the covering
``wgmma.wait_group``; other instructions that touch those registers before then are reported.

Listeners with an ``on_async(event)`` method receive an :class:`AsyncEvent` at every issue and
completion (the timing model's interface: ``step`` is the simulator step count, ``group`` the
commit group).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.arrays import distinct

WARP = 32


@dataclass(frozen=True, slots=True)
class AsyncEvent:
    """One asynchronous operation issued or completed by the threads ``lanes`` of one instruction.

    ``op``: ``'cp.async'``, ``'cp.async.bulk'``, ``'cp.async.bulk.tensor'`` or ``'wgmma'``;
    ``kind``: ``'issue'`` or ``'complete'``; ``pc``: the issuing instruction; ``at_pc``: the
    instruction where it happened (the wait for completions); ``ctas`` linear CTA per lane.
    Stream positions (what the timing model replays): ``seq`` per lane, the position of the issuing
    instruction in its warp's stream (``warp_seq``; global warp id ``cta * warps_per_cta + warp``
    in ``warps``); for a completion, ``at_warps``/``at_seq``: the global warps and positions of the
    instruction that observed it (a wait), or None at the end of the CTA."""

    kind: str
    op: str
    pc: int
    at_pc: int
    step: int
    ctas: np.ndarray
    threads: np.ndarray          # thread index within its CTA, per lane
    bytes: int
    group: int = -1
    warps: np.ndarray | None = None      # global warp id of each issuing lane
    seq: np.ndarray | None = None        # per lane: stream position of the issuing instruction
    at_warps: np.ndarray | None = None   # completions: global warps of the observing instruction
    at_seq: np.ndarray | None = None     # ... and its stream position in each
    at_ctas: np.ndarray | None = None    # ... and their CTAs
    mbarrier: bool = False               # tracked by an mbarrier (any warp of the CTA may observe it)


@dataclass
class Op:
    """One in-flight asynchronous operation of one instruction for some threads."""

    op: str
    pc: int
    lanes: np.ndarray            # batch threads (issuers)
    group: np.ndarray            # per lane: commit group index (cp.async, bulk groups)
    dst: tuple | None            # (space, flat byte index [n, width]) written at completion
    vals: np.ndarray | None      # [n, width] uint8
    reads: np.ndarray | None     # flat shared bytes read (async proxy) while in flight
    mbar: np.ndarray | None = None   # per lane: mbarrier slot to complete_tx/arrive on, or -1
    tx: int = 0                  # bytes per lane for complete_tx
    arrive: bool = False         # cp.async.mbarrier.arrive: arrive on completion
    noinc: bool = False
    done: bool = False
    read_done: bool = False
    seq: np.ndarray | None = None    # per lane: stream position of the issuing instruction (listeners only)


class Mbarriers:
    """The mbarrier objects of a batch: one slot per (CTA, shared address), phase state in arrays."""

    def __init__(self, on_phase=None):
        self.on_phase = on_phase            # called with the slots whose phase completed
        self.flat = []                      # slot -> flat shared byte index
        self.slot: dict[int, int] = {}
        self.expected = np.zeros(0, np.int64)
        self.pending = np.zeros(0, np.int64)
        self.tx = np.zeros(0, np.int64)
        self.phase = np.zeros(0, np.int64)
        self.progress = 0
        self.src: dict[int, set] = {}           # slot -> (warp, seq) issues feeding its open phase (listeners)
        self.phase_src: dict[tuple[int, int], frozenset] = {}   # (slot, phase count) -> issues that completed it

    def slots(self, flat: np.ndarray, create: bool = False) -> np.ndarray:
        out = np.empty(len(flat), np.int64)
        for i, f in enumerate(flat.tolist()):
            s = self.slot.get(f)
            if s is None:
                if not create:
                    out[i] = -1
                    continue
                s = self.slot[f] = len(self.slot)
                self.flat.append(f)
                for name in ("expected", "pending", "tx", "phase"):
                    setattr(self, name, np.append(getattr(self, name), 0))
            out[i] = s
        return out

    def init(self, s: np.ndarray, count: np.ndarray) -> None:
        if self.phase_src or self.src:
            gone = set(np.asarray(s).tolist())
            self.phase_src = {k: v for k, v in self.phase_src.items() if k[0] not in gone}
            for g in gone:
                self.src.pop(g, None)
        self.expected[s] = count
        self.pending[s] = count
        self.tx[s] = 0
        self.phase[s] = 0
        self.progress += 1

    def arrive(self, s: np.ndarray, count, drop: bool = False) -> None:
        count = np.broadcast_to(np.asarray(count, np.int64), s.shape)
        np.subtract.at(self.pending, s, count)
        if drop:
            np.subtract.at(self.expected, s, count)
        self.settle(distinct(s))

    def add_tx(self, s: np.ndarray, n) -> None:
        np.add.at(self.tx, s, np.broadcast_to(np.asarray(n, np.int64), s.shape))
        self.settle(distinct(s))

    def settle(self, s: np.ndarray) -> None:
        """Phases whose pending arrivals and tx-count reached zero complete."""
        s = s[s >= 0]
        done = s[(self.pending[s] <= 0) & (self.tx[s] == 0)]
        if len(done):
            self.phase[done] += 1
            self.pending[done] = self.expected[done]
            self.progress += 1
            if self.src:
                for d in done.tolist():
                    got = self.src.pop(d, None)
                    if got:
                        self.phase_src[(d, int(self.phase[d]))] = frozenset(got)
            if self.on_phase is not None:
                self.on_phase(done)


class Async:
    """In-flight asynchronous operations of one batch of CTAs (owned by the machine)."""

    def __init__(self, M):
        self.M = M
        self.reset()

    def reset(self) -> None:
        M = self.M
        self.ops: list[Op] = []
        self.cp_commits = np.zeros(M.T, np.int64)       # cp.async groups committed per thread
        self.bulk_commits = np.zeros(M.T, np.int64)
        self.wg_commits = np.zeros(M.T // WARP, np.int64)
        self.mbar = Mbarriers(self._phase_done)
        self.inflight = np.zeros(M.shared.data.size, np.int16)    # in-flight async writes per byte
        self.dirty = np.zeros(M.shared.data.size, bool)           # generic writes not fenced to async proxy
        self.any_inflight = False
        self.wg: list = []                      # in-flight wgmma: [frag, warps, values, group, reads, pc, done]
        self.wg_shadow: dict[tuple, tuple] = {}  # accumulator register keys -> (values [Wb, 32, R], valid [Wb])
        self.wg_regs: dict[str, tuple] = {}     # accumulator register key -> its fragment's keys, in flight
        self.spins: dict = {}
        self.at: np.ndarray | None = None        # batch lanes of the instruction observing completions

    def _phase_done(self, slots: np.ndarray) -> None:
        """A completed mbarrier phase orders the CTA's shared accesses before it (arrivals, copies)
        against those after a wait that observes it: a new shared-race epoch for those CTAs."""
        M = self.M
        if M.tags is not None:
            ctas = distinct(np.array([self.mbar.flat[int(s)] for s in slots]) // M.shared.stride)
            M.barrier_epoch(ctas)

    # ------------------------------------------------------------------ events
    def _gw(self, lanes: np.ndarray) -> np.ndarray:
        M = self.M
        return M.cta_linear[lanes].astype(np.int64) * (M.tpc // WARP) + M.local[lanes].astype(np.int64) // WARP

    def event(self, kind: str, op: Op, lanes: np.ndarray, at_pc: int, nbytes: int, group: int = -1,
              sel: np.ndarray | None = None) -> None:
        targets = [l for l in self.M.listeners if hasattr(l, "on_async")]
        if not targets:
            return
        M = self.M
        seq = at_w = at_s = at_c = None
        if kind == "issue":
            seq = M.warp_seq[lanes // WARP].copy()
            op.seq = seq
        else:
            if op.seq is not None:
                seq = op.seq if sel is None else op.seq[sel]
            if self.at is not None and len(self.at):
                w = distinct(self.at // WARP)
                at_w = self._gw(w * WARP)
                at_s = M.warp_seq[w].copy()
                at_c = M.cta_linear[w * WARP].astype(np.int64)
        ev = AsyncEvent(kind, op.op, op.pc, at_pc, M.steps, M.cta_linear[lanes].astype(np.int64),
                        M.local[lanes].astype(np.int64), int(nbytes), group, self._gw(lanes), seq, at_w, at_s, at_c,
                        op.mbar is not None)
        for l in targets:
            l.on_async(ev)

    # ------------------------------------------------------------------ issue
    def issue(self, op: Op) -> None:
        if op.dst is not None and op.dst[0] == "shared":
            self.inflight[op.dst[1]] += 1
        self.ops.append(op)
        self.any_inflight = True
        self.event("issue", op, op.lanes, op.pc, 0 if op.vals is None else op.vals.size,
                   int(op.group[0]) if len(op.group) else -1)

    def complete(self, op: Op, sel: np.ndarray | None, at_pc: int) -> None:
        """Complete ``op`` for its lanes ``sel`` (indices into op.lanes; None = all still pending)."""
        M = self.M
        if sel is None:
            sel = np.flatnonzero(op.group >= 0)
        if len(sel) == 0:
            return
        lanes = op.lanes[sel]
        if op.dst is not None and op.vals is not None:
            space, flat = op.dst
            f = flat[sel]
            if space == "shared":
                M.shared.data[f] = op.vals[sel]
                self.inflight[f] = np.maximum(self.inflight[f] - 1, 0)
                if M.shared.written is not None:
                    M.shared.written[f] = 1
                if M.tags is not None:
                    M.tag_writes(f[:, 0], f.shape[1], lanes)
                if op.op == "cp.async":
                    self.dirty[f] = True       # cp.async writes through the generic proxy
            else:
                M.global_write(at_pc, f, op.vals[sel], lanes)
        if op.mbar is not None:
            s = op.mbar[sel]
            if op.seq is not None:            # the timing model's view: which issues feed which phase
                gw = self._gw(lanes)
                for slot, w, q in zip(s.tolist(), gw.tolist(), op.seq[sel].tolist()):
                    if slot >= 0:
                        self.mbar.src.setdefault(slot, set()).add((w, q))
            s = s[s >= 0]
            if op.tx:
                self.mbar.add_tx(s, -op.tx)
            if op.arrive:
                self.mbar.arrive(s, 1)      # without .noinc the pending count was raised at issue
        self.event("complete", op, lanes, at_pc, 0 if op.vals is None else op.vals[sel].size,
                   int(op.group[sel[0]]), sel)
        op.group[sel] = -1
        if (op.group < 0).all():
            op.done = True
            self.ops = [o for o in self.ops if not o.done]
            self.any_inflight = bool(self.ops) or bool(self.wg)

    # ------------------------------------------------------------------ waits
    def wait_cp(self, pc: int, lanes: np.ndarray, n: int | None, which: str = "cp.async") -> None:
        """``cp.async.wait_group n`` (None: wait_all) for threads ``lanes``."""
        commits = self.cp_commits if which == "cp.async" else self.bulk_commits
        self.at = lanes
        limit = np.full(self.M.T, -1, np.int64)
        limit[lanes] = (commits[lanes] - (n or 0)) if n is not None else np.iinfo(np.int64).max
        for op in list(self.ops):
            if op.op not in ((which,) if which == "cp.async" else ("cp.async.bulk", "cp.async.bulk.tensor")):
                continue
            if op.mbar is not None and which != "cp.async":
                continue
            sel = np.flatnonzero((op.group >= 0) & (op.group < limit[op.lanes]))
            self.complete(op, sel, pc)

    def wait_read(self, pc: int, lanes: np.ndarray, n: int) -> None:
        """``cp.async.bulk.wait_group.read n``: sources of the older bulk groups may be reused."""
        limit = np.full(self.M.T, -1, np.int64)
        limit[lanes] = self.bulk_commits[lanes] - n
        for op in self.ops:
            if op.op.startswith("cp.async.bulk") and op.mbar is None and not op.read_done and op.reads is not None:
                sel = (op.group >= 0) & (op.group < limit[op.lanes])
                if sel.all():
                    op.read_done = True

    def observe(self, pc: int, lanes: np.ndarray, slots: np.ndarray) -> None:
        """Threads ``lanes`` found the phases of mbarriers ``slots`` complete (a successful wait):
        listeners learn which issues completed those phases (an ``'observe'`` event)."""
        M = self.M
        targets = [l for l in M.listeners if hasattr(l, "on_async")]
        if not targets or not self.mbar.phase_src:
            return
        for slot in distinct(slots).tolist():
            src = self.mbar.phase_src.get((slot, int(self.mbar.phase[slot])))
            if not src:
                continue
            ln = lanes[slots == slot]
            w = distinct(ln // WARP)
            ws, qs = zip(*sorted(src))
            ev = AsyncEvent("observe", "mbarrier", pc, pc, M.steps, M.cta_linear[ln[:1]].astype(np.int64),
                            M.local[ln[:1]].astype(np.int64), 0, -1, np.array(ws, np.int64), np.array(qs, np.int64),
                            self._gw(w * WARP), M.warp_seq[w].copy(), M.cta_linear[w * WARP].astype(np.int64), True)
            for l in targets:
                l.on_async(ev)

    def complete_for_mbarrier(self, pc: int, slots: np.ndarray, lanes: np.ndarray | None = None) -> None:
        """A wait (of threads ``lanes``) observes mbarriers ``slots`` whose phase is incomplete: the
        operations that will complete them do so now (the latest point the ISA allows)."""
        self.at = lanes
        want = set(int(s) for s in slots)
        for op in list(self.ops):
            if op.mbar is None or op.done:
                continue
            sel = np.flatnonzero((op.group >= 0) & np.isin(op.mbar, list(want)))
            if len(sel):
                self.complete(op, sel, pc)

    def finish(self) -> None:
        """End of the batch: every operation still in flight completes (its CTA's memory dies
        with it, global writes land)."""
        self.at = None
        for op in list(self.ops):
            self.complete(op, None, op.pc)
        for rec in self.wg:
            if not rec[6]:
                self._wg_apply(rec)
        self.wg = []
        self.wg_shadow = {}
        self.wg_regs = {}

    # ------------------------------------------------------------------ wgmma
    def wg_input(self, frag, w: np.ndarray) -> np.ndarray:
        """The accumulator a new wgmma of warps ``w`` starts from (a pending result chains)."""
        cur = frag.read(w)
        sh = self.wg_shadow.get(frag.keys)
        if sh is None:
            return cur
        vals, valid = sh
        v = valid[w]
        if v.any():
            cur[v] = vals[w[v]]
        return cur

    def wg_issue(self, pc: int, frag, w: np.ndarray, out: np.ndarray, reads: np.ndarray | None) -> None:
        M = self.M
        sh = self.wg_shadow.get(frag.keys)
        if sh is None:
            sh = self.wg_shadow[frag.keys] = (np.zeros((M.T // WARP, WARP, out.shape[2]), np.uint32),
                                            np.zeros(M.T // WARP, bool))
        sh[0][w] = out
        sh[1][w] = True
        rec = [frag, w.copy(), out, self.wg_commits[w].copy(), reads, pc, False, None]
        self.wg.append(rec)
        for k in frag.keys:
            self.wg_regs[k] = frag.keys
        self.any_inflight = True
        fake = Op("wgmma", pc, w * WARP, self.wg_commits[w], None, None, None)
        self.event("issue", fake, w * WARP, pc, 0, int(self.wg_commits[w][0]))
        rec[7] = fake.seq

    def wg_wait(self, pc: int, w: np.ndarray, n: int) -> None:
        self.at = w * WARP
        limit = np.full(self.M.T // WARP, -1, np.int64)
        limit[w] = self.wg_commits[w] - n
        for rec in self.wg:
            if rec[6]:
                continue
            warps, group = rec[1], rec[3]
            sel = group < limit[warps]
            if sel.all():
                self._wg_apply(rec, pc)
            elif sel.any():
                self._wg_apply(rec, pc, sel)
        self.wg = [r for r in self.wg if not r[6]]
        live = {r[0].keys for r in self.wg}
        self.wg_regs = {k: f for k, f in self.wg_regs.items() if f in live}
        self.any_inflight = bool(self.ops) or bool(self.wg)

    def _wg_apply(self, rec, pc=None, sel=None) -> None:
        frag, warps, out, group, reads, ipc, _, seq = rec
        if sel is None:
            sel = np.ones(len(warps), bool)
        w = warps[sel]
        frag.write(w, out[sel])
        sh = self.wg_shadow.get(frag.keys)
        if sh is not None:
            # the shadow is the newest result; it is no longer pending once the newest op lands
            k = next(i for i, r in enumerate(self.wg) if r is rec)
            still = np.zeros(self.M.T // WARP, bool)
            for r in self.wg[k + 1:]:
                if not r[6] and r[0].keys == frag.keys:
                    still[r[1]] = True
            sh[1][w[~still[w]]] = False
        fake = Op("wgmma", ipc, w * WARP, group[sel], None, None, None, seq=None if seq is None else seq[sel])
        self.event("complete", fake, w * WARP, ipc if pc is None else pc, 0, int(group[sel][0]))
        if sel.all():
            rec[6] = True
        else:
            rec[1], rec[2], rec[3] = warps[~sel], out[~sel], group[~sel]
            if seq is not None:
                rec[7] = seq[~sel]
            if reads is not None:
                rec[4] = (reads[0][~sel], reads[1][~sel])

    def wg_inflight_warps(self, key: str) -> np.ndarray | None:
        """Warps (batch) whose wgmma writing register ``key`` has not completed, or None."""
        fid = self.wg_regs.get(key)
        if fid is None:
            return None
        sh = self.wg_shadow.get(fid)
        return None if sh is None else sh[1]

    # ------------------------------------------------------------------ checks
    def check_generic(self, pc: int, flat: np.ndarray, width: int, lanes: np.ndarray, addr, store: bool) -> None:
        """A generic-proxy shared access of ``width`` bytes at ``flat``: bytes an in-flight async
        operation writes (or, for stores, reads) are an ``async_race``."""
        M = self.M
        idx = flat[:, None] + np.arange(width)
        hit = self.inflight[idx] > 0
        what = "writes"
        bad = hit.any(axis=1)
        if store:
            lo, hi = self.read_intervals()
            if len(lo):
                r = ((flat[:, None] < hi[None, :]) & (flat[:, None] + width > lo[None, :])).any(axis=1)
                if r.any():
                    what = "writes or reads"
                bad = bad | r
        if not bad.any():
            return
        i = np.flatnonzero(bad)
        first = self.ops[0] if self.ops else (self.wg[0] if self.wg else None)
        issuer = ""
        if first is not None:
            p = first.pc if isinstance(first, Op) else first[5]
            ins = M.instructions[p]
            issuer = f" ({ins.full_opcode} at line {ins.span.line}{_src(M, ins)})"
        verb = "store to" if store else "load from"
        M.report("async_race", pc, lanes[i],
                 lambda a: f"{width}-byte {verb} shared 0x{a:x} touches bytes that an asynchronous copy or wgmma "
                           f"still in flight {what}{issuer}; its completion has not been observed "
                           f"(missing cp.async.wait_group / mbarrier wait / wgmma.wait_group?)",
                 addresses=addr[i], buffer=lambda a: M.shared_var_at(a))

    def check_async_read(self, pc: int, flat: np.ndarray, lanes: np.ndarray, what: str) -> None:
        """An async-proxy read (wgmma operand, bulk-copy source) of bytes written through the generic
        proxy with no ``fence.proxy.async`` since: an ``async_race``."""
        M = self.M
        d = self.dirty[flat.reshape(len(lanes), -1)]
        bad = d.any(axis=1)
        if not bad.any():
            return
        i = np.flatnonzero(bad)
        first = flat.reshape(len(lanes), -1)[i, np.argmax(d[i], axis=1)]
        off = first - M.cta_local[lanes[i]] * M.shared.stride
        M.report("async_race", pc, lanes[i],
                 lambda a: f"{what} reads shared 0x{a:x} through the async proxy, but it was written through the "
                           f"generic proxy with no fence.proxy.async since (the copy may read stale data)",
                 addresses=off, buffer=lambda a: M.shared_var_at(a))

    def read_intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Flat shared byte ranges ``[lo, hi)`` that in-flight async operations read."""
        lo, hi = [], []
        for op in self.ops:
            if op.reads is not None and not op.read_done:
                lo.append(op.reads[0][op.group >= 0])
                hi.append(op.reads[1][op.group >= 0])
        for rec in self.wg:
            if rec[4] is not None and not rec[6]:
                lo.append(rec[4][0].reshape(-1))
                hi.append(rec[4][1].reshape(-1))
        if not lo:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(lo), np.concatenate(hi)

    def fence_proxy(self, lanes: np.ndarray) -> None:
        """``fence.proxy.async``: generic writes of these threads' CTAs become visible to the async proxy."""
        M = self.M
        st = M.shared.stride
        for c in distinct(M.cta_local[lanes]):
            self.dirty[c * st:(c + 1) * st] = False


def _src(M, ins) -> str:
    s = M.source_of(ins)
    return f", {s}" if s else ""


#: canonical opcodes that need the asynchronous machinery
ASYNC_OPCODES = frozenset({"cp.async", "cp.async.bulk", "cp.async.bulk.tensor", "wgmma.mma_async",
                           "cp.async.mbarrier.arrive", "cp.async.commit_group", "cp.async.wait_group",
                           "cp.async.wait_all", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group",
                           "mbarrier.init", "mbarrier.arrive", "mbarrier.arrive_drop", "mbarrier.expect_tx",
                           "mbarrier.complete_tx", "mbarrier.test_wait", "mbarrier.try_wait", "mbarrier.inval",
                           "mbarrier.pending_count", "fence.proxy.async"})
