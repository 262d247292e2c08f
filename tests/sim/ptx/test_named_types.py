"""Named types where positional tuples were (issue 15): the SIMT stack's entries."""

from __future__ import annotations

import numpy as np

import isa
import sim
from sim.ptx import machine
from sim.ptx.machine import StackEntry

from .kernels import ptx


def test_divergence_stack_entries_are_named(monkeypatch):
    seen = []
    real = machine.LaunchState._loop

    def spy(self, stack, *a, **kw):
        e = stack[0]
        seen.append((type(e), e.pc, e.rpc, e.mask.shape, e.threads, e.warps, e.arg))
        return real(self, stack, *a, **kw)

    monkeypatch.setattr(machine.LaunchState, "_loop", spy)
    body = """
    setp.lt.u32 %p1, %r1, 8;
    @%p1 mov.u32 %r2, 7;
"""
    out = np.zeros(64, np.uint32)
    sim.run_kernel(isa.loads(ptx(body)), "k", (1, 1, 1), (64, 1, 1), [out, np.zeros(64, np.uint32), np.int32(0)])
    assert out[:8].tolist() == [7] * 8 and out[8:].tolist() == [0] * 56
    # the launch starts with one entry: pc 0, no reconvergence pc, all 64 threads (2 warps) active
    assert seen[0] == (StackEntry, 0, -1, (64,), 64, 2, None)
