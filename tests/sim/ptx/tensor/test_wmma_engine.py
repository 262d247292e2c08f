"""wmma.load/store run by the engine (element gathers at the flat indices the access check gives)
agree with the tensor-level wmma_load / wmma_mma / wmma_store on shared memory, .col layouts,
strides and an f16 accumulator -- forms the corpus (global, .row, f32 D) does not use."""

from __future__ import annotations

import numpy as np
import pytest

import isa
import sim
from sim.ptx.tensor import encode
from sim.ptx.tensor.wmma import wmma_load, wmma_mma, wmma_store

from ..kernels import ptx

R = lambda a, n: "{" + ", ".join(f"%r{a + i}" for i in range(n)) + "}"   # noqa: E731


def _body(space: str, la: str, lb: str, stride: int) -> str:
    # A and B are 16 x stride f16 tiles (row- or column-major), B at byte 16 * stride * 2
    off = 32 * stride
    copy = []
    for j in range(8):                           # 1024 input bytes -> smem (32 threads x 8 words)
        copy.append(f"ld.global.u32 %r12, [%rd11+{128 * j}]; st.shared.u32 [%r11+{128 * j}], %r12;")
    if space == "shared":
        base_a, base_b, base_d = "[%r10]", f"[%r10+{off}]", "[%r10]"
        pre = "mov.u32 %r10, smem; shl.b32 %r11, %r1, 2; add.u32 %r11, %r10, %r11;\n" + "\n".join(copy) + \
            "\nbar.sync 0;\n"
    else:
        base_a, base_b, base_d = "[%rd2]", f"[%rd2+{off}]", "[%rd1]"
        pre = ""
    return pre + f"""
    wmma.load.a.sync.aligned.{la}.m16n16k16.{space}.f16 {R(20, 8)}, {base_a}, {stride};
    wmma.load.b.sync.aligned.{lb}.m16n16k16.{space}.f16 {R(28, 8)}, {base_b}, {stride};
    mov.b32 %r36, 0; mov.b32 %r37, 0; mov.b32 %r38, 0; mov.b32 %r39, 0x3C003C00;
    wmma.mma.sync.aligned.{la}.{lb}.m16n16k16.f16.f16 {R(40, 4)}, {R(20, 8)}, {R(28, 8)}, {R(36, 4)};
    bar.sync 0;
    wmma.store.d.sync.aligned.row.m16n16k16.{space}.f16 {base_d}, {R(40, 4)}, {stride};
    bar.sync 0;
""" + (copy_out(8) if space == "shared" else "ld.global.u32 %r2, [%rd10];")


def copy_out(words: int) -> str:
    """Words 1.. of each thread's shared row go to out directly, word 0 through %r2 (the epilogue)."""
    return "".join(f"ld.shared.u32 %r12, [%r11+{128 * j}]; st.global.u32 [%rd10+{128 * j}], %r12;\n"
                   for j in range(1, words)) + "ld.shared.u32 %r2, [%r11];"


@pytest.mark.parametrize("space", ["shared", "global"])
@pytest.mark.parametrize("la,lb", [("row", "col"), ("col", "row"), ("row", "row")])
def test_engine_wmma_matches_tensor_functions(space, la, lb):
    stride = 16 if space == "shared" else 24       # smem holds 1024 bytes: two 16 x 16 tiles
    rng = np.random.default_rng(len(space) * 10 + len(la + lb))
    data = encode(rng.standard_normal(1024), "f16").astype(np.uint16)        # 2048 bytes
    mem = data.view(np.uint8).copy()
    out = np.zeros(512, np.uint32)
    module = isa.loads(ptx(_body(space, la, lb, stride)))
    inp = data.view(np.uint32).copy()
    res = sim.run_kernel(module, "k", (1, 1, 1), (32, 1, 1), [out, inp, np.int32(0)])
    assert not res.problems, res.problems
    # the same instruction sequence on the tensor-level functions
    A = wmma_load("a", la, "f16", mem, np.array([0]), stride)
    B = wmma_load("b", lb, "f16", mem, np.array([32 * stride]), stride)
    C = np.zeros((1, 32, 4), np.uint32)
    C[0, :, 3] = 0x3C003C00
    D = wmma_mma("f16", "f16", "f16", "f16", A, B, C)
    want = (mem.copy() if space == "shared" else np.zeros(2048, np.uint8))
    wmma_store("row", "f16", want, np.array([0]), stride, D)
    got = out.view(np.uint8)[:2048]
    assert np.array_equal(got[:16 * stride * 2], want[:16 * stride * 2])
    # and D is A @ B (+ the ones of C register 3) to f16 precision
    h = data.astype(np.uint16).view(np.float16).astype(np.float64)
    a = h[:16 * stride].reshape(16, stride)[:, :16] if la == "row" else h[:16 * stride].reshape(16, stride)[:, :16].T
    hb = h[16 * stride:32 * stride].reshape(16, stride)[:, :16]
    b = hb if lb == "row" else hb.T
    d = got.view(np.float16).astype(np.float64)[:16 * stride].reshape(16, stride)[:, :16]
    cmat = np.zeros((16, 16))
    cmat[8:, 8:] = 1.0               # register 3 of an f16 C fragment: rows 8-15 of columns 8-15
    np.testing.assert_allclose(d, a @ b + cmat, rtol=1e-2, atol=2e-2)


@pytest.mark.parametrize("space,base,kind", [
    ("global", "[%rd2+1600]", "out_of_bounds"),     # the 512-byte tile runs 64 bytes past the 2048-byte input
    ("global", "[%rd2+2]", "misaligned"),           # wmma.load.a .f16 at a 2-byte offset is aligned
    ("global", "[%rd2+1]", "misaligned"),
    ("shared", "[%r10+512]", "out_of_bounds"),      # smem is 1024 bytes; a 16 x 48 tile ends at 2048
])
def test_engine_wmma_bad_tiles_are_reported(space, base, kind):
    stride = 16 if space == "global" else 48
    body = ("mov.u32 %r10, smem; " if space == "shared" else "") + \
        f"wmma.load.a.sync.aligned.row.m16n16k16.{space}.f16 {R(20, 8)}, {base}, {stride};"
    out = np.zeros(32, np.uint32)
    res = sim.run_kernel(isa.loads(ptx(body)), "k", (1, 1, 1), (32, 1, 1),
                         [out, np.zeros(512, np.uint32), np.int32(0)], check_uninitialized=False)
    kinds = {p.kind for p in res.problems}
    if base == "[%rd2+2]":
        assert not res.problems          # 2-byte elements at an even address: fine
    else:
        assert kinds == {kind}, res.problems
        assert all("wmma.load" in p.instruction for p in res.problems)


def test_emit_warps_equals_emit_of_their_lanes():
    """The warp-wide event builder (wmma accesses) gives the event emit() builds from lanes."""
    from sim.ptx import run as runmod

    module = isa.loads(ptx("mov.u32 %r2, %r1;"))
    sim.run_kernel(module, "k", (3, 1, 1), (64, 1, 1), [np.zeros(192, np.uint32), np.zeros(192, np.uint32),
                                                        np.int32(0)])
    M = next(iter(runmod._DECODED[id(module)][1].values()))
    got, want = [], []
    M.mem_listeners = M.access_listeners = [got.append]
    M.cta_base = 0
    rng = np.random.default_rng(1)
    for w in (np.array([1, 3, 4]), np.arange(M.T // 32)):
        addr = rng.integers(0, 1 << 40, (len(w), 32), dtype=np.uint64)
        M.emit_warps(4, w, space="global", kind="load", width=8, addresses=addr)
        M.mem_listeners = M.access_listeners = [want.append]
        M.emit(4, (w[:, None] * 32 + np.arange(32)).reshape(-1), space="global", kind="load", width=8,
               addresses=addr.reshape(-1))
        M.mem_listeners = M.access_listeners = [got.append]
    assert len(got) == len(want) == 2
    for g, e in zip(got, want):
        for f in ("kernel", "pc", "opcode", "unit", "space", "kind", "width", "line"):
            assert getattr(g, f) == getattr(e, f), f
        for f in ("ctas", "warps", "active", "addresses"):
            assert np.array_equal(getattr(g, f), getattr(e, f)), f
