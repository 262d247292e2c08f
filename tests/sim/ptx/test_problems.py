"""Undefined behaviour is reported precisely, never crashed on, and computed results are kept."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import isa
import sim
from tests.conftest import tool_or_skip

from .kernels import run_body


def _example(examples, name):
    m = json.loads((examples / "manifest.json").read_text())
    e = next(x for x in m["entries"] if x["name"] == name)
    launch = e["launch"]
    rng = np.random.default_rng(0)
    args = []
    for a in launch["args"]:
        if "buffer" in a:
            args.append(rng.standard_normal(a["shape"]).astype(np.float32))
        else:
            args.append(np.int32(a["value"]))
    return e, launch, args


def test_planted_out_of_bounds_write(examples):
    e, launch, args = _example(examples, "oob_write")
    x, out, n = args
    res = sim.run_kernel(examples / e["ptx"]["sm_90"], e["entry"], launch["grid"], launch["block"], args,
                         buffer_names=["x", "out", "n"])
    assert len(res.problems) == 1
    p = res.problems[0]
    bx = launch["block"][0]
    assert p.kind == "out_of_bounds"
    assert p.source == "oob_write.cu:4"
    assert p.cta[0] * bx + p.thread[0] == int(n)          # thread n writes out[n]
    assert p.buffer == f"out (param 1): 4 bytes past the end of {out.nbytes} bytes"
    assert p.instruction.startswith("st.global.f32")
    assert p.ptx_line > 0
    # every valid store still happened
    assert np.array_equal(out, 2 * x[: len(out)])


def test_planted_missing_syncthreads_is_a_race(examples):
    e, launch, args = _example(examples, "missing_sync")
    res = sim.run_kernel(examples / e["ptx"]["sm_90"], e["entry"], launch["grid"], launch["block"], args)
    kinds = {p.kind for p in res.problems}
    assert kinds == {"shared_race"}
    p = res.problems[0]
    assert p.source == "missing_sync.cu:9"
    assert "warp 1" in p.message and p.thread == (0, 0, 0)


def test_planted_uninitialised_shared_read(examples):
    e, launch, args = _example(examples, "uninit_smem")
    res = sim.run_kernel(examples / e["ptx"]["sm_90"], e["entry"], launch["grid"], launch["block"], args)
    assert {p.kind for p in res.problems} == {"uninitialized_shared"}
    assert {p.source for p in res.problems} == {"uninit_smem.cu:8"}
    first = res.problems[0]                 # s[t] for t >= 128: never written
    assert first.thread == (128, 0, 0) and first.address == 4 * 128
    assert first.buffer == "_ZZ11uninit_smemE1s: offset 512 of 1024 bytes"


BARRIER_BODY = """setp.lt.u32 %p1, %r1, 64; @%p1 bra SKIP;
                  bar.sync 0;
                  SKIP: add.s32 %r2, %r1, 1;"""


def test_barrier_not_reached_by_all_threads_is_reported_not_hung():
    out, res = run_body(BARRIER_BODY, threads=128, ctas=2)
    assert out[:128].tolist() == list(range(1, 129))
    probs = [p for p in res.problems if p.kind == "barrier_divergence"]
    assert len(probs) == 2 and {p.cta for p in probs} == {(0, 0, 0), (1, 0, 0)}
    assert "64 of 128 live threads" in probs[0].message
    assert probs[0].thread == (0, 0, 0)


def test_exited_threads_count_as_arrived():
    body = """setp.lt.u32 %p1, %r1, 64; @%p1 ret; bar.sync 0; add.s32 %r2, %r1, 1;"""
    out, res = run_body(body, threads=128)
    assert not res.problems
    assert out.tolist() == [0] * 64 + list(range(65, 129))


def test_misaligned_and_null_accesses():
    out, res = run_body("ld.global.u32 %r2, [%rd11+2];", np.zeros(64, np.uint32))
    assert [p.kind for p in res.problems][:1] == ["misaligned"]
    assert res.stats["problems_suppressed"] == 32 - 8
    out, res = run_body("mov.u64 %rd5, 0; ld.global.u32 %r2, [%rd5+16];")
    assert res.problems[0].kind == "null_pointer" and res.problems[0].address == 16


def test_shared_out_of_bounds():
    out, res = run_body("mov.u32 %r4, smem; st.shared.u32 [%r4+1024], %r1; ld.shared.u32 %r2, [%r4+1020];",
                        threads=1)
    kinds = [p.kind for p in res.problems]
    assert kinds[0] == "out_of_bounds" and "smem" in res.problems[0].buffer
    assert "uninitialized_shared" in kinds


def test_valid_warp_synchronous_code_reports_nothing():
    body = """shl.b32 %r3, %r1, 2; mov.u32 %r4, smem; add.s32 %r5, %r4, %r3; st.shared.u32 [%r5], %r1;
              bar.warp.sync -1; xor.b32 %r6, %r3, 4; add.s32 %r7, %r4, %r6; ld.shared.u32 %r2, [%r7];"""
    out, res = run_body(body, threads=64)
    assert not res.problems
    assert out.tolist() == [t ^ 1 for t in range(64)]


CU = r"""
extern "C" __global__ void half_sync(float* y) {
    __shared__ float s[128];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 64) __syncthreads();
    y[threadIdx.x] = s[threadIdx.x] + 1.0f;
}
"""


def test_nvcc_compiled_divergent_syncthreads(tmp_path):
    nvcc = tool_or_skip("nvcc")
    src = tmp_path / "half_sync.cu"
    src.write_text(CU)
    out_ptx = tmp_path / "half_sync.ptx"
    subprocess.run([nvcc, "-arch=sm_90", "-lineinfo", "-ptx", str(src), "-o", str(out_ptx)], check=True,
                   capture_output=True)
    y = np.zeros(128, np.float32)
    res = sim.run_kernel(isa.load(out_ptx), "half_sync", 1, 128, [y])
    assert [p.kind for p in res.problems] == ["barrier_divergence"]
    assert res.problems[0].source == "half_sync.cu:5"
    assert y.tolist() == [t + 1.0 for t in range(128)]


@pytest.mark.parametrize("batch", [256, 1 << 20])
def test_batching_does_not_change_results(corpus, batch):
    a = np.random.default_rng(3).standard_normal((67, 45)).astype(np.float32)
    b = np.random.default_rng(4).standard_normal((45, 53)).astype(np.float32)
    c = np.zeros((67, 53), np.float32)
    res = sim.run_kernel(corpus / "ptx/sgemm_naive.sm_90.ptx", "sgemm_naive", (3, 7, 1), (32, 8, 1),
                         [a, b, c, np.int32(67), np.int32(53), np.int32(45)], batch_threads=batch)
    assert not res.problems
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert np.allclose(c, exact, rtol=1e-5, atol=1e-5)
    assert res.stats["ctas_per_batch"] == (1 if batch == 256 else 21)
    assert res.stats["thread_instructions"] == 1114278
