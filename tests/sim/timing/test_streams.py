"""sim.timing.streams: a warp's stream, reordered for the replay, straight from the records."""

from __future__ import annotations

import numpy as np

import isa
import sim
from sim.timing.streams import WarpStreams

from tests.sim.timing.test_sm import _kernel

# each thread doubles its float of ``out`` in place: 8 instructions of test_sm's shell, then load (index 8), add, store, ret
LOADS = _kernel("""    ld.global.f32 %f1, [%rd4];
    add.f32 %f1, %f1, %f1;
    st.global.f32 [%rd4], %f1;""")


def test_a_reordered_stream_is_the_stream_at_those_positions():
    ws = WarpStreams(4)
    r = sim.run_kernel(isa.loads(LOADS), "k", 1, 128, [np.ones(128, np.float32), np.uint32(0)], listeners=[ws])
    assert r.problems == []
    full = ws.streams
    assert sorted(full) == [0, 1, 2, 3]
    s = full[1]
    assert len(s.pcs) == 12 and s.accesses[8] is not None and s.accesses[8][0].space == "g"
    ix = np.array([0, 2, 1] + list(range(3, 12)))
    assert ws.stream(1) == s
    assert ws.stream(1, ix) == s.reordered(ix)
    assert ws.stream(1, ix).pcs[1:3] == [s.pcs[2], s.pcs[1]]
    assert ws.stream(7) == ([], [])                 # a warp never seen
    assert list(ws.pcs(1)) == s.pcs
