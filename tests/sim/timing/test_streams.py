"""sim.timing.streams: a warp's stream, reordered for the replay, straight from the records."""

from __future__ import annotations

import numpy as np

import isa
import sim
from sim.timing.streams import WarpStreams

LOADS = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .f32 %f<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.f32 %f1, [%rd3];
    add.f32 %f1, %f1, %f1;
    st.global.f32 [%rd3], %f1;
    ret;
}
"""


def test_a_reordered_stream_is_the_stream_at_those_positions():
    ws = WarpStreams(4)
    r = sim.run_kernel(isa.loads(LOADS), "k", 1, 128, [np.ones(128, np.float32)], listeners=[ws])
    assert r.problems == []
    full = ws.streams
    assert sorted(full) == [0, 1, 2, 3]
    s = full[1]
    assert len(s.pcs) == 8 and s.accesses[4] is not None and s.accesses[4][0].space == "g"
    ix = np.array([0, 2, 1] + list(range(3, 8)))
    assert ws.stream(1) == s
    assert ws.stream(1, ix) == s.reordered(ix)
    assert ws.stream(1, ix).pcs[1:3] == [s.pcs[2], s.pcs[1]]
    assert ws.stream(7) == ([], [])                 # a warp never seen
    assert list(ws.pcs(1)) == s.pcs
