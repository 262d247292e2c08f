"""A timing run keeps the cyclic garbage collector off while the streams listener gathers its
accesses and while the replay runs (sim.ptx.run.run_kernel): those objects live until the
prediction ends and hold no reference cycle, and full collections would scan them over and over.
A run without timing leaves the collector as it was, and the collector is on again after either."""

from __future__ import annotations

import gc

import numpy as np

import isa
import sim

from tests.sim.timing.test_sm import _kernel

# each thread stores its global index into ``out`` (test_sm's kernel shell: %rd4 its address)
PTX = _kernel("    st.global.u32 [%rd4], %r4;")


def _collector_states(timing):
    seen = []
    out = np.zeros(64, np.uint32)
    sim.run_kernel(isa.loads(PTX), "k", 1, 64, [out, np.uint32(0)], listeners=[lambda ev: seen.append(gc.isenabled())],
                   timing=timing)
    assert list(out) == list(range(64))
    return set(seen)


def test_the_collector_is_off_while_a_timing_run_gathers_its_streams():
    assert gc.isenabled()
    assert _collector_states("h200") == {False}
    assert gc.isenabled()


def test_a_run_without_timing_leaves_the_collector_on():
    assert _collector_states(None) == {True}
    assert gc.isenabled()
