"""Tiny PTX kernels for simulator tests: a body between a fixed prologue and epilogue.

The prologue gives each thread ``%r1 = tid.x``, ``%rd10 = &out[tid]`` (4-byte elements),
``%rd11 = &in[tid]``; the body computes ``%r2`` (or writes memory itself); the epilogue stores
``%r2`` to ``out[tid]``.
"""

from __future__ import annotations

import numpy as np

import isa
import sim

PROLOGUE = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_out, .param .u64 k_in, .param .u32 k_n)
{
    .reg .pred %p<16>;
    .reg .b16 %rs<16>;
    .reg .b32 %r<64>;
    .reg .f32 %f<32>;
    .reg .b64 %rd<32>;
    .reg .f64 %fd<8>;
    .shared .align 16 .b8 smem[1024];
    ld.param.u64 %rd1, [k_out];
    ld.param.u64 %rd2, [k_in];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd10, %rd1, %rd3;
    add.s64 %rd11, %rd2, %rd3;
    mov.u32 %r2, 0;
"""

EPILOGUE = """
    st.global.u32 [%rd10], %r2;
    ret;
}
"""


def ptx(body: str) -> str:
    return PROLOGUE + body + EPILOGUE


def run_body(body: str, inp=None, threads: int = 32, ctas: int = 1, n: int = 0, **kw):
    """Run ``body``; returns (out as uint32 array, RunResult)."""
    total = threads * ctas
    out = np.zeros(total, np.uint32)
    if inp is None:
        inp = np.zeros(total, np.uint32)
    inp = np.ascontiguousarray(inp)
    module = isa.loads(ptx(body))
    res = sim.run_kernel(module, "k", (ctas, 1, 1), (threads, 1, 1), [out, inp, np.int32(n)], **kw)
    return out, res


def f32_bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)
