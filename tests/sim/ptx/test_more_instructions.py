"""Carry chains, match.sync, float redux, vector atomics and .b128 moves, against the PTX ISA's
definitions (exact integer arithmetic, IEEE ordering) and thread-order atomics."""

from __future__ import annotations

import numpy as np
import pytest

from .kernels import f32_bits, run_body

M32 = (1 << 32) - 1


def _words(x: int, n: int) -> list[int]:
    return [(x >> (32 * k)) & M32 for k in range(n)]


# ------------------------------------------------------------------------------ carry chains (ISA 9.7.2)
def _operands(t: int, v: int) -> tuple[list[int], list[int]]:
    a = [0xFFFFFFFF, v, 0xFFFFFFFF, 5]
    b = [t + 1, (0xFFFFFFFF - v + (t & 1)) & M32, t & 2, 7]
    return a, b


CHAIN = """
    ld.global.u32 %r3, [%rd11];
    add.u32 %r4, %r1, 1;
    sub.u32 %r5, -1, %r3;
    and.b32 %r6, %r1, 1;
    add.u32 %r5, %r5, %r6;
    and.b32 %r7, %r1, 2;
    {op}.cc.u32 %r10, -1, %r4;
    {op}c.cc.u32 %r11, %r3, %r5;
    {op}c.cc.u32 %r12, -1, %r7;
    {op}c.u32 %r13, 5, 7;
    mov.u32 %r2, %r1{k};
"""


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_128_bit_add_and_sub_through_the_carry_flag(op, k):
    inp = (np.arange(32, dtype=np.uint64) * 0x9E3779B9 & M32).astype(np.uint32)
    out, res = run_body(CHAIN.format(op=op, k=k), inp)
    assert not res.problems
    for t in range(32):
        a, b = _operands(t, int(inp[t]))
        A = sum(w << (32 * i) for i, w in enumerate(a))
        B = sum(w << (32 * i) for i, w in enumerate(b))
        expect = _words((A + B) if op == "add" else (A - B), 4)[k]
        assert int(out[t]) == expect, (t, op, k)


def test_mad_carry_chain_gives_the_wide_product_plus_addend():
    # {hi, lo} = a * b + c: mad.lo.cc then madc.hi (how nvcc widens u64 multiply-adds)
    body = """
    ld.global.u32 %r3, [%rd11];
    mul.lo.u32 %r4, %r1, 0x9E3779B1;
    mad.lo.cc.u32 %r5, %r3, %r4, %r3;
    madc.hi.u32 %r6, %r3, %r4, 0;
    xor.b32 %r2, %r5, %r6;
    """
    inp = (np.arange(32, dtype=np.uint64) * 0xDEADBEEF + 0xFFFF0000 & M32).astype(np.uint32)
    out, res = run_body(body, inp)
    assert not res.problems
    for t in range(32):
        a = int(inp[t])
        b = (t * 0x9E3779B1) & M32
        p = a * b + a
        assert int(out[t]) == (p & M32) ^ (p >> 32), t


# ------------------------------------------------------------------------------ match.sync (ISA 9.7.13.10)
def test_match_any_groups_lanes_with_equal_values():
    body = """
    ld.global.u32 %r3, [%rd11];
    match.any.sync.b32 %r2, %r3, 0xffffffff;
    """
    inp = (np.arange(32, dtype=np.uint32) % 5)
    out, res = run_body(body, inp)
    assert not res.problems
    for t in range(32):
        assert int(out[t]) == sum(1 << j for j in range(32) if inp[j] == inp[t])


def test_match_all_with_predicate_and_member_mask():
    body = """
    ld.global.u32 %r3, [%rd11];
    match.all.sync.b32 %r4|%p1, %r3, 0x0000ffff;
    selp.u32 %r5, 1, 0, %p1;
    shl.b32 %r5, %r5, 31;
    or.b32 %r2, %r4, %r5;
    """
    inp = np.where(np.arange(32) < 16, 7, 9).astype(np.uint32)     # lanes 0-15 agree
    out, res = run_body(body, inp, threads=16)
    assert not res.problems and out.tolist() == [0xFFFF | 1 << 31] * 16
    inp[3] = 8
    out, _ = run_body(body, inp, threads=16)
    assert out.tolist() == [0] * 16


# ------------------------------------------------------------------------------ float redux (ISA 9.7.13.12)
@pytest.mark.parametrize("mods,expected", [
    ("min", -7.5), ("max", 6.0), ("min.abs", 0.0), ("max.abs", 7.5),
    ("min.NaN", "nan"), ("max.abs.NaN", "nan"),
])
def test_redux_float_min_max(mods, expected):
    vals = np.array([1.0, -7.5, 6.0, -0.0, 0.0, 2.5] + [3.0] * 25 + [np.nan], np.float32)
    body = f"""
    ld.global.f32 %f1, [%rd11];
    redux.sync.{mods}.f32 %f2, %f1, 0xffffffff;
    mov.b32 %r2, %f2;
    """
    out, res = run_body(body, f32_bits(vals))
    assert not res.problems
    got = out.view(np.float32)
    if expected == "nan":
        assert out.tolist() == [0x7FFFFFFF] * 32            # the canonical NaN
    else:
        assert got.tolist() == [expected] * 32


def test_redux_float_orders_negative_zero_below_positive_zero():
    vals = np.array([0.0, -0.0] + [1.0] * 30, np.float32)
    body = """
    ld.global.f32 %f1, [%rd11];
    redux.sync.min.f32 %f2, %f1, 0xffffffff;
    mov.b32 %r2, %f2;
    """
    out, _ = run_body(body, f32_bits(vals))
    assert out.tolist() == [0x80000000] * 32


# ------------------------------------------------------------------------------ vector atomics (sm_90)
def test_vector_atomic_add_f32_runs_each_element_in_thread_order():
    body = """
    mov.f32 %f1, 0f3F800000;
    mov.f32 %f2, 0f40000000;
    mov.f32 %f3, 0f40400000;
    mov.f32 %f4, 0f40800000;
    atom.global.add.v4.f32 {%f5, %f6, %f7, %f8}, [%rd2], {%f1, %f2, %f3, %f4};
    mov.b32 %r2, %f8;
    """
    inp = f32_bits(np.array([10.0, 20.0, 30.0, 40.0] + [0.0] * 28))
    out, res = run_body(body, inp)
    assert not res.problems
    assert out.view(np.float32).tolist() == [40.0 + 4.0 * t for t in range(32)]     # old .w per thread
    assert inp[:4].view(np.float32).tolist() == [42.0, 84.0, 126.0, 168.0]
    assert res.stats["global_atomic_requests"] == 1 and res.stats["global_atomic_sectors"] == 1


def test_vector_red_add_f16x2_and_v8_f16():
    body = """
    mov.b32 %r5, 0x3C003C00;
    red.global.add.noftz.v2.f16x2 [%rd2], {%r5, %r5};
    mov.b16 %rs1, 0x4000;
    red.global.add.noftz.v8.f16 [%rd2+16], {%rs1, %rs1, %rs1, %rs1, %rs1, %rs1, %rs1, %rs1};
    """
    inp = np.zeros(32, np.uint32)
    out, res = run_body(body, inp, threads=8)
    assert not res.problems
    assert inp[:2].view(np.float16).tolist() == [8.0] * 4              # 8 threads x 1.0 in each half
    assert inp[4:8].view(np.float16).tolist() == [16.0] * 8            # 8 threads x 2.0


def test_misaligned_vector_atomic_is_reported():
    body = """
    mov.f32 %f1, 0f3F800000;
    atom.global.add.v2.f32 {%f5, %f6}, [%rd2+4], {%f1, %f1};
    """
    _, res = run_body(body, np.zeros(32, np.uint32))
    assert res.problems and res.problems[0].kind == "misaligned"


# ------------------------------------------------------------------------------ .b128 (PTX 8.3, sm_70+)
def test_b128_load_store_and_mov_pack_unpack():
    # each thread loads 16 bytes of `in`, swaps the 64-bit halves through mov.b128 pack/unpack,
    # stores them back 16 bytes further on, and returns the third 32-bit word it loaded
    body = """
    .reg .b128 %rq<3>;
    shl.b32 %r3, %r1, 5;
    cvt.u64.u32 %rd5, %r3;
    add.s64 %rd6, %rd2, %rd5;
    ld.global.b128 %rq1, [%rd6];
    mov.b128 {%rd7, %rd8}, %rq1;
    mov.b128 %rq2, {%rd8, %rd7};
    st.global.b128 [%rd6+16], %rq2;
    mov.b128 {%r4, %r5, %r6, %r7}, %rq1;
    mov.u32 %r2, %r6;
    """
    inp = np.arange(8 * 32, dtype=np.uint32)
    before = inp.copy()
    out, res = run_body(body, inp, threads=8)
    assert not res.problems
    w = before[:64].reshape(8, 8)
    assert out[:8].tolist() == w[:, 2].tolist()
    got = inp[:64].reshape(8, 8)
    assert got[:, 4:8].tolist() == np.concatenate([w[:, 2:4], w[:, 0:2]], axis=1).tolist()
    assert got[:, 0:4].tolist() == w[:, 0:4].tolist()


def test_misaligned_b128_load_is_reported():
    body = """
    .reg .b128 %rq<2>;
    ld.global.b128 %rq1, [%rd2+8];
    """
    _, res = run_body(body, np.zeros(64, np.uint32), threads=1)
    assert [p.kind for p in res.problems] == ["misaligned"]
