"""``timing="h200"`` for :func:`sim.run_kernel`: choose the CTAs to simulate, replay them on the SM
model (:mod:`sim.timing.sm`) and turn the result into the ``result.timing`` mapping.

Sampling (deterministic): CTAs go to SMs round robin, so SM 0 runs CTAs 0, 132, 264, ...
``sample='auto'`` simulates every CTA when the launch has no more CTAs than SMs (one CTA per SM:
each is replayed alone and the slowest sets the time), else SM 0's first wave (its first ``k``
CTAs, ``k`` from the occupancy) and extrapolates to SM 0's number of waves; ``sample='all'``
simulates every CTA and replays every SM's list. Every figure is labelled ``modelled``.
"""

from __future__ import annotations

import math
import time

from sim import machines

from .occupancy import occupancy
from .regs import registers_per_thread
from .sm import SM, load_params, op_facts, sm_ctas
from .stalls import Stalls
from .schedule import block_orders, reorder_index
from .streams import WarpStreams

PER_SP = ("fma", "fp16", "alu", "fp64", "xu", "lsu", "branch", "mma")
SAMPLE_MODES = ("auto", "all")


def plan(ncta: int, sms: int, k: int, sample: str) -> tuple[list[int] | None, bool]:
    """(CTAs to simulate, None for all; sampled?)"""
    if sample not in SAMPLE_MODES:
        from isa.errors import InputError

        raise InputError(f"sample must be one of {', '.join(SAMPLE_MODES)}, got {sample!r}")
    if sample == "all" or ncta <= sms:
        return None, False
    return sm_ctas(ncta, sms, 0)[:k], True


def occupancy_of(module, fn_name: str, state, machine: str = "h200"):
    regs = registers_per_thread(module, fn_name)
    occ = occupancy(machine, regs.per_thread, state.static_shared_end + state.dynamic_shared, state.nthreads)
    return occ, regs


def predict(state, streams: WarpStreams, occ, regs, *, simulated: list[int] | None, sampled: bool,
            gmem=None, machine: str = "h200", trace: bool = False) -> dict:
    t0 = time.perf_counter()
    P = load_params(machine)
    H = P.hier
    raw = machines.load(machine)[1]
    l2_bytes = raw["chip"]["l2_bytes"]["value"]                    # 60 MiB (h200.md)
    max_warps = raw["occupancy"]["max_warps_per_sm"]["value"]      # 64
    facts = op_facts(state, P)
    ncta, sms, wpc = state.ncta, P.sms, state.tpc // 32
    k = max(1, occ.ctas_per_sm)
    sim_ctas = list(range(ncta)) if simulated is None else list(simulated)
    f = ncta / max(1, len(sim_ctas))
    active = min(sms, ncta)
    dram_bpc = H["dram_bw"] / P.hz / active
    l2_bpc = H["l2_bw"] / P.hz / active
    l2w_rate = H.get("l2_write_sectors_per_clk")            # the L2's store merging, chip-wide
    l2w_spc = l2w_rate / active if l2w_rate else None
    bases = ends = None
    if gmem is not None and gmem.buffers:
        bases = [b.base for b in gmem.buffers]
        ends = [b.base + b.size for b in gmem.buffers]
    rd, wr = streams.footprint(bases, ends, f)
    # the DRAM moves 64-byte granules: a sector read alone in its granule costs two
    gran = streams.granule_factor(max(1, int(H.get("dram_granule", 32) // 32)))
    dram_bpc /= gran
    accesses = streams.global_sectors * f
    foot = (rd + wr) * 32
    h2 = max(0.0, 1.0 - (rd + wr) / accesses) if accesses else 1.0
    if foot > l2_bytes:
        h2 *= l2_bytes / foot
    shared_alloc = getattr(occ, "carveout_bytes", 0) or 0
    l1_lines = int(max(H["l1_bytes"] - shared_alloc, 16384) // H["l1_line"])

    # each warp's stream in ptxas's order of every basic block (sim/timing/schedule.py)
    orders = block_orders(state, facts, P.lat["global_l2"], streams.merged)

    index: dict[int, object] = {}         # warp -> its replay order (reorder_index), for streams and waits

    def replay_index(w):
        if w not in index:
            index[w] = reorder_index(streams.pcs(w), orders)
        return index[w]

    def cta_streams(c):
        out = []
        for w in range(c * wpc, (c + 1) * wpc):
            s, ix = streams.streams.get(w, []), replay_index(w)
            out.append(s if ix is None else [s[i] for i in ix.tolist()])
        return out

    if simulated is None and ncta > sms:
        lists = [sm_ctas(ncta, sms, s) for s in range(sms)]
    elif simulated is None:
        lists = [[c] for c in range(ncta)]
    else:
        lists = [sim_ctas]
    leaders = frozenset(m.leader for m in streams.merged.values())
    waves_sm0 = math.ceil(len(sm_ctas(ncta, sms, 0)) / k)
    scale = waves_sm0 / math.ceil(len(sim_ctas) / k) if sampled else 1.0
    per_sm = [[cta_streams(c) for c in lst] for lst in lists]
    log = getattr(streams, "async_log", None)          # where the functional semantics completed async work
    waits = log.by_warp(replay_index) if log is not None else None

    def one(i, dram_latency, traced=False):
        # lists[i] is what SM i runs (every SM's list, one CTA per SM, or SM 0's sample)
        sm = SM(facts, P, ctas_per_sm=k, warps_per_cta=wpc, l1_lines=l1_lines, l2_hit=h2s[0], dram_bpc=dram_bpc,
                l2_bpc=l2_bpc, trace=traced, leaders=leaders, dram_latency=dram_latency, sm_index=i,
                l2_write_spc=l2w_spc)
        return sm.run(per_sm[i], ids=list(lists[i]) if waits is not None else None, waits=waits)

    def replay(dram_latency):
        runs = [one(i, dram_latency) for i in range(len(lists))]
        slow = max(runs, key=lambda r: r.cycles)
        return runs, slow, slow.cycles * scale

    # DRAM latency under load (a queue in front of the DRAM): L(rho) = L0 + q rho / (1 - rho), rho the
    # launch's DRAM bytes over what the DRAM moves in the SM time (at most 0.95). The SM time is
    # close to linear in the latency, so two replays (at L0 and at L(rho(L0))) give its line, the
    # fixed point L = L(rho(L)) on that line is found by bisection and replayed: three replays,
    # only when the DRAM time is over a tenth of the SM time
    L0, q = P.lat["global_dram"], H.get("dram_queue_latency", 0.0)
    dram_min = (rd + wr) * 32 / (H["dram_bw"] / P.hz)

    def loaded(t):
        rho = min(0.95, dram_min / t) if t > 0 else 0.95
        return L0 + q * rho / (1.0 - rho)

    dram_latency = L0
    h2s = [h2]
    runs, slow, sm_cycles = replay(L0)
    # the L2 hit rate of the loads that miss L1: first touches over the L1 misses of the replay
    # (the estimate above counts L1 hits and stores too); replayed when it moves by > 5 points
    ll = sum(r.l2_load_sectors for r in runs) * (f if sampled else 1.0)
    if ll > 0:
        h2_loads = max(0.0, 1.0 - rd / ll)
        if foot > l2_bytes:
            h2_loads *= l2_bytes / foot
        if abs(h2_loads - h2) > 0.05:
            h2s[0] = h2_loads
            runs, slow, sm_cycles = replay(L0)
    if q > 0 and sm_cycles > 0 and dram_min > 0.1 * sm_cycles:
        lb = loaded(sm_cycles)
        rb = replay(lb)
        slope = (rb[2] - sm_cycles) / (lb - L0) if lb > L0 else 0.0
        lo, hi = L0, lb
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            if loaded(sm_cycles + slope * (mid - L0)) > mid:
                lo = mid
            else:
                hi = mid
        dram_latency = 0.5 * (lo + hi)
        runs, slow, sm_cycles = replay(dram_latency)
    # the trace: the slowest SM (the one that sets the time) replayed once more, recording slices
    # (the replay is deterministic: its figures are those of ``slow``)
    slices = one(runs.index(slow), dram_latency, traced=True).slices if trace else None
    # chip-wide totals (sampled figures scaled to the launch)
    issued = sum(r.issued for r in runs) * (f if sampled else 1.0)
    stalls = Stalls()
    for r in runs:
        stalls.merge(r.stalls, f if sampled else 1.0)
    l1_tot = sum(r.l1_load_sectors for r in runs)
    l1_hit = sum(r.l1_hit_sectors for r in runs)
    l2_sec = sum(r.l2_sectors for r in runs) * (f if sampled else 1.0)
    l2_ld = sum(r.l2_load_sectors for r in runs) * (f if sampled else 1.0)
    dram_read, dram_write = rd * 32 * gran, wr * 32
    if foot > l2_bytes:       # footprint over L2: the loads that miss it (stores read no DRAM)
        dram_read = max(dram_read, l2_ld * 32 * gran * (1 - h2s[0]))
    dram_cycles = (dram_read + dram_write) / (H["dram_bw"] / P.hz)
    l2_cycles = l2_sec * 32 / (H["l2_bw"] / P.hz)
    # store sectors the L2 merges (a partial sector costs l2_partial_write_cost), at its chip-wide rate
    l2w_cycles = (sum(r.busy.get("l2_write", 0.0) for r in runs) * l2w_spc * (f if sampled else 1.0) / l2w_rate
                  if l2w_rate else 0.0)
    l2_cycles = max(l2_cycles, l2w_cycles)
    over = H["launch_overhead"]
    # same-address atomics serialise at the address's L2 slice, whichever SM sends them: the
    # hottest address's operations one after the other (scaled from the sample when several
    # sampled CTAs share the address)
    h = max(streams.atomic_counts.values(), key=lambda v: v[0], default=None)
    hot = 0.0 if h is None else h[0] * (f if sampled and h[2] else 1.0)
    atomic_cycles = hot * P.lat["atomic_same_address"]
    body = max(sm_cycles, dram_cycles, l2_cycles, atomic_cycles)
    cycles = over + body
    sm_busy = {}
    for name, v in slow.busy.items():
        copies = 4 if name in PER_SP else 1
        sm_busy[name] = {"busy_cycles": v * scale,
                         "utilization": (v / (slow.cycles * copies)) if slow.cycles else 0.0}
    top_unit = max(sm_busy, key=lambda n: sm_busy[n]["utilization"]) if sm_busy else None
    if body == atomic_cycles and atomic_cycles > 0:
        bound = "atomics (same address)"
    elif body == dram_cycles and dram_cycles > 0:
        bound = "dram"
    elif body == l2_cycles and l2_cycles > 0:
        bound = "l2"
    elif top_unit and sm_busy[top_unit]["utilization"] > 0.6:
        bound = top_unit
    else:
        bound = f"latency ({stalls.top() or 'none'})"
    ctas_sm0 = min(k, len(sm_ctas(ncta, sms, 0)))
    achieved = ctas_sm0 * wpc / max_warps
    per_issue = stalls.per_issue(issued)
    l2_req = l2_sec
    return {
        "model": machine, "label": "modelled",
        "cycles": cycles, "seconds": cycles / P.hz,
        "sm_cycles": sm_cycles, "dram_cycles": dram_cycles, "l2_cycles": l2_cycles, "launch_overhead": over, "atomic_cycles": atomic_cycles,
        "dram_latency": dram_latency,
        "ipc": (issued / sms if ncta >= sms else issued / active) / body if body else 0.0,
        "issued_warp_instructions": issued,
        "occupancy": {"theoretical": occ.theoretical, "achieved": achieved, "limiter": occ.limiter,
                      "ctas_per_sm": occ.ctas_per_sm, "registers_per_thread": regs.per_thread,
                      "registers_source": regs.source, "waves": ncta / (k * sms),
                      # whole waves of k x sms CTAs, and how full the last (tail) wave is
                      "wave_count": math.ceil(ncta / (k * sms)),
                      "tail_wave": (ncta - (math.ceil(ncta / (k * sms)) - 1) * k * sms) / (k * sms)},
        "pipes": sm_busy,
        "stalls": per_issue,
        "top_stall": next(iter(per_issue), None),
        "memory": {"l1_hit_rate": l1_hit / l1_tot if l1_tot else None,
                   # stores hit: the L2 is write-back and allocates on write (ncu_deep dequantize_s8
                   # perf: 2.10 M store sectors, 0.52 M read from DRAM -> 80.7 %, ncu 81.6 %)
                   "l2_hit_rate": max(0.0, 1.0 - dram_read / gran / 32 / l2_req) if l2_req else None,
                   "dram_bytes_read": dram_read, "dram_bytes_write": dram_write,
                   "l2_sectors": l2_req,
                   "shared_wavefronts": streams.shared_wavefronts * f},
        "bound": bound,
        "sampled": sampled, "simulated_ctas": len(sim_ctas), "ctas": ncta,
        "model_seconds": time.perf_counter() - t0,
        **({"_slices": slices} if trace else {}),
    }


__all__ = ["predict", "plan", "occupancy_of", "SAMPLE_MODES"]
