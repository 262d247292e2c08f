"""The timing model waits where the functional semantics complete asynchronous work
(:mod:`sim.timing.completions`): the AsyncEvents' stream positions name the issuing and the waiting
instructions; with them the SM replay no longer counts commit groups itself."""

from __future__ import annotations

from pathlib import Path

import pytest

import isa
import sim.timing.completions as C
from sim import launch as L

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT.parent / "shared" / "corpus"
WAITS = ("cp.async.wait_group", "cp.async.wait_all", "cp.async.bulk.wait_group", "wgmma.wait_group",
         "mbarrier.try_wait", "mbarrier.test_wait")
ISSUES = ("cp.async.", "wgmma.mma_async", "cp.async.bulk")


class _Counting:
    """Stands in for AsyncLog: the SM replay falls back to counting commit groups."""

    def on_async(self, ev):
        pass

    def by_warp(self, replay_index=None):
        return None


def _timed(ref, ptx, use_log: bool, monkeypatch):
    spec = L.load_launch(ref)
    mod = isa.load(ptx)
    logs = []

    class Keep(C.AsyncLog):
        def __init__(self):
            super().__init__()
            logs.append(self)

    with monkeypatch.context() as m:
        m.setattr(C, "AsyncLog", Keep if use_log else _Counting)
        ex = L.execute(mod, spec, timing="h200", sample="all")
    return ex, mod, (logs[0] if logs else None)


CASES = [
    ("examples", "manifest.json#tma_gemm", "ptx/tma/tma_gemm.sm_90a.ptx"),
    ("corpus", "manifest.json#hgemm_cp_async_double_buffer", "ptx/hgemm_cp_async.sm_90.ptx"),
    ("corpus", "manifest.json#wgmma_f16_m64n64k16_gemm", "ptx/wgmma_f16.sm_90a.ptx"),
    ("corpus", "manifest.json#tt_matmul_fp16", "ptx/tt_matmul_fp16.sm_90.ptx"),
]


def _paths(where, ref, ptx):
    base = ROOT / "examples" if where == "examples" else CORPUS
    if not (base / ptx).exists():
        pytest.skip(f"{base / ptx} is not present")
    return f"{base / ref}", base / ptx


@pytest.mark.parametrize("where,ref,ptx", CASES[1:], ids=[c[1].split("#")[1] for c in CASES[1:]])
def test_group_waits_from_the_functional_completions_equal_the_group_count(where, ref, ptx, monkeypatch):
    ref, ptx = _paths(where, ref, ptx)
    a, mod, log = _timed(ref, ptx, True, monkeypatch)
    b, _, _ = _timed(ref, ptx, False, monkeypatch)
    assert log.waits and log.issues
    assert a.timing["cycles"] == b.timing["cycles"] and a.timing["sm_cycles"] == b.timing["sm_cycles"]


def test_positions_name_the_waiting_and_the_issuing_instructions(monkeypatch):
    """The log's (warp, position) pairs index the timing model's streams: each wait position holds a
    wait instruction of that warp, each issue an asynchronous operation."""
    ref, ptx = _paths(*CASES[0])
    seen = {}

    import sim.timing.h200 as H

    real = H.predict

    def spy(state, streams, *a, **k):
        seen["streams"] = streams.streams
        seen["log"] = streams.async_log
        seen["ins"] = state.instructions
        return real(state, streams, *a, **k)

    monkeypatch.setattr(H, "predict", spy)
    L.execute(isa.load(ptx), L.load_launch(ref), timing="h200", sample="all")
    streams, log, ins = seen["streams"], seen["log"], seen["ins"]
    assert len(log.waits) > 0 and len(log.issues) > 0
    for (w, s) in log.waits:
        assert ins[streams[w].pcs[s]].full_opcode.startswith(WAITS), ins[streams[w].pcs[s]].full_opcode
    for (w, s) in log.issues:
        assert ins[streams[w].pcs[s]].full_opcode.startswith(ISSUES), ins[streams[w].pcs[s]].full_opcode
    # TMA: the boxes complete at the mbarrier wait, and that is where the log puts them
    assert any(ins[streams[w].pcs[s]].full_opcode.startswith("mbarrier.try_wait") for (w, s) in log.waits)


def test_tma_boxes_are_waited_for_at_the_mbarrier(monkeypatch):
    """Before the log the timing model had no notion of mbarrier completion: warps went past the
    try_wait at once. With it, they wait for the modelled TMA loads (more SM cycles)."""
    ref, ptx = _paths(*CASES[0])
    a, _, log = _timed(ref, ptx, True, monkeypatch)
    b, _, _ = _timed(ref, ptx, False, monkeypatch)
    assert a.timing["sm_cycles"] > 1.3 * b.timing["sm_cycles"]


# warp 0 waits for the TMA box on one path, warp 1 later on another: the second finds the phase
# complete and must still wait for the copy (an 'observe' event)
TWO_WAITS = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 64 .b8 k_map[128], .param .u64 k_out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 box[512];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, k_map;
    cvta.param.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, box;
    mov.u32 %r3, bar;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    mov.u32 %r4, 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 512;
    @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd1, {%r4, %r4}], [%r3];
    setp.lt.u32 %p3, %r1, 32;
    @%p3 bra FIRST;
SECOND:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
    @!%p2 bra SECOND;
    bra.uni DONE;
FIRST:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
    @!%p2 bra FIRST;
DONE:
    ret;
}
"""


def test_a_wait_that_finds_the_phase_complete_waits_for_its_copies():
    import numpy as np

    import sim
    from sim.ptx.tensormap import TensorMap, TensorMapArg
    from sim.timing.streams import WarpStreams

    mod = isa.loads(TWO_WAITS)
    src = np.arange(128, dtype=np.float32).reshape(8, 16)
    ws = WarpStreams(2)
    log = C.AsyncLog()
    ws.on_async = log.on_async
    r = sim.run_kernel(mod, "k", 1, 64, [TensorMapArg(src, TensorMap.tiled("f32", [16, 8], [16, 8])),
                                         np.zeros(1, np.uint64)], listeners=[ws])
    assert r.problems == []
    (issue,) = log.issues
    assert issue[0] == 0                           # warp 0 issued the copy
    waiting = sorted(w for (w, s), src in log.waits.items() if issue in src)
    assert waiting == [0, 1]                       # both warps' waits depend on it
    streams = ws.streams
    for (w, s) in log.waits:
        assert mod.functions[0].instructions[streams[w].pcs[s]].full_opcode.startswith("mbarrier.try_wait")


def test_release_stores_and_atomics_drain_the_store_queue_like_fences():
    """ptxas puts a MEMBAR before st.release / atom.release (MEMBAR.ALL.GPU, .CTA for .cta scope, seen in
    nvdisasm of ptxas 13.0's SASS), and the functional relaxed memory drains its store buffers there:
    the timing model's store queue drains there too (the same ordering table, isa.ptx.memorder)."""
    from sim.timing.sm import _releases

    mod = isa.loads("""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    st.global.u32 [%rd1+4], %r1;
    st.release.gpu.global.u32 [%rd1], %r1;
    atom.acq_rel.gpu.global.add.u32 %r2, [%rd1+8], 1;
    st.relaxed.gpu.global.u32 [%rd1+12], %r2;
    atom.global.add.u32 %r2, [%rd1+8], 1;
    red.release.cta.global.add.u32 [%rd1+8], 1;
    ret;
}
""")
    got = [_releases(i) for i in mod.functions[0].instructions]
    assert got == [False, False, True, True, False, False, True, False]
