"""Instruction semantics against the values measured on an H200 (../shared/facts/ptx.md section 10)
and against exact arithmetic."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from .kernels import f32_bits, run_body


def one(body: str, inp=None) -> int:
    out, res = run_body(body, inp, threads=32)
    assert not res.problems, res.problems
    return int(out[0])


# ------------------------------------------------------------------------------ integers
@pytest.mark.parametrize("mode,c,expected", [
    ("", 0x5410, 0x55441100),
    ("", 0x3298, None),          # sign replicate case checked separately below
    (".f4e", 1, 0x44332211),
    (".b4e", 1, 0x66770011),
    (".rc16", 1, 0x33223322),
    (".ecl", 1, 0x33221111),
])
def test_prmt_matches_h200(mode, c, expected):
    if expected is None:
        body = f"mov.u32 %r3, 0x000080F0; mov.u32 %r4, 0x77665544; prmt.b32{mode} %r2, %r3, %r4, {c};"
        assert one(body) == 0x0000FFFF
        return
    body = f"mov.u32 %r3, 0x33221100; mov.u32 %r4, 0x77665544; prmt.b32{mode} %r2, %r3, %r4, {c};"
    assert one(body) == expected


@pytest.mark.parametrize("mode", ["", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"])
def test_prmt_immediate_selector_equals_register_selector(mode):
    """The immediate-selector path (one byte gather) gives the per-lane selector path's bits."""
    rng = np.random.default_rng(len(mode))
    inp = rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    load = "ld.global.u32 %r3, [%rd11]; mul.lo.u32 %r4, %r3, -1640531535; "
    for c in [0x7771, 0x3298, 0x5410, 0xFEDC, 0x89AB, 0x0123, 1, 2, 3]:
        imm, _ = run_body(load + f"prmt.b32{mode} %r2, %r3, %r4, {c};", inp)
        reg, _ = run_body(load + f"mov.u32 %r5, {c}; prmt.b32{mode} %r2, %r3, %r4, %r5;", inp)
        assert np.array_equal(imm, reg), (mode, hex(c))
    # tt_matmul_int8's 0x7771 with an immediate b: byte 1 of a, zero-extended
    out, _ = run_body("mov.u32 %r3, 0x000080F0; prmt.b32 %r2, %r3, 0, 0x7771;")
    assert out[0] == 0x00000080


@pytest.mark.parametrize("ta,tb,expected", [("s32", "u32", 14), ("u32", "u32", 1038), ("s32", "s32", 14)])
def test_dp4a_matches_h200(ta, tb, expected):
    body = f"mov.u32 %r3, 0xFF02FF01; mov.u32 %r4, 0x01020304; dp4a.{ta}.{tb} %r2, %r3, %r4, 10;"
    assert one(body) == expected


def test_mul_hi_and_mad_wide_match_h200():
    assert np.int32(np.uint32(one("mov.u32 %r3, -7; mul.hi.s32 %r2, %r3, 1073741824;"))) == -2
    body = "mov.u32 %r3, -3; mad.wide.s32 %rd5, %r3, 1073741824, 5; shr.u64 %rd6, %rd5, 32; "
    lo = one(body + "cvt.u32.u64 %r2, %rd5;")
    hi = one(body + "cvt.u32.u64 %r2, %rd6;")
    assert np.uint64((hi << 32) | lo).view(np.int64) == -3221225467


def test_bfe_signed_and_unsigned():
    assert one("mov.u32 %r3, 0xABCD1234; bfe.u32 %r2, %r3, 4, 8;") == 0x23
    assert np.int32(np.uint32(one("mov.u32 %r3, 0x000000F0; bfe.s32 %r2, %r3, 4, 4;"))) == -1
    assert one("mov.u32 %r3, 0x00000070; bfe.s32 %r2, %r3, 4, 4;") == 7


def test_shifts_clamp_and_sign_fill():
    assert one("mov.u32 %r3, 1; shl.b32 %r2, %r3, 40;") == 0
    assert np.int32(np.uint32(one("mov.u32 %r3, -8; shr.s32 %r2, %r3, 40;"))) == -1
    assert one("mov.u32 %r3, -8; shr.u32 %r2, %r3, 28;") == 0xF


def test_div_rem_truncate_toward_zero():
    assert np.int32(np.uint32(one("mov.u32 %r3, -7; div.s32 %r2, %r3, 2;"))) == -3
    assert np.int32(np.uint32(one("mov.u32 %r3, -7; rem.s32 %r2, %r3, 2;"))) == -1


def test_setp_bool_combine_and_pair():
    body = """mov.u32 %r3, 5; setp.lt.s32 %p1, %r3, 3;      // false
              setp.gt.and.s32 %p2|%p3, %r3, 4, %p1;          // t=true: p = t & p1 = false, q = !t & p1 = false
              setp.gt.or.s32 %p4|%p5, %r3, 4, %p1;           // p = true, q = false
              selp.u32 %r4, 1, 0, %p2; selp.u32 %r5, 2, 0, %p3; selp.u32 %r6, 4, 0, %p4; selp.u32 %r7, 8, 0, %p5;
              or.b32 %r2, %r4, %r5; or.b32 %r2, %r2, %r6; or.b32 %r2, %r2, %r7;"""
    assert one(body) == 4


@pytest.mark.parametrize("cmp,expected", [("lt", 0), ("ltu", 1), ("ne", 0), ("neu", 1), ("nan", 1), ("num", 0)])
def test_setp_float_unordered(cmp, expected):
    body = f"mov.b32 %f1, 0f7FC00000; setp.{cmp}.f32 %p1, %f1, 0f3F800000; selp.u32 %r2, 1, 0, %p1;"
    assert one(body) == expected


# ------------------------------------------------------------------------------ conversions
@pytest.mark.parametrize("op,x,expected", [
    ("cvt.rni.s32.f32", 2.5, 2), ("cvt.rni.s32.f32", 3.5, 4), ("cvt.rzi.s32.f32", -2.7, -2),
    ("cvt.rzi.s32.f32", float("nan"), 0), ("cvt.rzi.s32.f32", 3e10, 2147483647),
    ("cvt.rni.u32.f32", -5.0, 0), ("cvt.rmi.s32.f32", -2.5, -3), ("cvt.rpi.s32.f32", -2.5, -2),
])
def test_cvt_float_to_int_matches_h200(op, x, expected):
    bits = int(f32_bits(x))
    assert np.int32(np.uint32(one(f"mov.b32 %f1, 0f{bits:08X}; {op} %r2, %f1;"))) == expected


def test_cvt_packing_order_and_narrow_ints():
    assert one("cvt.rn.f16x2.f32 %r2, 0f3F800000, 0f40000000;") == 0x3C004000
    assert one("cvt.rn.bf16x2.f32 %r2, 0f3F800000, 0f40000000;") == 0x3F804000
    assert one("mov.u32 %r3, 0x1ff; cvt.s8.s32 %r2, %r3;") == 0xFFFFFFFF
    assert one("mov.u32 %r3, 300; cvt.sat.u8.s32 %r2, %r3;") == 255
    assert one("mov.b32 %f1, 0f477FF000; cvt.rn.f16.f32 %rs1, %f1; cvt.u32.u16 %r2, %rs1;") == 0x7C00
    assert one("mov.b32 %f1, 0f477FF000; cvt.rn.satfinite.f16.f32 %rs1, %f1; cvt.u32.u16 %r2, %rs1;") == 0x7BFF
    assert one("mov.b32 %f1, 0f49742400; cvt.rz.f16.f32 %rs1, %f1; cvt.u32.u16 %r2, %rs1;") == 0x7BFF


def test_mov_pack_unpack_order():
    assert one("mov.u16 %rs1, 0x1111; mov.u16 %rs2, 0x2222; mov.b32 %r2, {%rs1, %rs2};") == 0x22221111
    assert one("mov.u64 %rd5, 0x1234567899AABBCC; mov.b64 {%r2, %r3}, %rd5;") == 0x99AABBCC


# ------------------------------------------------------------------------------ floating point
def test_fma_f32_rounds_once():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(32).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    # c chosen so that a*b + c cancels: double rounding would show up in many of these
    c = (-(a.astype(np.float64) * b)).astype(np.float32) + np.float32(1e-7)
    inp = np.stack([a, b, c], 1).view(np.uint32)
    body = """mul.wide.u32 %rd5, %r1, 12; add.s64 %rd6, %rd2, %rd5;
              ld.global.f32 %f1, [%rd6]; ld.global.f32 %f2, [%rd6+4]; ld.global.f32 %f3, [%rd6+8];
              fma.rn.f32 %f4, %f1, %f2, %f3; mov.b32 %r2, %f4;"""
    out, res = run_body(body, inp.reshape(-1))
    want = [np.float32(float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))))
            for x, y, z in zip(a, b, c)]
    assert out.view(np.float32).tolist() == want


def test_fma_f32_double_rounding_case():
    # a*b + c = 1 + 2^-24 + 2^-60 exactly: float64 rounds that to the tie 1 + 2^-24, and a second
    # rounding to f32 (ties to even) would give 1.0; the single rounding gives 1 + 2^-23.
    a = np.float32(1 - 2 ** -24)
    b = np.float32(1 + 2 ** -23)
    c = np.float32(2 ** -47 * (1 + 2 ** -13))
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    assert exact == 1 + Fraction(1, 2 ** 24) + Fraction(1, 2 ** 60)
    body = f"""mov.b32 %f1, 0f{int(f32_bits(a)):08X}; mov.b32 %f2, 0f{int(f32_bits(b)):08X};
               mov.b32 %f3, 0f{int(f32_bits(c)):08X}; fma.rn.f32 %f4, %f1, %f2, %f3; mov.b32 %r2, %f4;"""
    assert one(body) == 0x3F800001


def test_fma_rn_f16x2_per_half():
    import ml_dtypes  # noqa: F401
    body = """mov.b32 %r3, 0x40003C00;   // {1.0, 2.0}
              mov.b32 %r4, 0x42004200;   // {3.0, 3.0}
              mov.b32 %r5, 0x3C003C00;   // {1.0, 1.0}
              fma.rn.f16x2 %r2, %r3, %r4, %r5;"""
    out = one(body)
    lo = np.uint16(out & 0xFFFF).view(np.float16)
    hi = np.uint16(out >> 16).view(np.float16)
    assert (float(lo), float(hi)) == (4.0, 7.0)


def test_approx_functions_within_isa_error():
    xs = np.linspace(-3, 3, 32).astype(np.float32)
    out, _ = run_body("ld.global.f32 %f1, [%rd11]; ex2.approx.ftz.f32 %f2, %f1; mov.b32 %r2, %f2;", xs.view(np.uint32))
    assert np.allclose(out.view(np.float32), np.exp2(xs.astype(np.float64)), rtol=2 ** -22)
    pos = np.linspace(0.1, 10, 32).astype(np.float32)
    out, _ = run_body("ld.global.f32 %f1, [%rd11]; rsqrt.approx.f32 %f2, %f1; mov.b32 %r2, %f2;", pos.view(np.uint32))
    assert np.allclose(out.view(np.float32), 1 / np.sqrt(pos.astype(np.float64)), rtol=2 ** -22)


# ------------------------------------------------------------------------------ warp collectives
@pytest.mark.parametrize("mode,b,c,expected", [
    ("down", 1, 31, [min(i + 1, 31) if i + 1 <= 31 else i for i in range(32)]),
    ("up", 2, 4096, [i - 2 if (i % 16) >= 2 else i for i in range(32)]),        # width 16
    ("bfly", 16, 31, [i ^ 16 for i in range(32)]),
    ("idx", 3, 0x181F, [(i & ~7) | 3 for i in range(32)]),                       # width 8
    ("down", 37, 31, [min(i + 5, 31) if i + 5 <= 31 else i for i in range(32)]),  # b & 31
])
def test_shfl_sync_modes(mode, b, c, expected):
    body = f"shfl.sync.{mode}.b32 %r2|%p1, %r1, {b}, {c}, -1;"
    out, res = run_body(body)
    assert out.tolist() == expected


def test_shfl_predicate_output():
    out, _ = run_body("shfl.sync.down.b32 %r3|%p1, %r1, 4, 31, -1; selp.u32 %r2, 1, 0, %p1;")
    assert out.tolist() == [1] * 28 + [0] * 4


def test_vote_ballot_and_redux_per_warp():
    out, _ = run_body("and.b32 %r3, %r1, 1; setp.eq.u32 %p1, %r3, 1; vote.sync.ballot.b32 %r2, %p1, -1;",
                      threads=64)
    assert out.tolist() == [0xAAAAAAAA] * 64
    out, _ = run_body("redux.sync.add.u32 %r2, %r1, -1;", threads=64)
    assert out.tolist() == [sum(range(32))] * 32 + [sum(range(32, 64))] * 32
    out, _ = run_body("redux.sync.max.s32 %r2, %r1, -1;", threads=64)
    assert out.tolist() == [31] * 32 + [63] * 32


# ------------------------------------------------------------------------------ atomics
def test_atomics_run_in_thread_order():
    # every thread of 2 CTAs adds 1 to out[0] and gets the old value: thread order, CTA order
    body = """atom.global.add.u32 %r2, [%rd1], 1;
              mov.u32 %r5, %ctaid.x; mov.u32 %r6, %ntid.x; mad.lo.s32 %r7, %r5, %r6, %r1;
              mul.wide.u32 %rd5, %r7, 4; add.s64 %rd6, %rd2, %rd5; st.global.u32 [%rd6], %r2; ret;"""
    out = np.zeros(64, np.uint32)
    inp = np.zeros(64, np.uint32)
    import isa
    import sim
    from .kernels import ptx

    sim.run_kernel(isa.loads(ptx(body)), "k", (2, 1, 1), (32, 1, 1), [out, inp, np.int32(0)])
    assert inp.tolist() == list(range(64))      # old values in launch order
    assert out[0] == 64


def test_atomic_cas_and_float_add():
    body = """atom.global.cas.b32 %r3, [%rd1], 0, 7;   // only the first thread swaps
              atom.global.add.f32 %f1, [%rd1+4], 0f3F000000;
              mov.u32 %r2, 0; setp.ne.u32 %p1, %r1, 2; @%p1 ret;"""
    out, _ = run_body(body)
    assert out[0] == 7
    assert out[1].view(np.float32) == np.float32(16.0)
