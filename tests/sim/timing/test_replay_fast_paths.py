"""The SM replay's fast paths (sim/timing/sm.py) must give what the plain code gives.

Untraced, :meth:`sim.timing.sm.SM.run` inlines the data path's, the L1's and the issue queues'
bookkeeping and tries the warps waiting for the issue slot that find their MIO/LSU queue full
without a round trip through the event heap; an SM built with ``trace=True`` (traced units) takes
the plain path. Each case keeps the replays' inputs of a launch and replays them both ways: every
figure of the SM run (cycles, issues, stalls, busy times, L1/L2 counts, the L2 sequence) must be
equal, bit for bit, on launches that take those paths many times (the small launches; the perf
launches are checked by bench/timing_identical.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import isa
import sim

SKIP = {"model_seconds", "predict_seconds", "_slices"}
CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "corpus"


def _kernel(loads: int) -> str:
    """Every warp issues ``loads`` independent shared loads, each a 32-way bank conflict (lanes 128
    bytes apart), then global stores: the shared pipe is the bottleneck and the MIO queues stay full."""
    body = "\n".join(f"    ld.shared.f32 %f{1 + i}, [%r3+{4 * i}];" for i in range(loads))
    body += "\n" + "\n".join(f"    add.f32 %f1, %f1, %f{2 + i};" for i in range(loads - 1))
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .f32 %f<40>; .reg .b32 %r<8>; .reg .b64 %rd<8>;
    .shared .align 4 .b8 sbuf[4096];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 31;
    shl.b32 %r2, %r2, 7;
    mov.u32 %r4, sbuf;
    add.s32 %r3, %r4, %r2;
{body}
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.f32 [%rd4], %f1;
    ret;
}}
"""


def _both(run, monkeypatch):
    """Run the launch, keeping each SM replay's inputs; replay each again untraced and traced (traced
    units: the plain path) and compare every figure of the two runs but the trace slices."""
    from sim.timing import sm as S

    got = []
    init, replay = S.SM.__init__, S.SM.run

    def keep_init(self, facts, P, **kw):
        self._args = (facts, P, kw)
        init(self, facts, P, **kw)

    def keep_run(self, ctas, ids=None, waits=None):
        got.append((self._args, ctas, ids, waits))
        return replay(self, ctas, ids, waits)

    monkeypatch.setattr(S.SM, "__init__", keep_init)
    monkeypatch.setattr(S.SM, "run", keep_run)
    timing = run().timing
    monkeypatch.undo()
    assert got
    for (facts, P, kw), ctas, ids, waits in got:
        fast = S.SM(facts, P, **{**kw, "trace": False}).run(ctas, ids, waits)
        plain = S.SM(facts, P, **{**kw, "trace": True}).run(ctas, ids, waits)
        assert plain.slices and not fast.slices
        for k in vars(fast):
            if k != "slices":
                assert repr(getattr(fast, k)) == repr(getattr(plain, k)), k
    return timing


def test_mio_bound_warps_replay_the_same_with_and_without_the_fast_paths(monkeypatch):
    module = isa.loads(_kernel(24))
    out = np.zeros(1024 * 4, np.float32)
    t = _both(lambda: sim.run_kernel(module, "k", 4, 1024, [out], timing="h200"), monkeypatch)
    # the case exercises the path: the warps wait on the full MIO queue far more than anything else
    assert max(t["stalls"], key=t["stalls"].get) == "mio_throttle"
    assert t["stalls"]["mio_throttle"] > 10 * t["stalls"].get("not_selected", 0.0) > 0


@pytest.mark.parametrize("name", ["sgemm_smem_conflict", "hgemm_cp_async_double_buffer", "sgemm_naive", "tt_matmul_fp16", "reduce_sum_atomic"])
def test_corpus_launches_replay_the_same_with_and_without_the_fast_paths(name, monkeypatch):
    man = CORPUS / "manifest.json"
    if not man.exists():
        pytest.skip(f"{man} is not present")
    from sim import launch as L

    e = next(x for x in json.loads(man.read_text())["entries"] if x["name"] == name)
    ptx = CORPUS / (e["ptx"].get("sm_90") or next(iter(e["ptx"].values())))
    spec = L.load_launch(f"{man}#{name}")
    module = isa.load(str(ptx))
    _both(lambda: L.execute(module, spec, e["entry"], timing="h200"), monkeypatch)
