"""The MIO's LSU instruction queues and how stalls are attributed (sim/timing/sm.py): small cases, each
failing without its mechanism."""

from pathlib import Path

import numpy as np
import pytest

import isa
import sim
from sim.timing.sm import load_params
from sim.timing.units import IssueQueue

CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"
REGS = ".reg .f32 %f<40>; .reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .pred %p<4>; .shared .align 4 .b8 sbuf[16384];"


def _run(body: str, block: int):
    src = f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{{
    {REGS}
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 128;
    add.s64 %rd4, %rd2, %rd3;
{body}
    ret;
}}
"""
    out = np.zeros(block * 40, np.float32)
    return sim.run_kernel(isa.loads(src), "k", 1, block, [out, np.uint32(0)], timing="h200").timing


def test_issue_queue_watermark():
    q = IssueQueue("lsu", depth=3)
    for leave in (10.0, 20.0, 30.0):
        assert q.slot_at(0.0) == 0.0
        q.enter(0.0, leave)
    assert q.slot_at(1.0) == 10.0              # full: the oldest entry leaves at 10
    assert q.slot_at(1.0, limit=2) == 20.0     # below a watermark of 2 once two have left
    assert q.slot_at(1.0, limit=1) == 30.0
    assert q.slot_at(25.0) == 25.0 and len(q) == 1
    assert q.slot_at(25.0, limit=1) == 30.0


def test_lg_watermark_counts_instructions_not_lines():
    """Four warps (one per sub-partition), each issuing 4 loads of 32 lines (every lane its own
    128-byte line): 512 lines of L1 t-stage work queue up, but only 4 instructions per sub-partition,
    below the LG watermark: the warps wait on the results (long_scoreboard), not to issue
    (lg_throttle), as ncu shows for wmma/mma.sync GEMMs that load fragments straight from global.
    Sixteen independent one-line loads per warp pass the watermark: lg_throttle."""
    wide = "\n".join(f"    ld.global.f32 %f{1 + i}, [%rd4+{4 * i}];" for i in range(4))
    wide += "\n    add.f32 %f10, %f1, %f2;\n    add.f32 %f10, %f10, %f3;\n    add.f32 %f10, %f10, %f4;\n" \
            "    st.global.f32 [%rd4], %f10;"
    w = load_params().pipes["lg_watermark"]
    assert w > 4
    t = _run(wide, block=128)
    assert t["stalls"].get("lg_throttle", 0.0) == 0.0
    assert t["stalls"]["long_scoreboard"] > 10
    n = 16
    # coalesced: lane i reads word i of row j (one line per instruction), rows 128 bytes apart; 8
    # warps per sub-partition with 16 loads each pass the watermark
    assert 8 * n > w
    narrow = "    and.b32 %r8, %r1, 31;\n    mul.wide.u32 %rd5, %r8, 4;\n    add.s64 %rd6, %rd2, %rd5;\n" + "\n".join(
        f"    ld.global.f32 %f{1 + i}, [%rd6+{128 * i}];" for i in range(n))
    narrow += "\n" + "\n".join(f"    add.f32 %f1, %f1, %f{2 + i};" for i in range(n - 1)) + "\n    st.global.f32 [%rd6], %f1;"
    t = _run(narrow, block=1024)
    assert t["stalls"]["lg_throttle"] > 0.5


def test_throttled_warps_take_queue_slots_in_readiness_order():
    """sgemm_smem_conflict's small launch (1024-thread CTAs, the shared pipe the bottleneck, the MIO
    queues full): a freed queue slot goes to the warp that has waited longest, so the warps of a CTA
    progress together and the time shows up as mio_throttle, with little barrier stall, as in ncu
    (perf launch: mio_throttle 164, barrier 9.7 warps per issue). Handing it to the lowest warp slot
    instead (the tie-break before) lets the first warps finish their tile early and wait at the
    barrier for the last: barrier 29 against mio_throttle 37 (here: 4.8 against 62)."""
    name = "sgemm_smem_conflict"
    import json

    from sim import launch as L

    man = CORPUS / "manifest.json"
    if not man.exists():
        pytest.skip(f"{man} is not present")
    e = next(x for x in json.loads(man.read_text())["entries"] if x["name"] == name)
    ptx = CORPUS / (e["ptx"].get("sm_90") or next(iter(e["ptx"].values())))
    spec = L.load_launch(f"{man}#{name}")
    st = L.execute(isa.load(str(ptx)), spec, e["entry"], timing="h200").timing["stalls"]
    assert max(st, key=st.get) == "mio_throttle"
    assert st.get("barrier", 0.0) < 0.2 * st["mio_throttle"]


def test_issue_queue_parameters_cite_their_source():
    P = load_params()
    for k in ("mio_queue", "lg_watermark"):
        assert P.sources[f"pipes.{k}"]
    assert P.pipes["lg_watermark"] >= 1 and P.pipes["mio_queue"] >= 1
    with pytest.raises(KeyError):
        P.pipes["lg_queue"]                 # the work-based backlog threshold is gone


def test_issue_queue_full_at_is_the_depth_th_latest_leave():
    """``full_at`` (what the SM replay reads for the slot) is the depth-th latest leave time entered
    (or at most the last entry's time, where fewer are in flight), and slot_at(t) is max(t, full_at):
    checked against counting the entries in flight, on 2,000 random entries (leaves in any order,
    some already left when an entry enters)."""
    rng = np.random.default_rng(10)
    q = IssueQueue("lsu", depth=4)
    leaves: list[float] = []
    t = 0.0
    for _ in range(2000):
        t += float(rng.integers(0, 3)) + float(rng.integers(0, 4)) / 4
        n_in = sum(x > t for x in leaves)
        want = t if n_in < 4 else sorted(x for x in leaves if x > t)[n_in - 4]
        assert q.slot_at(t) == want
        assert max(t, q.full_at) == want
        for lim in (1, 2, 3):
            w_lim = t if n_in < lim else sorted(x for x in leaves if x > t)[n_in - lim]
            assert q.slot_at(t, limit=lim) == w_lim
        at = q.slot_at(t)
        leave = at + float(rng.integers(1, 40))
        q.enter(at, leave)
        leaves.append(leave)
        t = at
        ref = sorted(leaves)[-4] if len(leaves) >= 4 else 0.0
        assert q.full_at == ref if ref > at else q.full_at <= at
