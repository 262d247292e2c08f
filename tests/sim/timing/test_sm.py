"""Mechanisms of the H200 timing model on small cases (not the benchmark targets)."""

import numpy as np
import pytest

import isa
import sim
from sim.timing.sm import SM, OpFacts, load_params


def _kernel(body: str, regs: str = ".reg .f32 %f<80>; .reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .pred %p<4>;") -> str:
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{{
    {regs}
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
{body}
    ret;
}}
"""


def _time(body, grid=1, block=32, sample="auto", **kw):
    src = _kernel(body, **kw)
    out = np.zeros(grid * block * 40, np.float32)
    r = sim.run_kernel(isa.loads(src), "k", grid, block, [out, np.uint32(0)], timing="h200", sample=sample)
    return r


def test_dependent_chain_costs_latency_per_instruction():
    n = 64
    dep = "\n".join(["    mov.f32 %f1, 0f3F800000;"] + ["    fma.rn.f32 %f1, %f1, %f1, %f1;"] * n
                    + ["    st.global.f32 [%rd4], %f1;"])
    ind = "\n".join(["    mov.f32 %f1, 0f3F800000;"] + [f"    fma.rn.f32 %f{2 + i}, %f1, %f1, %f1;" for i in range(n)]
                    + ["    st.global.f32 [%rd4], %f2;"])
    td = _time(dep).timing
    ti = _time(ind).timing
    ffma = load_params().lat["ffma"]
    # the chain adds (latency - 1) cycles per instruction over the independent stream
    assert td["sm_cycles"] - ti["sm_cycles"] == pytest.approx(n * (ffma - 1), abs=8)
    assert td["stalls"]["wait"] > 2.0 and ti["stalls"].get("wait", 0) < 0.5
    assert td["label"] == "modelled" and not td["sampled"]


def test_pipe_throughput_one_ffma_per_clock_per_sub_partition():
    n = 64
    ind = "\n".join(["    mov.f32 %f1, 0f3F800000;"] + [f"    fma.rn.f32 %f{2 + i % 60}, %f1, %f1, %f1;" for i in range(n)]
                    + ["    st.global.f32 [%rd4], %f2;"])
    t1 = _time(ind, block=32).timing
    t32 = _time(ind, block=1024).timing
    # 32 warps on 4 sub-partitions: 8 warps share each scheduler (one issue per clock) and its FMA
    # pipe, so each extra warp adds its instructions (n FFMAs + 10 others) to the issue time
    assert t32["sm_cycles"] - t1["sm_cycles"] == pytest.approx(7 * (n + 10), rel=0.1)
    assert t32["pipes"]["fma"]["utilization"] > 0.5


def _shared_body(stride_words: int) -> str:
    loads = "\n".join("    ld.shared.f32 %f2, [%r6];\n    add.f32 %f1, %f1, %f2;" for _ in range(16))
    return f"""    mov.u32 %r5, sbuf;
    mul.lo.s32 %r6, %r1, {4 * stride_words};
    add.s32 %r6, %r6, %r5;
    mov.f32 %f1, 0f00000000;
    st.shared.f32 [%r6], %f1;
    bar.sync 0;
{loads}
    st.global.f32 [%rd4], %f1;"""


def test_bank_conflicts_cost_wavefronts_and_time():
    regs = ".reg .f32 %f<8>; .reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .pred %p<4>; .shared .align 4 .b8 sbuf[8192];"
    t1 = _time(_shared_body(1), block=64, regs=regs).timing
    t32 = _time(_shared_body(32), block=64, regs=regs).timing
    assert t32["memory"]["shared_wavefronts"] == pytest.approx(32 * t1["memory"]["shared_wavefronts"], rel=0.1)
    assert t32["sm_cycles"] > t1["sm_cycles"] + 16 * 2 * 31
    assert t32["pipes"]["shared"]["busy_cycles"] >= 31 * t1["pipes"]["shared"]["busy_cycles"]


def test_store_queue_full_stalls_issue():
    P = load_params()
    st = OpFacts("st.global.f32", "lsu", 1.0, "wait", (), ())
    sm = SM([st], P, ctas_per_sm=1, warps_per_cta=8, l1_lines=1024, l2_hit=1.0, dram_bpc=1.0, l2_bpc=2.0)
    streams = [[(0, (("g", "store", 4, 0),))] * 100 for _ in range(8)]
    run = sm.run([streams])
    assert run.stalls.cycles.get("lg_throttle", 0) > 0
    depth = int(P.pipes["store_queue"])
    # the queue drains at the L2 share: 800 stores of 128 B at 2 B/clk, minus what the queue holds
    assert run.cycles >= (800 - depth) * 4 * 32 / 2.0


def test_sampling_extrapolates_waves():
    body = "\n".join(["    mov.f32 %f1, 0f3F800000;"] + ["    fma.rn.f32 %f1, %f1, %f1, %f1;"] * 32
                     + ["    st.global.f32 [%rd4], %f1;"])
    grid = 132 * 64                                    # 64 CTAs per SM, 32 resident: two waves
    r = _time(body, grid=grid, block=32)
    ra = _time(body, grid=grid, block=32, sample="all")
    assert r.sampled and not r.complete and r.timing["simulated_ctas"] == 32
    assert ra.complete and not ra.sampled and ra.timing["simulated_ctas"] == grid
    assert r.timing["sm_cycles"] == pytest.approx(ra.timing["sm_cycles"], rel=0.1)


def test_no_timing_no_cost():
    r = sim.run_kernel(isa.loads(_kernel("")), "k", 1, 32, [np.zeros(32, np.float32), np.uint32(0)])
    assert r.timing is None and r.complete and not r.sampled


def test_l1_looks_up_one_line_per_clock():
    """A warp load costs the L1 its distinct 128-byte lines, not its sectors / 4 (ncu_deep: sgemm_naive
    moves one sector-per-line request through the L1 per clock and stalls on lg_throttle)."""
    P = load_params()
    ld = OpFacts("ld.global.f32", "lsu", 32.0, "long_scoreboard", (), (0,))

    def run(lines):
        sm = SM([ld], P, ctas_per_sm=1, warps_per_cta=8, l1_lines=4096, l2_hit=1.0, dram_bpc=64.0, l2_bpc=64.0)
        acc = (("g", "load", len(lines) if len(lines) > 1 else 4, tuple(lines)),)
        return sm.run([[[(0, acc)] * 100 for _ in range(8)]])

    strided = run(list(range(32)))         # one lane per line: 32 sectors in 32 lines
    coalesced = run([0])                   # 32 lanes x 4 B: 4 sectors in one line
    assert strided.busy["l1"] == pytest.approx(8 * 100 * 32)
    assert coalesced.busy["l1"] == pytest.approx(8 * 100)
    assert strided.cycles >= 8 * 100 * 32
    assert coalesced.cycles < 8 * 100 * 32 / 4
    # the issue queue is full most of the time: warps wait to issue (lg_throttle)
    assert strided.stalls.cycles["lg_throttle"] > 0.5 * strided.stalls.total()


def test_dram_latency_grows_with_dram_load():
    """A launch that keeps the DRAM busy sees a longer DRAM latency (a queue in front of it:
    global_dram + q rho / (1 - rho), rho = DRAM bytes over what the DRAM moves in the SM time),
    solved for the fixed point; a launch that touches almost no DRAM keeps the unloaded latency."""
    P = load_params("h200")
    L0, q = P.lat["global_dram"], P.hier["dram_queue_latency"]
    body = "    ld.global.f32 %f2, [%rd4];\n    add.f32 %f3, %f2, %f2;\n    st.global.f32 [%rd4], %f3;"
    busy = _time(body, grid=1056, block=256).timing
    assert busy["dram_latency"] > L0 + 0.2 * q
    rho = min(0.95, busy["dram_cycles"] / busy["sm_cycles"])
    assert busy["dram_latency"] == pytest.approx(L0 + q * rho / (1 - rho), rel=0.15)
    quiet = _time("\n".join(["    fma.rn.f32 %f1, %f1, %f1, %f1;"] * 64 + ["    st.global.f32 [%rd4], %f1;"]),
                  grid=4, block=32).timing
    assert quiet["dram_latency"] == L0


def test_l2_hit_rate_counts_stores_as_hits():
    """The L2 is write-back and allocates on write: a store sector is a hit (ncu's
    lts__t_sector_hit_rate; dequantize_s8 perf reads 0.52 M sectors from DRAM and writes 2.10 M:
    81.6 %). A copy that reads each sector once and writes each once hits on half its sectors."""
    body = "    ld.global.f32 %f2, [%rd4];\n    st.global.f32 [%rd4+65536], %f2;"
    t = _time(body, grid=8, block=256).timing
    assert t["memory"]["l2_sectors"] == 2 * 8 * 8 * 4          # 64 warps x 4 sectors, loaded and stored
    assert t["memory"]["l2_hit_rate"] == pytest.approx(0.5)


def test_same_address_atomics_serialise_chip_wide():
    """Atomics to one address from every SM go one after the other at its L2 slice
    (examples/h200/microbench.json atomic_same: 135,168 to out[0] take 473,971 cycles); spread
    atomics (one address per thread) do not."""
    lat = load_params("h200").lat["atomic_same_address"]
    same = _time("    mov.f32 %f1, 0f3F800000;\n    red.global.add.f32 [%rd2], %f1;", grid=264, block=256,
                 sample="all").timing
    assert same["atomic_cycles"] == pytest.approx(264 * 256 * lat)
    assert same["bound"] == "atomics (same address)"
    assert same["cycles"] == pytest.approx(same["launch_overhead"] + 264 * 256 * lat)
    spread = _time("    mov.f32 %f1, 0f3F800000;\n    red.global.add.f32 [%rd4], %f1;", grid=264, block=256).timing
    # one operation per sector, not scaled up by the sampling; the 4 sectors of a warp's line share the
    # line's unit (tests/sim/timing/test_atomic_sector.py), and the lines of the two sampled CTAs go 4
    # to an L2 atomic unit (lines 0, 1, 4, 5 and the like, sim/timing/l2slice.py): 16 operations to
    # 16 sectors, each atomic_unit_issue + (atomic_same_address - atomic_unit_issue) / 16
    issue = load_params("h200").lat["atomic_unit_issue"]
    assert spread["simulated_ctas"] == 2
    assert spread["atomic_cycles"] == pytest.approx(16 * (issue + (lat - issue) / 16))
    assert spread["bound"] != "atomics (same address)"


def test_global_lines_and_shared_wavefronts_share_one_data_path():
    """Hopper's L1 and shared memory are one array behind one data path: a warp's global-load lines
    and its shared-memory wavefronts pass it one after the other, so a mix costs their sum, not the
    larger (ncu_deep wgmma_f16 perf: 131 k lines + 107 k wavefronts per SM, l1tex__throughput 87 %
    of 285 k cycles)."""
    P = load_params()
    ld = OpFacts("ld.global.f32", "lsu", 32.0, "long_scoreboard", (), (0,))
    lds = OpFacts("ld.shared.f32", "lsu", 23.0, "short_scoreboard", (), (1,))
    g = (0, (("g", "load", 16, tuple(line << 4 | 1 for line in range(16))),))   # 16 lines, one sector each
    s = (1, (("s", "load", 16, 1),))                                           # a 16-way conflict
    sm = SM([ld, lds], P, ctas_per_sm=1, warps_per_cta=8, l1_lines=4096, l2_hit=1.0, dram_bpc=64.0, l2_bpc=64.0)
    run = sm.run([[[g, s] * 50 for _ in range(8)]])
    assert run.busy["l1"] == pytest.approx(8 * 50 * 16)         # the t-stage
    assert run.busy["l1_data"] == pytest.approx(8 * 50 * 16)    # the load's share of the data path
    assert run.busy["shared"] == pytest.approx(8 * 50 * 16)
    assert run.busy["l1tex_data"] == pytest.approx(8 * 50 * 32)
    assert run.cycles >= 8 * 50 * 32           # separate pipes would finish in about half


def test_l1_is_sectored():
    """Four warps each read one 32-byte sector of the same 128-byte line: each misses (the line is
    allocated but only the asked sector filled; ncu_deep dequantize_s8 perf: l1tex__t_sector_hit_rate
    0 %); reading the same bytes again hits."""
    body = """    cvt.u64.u32 %rd5, %r1;
    add.s64 %rd6, %rd2, %rd5;
    ld.global.u8 %r5, [%rd6];
    bar.sync 0;
    ld.global.u8 %r6, [%rd6];
    add.s32 %r7, %r5, %r6;
    st.global.u32 [%rd4+1024], %r7;"""
    t = _time(body, block=128).timing
    assert t["memory"]["l1_hit_rate"] == pytest.approx(0.5)


def test_cp_async_lines_skip_the_data_path():
    """cp.async's global lines pass the L1 t-stage but not the data path to registers (its data is
    written to shared memory, charged as shared wavefronts): ncu_deep tt_matmul_fp16 perf shows
    l1tex__throughput 56 %, its shared wavefronts alone."""
    P = load_params()
    cp = OpFacts("cp.async.cg.shared.global", "lsu", 1.0, "wait", (), ())      # writes no register
    ld = OpFacts("ld.global.f32", "lsu", 32.0, "long_scoreboard", (), (0,))
    acc = (("g", "load", 16, tuple(line << 4 | 15 for line in range(4))),)
    for op, share in ((cp, 0.0), (ld, 4 * 10 * 8)):
        sm = SM([op], P, ctas_per_sm=1, warps_per_cta=8, l1_lines=4096, l2_hit=1.0, dram_bpc=64.0, l2_bpc=64.0)
        run = sm.run([[[(0, acc)] * 10 for _ in range(8)]])
        assert run.busy["l1"] == pytest.approx(4 * 10 * 8)
        assert run.busy["l1_data"] == pytest.approx(share)


def test_a_warp_exit_waits_for_its_atomics_to_be_performed():
    """An atomic is a read-modify-write at L2: a warp's exit waits until its atomics are performed
    there (ncu's ``drain``), a miss first bringing the line from DRAM as a load's does. A spread
    atomic launch is then as long as its last atomic's round trip (examples/h200/microbench.json
    atomic_spread: sm__cycles_active.max 1,133 for 4 reds per thread), where a plain store is not
    waited for. The L2 round trip that a launch's last stores take is in the fitted launch_overhead:
    the exit waits for what an atomic takes beyond it, the DRAM read of a missing line."""
    L = load_params().lat
    red = _time("    mov.f32 %f1, 0f3F800000;\n    red.global.add.f32 [%rd4], %f1;").timing
    st = _time("    mov.f32 %f1, 0f3F800000;\n    st.global.f32 [%rd4], %f1;").timing
    miss = red["dram_latency"] - L["global_l2"]          # the line is not in L2 yet: a DRAM read
    assert red["sm_cycles"] >= st["sm_cycles"] + 0.5 * miss
    assert red["stalls"]["drain"] > 0 and "drain" not in st["stalls"]
    # an atom's old value comes back after the round trip too: a dependent use waits for it
    atom = _time("    mov.f32 %f1, 0f3F800000;\n    atom.global.add.f32 %f2, [%rd4], %f1;\n"
                 "    st.global.f32 [%rd4+4], %f2;").timing
    assert atom["sm_cycles"] >= red["sm_cycles"] + L["global_l2"] - 30
