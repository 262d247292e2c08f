"""The H200 timing model: per-warp instruction streams (from the PTX simulator's events) replayed on
a model of one SM, then scaled to the chip. Every figure it gives is *modelled*.

Why this shape (an interval-style replay over sampled CTAs, not a cycle-by-cycle simulator): the
functional simulator already says what every warp executes and where it reads; what is left is
when. The model is event-driven: a warp's next instruction becomes *ready* when its inputs are
(scoreboard with per-opcode latencies, ``[latency_cycles]`` of ``sim/machines/h200.toml``); it
*issues* when its sub-partition's scheduler is free (one issue per clock) and the pipe it needs
accepts work (``[pipes]`` intervals; the FMA pipe is two 16-lane halves: ``fma.rn.f32`` holds one
for 2 clk, ``fma.rn.f16x2`` both, and a waiting one claims them); memory instructions also pass the shared-memory pipe
(wavefronts from :mod:`sim.memory.banks`), the L1 (sectored, 128-byte lines, LRU, what the shared
carve-out leaves), L2 and DRAM bandwidth shares, and a finite store queue. Time jumps from event
to event, so a warp waiting 600 cycles costs one step, not 600: a 2048^3 launch is priced in
seconds. Every wait is charged to one cause (:class:`sim.timing.stalls.Stalls`, Nsight Compute's
names: ``long_scoreboard``, ``short_scoreboard``, ``wait``, ``math_pipe_throttle``, ``mio_throttle``,
``lg_throttle`` (LSU queue or store queue full), ``barrier``, ``membar``, ``not_selected``, ``gmma``).

Scheduler policy: loose round robin by readiness: among a sub-partition's warps, the one whose next
instruction became ready first issues (ties: lowest warp slot); a ready warp that loses the issue
slot records ``not_selected``. Warps go to sub-partitions by slot (``slot % 4``). A warp held back by
a busy pipe or a full queue keeps the time it became ready (the second field of its event), so a
freed slot goes to the warp that has waited longest, not to the lowest slot.

Issue queues (the MIO's, per sub-partition, :class:`sim.timing.units.IssueQueue`): a memory
instruction is an entry from issue until the shared pipe or the L1 t-stage takes it. A shared-memory
instruction that finds ``mio_queue`` of its kind waiting stalls on ``mio_throttle``; a global/local
one that finds ``lg_watermark`` waiting for the t-stage stalls on ``lg_throttle``. A warp blocked for
several reasons reports one, in the order ncu's sampler sees them: its operands first (the
producer's scoreboard: ``long_``/``short_scoreboard``, ``wait``), then a busy pipe
(``math_pipe_throttle``, ``mio_throttle`` for the LSU pipe), then a full queue (``mio_throttle``,
``lg_throttle``, the store queue's ``lg_throttle``), then the issue slot (``not_selected``).

Asynchronous work takes modelled time: ``cp.async`` completes when its global read and shared write
are done (``cp.async.wait_group N`` waits for all but the N newest groups); ``wgmma.mma_async``
occupies the SM's tensor unit for its FLOPs at ``wgmma_flop_per_clk`` and completes after the
N-dependent latency (106/138/202 cycles for N = 64/128/256, interpolated) and reads its shared
operands through the shared-memory pipe ((64 x 32 + N x 32) / 128 wavefronts per warpgroup, A not
counted when it is in registers), ``wgmma.wait_group`` waits (``gmma``). ``.cg`` loads and
``cp.async.cg`` are cached in L2 only: no L1 lookup, no allocation. Fences wait for the SM's store
queue to drain (``membar``).

Launch level (:func:`predict`): CTAs go to SMs round robin (CTA ``i`` to SM ``i mod 132``), ``k``
at a time (:func:`sim.timing.occupancy.occupancy`); an SM starts its next CTA when one finishes.
``sample='all'`` replays every SM's CTAs; ``'auto'`` replays SM 0's first wave and extrapolates
by its number of waves (``result.sampled``). Kernel cycles = launch overhead + max(SM time, DRAM
bytes / DRAM bandwidth, L2 bytes / L2 bandwidth); DRAM bytes are the distinct sectors the launch
touches (scaled from the sample, at most the buffers' sizes) unless the footprint exceeds L2.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache

from sim import machines

from .stalls import Stalls
from .streams import WarpStream
from .trace import Slice
from .units import IssueQueue, LoadedLatency, Queue, Unit


@dataclass(frozen=True)
class H200Params:
    hz: float
    sms: int
    lat: dict
    pipes: dict
    hier: dict
    sources: dict


@lru_cache(maxsize=4)
def load_params(name: str = "h200") -> H200Params:
    raw = machines.load(name)[1]
    val = lambda tab: {k: v["value"] for k, v in raw.get(tab, {}).items()}  # noqa: E731
    src = {f"{t}.{k}": v.get("source", "") for t in ("latency_cycles", "pipes", "hierarchy")
           for k, v in raw.get(t, {}).items()}
    return H200Params(raw["clock"]["hz"]["value"], raw["chip"]["sms"]["value"], val("latency_cycles"),
                      val("pipes"), val("hierarchy"), src)


# ------------------------------------------------------------------------------------------ ops
@dataclass(frozen=True)
class OpFacts:
    """What the timing model needs of one instruction, built once per pc from the ISA tables."""

    opcode: str
    pipe: str | None          # per-sub-partition pipe ('fma', 'alu', ...) or None
    lat: float                # cycles until its results are ready
    cause: str                # stall cause of an instruction waiting on its results
    reads: tuple[int, ...]
    writes: tuple[int, ...]
    special: str | None = None  # 'bar', 'membar', 'cp_commit', 'cp_wait', 'wg_commit', 'wg_wait', 'wgmma'
    arg: float = 0.0            # wait_group N; wgmma FLOPs per warp
    line: int = 0
    l1_bypass: bool = False     # .cg loads and cp.async.cg: cached in L2 only (PTX ISA 9.7.9.1), no L1 lookup
    smem_wf: float = 0.0        # wgmma: shared-memory wavefronts (128 B) its operands take, per warp
    acquire: bool = False       # an ``.acquire``/``.acq_rel`` load or atomic: what follows waits for it
    packed: bool = False        # issued inside the previous instruction's SASS op (:func:`_packs_with_previous`)


def _packs_with_previous(info) -> bool:
    """Whether ptxas folds this instruction into the pending one of its kind in the same basic block:
    two scalar ``cvt.rn.f16.f32`` become one ``F2FP.F16.F32.PACK_AB`` writing both halves of a register
    (examples/h200/pipe_atomic sass.txt, cvt_f16_ffma: ``cvt.rn.f16.f32 %rs1, %f191;`` and
    ``cvt.rn.f16.f32 %rs3, %f190;`` of two chains -> ``F2FP.F16.F32.PACK_AB R7, R8, R7``, the consumers
    reading ``R7.H0_H0`` and ``R7.H1_H1``). The scalar ``cvt.rn.bf16.f32`` is not packed
    (examples/h200/atomic_slice bf16_rt_indep: one instruction off the ALU and FMA pipes per conversion,
    33,888 for 32,768)."""
    return info is not None and info.family == "cvt" and info.in_dtype == "f32" and info.out_dtype == "f16"


def _orders(ins) -> tuple[bool, bool]:
    """(release, acquire) of a memory instruction, from the ordering table the functional relaxed
    memory (:mod:`sim.ptx.order`) uses: a ``.release``/``.acq_rel`` store or atomic drains the store
    buffers as a fence does; an ``.acquire``/``.acq_rel`` load or atomic orders every later access
    after it, so the warp's next instruction waits for its completion (the acquire's wait)."""
    from isa.ptx.memorder import ordering
    from isa.ptx.opcodes import split

    c, mods = split(ins)
    o = ordering(c, mods)
    return o.release, o.acquire


def _releases(ins) -> bool:
    """A ``.release``/``.acq_rel`` store or atomic (:func:`_orders`)."""
    return _orders(ins)[0]


def op_facts(state, P: H200Params) -> list[OpFacts]:
    """:class:`OpFacts` for every pc of a decoded launch (``sim.ptx`` launch state)."""
    from isa.semantics import Unit as U
    from isa.semantics import registers

    L = P.lat
    regs: dict[str, int] = {}
    out = []
    # basic-block starts (label pcs): a packing pair never spans one
    starts = {i + f.base for f in getattr(state, "funcs", ()) for i in f.fn.labels.values()}
    pend = False        # an unpaired scalar cvt.rn.f16.f32 earlier in this block (_packs_with_previous)
    for pc, (ins, info) in enumerate(zip(state.instructions, state.infos)):
        if pc in starts:
            pend = False
        use = registers(ins)
        rd = tuple(regs.setdefault(r, len(regs)) for r in use.reads)
        wr = tuple(regs.setdefault(r, len(regs)) for r in use.writes)
        fam = info.family if info is not None else ins.opcode
        unit = info.unit if info is not None else U.INT
        cls = info.classes if info is not None else frozenset()
        special, arg, smem_wf = None, 0.0, 0.0
        pipe, lat, cause = "alu", L["alu"], "wait"
        if unit == U.FP32:
            pipe, lat = "fma", L["ffma"]
        elif unit == U.FP16:
            pipe, lat = "fp16", L["hfma2"]
            if fam == "cvt":
                # conversions are no packed fp16 arithmetic (examples/h200/pipe_atomic cvt_f16_ffma):
                # cvt.f32.f16 is HADD2.F32, an FP32-rate op on one FMA half; cvt.rn.f16{,x2}.f32 and
                # the other narrowing forms F2FP.*.PACK_AB, on the ALU pipe. cvt.f32.bf16 (a shift,
                # PRMT or IMAD.U32: ncu_deep bf16_gemm_smem_tiled splits them over ALU and FMA) is
                # not measured here and keeps the unit of its own at the fp16 interval it had
                if info.out_dtype == "f32":
                    pipe, lat = ("fma", L["ffma"]) if info.in_dtype == "f16" else ("bf16_cvt", L["hfma2"])
                else:
                    pipe, lat = "alu", L["alu"]
        elif unit == U.FP64:
            pipe, lat = "fp64", L["dfma"]
        elif unit == U.SFU:
            pipe, lat, cause = "xu", L["mufu_ex2"], "short_scoreboard"
        elif unit == U.INT:
            if fam in ("add", "sub"):           # IADD3, or IMAD.IADD on the FMA pipe
                pipe, lat = "int", L["iadd"]
            elif fam in ("add.cc", "sub.cc", "addc", "subc"):
                lat = L["iadd"]
            elif fam in ("mov", "shl"):        # MOV / SHF, or IMAD.MOV / IMAD.SHL
                pipe = "int"
            elif fam in ("mul", "mad", "mul24", "mad24", "mad.cc", "madc", "dp4a", "dp2a"):
                pipe, lat = "fma", L["ffma"]
        elif unit == U.CONTROL:
            pipe, lat = "branch", L["branch"]
        elif unit == U.TENSOR:
            if fam.startswith("wgmma"):
                m, n, k = info.shape or (64, 64, 16)
                pipe, special, arg = None, "wgmma", info.flops / 4 if info.flops else 2 * m * n * k / 4
                lat, cause = _wgmma_latency(L, n), "gmma"
                smem_wf = _wgmma_operand_wavefronts(ins, m, n) / 4
            else:
                pipe, lat = "mma", L["mma_sync"]
        elif unit == U.LSU:
            pipe = "lsu"
            if "SHUFFLE" in cls:
                lat, cause = L["shfl"], "short_scoreboard"
            else:                       # memory: set when the access is priced
                lat, cause = L["lds"], "short_scoreboard"
        elif unit == U.SYNC:
            pipe = None
            if "BARRIER" in cls and fam in ("bar", "barrier") and "arrive" not in ins.modifiers:
                special = "bar"
            elif "FENCE" in cls and fam in ("membar", "fence") and not any(m.startswith("proxy") for m in ins.modifiers):
                special = "membar"
            elif fam in ("cp.async.commit_group", "cp.async.bulk.commit_group"):
                special = "cp_commit"
            elif fam in ("cp.async.wait_group", "cp.async.bulk.wait_group", "cp.async.wait_all"):
                special = "cp_wait"
                arg = float(ins.operands[0].value) if ins.operands and hasattr(ins.operands[0], "value") else 0.0
            elif fam == "wgmma.commit_group":
                special = "wg_commit"
            elif fam == "wgmma.wait_group":
                special = "wg_wait"
                arg = float(ins.operands[0].value) if ins.operands and hasattr(ins.operands[0], "value") else 0.0
        packed = False
        if _packs_with_previous(info):
            packed, pend = pend, not pend
            if packed:                  # no issue slot, no pipe: the leader's F2FP writes it too
                pipe = None
        elif unit == U.CONTROL:
            pend = False
        rel = acq = False
        if fam in ("st", "atom", "red", "ld"):
            rel, acq = _orders(ins)
        if special is None and fam in ("st", "atom", "red") and rel:
            special = "membar"          # ptxas puts a MEMBAR before a release store or atomic (as for fences)
        out.append(OpFacts(ins.full_opcode, pipe, float(lat), cause, rd, wr, special, arg, ins.span.line,
                           "cg" in ins.modifiers, smem_wf, acq and fam in ("ld", "atom"), packed))
    return out


def _wgmma_operand_wavefronts(ins, m: int, n: int) -> float:
    """128-byte shared-memory wavefronts one warpgroup's ``wgmma.mma_async`` reads: B (N rows of the
    32-byte K step: k16 f16/bf16, k32 8-bit, k8 tf32) and A (M x 32 bytes) unless A is in registers.
    ncu_deep wgmma_f16_m64n64k16_gemm (perf): l1tex__data_pipe_lsu_wavefronts_mem_shared 14,079,057 minus
    its st.shared wavefronts 9,865,654 = 4,213,403 over 131,072 warpgroup m64n64k16 = 32.1 per wgmma,
    = (2048 + 2048) / 128: the tensor core's operand fetch passes the same shared-memory data path."""
    from isa import ir

    a_regs = len(ins.operands) > 1 and isinstance(ins.operands[1], ir.Vector)
    return ((0 if a_regs else m * 32) + n * 32) / 128


def _wgmma_latency(L: dict, n: int) -> float:
    pts = [(64, L["wgmma_n64"]), (128, L["wgmma_n128"]), (256, L["wgmma_n256"])]
    if n <= 64:   # below N=64: the 64->128 slope extended (8 < N < 64 is not measured)
        return max(pts[0][1] - (64 - n) * (pts[1][1] - pts[0][1]) / 64, pts[0][1] / 2)
    for (n0, l0), (n1, l1) in zip(pts, pts[1:]):
        if n <= n1:
            return l0 + (n - n0) * (l1 - l0) / (n1 - n0)
    return pts[-1][1]


# ------------------------------------------------------------------------------------------ SM
_POP = tuple(bin(m).count("1") for m in range(16))


class DataPathShare:
    """One kind of work on a unit shared with other kinds (the L1TEX data path): ``own`` (a
    :class:`Unit`, traced or not) says its interval and keeps its busy time and trace slices, ``path``
    is the shared unit every kind waits for; ``free_at`` is the path's."""

    __slots__ = ("own", "path")

    def __init__(self, own: Unit, path: Unit):
        self.own, self.path = own, path

    @property
    def free_at(self) -> float:
        return self.path.free_at

    @property
    def busy(self) -> float:
        return self.own.busy

    @property
    def interval(self) -> float:
        return self.own.interval

    def reserve(self, t: float, amount: float = 1.0) -> float:
        start = self.path.reserve(t, self.own.interval * amount)
        return self.own.reserve(start, amount)      # own.free_at <= path.free_at: starts at ``start``


@dataclass
class SMRun:
    cycles: float
    issued: int
    stalls: Stalls
    busy: dict
    l1_hit_sectors: float
    l1_load_sectors: float
    l2_sectors: float
    l2_load_sectors: float      # of which loads (L1 misses)
    ctas: int
    warps: int
    cta_end: list
    slices: list
    l2_seq: list = None         # this SM's L2 accesses in order: (key, bytes, load sectors missing L1, bytes stored)
    l2_work: float = 0.0        # L2 work in bytes of reads that hit (stores weighted by their cost there)
    l2_first_sectors: float = 0.0   # load sectors missing L1 that this SM had not touched before (first touches)


#: most slices one traced SM records (issues, pipe and unit work together)
TRACE_LIMIT = 200000


@dataclass
class TracedUnit(Unit):
    """A :class:`Unit` that also records every reservation as a trace slice on its own track (the
    instruction being issued, ``current[0]``, names it); used only when the SM is traced."""

    process: str = ""
    slices: list = field(default_factory=list)
    current: list = field(default_factory=lambda: [None])

    def reserve(self, t: float, amount: float = 1.0) -> float:
        start = Unit.reserve(self, t, amount)
        if len(self.slices) < TRACE_LIMIT:
            op = self.current[0]
            self.slices.append(Slice(self.process, self.name, op.opcode if op is not None else self.name, start,
                                     start + self.interval * amount, "unit",
                                     {"line": op.line} if op is not None else {}))
        return start


class SM:
    """One SM replaying CTAs (each a list of per-warp streams) ``k`` at a time. With ``trace`` the
    replay also records slices (:class:`sim.timing.trace.Slice`): per sub-partition process
    ``SM i sub-partition j``, one track per warp (its issues, ``cat`` ``issue``) and one per pipe
    (``fma pipe``, ...: ``cat`` ``pipe``); per SM process ``SM i memory``, one track per unit
    (shared, l1, l2, dram, tensor_gmma, atomic: ``cat`` ``unit``)."""

    def __init__(self, facts: list[OpFacts], P: H200Params, *, ctas_per_sm: int, warps_per_cta: int,
                 l1_lines: int, l2_hit: float, dram_bpc: float, l2_bpc: float, trace: bool = False,
                 leaders=frozenset(), dram_latency: float | None = None, sm_index: int = 0,
                 hot_atomics=frozenset(), atomic_wait: float = 0.0, l2_read_bpc: float | None = None,
                 l2_hit_first: float | None = None):
        self.f, self.P, self.k, self.wpc = facts, P, max(1, ctas_per_sm), warps_per_cta
        pp = P.pipes
        self.sub = [{n: Unit(n, pp[n]) for n in ("fma", "fp16", "alu", "fp64", "xu", "lsu", "branch", "mma_sync")}
                    for _ in range(4)]
        for d in self.sub:
            d["mma"] = d.pop("mma_sync")
            d["bf16_cvt"] = Unit("bf16_cvt", pp["fp16"])    # [assumed] cvt.f32.bf16 (op_facts)
        self.index = sm_index
        self.unit_slices: list = []
        self.current: list = [None]
        if trace:
            def mk(name, interval):
                return TracedUnit(name, interval, process=f"SM {sm_index} memory", slices=self.unit_slices,
                                  current=self.current)
        else:
            mk = Unit
        # ``l1``: the L1TEX t-stage (tags), one 128-byte line of a global access per clock. Behind it
        # one data path per SM: shared-memory wavefronts (wgmma operand fetches included) and the
        # lines a global load reads out to registers pass the same pipe one after the other
        # (Hopper's unified L1/shared memory; ncu_deep wgmma_f16 perf: 131 k global-load lines + 107 k
        # shared wavefronts per SM in 285 k cycles at l1tex__throughput 87 %). The global lines of a
        # cp.async do not: its data goes to shared memory, where its writes are charged as shared
        # wavefronts (ncu_deep tt_matmul_fp16 perf: l1tex__throughput 56 % with 45.7 k shared
        # wavefronts per SM in 91 k cycles; its 31.8 k cp.async.cg lines on the path would make 85 %).
        # ``shared`` and ``l1_data`` are the path's shares, each with its own busy time and trace
        # track; ``pipes['l1tex_data']`` is the path's
        self.l1 = mk("l1", 1.0 / pp["l1_lines_per_clk"])
        self.data = Unit("l1tex_data", 1.0)
        self.shared = DataPathShare(mk("shared", 1.0 / pp["shared_wavefronts_per_clk"]), self.data)
        self.l1d = DataPathShare(mk("l1_data", 1.0 / pp["l1_lines_per_clk"]), self.data)
        self.l2 = mk("l2", 1.0 / l2_bpc)
        # the L2 read latency under load: this SM's reads that miss L1 wait, beyond ``global_l2``, as
        # in a queue at ``l2_read_bpc`` (its share of the slices' read rate), ``l2_read_queue`` rho /
        # (1 - rho) cycles with rho their rate over the last ``l2_read_window`` cycles (h200.toml
        # [hierarchy]); None: a constant L2 latency
        H = P.hier
        self.l2r = None
        if l2_read_bpc and H.get("l2_read_queue"):
            self.l2r = LoadedLatency("l2_read", l2_read_bpc, H["l2_read_queue"], H["l2_read_window"],
                                     min_window=H.get("l2_read_min_window", 0.0))
        self.dram = mk("dram", 1.0 / dram_bpc)
        self.gmma = mk("tensor_gmma", 1.0 / pp["wgmma_flop_per_clk"])
        self.atom = mk("atomic", float(P.lat["atomic_same_address"]))
        self.sq = Queue("store", int(pp["store_queue"]))
        self.l1_lines = max(1, l1_lines)
        self.cache: OrderedDict = OrderedDict()
        # the L2 hit rate of a load's sectors that miss L1: ``l2_hit_first`` for the sectors this SM
        # touches for the first time, ``l2_hit`` for those it touched before (None: ``l2_hit`` for all;
        # sim.timing.h200.predict splits the launch's misses between the two)
        self.l2_hit = l2_hit
        self.l2_hit_first = l2_hit if l2_hit_first is None else l2_hit_first
        self.seen: dict = {}        # 128-byte line -> mask of the sectors this SM's loads touched at L2
        self.l2_first = 0.0
        self.trace = trace
        self.l2_seq: list = []      # L2 accesses in order, for the reuse distances (sim.timing.h200)
        # a store costs the L2 per 128-byte line it touches and per sector, in chip cycles
        # (h200.toml hierarchy.l2_write_*), here in bytes of L2 reads that hit: the unit they share
        l2_chip = P.hier["l2_bw"] / P.hz
        self.w_line = P.hier.get("l2_write_line_cycles", 0.0) * l2_chip
        self.w_sector = P.hier.get("l2_write_sector_cycles", 32.0 / l2_chip) * l2_chip
        # a sector written only in part costs more: its bytes are merged into the sector at the L2
        self.w_partial = P.hier.get("l2_write_partial_cycles", self.w_sector / l2_chip) * l2_chip
        self.l2_work = 0.0
        self.stalls = Stalls()
        self.leaders = leaders      # pcs of loads ptxas merges into vector loads (sim.timing.vectorize)
        # same-address atomics from the whole chip queue at their L2 slice: ``atomic_wait`` cycles more
        # for the atomics (pcs ``hot_atomics``) to the launch's hottest address (sim.timing.h200.predict)
        self.hot_atomics, self.atomic_wait = hot_atomics, atomic_wait
        self.dram_latency = P.lat["global_dram"] if dram_latency is None else dram_latency   # loaded latency

    def _l1(self, lines) -> tuple[int, int]:
        """(sectors of a load that hit, sectors it touches). ``lines``: ``line * 16 + sector mask``
        (:mod:`sim.timing.streams`). The L1 is sectored (128-byte lines of four 32-byte sectors, LRU
        by line): a miss allocates the line and fills only the sectors asked for, so a warp reading
        the next 32 bytes of a line another warp read misses (ncu_deep dequantize_s8 perf: 4 warps
        read one line's 4 sectors, l1tex__t_sector_hit_rate 0 %)."""
        c = self.cache
        cap = self.l1_lines
        get, to_end = c.get, c.move_to_end
        hits = n = 0
        for enc in lines:
            ln, m = enc >> 4, enc & 15
            n += _POP[m]
            old = get(ln)
            if old is not None:
                to_end(ln)
                hits += _POP[m & old]
                if m & ~old:                # a sector not yet filled: the line's mask grows
                    c[ln] = old | m
            else:
                c[ln] = m
                if len(c) > cap:
                    c.popitem(last=False)
        return hits, n

    def run(self, ctas: list[list[list]], ids: list[int] | None = None, waits: dict | None = None) -> SMRun:
        """Replay ``ctas`` (per CTA, per warp, its :class:`sim.timing.streams.WarpStream`, or a list of
        ``(pc, access)`` pairs). ``ids``: their launch CTA ids and
        ``waits``: :meth:`sim.timing.completions.AsyncLog.by_warp` -- then every asynchronous wait
        waits for the modelled completion of exactly the issues the functional semantics completed
        there (commit groups are not counted here)."""
        f, L, P = self.f, self.P.lat, self.P
        use_log = waits is not None and ids is not None
        gw_of: list = []                  # per warp: global warp id (with the log)
        deps_of: list = []                # per warp: its waits (position -> async issues), looked up once
        # per warp: the next position with waits (-1: none left) and the later ones, last first, so
        # that an issue compares its position instead of looking it up in deps_of
        dpos: list = []
        dlater: list = []
        adone: dict = {}                  # (global warp, position) of an async issue -> modelled completion
        # the MIO's per-sub-partition LSU instruction queues (entries: instructions, from issue until
        # the shared pipe or the L1 t-stage takes them): shared-memory instructions stall on
        # mio_throttle when ``mio_queue`` of them wait, global/local ones on lg_throttle at
        # ``lg_watermark`` waiting for the t-stage (counted apart: see sim/machines/h200.toml)
        mq = [IssueQueue("lsu_shared", int(P.pipes["mio_queue"])) for _ in range(4)]
        lq = [IssueQueue("lsu_global", int(P.pipes["lg_watermark"])) for _ in range(4)]
        l2_lat, dram_lat = L["global_l2"], self.dram_latency
        miss_extra = (1.0 - self.l2_hit) * (dram_lat - l2_lat)
        l2h, l2hf, dl_ = self.l2_hit, self.l2_hit_first, dram_lat - l2_lat
        split_ = l2hf != l2h
        seen = self.seen
        lds, conflict = L["lds"], L["lds_per_conflict_way"]
        hot_atomics = self.hot_atomics
        st = self.stalls
        cyc: dict = {}                      # stall cycles per cause, summed here, given to st at the end

        def add(cause, v):
            if v > 0:
                cyc[cause] = cyc.get(cause, 0.0) + v
        sub = self.sub
        shared, l1, l1d, l2, dram, gmma, sq = self.shared, self.l1, self.l1d, self.l2, self.dram, self.gmma, self.sq
        sh_own, dpath = shared.own, shared.path      # the data path's shares (shared, l1_data), inlined below
        ld_own = l1d.own
        l2r = self.l2r
        nregs = 1 + max((max(x.reads + x.writes, default=0) for x in f), default=0)
        streams: list = []   # per warp: its pcs (WarpStream.pcs)
        accs: list = []      # per warp: its accesses (WarpStream.accesses)
        ip: list[int] = []
        # per warp: its next instruction (_next), set once when the warp gets to it:
        # a warp is offered the issue slot about 4 times per instruction it issues in the replay of the
        # hgemm_cp_async perf launch (waiting for the slot, a pipe or a queue), each reading this
        cur: list = []
        plain = [None] * len(f)     # per pc: its cur entry without an access (_next), made when first met
        sp_of: list[int] = []
        cta_of: list[int] = []
        reg_t: list = []
        reg_c: list = []
        cpg: list = []       # per warp: [open group completion, [closed group completions]]
        wgg: list = []
        vdone: list = []     # per warp: leader pc -> completion of its vector load
        drain: list = []     # per warp: when its last atomic is performed at L2 (its exit waits: drain)
        wsince: list = []    # per warp waiting for the issue slot (slot_wait): when it became ready
        leaders = self.leaders
        heap: list = []
        sp_free = [0.0] * 4
        halves = [[0.0, 0.0] for _ in range(4)]   # per sub-partition: when each FMA half is free
        half_occ = P.pipes["fma"] * 2.0            # an FP32-rate op holds one half for 2 x pipes.fma
        live = []            # per CTA slot: warps not finished
        parked: dict = {}    # cta -> [(warp, arrival)]
        cta_end = [0.0] * len(ctas)
        cta_slot = []
        issued = 0
        l1_hit = l1_tot = l2_sec = l2_ld = 0.0
        trace = self.trace
        slices = [] if trace else None
        tcur = self.current
        procs = [f"SM {self.index} sub-partition {i}" for i in range(4)]
        nxt = 0
        free_slots = list(range(self.k))

        def start_cta(c: int, t: float) -> None:
            slot = free_slots.pop(0)
            cta_slot.append(slot)
            ws = ctas[c]
            live.append(0)
            for w, s in enumerate(ws):
                s = WarpStream.of(s)
                if not s.pcs:
                    continue
                g = len(streams)
                streams.append(s.pcs)
                accs.append(s.accesses)
                ip.append(0)
                cur.append(_next(s.pcs[0], s.accesses[0], f))
                sp_of.append((slot * self.wpc + w) % 4)
                cta_of.append(c)
                reg_t.append([0.0] * nregs)
                reg_c.append([None] * nregs)
                gw_of.append(ids[c] * self.wpc + w if use_log else None)
                deps_of.append(waits.get(gw_of[-1]) or None if use_log else None)
                dlater.append(sorted(deps_of[-1], reverse=True) if deps_of[-1] else [])
                dpos.append(dlater[-1].pop() if dlater[-1] else -1)
                cpg.append([0.0, []])
                wgg.append([0.0, []])
                vdone.append({})
                drain.append(0.0)
                wsince.append(0.0)
                live[c] += 1
                heapq.heappush(heap, (t, t, g, -1))
            if live[c] == 0:
                cta_end[c] = t
                free_slots.append(slot)

        while nxt < len(ctas) and free_slots:
            start_cta(nxt, 0.0)
            nxt += 1
        # Warps that lost the issue slot wait in their sub-partition's heap ``slot_wait[sp]`` of warp
        # ids (the cycle each became ready in ``wsince``: about 5 M pushes and pops per replay of the
        # hgemm_cp_async perf launch compare ints, not tuples) instead of being re-queued every cycle:
        # all of them would be offered again at ``sp_free[sp]``, lowest warp first, so one *token* in
        # the event heap stands for them; a token is stale once its sub-partition's version moved on.
        # Each cycle a waiting warp waits is still charged to ``not_selected``.
        # Heap entries stay plain 4-tuples (one unpacking), ``(ready cycle, since, warp, -1)`` for a
        # warp and ``(cycle, lowest waiting warp's since, -1 - sub-partition, version)`` for a token:
        # about 11 M are built and popped per replay of the 2048^3 hgemm_cp_async perf launch, and a
        # NamedTuple costs 6 to 8 times a tuple to build and 4 times to unpack (measured here, CPython
        # 3.11); the streams they index are named
        # (:class:`sim.timing.streams.WarpStream`, :class:`sim.timing.streams.Access`).
        #
        # Warps held back by a full queue (MIO/LSU issue queue, store queue) until cycle ``W`` wait in
        # their sub-partition's group ``blocked[sp][W]`` (a heap of ``(since, warp)``), with one entry
        # ``(W, since, warp, 0)`` in the event heap for its first warp (the key that warp's own entry
        # would have, but 0 for -1: the order of events is unchanged). At ``W`` the first warp is offered the issue
        # slot as before; once a warp of the group finds the slot taken (``sp_free[sp] > W``), every
        # other warp of the group would find the same at ``W`` (no warp of ``sp`` can issue at ``W``
        # any more), so all of them join ``slot_wait[sp]`` at once, each charged ``not_selected`` as it
        # would have been one by one. Without the groups, each warp blocked on a full queue was popped
        # and re-queued once per freed slot (40.7 M pops per replay of the hgemm_cp_async perf launch).
        # An iteration that ends by pushing an event gets the next one with ``heappushpop`` (the pushed
        # event comes straight back when it is the earliest): the same order, one heap operation.
        slot_wait: list = [[], [], [], []]       # heaps of warp ids; a waiting warp's since: wsince
        blocked: list = [{}, {}, {}, {}]
        ver = [0, 0, 0, 0]
        heappush, heappop, heappushpop = heapq.heappush, heapq.heappop, heapq.heappushpop
        ns = 0.0                                     # not_selected cycles
        item = heappop(heap) if heap else None
        while item is not None:
            r, since, g, v = item
            if g < 0:                                   # a sub-partition's waiting warps
                sp = -1 - g
                if v != ver[sp]:
                    item = heappop(heap) if heap else None
                    continue
                g = heappop(slot_wait[sp])
                since = wsince[g]
                ver[sp] += 1
                tok = True          # the next waiting warp's token: pushed below unless this one issues
                pc, acc, op, free, lsu1 = cur[g]   # not free: a free instruction never waits for the slot
            else:
                tok = False
                sp = sp_of[g]
                grp = None
                if v == 0:                              # the first warp of a group blocked until r
                    grp = blocked[sp].get(r)
                    if grp is None or grp[0] != (since, g):
                        item = heappop(heap) if heap else None      # stale: that warp went already
                        continue
                    heappop(grp)
                    if not grp:
                        del blocked[sp][r]
                        grp = None
                pc, acc, op, free, lsu1 = cur[g]
                if not free and sp_free[sp] > r:        # another warp has the issue slot
                    d = sp_free[sp] - r
                    ns += d
                    w = slot_wait[sp]
                    wsince[g] = since
                    if grp is None:
                        if not w or g < w[0]:
                            ver[sp] += 1
                            heappush(w, g)
                            item = heappushpop(heap, (sp_free[sp], since, -1 - sp, ver[sp]))
                            continue
                        heappush(w, g)
                    else:                               # the rest of the group: the same, at once
                        first = w[0] if w else None
                        heappush(w, g)
                        for since2, g2 in grp:
                            wsince[g2] = since2
                            heappush(w, g2)
                            ns += d
                        del blocked[sp][r]
                        if first is None or w[0] < first:
                            ver[sp] += 1
                            item = heappushpop(heap, (sp_free[sp], wsince[w[0]], -1 - sp, ver[sp]))
                            continue
                    item = heappop(heap) if heap else None
                    continue
                if grp is not None:                     # the group's next warp, at this cycle
                    heappush(heap, (r, grp[0][0], grp[0][1], 0))
            if trace:
                tcur[0] = op                            # names the unit slices of this issue
            pn = op.pipe
            hv = None                                   # the FMA pipe's two halves, when op uses them
            if lsu1:                                    # one shared-memory part on the LSU pipe (_next)
                u = sub[sp]["lsu"]
            elif pn is None or free:
                u = None
            elif pn == "fma" or pn == "fp16":
                # the FMA pipe: two 16-lane halves per sub-partition. An FP32-rate op (FFMA, IMAD,
                # HADD2.F32) takes the half that frees first for 2 clk; a packed fp16 op (HFMA2) takes
                # both for 2 clk (fma_halves)
                u = sub[sp][pn]
                hv = halves[sp]
                fa = (hv[0] if hv[0] <= hv[1] else hv[1]) if pn == "fma" else (hv[0] if hv[0] >= hv[1] else hv[1])
            elif pn == "int":
                # ptxas puts simple integer ops on whichever of the ALU and FMA pipes has room
                # (IADD3/MOV or IMAD.IADD/IMAD.MOV): the ALU when it is free, else the FMA half that
                # frees first
                a_, hv = sub[sp]["alu"], halves[sp]
                fa = hv[0] if hv[0] <= hv[1] else hv[1]
                if a_.free_at <= max(r, fa):
                    u, hv = a_, None
                else:
                    u = sub[sp]["fma"]
            else:
                u = sub[sp][pn]
            if u is not None:
                if hv is None:
                    fa = u.free_at
                if fa > r:
                    add("math_pipe_throttle" if op.pipe != "lsu" else "mio_throttle", fa - r)
                    if pn == "fp16":
                        # a packed fp16 op waiting for the FMA pipe claims it: the free half stays
                        # idle until the other frees (FP32 ops of other warps do not pass it)
                        hv[0] = hv[1] = fa
                    if tok and slot_wait[sp]:
                        heappush(heap, (fa, since, g, -1))
                        item = heappushpop(heap, (sp_free[sp], wsince[slot_wait[sp][0]], -1 - sp, ver[sp]))
                    else:
                        item = heappushpop(heap, (fa, since, g, -1))
                    continue
            if acc is not None and not free:
                # IssueQueue.slot_at(r) is max(r, full_at), read here without a call (about 3 M
                # per replay of the hgemm_cp_async perf launch); the one queue of an lsu1
                # instruction is read without the loop (wait may then be below r: not full)
                if lsu1:
                    wait, why = mq[sp].full_at, "mio_throttle"
                else:
                    wait, why = r, None
                    for part in acc:
                        if part[0] == "s":
                            at = mq[sp].full_at
                            if at > wait:
                                wait, why = at, "mio_throttle"
                        elif part[0] == "g":
                            at = lq[sp].full_at
                            if at > wait:
                                wait, why = at, "lg_throttle"
                            if part[1] in ("store", "atomic"):
                                at = sq.slot_at(r)
                                if at > wait:
                                    wait, why = at, "lg_throttle"
                if wait > r:
                    cyc[why] = cyc.get(why, 0.0) + (wait - r)
                    # join the warps blocked until ``wait``. The group's event (for its new first
                    # warp) is pushed once this iteration ends (``head``): the warps tried below
                    # often join the same group, each displacing the first, and every displaced
                    # event would be popped stale later (about 2 M per replay of the hgemm_cp_async
                    # perf launch). Those events lie after cycle r, so the heap's first event, the
                    # only one read before they are pushed, is the same without them
                    bsp = blocked[sp]
                    bw = bsp.get(wait)
                    me = (since, g)
                    head = None                             # (wait, first warp) of a group to push
                    if bw is None:
                        bsp[wait] = [me]
                        head = (wait, me)
                    else:
                        if me < bw[0]:
                            head = (wait, me)
                        heappush(bw, me)
                    w = slot_wait[sp]
                    if tok and w and not trace and sp_free[sp] == r:
                        # The next waiting warp's token would come straight back from the heap (no
                        # event before it) while its sub-partition's slot is free at r: its warp is
                        # tried here, as that token's iteration would, as long as it too finds its
                        # queue full (about a third of the replay's iterations of the hgemm_cp_async
                        # perf launch: every warp waiting on the MIO queue is tried once per freed
                        # entry). Anything else (it issues, its pipe is busy) is left to the token.
                        # Nothing is issued or pushed until the loop ends, so the heap's first
                        # event and the slot (sp_free) stay as they are: read once
                        h0 = heap[0] if heap and heap[0][0] <= r else None
                        h0s = h0[1] if h0 is not None else math.inf    # inf: no event before any token
                        # ... and so do the pipes and the queues: each queue is full until its
                        # full_at (IssueQueue.slot_at, read once). Each tried
                        # warp is one iteration here instead of one of the main loop; the common one
                        # (one shared-memory part on a free LSU pipe: ``lsu_only``) skips the pipe
                        # and parts checks. The version, the stall cycles of one cause and the last
                        # group joined are kept in locals and written back once: nothing else reads
                        # them until the loop ends, and the additions are the same, in the same order
                        subsp, qs_at, qg_at = sub[sp], mq[sp].full_at, lq[sp].full_at
                        # an lsu_only warp finds its pipe free and its queue full (it joins the group)
                        lsu_full = subsp["lsu"].free_at <= r and qs_at > r
                        v_ = ver[sp]
                        cw, cv = None, 0.0      # cyc[cw] == cv, being added to
                        lw, lbw = None, None    # the group of the warps blocked until lw
                        while w:
                            g2 = w[0]
                            since2 = wsince[g2]
                            if since2 >= h0s and (since2 > h0s or h0 < (r, since2, -1 - sp, v_)):
                                # the heap's first event comes before this warp's token. A stale one
                                # (a token of an older version, a group event of a warp that left its
                                # group: the main loop's tests) would only be popped there: it is
                                # popped here and the warp tried again (about 0.5 M of the main loop's
                                # iterations per replay of the hgemm_cp_async perf launch)
                                g0 = h0[2]
                                if g0 < 0:
                                    stale = h0[3] != (v_ if g0 == -1 - sp else ver[-1 - g0])
                                else:
                                    bg = blocked[sp_of[g0]].get(h0[0]) if h0[3] == 0 else None
                                    stale = h0[3] == 0 and (bg is None or bg[0] != (h0s, g0))
                                if not stale:
                                    break
                                heappop(heap)
                                h0 = heap[0] if heap and heap[0][0] <= r else None
                                h0s = h0[1] if h0 is not None else math.inf
                                continue
                            cur2 = cur[g2]
                            if cur2[4]:
                                if not lsu_full:
                                    break
                                wait2, why2 = qs_at, "mio_throttle"
                            else:
                                acc2 = cur2[1]
                                if acc2 is None:
                                    break
                                pn2 = cur2[2].pipe
                                if pn2 is not None:         # the pipe check above (fa), for this warp
                                    if pn2 == "fma" or pn2 == "fp16":
                                        hv2 = halves[sp]
                                        if pn2 == "fma":
                                            fa2 = hv2[0] if hv2[0] <= hv2[1] else hv2[1]
                                        else:
                                            fa2 = hv2[0] if hv2[0] >= hv2[1] else hv2[1]
                                    elif pn2 == "int":
                                        a_, hv2 = subsp["alu"], halves[sp]
                                        fa2 = hv2[0] if hv2[0] <= hv2[1] else hv2[1]
                                        if a_.free_at <= max(r, fa2):
                                            fa2 = a_.free_at
                                    else:
                                        fa2 = subsp[pn2].free_at
                                    if fa2 > r:
                                        break
                                wait2, why2 = r, None
                                for part in acc2:           # the queue check above, for this warp
                                    if part[0] == "s":
                                        if qs_at > wait2:
                                            wait2, why2 = qs_at, "mio_throttle"
                                    elif part[0] == "g":
                                        if qg_at > wait2:
                                            wait2, why2 = qg_at, "lg_throttle"
                                        if part[1] in ("store", "atomic"):
                                            at = sq.slot_at(r)
                                            if at > wait2:
                                                wait2, why2 = at, "lg_throttle"
                                if wait2 <= r:
                                    break
                            heappop(w)                  # what the token's iteration does, in its order
                            v_ += 1
                            if why2 is not cw:
                                if cw is not None:
                                    cyc[cw] = cv
                                cw, cv = why2, cyc.get(why2, 0.0)
                            cv += wait2 - r
                            bw = lbw if wait2 == lw else bsp.get(wait2)
                            me = (since2, g2)
                            if bw is None:
                                bw = bsp[wait2] = [me]
                            elif me < bw[0]:
                                heappush(bw, me)
                            else:
                                heappush(bw, me)
                                lw, lbw = wait2, bw
                                continue
                            lw, lbw = wait2, bw
                            if head is not None and head[0] != wait2:
                                heappush(heap, (head[0], head[1][0], head[1][1], 0))
                            head = (wait2, me)
                        ver[sp] = v_
                        if cw is not None:
                            cyc[cw] = cv
                    if head is not None:
                        heappush(heap, (head[0], head[1][0], head[1][1], 0))
                    if tok and w:
                        item = heappushpop(heap, (sp_free[sp], wsince[w[0]], -1 - sp, ver[sp]))
                    else:
                        item = heappop(heap)
                    continue
            t = r
            if not free:
                sp_free[sp] = t + 1.0
                issued += 1
                if slot_wait[sp]:                       # the waiting warps wait one more cycle
                    ns += len(slot_wait[sp])
                    ver[sp] += 1
                    heappush(heap, (t + 1.0, wsince[slot_wait[sp][0]], -1 - sp, ver[sp]))
            if u is not None:                           # Unit.reserve(t), inlined: u is free at t
                occ = u.interval
                u.free_at = t + occ
                u.busy += occ
                u.work += 1
                if hv is not None:                      # on the FMA pipe's halves (above)
                    if pn == "fp16":
                        hv[0] = hv[1] = t + occ
                        fu = sub[sp]["fma"]
                        fu.busy += occ                  # the FMA pipe's busy time holds its fp16 work
                        fu.work += 1
                    elif hv[0] <= hv[1]:
                        hv[0] = t + half_occ
                    else:
                        hv[1] = t + half_occ
            done, cause = t + op.lat, op.cause
            after = t if free else t + 1.0
            after_cause = None
            if acc is not None:
                done = t + 1.0
                leave_s = leave_g = t      # when its shared / global parts left the LSU queue for their pipe
                for space, kind, cost, extra in acc:
                    if space == "s":
                        if kind == "merged":
                            done, cause = max(t, vdone[g].get(extra, t)), "short_scoreboard"
                            continue
                        if trace:
                            s0 = shared.reserve(t, cost)
                        else:                   # DataPathShare.reserve(t, cost), inlined (not traced)
                            x_ = sh_own.interval * cost
                            s0 = t if t >= dpath.free_at else dpath.free_at
                            o_ = dpath.interval * x_
                            dpath.free_at = s0 + o_
                            dpath.busy += o_
                            dpath.work += 1
                            if s0 < sh_own.free_at:
                                s0 = sh_own.free_at
                            sh_own.free_at = s0 + x_
                            sh_own.busy += x_
                            sh_own.work += 1
                        if s0 > leave_s:
                            leave_s = s0
                        d = s0 + lds + conflict * (cost - extra if cost > extra else 0)
                        if pc in leaders:
                            vdone[g][pc] = d
                        if kind == "async_store":
                            cpg[g][0] = max(cpg[g][0], d)
                            if use_log:
                                k_ = (gw_of[g], ip[g])
                                adone[k_] = max(adone.get(k_, 0.0), d)
                        else:
                            done, cause = (d if d > done else done), "short_scoreboard"
                    elif space == "g":
                        # the L1 t-stage looks up one 128-byte line per clock (a warp access
                        # costs its distinct lines; atomics pass at 4 sectors per clock)
                        skey = None
                        if kind == "store":         # (lines, partly written sectors[, key]); a bare count: lines
                            if type(extra) is tuple:
                                nl, npart = extra[0], extra[1]
                                if len(extra) > 2 and extra[2] >= 0:
                                    skey = extra[2]
                            else:
                                nl, npart = extra, 0
                            nl = nl or 1
                        else:
                            nl = (len(extra) or 1) if kind in ("load", "async_load") else cost * 0.25
                        if trace:
                            s0 = l1.reserve(t, nl)
                        else:                       # Unit.reserve(t, nl), inlined (not traced)
                            s0 = t if t >= l1.free_at else l1.free_at
                            o_ = l1.interval * nl
                            l1.free_at = s0 + o_
                            l1.busy += o_
                            l1.work += 1
                        if s0 > leave_g:
                            leave_g = s0
                        if kind in ("load", "async_load"):
                            if op.l1_bypass:
                                h, n = 0, 1
                            else:
                                h, n = self._l1(extra)
                                n = n or 1
                            # a load to registers reads its lines out through the data path: the
                            # hits wait for it, a miss's line passes it when the fill returns
                            # (its cost is charged now, its wait is the L2's)
                            if not op.writes:
                                sdp = s0
                            elif trace:
                                sdp = l1d.reserve(t, nl)
                            else:                   # DataPathShare.reserve(t, nl), inlined (not traced)
                                x_ = ld_own.interval * nl
                                sdp = t if t >= dpath.free_at else dpath.free_at
                                o_ = dpath.interval * x_
                                dpath.free_at = sdp + o_
                                dpath.busy += o_
                                dpath.work += 1
                                if sdp < ld_own.free_at:
                                    sdp = ld_own.free_at
                                ld_own.free_at = sdp + x_
                                ld_own.busy += x_
                                ld_own.work += 1
                            l1_tot += cost
                            l1_hit += cost * h / n
                            miss = cost * (n - h) / n
                            if miss > 0:
                                l2_sec += miss
                                l2_ld += miss
                                self.l2_work += miss * 32
                                # for the L2 reuse distances (sim.timing.h200.l2_capacity): an
                                # access is known by its first line
                                self.l2_seq.append((extra[0] if extra else pc, cost * 32, miss, 0))
                                # first touches: the sectors of the load this SM never touched
                                new = tot_ = 0
                                for enc in extra:
                                    ln_, m_ = enc >> 4, enc & 15
                                    o_ = seen.get(ln_, 0)
                                    tot_ += _POP[m_]
                                    if m_ & ~o_:
                                        new += _POP[m_ & ~o_]
                                        seen[ln_] = o_ | m_
                                fts = min(miss, cost * new / tot_) if tot_ else 0.0
                                self.l2_first += fts
                                hit = l2h if split_ is False else (fts * l2hf + (miss - fts) * l2h) / miss
                                s2 = l2.reserve(s0, miss * 32)
                                sd = dram.reserve(s2, miss * 32 * (1.0 - hit)) if hit < 1 else s2
                                d = s2 + l2_lat + (1.0 - hit) * dl_ + (sd - s2)
                                if l2r is not None:     # the hits' share of the loaded L2 latency (a
                                    # miss's is in the fitted DRAM latency)
                                    d += hit * l2r.wait(s0, miss * 32)
                                if h:
                                    d = max(d, max(s0, sdp) + L["global_l1"])
                            else:
                                d = max(s0, sdp) + L["global_l1"]
                            if kind == "async_load" or op.special is None and op.writes == ():
                                cpg[g][0] = max(cpg[g][0], d)
                                if use_log:
                                    k_ = (gw_of[g], ip[g])
                                    adone[k_] = max(adone.get(k_, 0.0), d)
                            else:
                                done, cause = max(done, d), "long_scoreboard"
                        elif kind == "store":
                            l2_sec += cost
                            # stores: the lines they make dirty (by their first line, as a load's key;
                            # keyless: new lines taking space), for the write-backs (sim.timing.h200)
                            self.l2_seq.append((skey, cost * 32, 0, cost * 32))
                            wb = self.w_line * nl + self.w_sector * (cost - npart) + self.w_partial * npart
                            self.l2_work += wb
                            s2 = l2.reserve(s0, wb)
                            sq.admit(t, s2 + wb * l2.interval)
                        else:                                   # atomic at L2, same address serialised
                            l2_sec += cost
                            self.l2_work += cost * 32
                            s2 = l2.reserve(s0, cost * 32)
                            sa = self.atom.reserve(s2, max(1, extra))
                            sq.admit(t, sa)
                            # performed at L2 once its line is there (a read-modify-write: a miss
                            # waits for DRAM, as a load's does; the hottest address's line stays in
                            # L2, and its atomics queue at the slice instead: atomic_wait); an atom's
                            # old value comes back then. The warp's exit waits for it (drain), less
                            # the L2 round trip that every launch's last stores take and that the
                            # fitted launch_overhead already holds
                            ca = sa + l2_lat + L["atomic_same_address"] * max(0, extra - 1) + \
                                (self.atomic_wait if pc in hot_atomics else miss_extra)
                            if ca - l2_lat > drain[g]:
                                drain[g] = ca - l2_lat
                            if op.writes:
                                done, cause = max(done, ca), "long_scoreboard"
                    else:
                        done = max(done, t + L["global_l1"])
                if not free:
                    if leave_s > t:
                        mq[sp].enter(t, leave_s)
                    if leave_g > t:
                        lq[sp].enter(t, leave_g)
            sp_ = op.special
            if sp_ is not None:
                if sp_ == "wgmma":
                    s0 = gmma.reserve(t, op.arg)
                    if op.smem_wf:                       # operand fetch on the shared-memory data path
                        shared.reserve(t, op.smem_wf)
                    wgg[g][0] = max(wgg[g][0], s0 + op.lat)
                    if use_log:
                        adone[(gw_of[g], ip[g])] = s0 + op.lat
                    done = t + 1.0
                elif sp_ == "wg_commit":
                    wgg[g][1].append(wgg[g][0])
                    wgg[g][0] = 0.0
                elif sp_ == "cp_commit":
                    cpg[g][1].append(cpg[g][0])
                    cpg[g][0] = 0.0
                elif sp_ in ("wg_wait", "cp_wait") and use_log:
                    pass                 # the functional completions decide (below)
                elif sp_ in ("wg_wait", "cp_wait"):
                    grp = wgg[g] if sp_ == "wg_wait" else cpg[g]
                    keep = int(op.arg)
                    closed = grp[1]
                    old = closed[:len(closed) - keep] if keep else closed
                    if keep == 0 and sp_ == "cp_wait":
                        old = closed + [grp[0]]
                    w = max(old, default=0.0)
                    grp[1] = closed[len(closed) - keep:] if keep else []
                    if w > after:
                        after, after_cause = w, ("gmma" if sp_ == "wg_wait" else "long_scoreboard")
                elif sp_ == "membar":
                    d = sq.drained_at(t)
                    if d > after:
                        after, after_cause = d, "membar"
            if op.acquire and done > after:
                after, after_cause = done, "long_scoreboard"
            if dpos[g] == ip[g]:
                later = dlater[g]
                dpos[g] = later.pop() if later else -1
                deps = deps_of[g][ip[g]]
                if deps:
                    w_ = max(adone.get(k_, 0.0) for k_ in deps)
                    if w_ > after:
                        after, after_cause = w_, ("gmma" if op.special == "wg_wait" else "long_scoreboard")
            if trace and len(slices) + len(self.unit_slices) < TRACE_LIMIT:
                slices.append(Slice(procs[sp], f"warp {g}", op.opcode, t, max(done, t + 1), "issue", {"line": op.line}))
                if u is not None:
                    slices.append(Slice(procs[sp], f"{u.name} pipe", op.opcode, t, t + u.interval, "pipe",
                                        {"line": op.line}))
            rt, rc = reg_t[g], reg_c[g]
            for x in op.writes:
                rt[x] = done
                rc[x] = cause
            i = ip[g] + 1
            ip[g] = i
            s = streams[g]
            if i < len(s):                              # _next, inlined
                a_ = accs[g][i]
                if a_ is None:                          # no access: the pc's own (plain)
                    c_ = plain[s[i]]
                    if c_ is None:
                        c_ = plain[s[i]] = _next(s[i], None, f)
                    cur[g] = c_
                    nop = c_[2]
                else:
                    nop = f[s[i]]
                    cur[g] = (s[i], a_, nop, a_[0][1] == "merged" or nop.packed,
                              nop.pipe == "lsu" and len(a_) == 1 and a_[0][0] == "s" and a_[0][1] != "merged")
            else:
                nop = None                              # the warp's last instruction
            if sp_ == "bar":
                c = cta_of[g]
                lst = parked.setdefault(c, [])
                lst.append((g, t))
                if len(lst) == live[c]:
                    self._release(lst, heap, L["barrier"], streams, ip, f, reg_t, reg_c, add)
                    parked[c] = []
                item = heappop(heap) if heap else None
                continue
            if nop is None:
                c = cta_of[g]
                end = max(done, after, cpg[g][0], max(cpg[g][1], default=0.0), wgg[g][0])
                if drain[g] > end:
                    add("drain", drain[g] - end)
                    end = drain[g]
                cta_end[c] = max(cta_end[c], end)
                live[c] -= 1
                lst = parked.get(c)
                if lst and len(lst) == live[c]:
                    self._release(lst, heap, L["barrier"], streams, ip, f, reg_t, reg_c, add)
                    parked[c] = []
                if live[c] == 0:
                    free_slots.append(cta_slot[c])
                    if nxt < len(ctas):
                        start_cta(nxt, cta_end[c])
                        nxt += 1
                item = heappop(heap) if heap else None
                continue
            ready, why = after, after_cause
            for x in nop.reads:
                if rt[x] > ready:
                    ready, why = rt[x], rc[x]
            if ready > t + 1.0 and why is not None:
                cyc[why] = cyc.get(why, 0.0) + (ready - t - 1.0)
            item = heappushpop(heap, (ready, ready, g, -1))
        add("not_selected", ns)
        for cause, v in cyc.items():
            st.add(cause, v)
        cycles = max(cta_end, default=0.0)
        busy = {}
        for name in ("fma", "fp16", "alu", "fp64", "xu", "lsu", "branch", "mma"):
            busy[name] = sum(d[name].busy for d in sub)
        busy["shared"] = shared.busy
        busy["l1"] = l1.busy
        busy["l1_data"] = l1d.busy
        busy["l1tex_data"] = self.data.busy
        busy["tensor_gmma"] = gmma.busy
        busy["l2_share"] = l2.busy
        busy["dram_share"] = dram.busy
        return SMRun(cycles, issued, st, busy, l1_hit, l1_tot, l2_sec, l2_ld, len(ctas), len(streams), cta_end,
                     (slices + self.unit_slices) if trace else [], self.l2_seq, self.l2_work, self.l2_first)

    @staticmethod
    def _release(lst, heap, lat, streams, ip, f, reg_t, reg_c, add) -> None:
        """Every live warp of a CTA reached the barrier: all go ``lat`` after the last arrival."""
        t = max(a for _, a in lst) + lat
        for g, a in lst:
            add("barrier", t - a - 1.0)
            s = streams[g]
            if ip[g] >= len(s):
                continue
            nop = f[s[ip[g]]]
            ready, why = t, None
            for x in nop.reads:
                if reg_t[g][x] > ready:
                    ready, why = reg_t[g][x], reg_c[g][x]
            if why is not None:
                add(why, ready - t)
            heapq.heappush(heap, (ready, ready, g, -1))


def _next(pc: int, acc, f: list) -> tuple:
    """A warp's next instruction as :meth:`SM.run` keeps it: ``(pc, access, OpFacts, free, lsu_only)``;
    free: part of a vector load (``merged``) or a conversion packed into the previous one, not issued;
    lsu_only: one shared-memory part on the LSU pipe (it waits for the pipe and the MIO queue only)."""
    op = f[pc]
    return (pc, acc, op, (acc is not None and acc[0][1] == "merged") or op.packed,
            op.pipe == "lsu" and acc is not None and len(acc) == 1 and acc[0][0] == "s" and acc[0][1] != "merged")


def sm_ctas(ncta: int, sms: int, sm: int = 0) -> list[int]:
    """The CTAs SM ``sm`` runs under round-robin distribution, in order."""
    return list(range(sm, ncta, sms))


__all__ = ["H200Params", "load_params", "OpFacts", "op_facts", "SM", "SMRun", "TracedUnit", "sm_ctas"]
