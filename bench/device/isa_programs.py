"""Writes the hand-written PTX ISA test programs of ``examples/ptx/isa/`` and their input.

Every program is one kernel ``k(.param .u64 out, .param .u64 in)`` launched as one CTA of 32
threads; thread ``t`` reads the input words ``in[t + 32*j]`` (or the fragment regions below) and
writes ``words`` u32 results to ``out[t*words .. t*words+words-1]``.  The H200's outputs for the
same programs and input (``bench/device/isa_truth.py``) are kept in ``examples/ptx/isa/h200.npz``;
``tests/sim/ptx/test_isa_examples.py`` runs every program in the simulator against them.

Input words (``input.npy``, 5120 x u32):

* 0..95: interesting u32 values (0, 1, sign bits, float specials, shift counts, ...), 96..1023 random
* 1024..2047: f16x2 pairs of small integers (-4..4);  2048..3071: the same as bf16x2
* 3072..3583: f32 small integers (exact in tf32);      3584..4095: f64 small integers (256 doubles)
* 4096..4607: e4m3 bytes of small integers;           4608..5119: e5m2 bytes of small integers

Run ``python bench/device/isa_programs.py`` to regenerate (deterministic).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "examples" / "ptx" / "isa"

INTERESTING = [
    0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
    0xFFFFFFFF, 0xFFFFFFFE, 31, 32, 33, 63, 64, 65, 0x12345678, 0x87654321, 0x627ADF75, 0x864CCEF5,
    0x3F800000, 0xBF800000, 0x7FC00000, 0x7F800000, 0xFF800000, 0x00000001, 0x40490FDB, 0xC0000000,
    0x3C003C00, 0x7E00BC00, 0xFC007C00, 0x00010000, 0x80008000, 0x7FFF8000, 0xFF00FF00, 0x00FF00FF,
    0x80808080, 0x7F7F7F7F, 0x01020304, 0xF0E0D0C0, 0xDEADBEEF, 0x0000FFFF, 0xFFFF0000, 0x000000FF,
    0x00000100, 0x3F8000FF, 0xFFFFFF80, 0xFFFF8000, 0x00007FFF, 0x0000007F, 0x5, 0x1F, 0x20, 0x21,
    0xFFFFFFE0, 0x40000000, 0x00800000, 0x007FFFFF,
]


def make_input() -> np.ndarray:
    rng = np.random.default_rng(20261202)
    words = np.zeros(5120, np.uint32)
    words[:96] = rng.integers(0, 1 << 32, 96, dtype=np.uint64).astype(np.uint32)
    words[:len(INTERESTING)] = np.array(INTERESTING, np.uint64).astype(np.uint32)
    words[96:1024] = rng.integers(0, 1 << 32, 928, dtype=np.uint64).astype(np.uint32)
    small = rng.integers(-4, 5, 2048).astype(np.float32)
    words[1024:2048] = small.astype(np.float16).view(np.uint32)
    import ml_dtypes

    small = rng.integers(-4, 5, 2048).astype(np.float32)
    words[2048:3072] = small.astype(ml_dtypes.bfloat16).view(np.uint32)
    words[3072:3584] = rng.integers(-4, 5, 512).astype(np.float32).view(np.uint32)
    words[3584:4096] = rng.integers(-4, 5, 256).astype(np.float64).view(np.uint32)
    words[4096:4608] = rng.integers(-4, 5, 2048).astype(np.float32).astype(ml_dtypes.float8_e4m3fn).view(np.uint32)
    words[4608:5120] = rng.integers(-4, 5, 2048).astype(np.float32).astype(ml_dtypes.float8_e5m2).view(np.uint32)
    return words


REGS = """
    .reg .pred %p<16>;
    .reg .b16 %h<32>;
    .reg .b32 %r<128>;
    .reg .b64 %rd<32>;
    .reg .f32 %f<32>;
    .reg .f64 %fd<64>;
"""

PRE = """    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd3, %r0, {rowbytes};
    add.s64 %rd4, %rd1, %rd3;
    mul.wide.u32 %rd3, %r0, 4;
    add.s64 %rd6, %rd2, %rd3;
"""


def kernel(words: int, body: str, target: str = "sm_90a", head: str = "", what: str = "") -> str:
    return (f"// {what}\n// kernlens-isa: threads=32 words={words}\n.version 8.7\n.target {target}\n"
            f".address_size 64\n{head}\n.visible .entry k(.param .u64 out, .param .u64 in)\n{{\n{REGS}"
            + PRE.format(rowbytes=4 * words) + body + "    ret;\n}\n")


def ld(reg: str, j: int) -> str:
    """``reg = in[tid + 32*j]``"""
    return f"    ld.global.u32 {reg}, [%rd6+{128 * j}];\n"


def st(reg: str, k: int, t: str = "u32") -> str:
    return f"    st.global.{t} [%rd4+{4 * k}], {reg};\n"


def stores(regs, t="u32") -> str:
    return "".join(st(r, k, t) for k, r in enumerate(regs))


# ------------------------------------------------------------------------------------------ scalar
def carry() -> str:
    b = ld("%r1", 0) + ld("%r2", 1) + ld("%r3", 2)
    lines = [
        "sub.cc.u32 %r10, %r1, %r2;\n    addc.u32 %r40, 0, 0;",
        "add.cc.u32 %r10, %r1, %r2;\n    addc.u32 %r41, 0, 0;",
        "sub.cc.u32 %r10, %r1, %r2;\n    subc.u32 %r42, 0, 0;",
        "add.cc.u32 %r10, %r1, %r2;\n    subc.u32 %r43, 0, 0;",
        "sub.cc.u32 %r10, %r1, %r2;\n    subc.cc.u32 %r11, %r3, %r1;\n    addc.u32 %r44, 0, 0;",
        "sub.cc.u32 %r10, %r1, %r2;\n    subc.u32 %r45, %r3, %r1;",
        "add.cc.u32 %r10, %r1, %r2;\n    addc.cc.u32 %r11, %r3, %r1;\n    subc.u32 %r46, 0, 0;",
        "mad.lo.cc.u32 %r10, %r1, %r2, %r3;\n    addc.u32 %r47, 0, 0;",
        "mad.lo.cc.u32 %r10, %r1, %r2, %r3;\n    madc.hi.cc.u32 %r48, %r1, %r2, 0;\n    addc.u32 %r49, 0, 0;",
        "mov.b64 %rd10, {%r1, %r2};\n    mov.b64 %rd11, {%r3, %r1};\n    sub.cc.u64 %rd12, %rd10, %rd11;\n"
        "    addc.u32 %r50, 0, 0;",
        "sub.cc.u32 %r10, 0x627ADF75, 0x864CCEF5;\n    addc.u32 %r51, 0, 0;",
        "add.cc.u32 %r10, %r1, %r2;\n    subc.cc.u32 %r11, %r1, %r3;\n    addc.u32 %r52, 0, 0;",
        "sub.cc.s32 %r10, %r1, %r2;\n    addc.u32 %r53, 0, 0;",
        "sub.cc.u32 %r10, %r1, %r2;\n    madc.lo.cc.u32 %r54, %r1, %r2, %r3;\n    addc.u32 %r55, 0, 0;",
        "sub.cc.u32 %r10, %r1, %r2;\n    addc.cc.u32 %r56, %r3, %r1;\n    addc.u32 %r57, 0, 0;",
    ]
    b += "".join("    " + x + "\n" for x in lines)
    return kernel(18, b + stores([f"%r{k}" for k in range(40, 58)]) + "",
                  what="carry flag CC.CF after add/sub/mad .cc and addc/subc/madc chains")


def constaddr() -> str:
    head = """.global .align 8 .u32 gx[2] = {11, 12};
.global .align 4 .u32 gy = 13;
.const .align 8 .u32 cx[2] = {21, 22};
.const .align 4 .u32 cy = 23;
.const .align 8 .u64 pc[3] = {cx, cy, cy+4};
.const .align 8 .u64 pg[2] = {gx, gy};
.const .align 8 .u64 pgen[2] = {generic(gx), generic(cy)};
"""
    b = """    ld.const.u64 %rd10, [pc];
    ld.const.u64 %rd11, [pc+8];
    ld.const.u64 %rd12, [pc+16];
    mov.u64 %rd13, cx;
    mov.u64 %rd14, cy;
    cvt.u32.u64 %r10, %rd10;
    cvt.u32.u64 %r11, %rd11;
    cvt.u32.u64 %r12, %rd12;
    cvt.u32.u64 %r13, %rd13;
    cvt.u32.u64 %r14, %rd14;
    ld.const.u32 %r15, [%rd11];
    ld.const.u64 %rd15, [pg];
    ld.const.u64 %rd16, [pg+8];
    mov.u64 %rd17, gx;
    mov.u64 %rd18, gy;
    sub.s64 %rd19, %rd16, %rd18;
    cvt.u32.u64 %r16, %rd19;
    sub.s64 %rd19, %rd15, %rd17;
    cvt.u32.u64 %r17, %rd19;
    ld.global.u32 %r18, [%rd16];
    ld.const.u64 %rd20, [pgen];
    cvta.global.u64 %rd21, %rd17;
    sub.s64 %rd19, %rd20, %rd21;
    cvt.u32.u64 %r19, %rd19;
    ld.const.u64 %rd22, [pgen+8];
    ld.u32 %r20, [%rd22];
    cvt.u32.u64 %r21, %rd10;
    cvt.u32.u64 %r22, %rd10;
    shr.u64 %rd23, %rd10, 32;
    cvt.u32.u64 %r21, %rd23;
"""
    return kernel(12, b + stores([f"%r{k}" for k in range(10, 22)]), head=head,
                  what=".const initialisers holding variable addresses (own state space), generic() ones")


def setops() -> str:
    b = ld("%r1", 0) + ld("%r2", 1) + ld("%r3", 2)
    b += """    mov.b32 %f1, %r1;
    mov.b32 %f2, %r2;
    mov.b32 {%h1, %h2}, %r1;
    mov.b32 {%h3, %h4}, %r2;
    setp.ne.u32 %p1, %r3, 0;
    set.lt.u32.f32 %r10, %f1, %f2;
    set.lt.f32.f32 %f10, %f1, %f2;
    mov.b32 %r11, %f10;
    set.equ.u32.f32 %r12, %f1, %f2;
    set.nan.s32.f32 %r13, %f1, %f2;
    set.ne.u32.b32 %r14, %r1, %r2;
    set.gt.u32.u32 %r15, %r1, %r2;
    set.lt.s32.s32 %r16, %r1, %r2;
    set.hi.u32.u32 %r17, %r1, %r2;
    set.ge.and.u32.f32 %r18, %f1, %f2, %p1;
    set.lt.or.f32.s32 %f11, %r1, %r2, !%p1;
    mov.b32 %r19, %f11;
    set.lt.xor.s32.u32 %r20, %r1, %r2, %p1;
    set.lt.f16.f16 %h10, %h1, %h3;
    cvt.u32.u16 %r21, %h10;
    set.ltu.f16x2.f16x2 %r22, %r1, %r2;
    set.lt.u32.f16x2 %r23, %r1, %r2;
    set.num.u32.f16 %r24, %h1, %h3;
    set.gt.bf16x2.bf16x2 %r25, %r1, %r2;
    set.le.and.u32.f16x2 %r26, %r1, %r2, %p1;
    set.leu.ftz.u32.f32 %r27, %f1, %f2;
    mov.b64 %rd10, {%r1, %r2};
    mov.b64 %rd11, {%r2, %r3};
    set.lt.u32.s64 %r28, %rd10, %rd11;
    set.neu.f16.f16 %h11, %h2, %h4;
    cvt.u32.u16 %r29, %h11;
"""
    return kernel(20, b + stores([f"%r{k}" for k in range(10, 30)]), what="set: every result type, bool ops, NaN")


def bits() -> str:
    b = ld("%r1", 0) + ld("%r2", 1) + ld("%r3", 2)
    b += """    bfind.u32 %r10, %r1;
    bfind.s32 %r11, %r1;
    bfind.shiftamt.u32 %r12, %r1;
    bfind.shiftamt.s32 %r13, %r1;
    mov.b64 %rd10, {%r2, %r1};
    bfind.u64 %r14, %rd10;
    bfind.s64 %r15, %rd10;
    bfind.shiftamt.u64 %r16, %rd10;
    and.b32 %r30, %r2, 63;
    and.b32 %r31, %r3, 63;
    bmsk.clamp.b32 %r17, %r30, %r31;
    bmsk.wrap.b32 %r18, %r30, %r31;
    bmsk.clamp.b32 %r19, %r2, %r3;
    bmsk.wrap.b32 %r20, %r2, %r3;
    szext.clamp.s32 %r21, %r1, %r31;
    szext.wrap.u32 %r22, %r1, %r31;
    szext.wrap.s32 %r23, %r1, %r2;
    and.b32 %r32, %r3, 31;
    fns.b32 %r24, %r1, %r32, 3;
    fns.b32 %r25, %r1, 0, -2;
    fns.b32 %r26, %r2, %r32, %r31;
    fns.b32 %r27, %r1, 0xFFFFFFFF, 1;
"""
    return kernel(18, b + stores([f"%r{k}" for k in range(10, 28)]), what="bfind (.shiftamt), bmsk, szext, fns")


def cvtpack() -> str:
    b = ld("%r1", 0) + ld("%r2", 1) + ld("%r3", 2)
    b += """    cvt.pack.sat.u8.s32.b32 %r10, %r1, %r2, %r3;
    cvt.pack.sat.s8.s32.b32 %r11, %r1, %r2, %r3;
    cvt.pack.sat.u16.s32 %r12, %r1, %r2;
    cvt.pack.sat.s16.s32 %r13, %r1, %r2;
    cvt.pack.sat.u4.s32.b32 %r14, %r1, %r2, %r3;
    cvt.pack.sat.s4.s32.b32 %r15, %r1, %r2, %r3;
    cvt.pack.sat.u2.s32.b32 %r16, %r1, %r2, %r3;
    cvt.pack.sat.s2.s32.b32 %r17, %r1, %r2, %r3;
    and.b32 %r30, %r1, 15;
    sub.s32 %r30, %r30, 8;
    and.b32 %r31, %r2, 511;
    sub.s32 %r31, %r31, 256;
    cvt.pack.sat.u8.s32.b32 %r18, %r30, %r31, %r3;
    cvt.pack.sat.s8.s32.b32 %r19, %r31, %r30, %r3;
    cvt.pack.sat.s4.s32.b32 %r20, %r30, %r31, %r3;
    cvt.pack.sat.u2.s32.b32 %r21, %r30, %r30, %r3;
"""
    return kernel(12, b + stores([f"%r{k}" for k in range(10, 22)], "u32"), what="cvt.pack.sat: every type")


def video() -> str:
    b = ld("%r1", 0) + ld("%r2", 1) + ld("%r3", 2)
    ops = """    vadd.u32.u32.u32 %r10, %r1, %r2;
    vadd.s32.u32.s32.sat %r11, %r1.b0, %r2.h0;
    vadd.u32.s32.s32.sat %r12, %r1, %r2;
    vadd.s32.s32.s32.sat %r13, %r1, %r2;
    vsub.s32.s32.u32.sat %r14, %r1.h1, %r2.h1;
    vsub.u32.u32.u32.sat %r15, %r1, %r2;
    vabsdiff.s32.s32.s32.sat %r16, %r1.b0, %r2.b2;
    vabsdiff.u32.u32.u32 %r17, %r1, %r2;
    vmin.s32.s32.s32.sat.add %r18, %r1, %r2, %r3;
    vmax.u32.s32.u32.max %r19, %r1.b3, %r2.b1, %r3;
    vmin.s32.u32.s32.min %r20, %r1.h0, %r2.b1, %r3;
    vadd.s32.s32.s32.sat.add %r21, %r1, %r2, %r3;
    vadd.u32.u32.u32.sat %r22.h0, %r1, %r2, %r3;
    vsub.s32.s32.s32.sat %r23.b2, %r1.b1, %r2.b0, %r3;
    vabsdiff.s32.s32.s32.sat %r24.h1, %r1.b0, %r2.b2, %r3;
    vshl.u32.u32.u32.clamp %r25, %r1, %r2;
    vshl.s32.s32.u32.wrap %r26, %r1, %r2;
    vshr.s32.s32.u32.clamp %r27, %r1, %r2;
    vshr.u32.u32.u32.wrap %r28, %r1, %r2.h1;
    vshl.u32.u32.u32.sat.clamp %r29, %r1.b0, %r2.b0;
    vshr.s32.s32.u32.wrap.add %r30, %r1, %r2.b0, %r3;
    vshl.s32.u32.u32.clamp %r31.b1, %r1.h0, %r2.b0, %r3;
    vset.u32.u32.lt %r32, %r1, %r2;
    vset.s32.u32.lt %r33, %r1, %r2;
    vset.s32.s32.ge %r34, %r1.b0, %r2.b1;
    vset.u32.u32.ne.add %r35, %r1, %r2.h1, %r3;
    vset.s32.s32.gt.max %r36, %r1, %r2, %r3;
    vset.u32.u32.eq %r37.b1, %r1.b0, %r2.b0, %r3;
    vmad.u32.u32.u32 %r38, %r1.h0, %r2.h0, %r3;
    vmad.s32.s32.s32.sat %r39, %r1, %r2, %r3;
    vmad.s32.s32.s32.shr7 %r40, %r1.b0, %r2.b1, %r3;
    vmad.u32.u32.u32.shr15 %r41, %r1.h0, %r2.h1, %r3;
    vmad.u32.u32.u32.po %r42, %r1.b0, %r2.b1, %r3;
    vmad.s32.s32.s32.sat.shr7 %r43, -%r1, %r2.b1, %r3;
    vmad.s32.u32.u32 %r44, %r1, %r2, -%r3;
    vmad.s32.s32.u32.sat %r45, %r1.h1, %r2, %r3;
    vadd2.u32.u32.u32 %r46, %r1, %r2, %r3;
    vadd2.s32.s32.s32.sat %r47, %r1, %r2, %r3;
    vsub2.s32.s32.s32.add %r48, %r1, %r2, %r3;
    vavrg2.u32.u32.u32 %r49, %r1, %r2, %r3;
    vavrg2.s32.s32.s32 %r50, %r1, %r2, %r3;
    vabsdiff2.u32.u32.u32.sat %r51, %r1, %r2, %r3;
    vmin2.s32.s32.s32 %r52, %r1, %r2, %r3;
    vmax2.u32.u32.u32.add %r53, %r1, %r2, %r3;
    vadd4.u32.u32.u32 %r54, %r1, %r2, %r3;
    vadd4.s32.s32.s32.sat %r55, %r1, %r2, %r3;
    vsub4.u32.u32.u32.sat %r56, %r1, %r2, %r3;
    vavrg4.u32.u32.u32 %r57, %r1, %r2, %r3;
    vavrg4.s32.s32.s32.add %r58, %r1, %r2, %r3;
    vabsdiff4.s32.s32.s32 %r59, %r1, %r2, %r3;
    vmin4.u32.u32.u32.add %r60, %r1, %r2, %r3;
    vmax4.s32.s32.s32 %r61, %r1, %r2, %r3;
    vset2.u32.u32.lt %r62, %r1, %r2, %r3;
    vset2.s32.s32.ne.add %r63, %r1, %r2, %r3;
    vset4.u32.u32.gt %r64, %r1, %r2, %r3;
    vset4.s32.s32.le.add %r65, %r1, %r2, %r3;
    vadd2.u32.u32.u32 %r66.h1, %r1.h10, %r2.h00, %r3;
    vadd4.u32.u32.u32 %r67.b20, %r1.b3210, %r2.b7654, %r3;
    vmax4.s32.s32.s32 %r68, %r1.b0123, %r2.b4567, %r3;
    vset2.u32.u32.ge %r69.h0, %r1.h32, %r2.h01, %r3;
"""
    # .b values must be written out: every destination register is mov'd first for merges
    pre = "".join(f"    mov.u32 %r{k}, %r3;\n" for k in range(10, 70))
    return kernel(60, b + pre + ops + stores([f"%r{k}" for k in range(10, 70)]),
                  what="scalar and SIMD video instructions: selectors, .sat, secondary ops, merges")


# ------------------------------------------------------------------------------------------ tensor
REGION = {"f16": 1024, "bf16": 2048, "tf32": 3072, "f32": 3072, "f64": 3584, "e4m3": 4096, "e5m2": 4608,
          "s8": 96, "u8": 96, "s4": 96, "u4": 96, "b1": 96, "s32": 3072}


SIZE = {"f16": 1024, "bf16": 1024, "tf32": 512, "f32": 512, "f64": 256, "e4m3": 512, "e5m2": 512,
        "s8": 928, "u8": 928, "s4": 928, "u4": 928, "b1": 928, "s32": 928}


def mma_program(opcode: str, na: int, nb: int, nc: int, nd: int, ta: str, tb: str, tc: str, td: str,
                extra: str = "", what: str = "") -> str:
    """Registers loaded raw from the type regions (lane t, register j of operand X: element
    ``OFF[X] + t*n + j`` of the region of its type), then the instruction, then D stored raw."""
    body = ""
    regs = {}
    nreg = {"r": 10, "fd": 2}
    for name, n, t in (("a", na, ta), ("b", nb, tb), ("c", nc, tc)):
        t = "s32" if t == "s32" else t
        f64 = t == "f64"
        esize = 8 if f64 else 4
        size = SIZE[t]
        off = {"a": 0, "b": size - 32 * n, "c": (size - 32 * n) // 2}[name]
        kind = "fd" if f64 else "r"
        rs = [f"%{kind}{nreg[kind] + i}" for i in range(n)]
        nreg[kind] += n
        body += (f"    mul.wide.u32 %rd8, %r0, {esize * n};\n    add.s64 %rd9, %rd2, %rd8;\n")
        for j, r in enumerate(rs):
            body += f"    ld.global.{'f64' if f64 else 'b32'} {r}, [%rd9+{4 * REGION[t] + esize * (off + j)}];\n"
        regs[name] = rs
    dr = [f"%fd{20 + i}" for i in range(nd)] if td == "f64" else [f"%r{80 + i}" for i in range(nd)]
    body += (f"    {opcode} {{{', '.join(dr)}}}, {{{', '.join(regs['a'])}}}, {{{', '.join(regs['b'])}}}, "
             f"{{{', '.join(regs['c'])}}}{extra};\n")
    if td == "f64":
        body += "".join(f"    st.global.f64 [%rd4+{8 * k}], {r};\n" for k, r in enumerate(dr))
    else:
        body += stores(dr, "b32")
    return kernel(nd * (2 if td == "f64" else 1), body, what=what or opcode)


MMA = {
    # name: (opcode, na, nb, nc, nd, ta, tb, tc, td, extra)
    "mma_m8n8k4_f16_f32": ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", 2, 2, 8, 8, "f16", "f16", "f32", "f32", ""),
    "mma_m8n8k4_f16_f16": ("mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16", 2, 2, 4, 4, "f16", "f16", "f16", "f16", ""),
    "mma_m16n8k8_tf32": ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 4, 2, 4, 4, "tf32", "tf32", "f32", "f32", ""),
    "mma_m16n8k8_bf16": ("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 2, 1, 4, 4, "bf16", "bf16", "f32", "f32", ""),
    "mma_m16n8k64_s4": ("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", 4, 2, 4, 4, "s4", "s4", "s32", "s32", ""),
    "mma_m16n8k32_u4": ("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u4.u4.s32", 2, 1, 4, 4, "u4", "u4", "s32", "s32", ""),
    "mma_m8n8k32_s4": ("mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32", 1, 1, 2, 2, "s4", "s4", "s32", "s32", ""),
    "mma_m8n8k16_s8": ("mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32", 1, 1, 2, 2, "s8", "u8", "s32", "s32", ""),
    "mma_m8n8k128_b1": ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc", 1, 1, 2, 2, "b1", "b1", "s32", "s32", ""),
    "mma_m16n8k128_b1": ("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc", 2, 1, 4, 4, "b1", "b1", "s32", "s32", ""),
    "mma_m16n8k256_b1": ("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc", 4, 2, 4, 4, "b1", "b1", "s32", "s32", ""),
    "mma_m8n8k4_f64": ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 1, 1, 2, 2, "f64", "f64", "f64", "f64", ""),
    "mma_m16n8k4_f64": ("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64", 2, 1, 4, 4, "f64", "f64", "f64", "f64", ""),
    "mma_m16n8k8_f64": ("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64", 4, 2, 4, 4, "f64", "f64", "f64", "f64", ""),
    "mma_m16n8k16_f64": ("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64", 8, 4, 4, 4, "f64", "f64", "f64", "f64", ""),
    "mma_m16n8k32_e4m3_e5m2": ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", 4, 2, 4, 4, "e4m3", "e5m2", "f32", "f32", ""),
    "mma_m16n8k16_e4m3_f16": ("mma.sync.aligned.m16n8k16.row.col.f16.e4m3.e4m3.f16", 2, 1, 2, 2, "e4m3", "e4m3", "f16", "f16", ""),
    "mma_sp_m16n8k16_f16": ("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 2, 2, 4, 4, "f16", "f16", "f32", "f32", ", %r120, 0x0"),
    "mma_sp_m16n8k32_f16": ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 4, 4, 4, 4, "f16", "f16", "f32", "f32", ", %r120, 0x0"),
    "mma_sp_m16n8k32_s8": ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 2, 2, 4, 4, "s8", "s8", "s32", "s32", ", %r120, 0x0"),
    "mma_sp_m16n8k16_f16_sel1": ("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 2, 2, 4, 4, "f16", "f16", "f32", "f32", ", %r120, 0x1"),
    # per-lane metadata (SP_META_LANES): which lanes of a group supply which rows/columns
    "mma_spl_m16n8k16_f16_sel2": ("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 2, 2, 4, 4, "f16", "f16", "f32", "f32", ", %r120, 0x2"),
    "mma_spl_m16n8k32_f16_sel1": ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 4, 4, 4, 4, "f16", "f16", "f32", "f32", ", %r120, 0x1"),
    "mma_spl_m16n8k32_bf16": ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", 4, 4, 4, 4, "bf16", "bf16", "f32", "f32", ", %r120, 0x0"),
    "mma_spl_m16n8k32_s8_sel1": ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32", 2, 2, 4, 4, "u8", "s8", "s32", "s32", ", %r120, 0x1"),
    "mma_spl_m16n8k8_tf32_sel3": ("mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 2, 2, 4, 4, "tf32", "tf32", "f32", "f32", ", %r120, 0x3"),
    "mma_spl_m16n8k16_tf32_sel1": ("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32", 4, 4, 4, 4, "tf32", "tf32", "f32", "f32", ", %r120, 0x1"),
    "mma_spl_m16n8k64_s8": ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s8.u8.s32", 4, 4, 4, 4, "s8", "u8", "s32", "s32", ", %r120, 0x0"),
    "mma_spl_m16n8k64_s4_sel1": ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", 2, 2, 4, 4, "s4", "s4", "s32", "s32", ", %r120, 0x1"),
    "mma_spl_m16n8k128_u4": ("mma.sp::ordered_metadata.sync.aligned.m16n8k128.row.col.satfinite.s32.u4.u4.s32", 4, 4, 4, 4, "u4", "u4", "s32", "s32", ", %r120, 0x0"),
    "mma_spl_m16n8k64_e4m3_f32": ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32", 4, 4, 4, 4, "e4m3", "e5m2", "f32", "f32", ", %r120, 0x0"),
    # (.f16 accumulators with fp8 sparse A: ptxas 13 refuses them for sm_90a)
    "mma_spl_m16n8k64_e5m2_f32": ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e5m2.e4m3.f32", 4, 4, 4, 4, "e5m2", "e4m3", "f32", "f32", ", %r120, 0x0"),
}

# sparse metadata: every lane gets the same valid pattern of 2-of-4 indices per group (0b1110_0100 ...)
SP_META = "    mov.u32 %r120, 0x4E4E4E4E;\n"
# ... or (the mma_spl_ programs) a different word in each lane of a group, every nibble a valid
# ordered pair (0x4 0x8 0x9 0xC 0xD 0xE), lane%4 = 0..3 -> SP_LANE_WORDS[lane%4]
SP_LANE_WORDS = (0x4E8C9DE4, 0xD98EC4E8, 0x8CE449DE, 0xE4D8C98E)
SP_META_LANES = (f"    and.b32 %r121, %r0, 3;\n    mov.u32 %r120, 0x{SP_LANE_WORDS[0]:08X};\n"
                 + "".join(f"    setp.eq.u32 %p{i}, %r121, {i};\n    selp.b32 %r120, 0x{w:08X}, %r120, %p{i};\n"
                           for i, w in enumerate(SP_LANE_WORDS) if i))

WMMA = {
    # name: (shape, ta, tc, la, lb, stride elements a, b, c) via wmma.load/mma/store from memory regions
    "wmma_m16n16k16_bf16": ("m16n16k16", "bf16", "f32", 4, 4, 8),
    "wmma_m16n16k8_tf32": ("m16n16k8", "tf32", "f32", 4, 4, 8),
    "wmma_m16n16k16_s8": ("m16n16k16", "s8", "s32", 2, 2, 8),
    "wmma_m16n16k16_u8": ("m16n16k16", "u8", "s32", 2, 2, 8),
    "wmma_m32n8k16_f16": ("m32n8k16", "f16", "f32", 8, 8, 8),
    "wmma_m8n32k16_bf16": ("m8n32k16", "bf16", "f32", 2, 8, 8),
    "wmma_m8n8k32_s4": ("m8n8k32", "s4", "s32", 1, 1, 2),
    "wmma_m8n8k32_u4": ("m8n8k32", "u4", "s32", 1, 1, 2),
    "wmma_m8n8k128_b1_xor": ("m8n8k128", "b1", "s32", 1, 1, 2),
    "wmma_m8n8k128_b1_and": ("m8n8k128", "b1", "s32", 1, 1, 2),
    "wmma_m8n8k4_f64": ("m8n8k4", "f64", "f64", 1, 1, 2),
}


def _dims(shape):
    import re

    m, n, k = (int(x) for x in re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape).groups())
    return m, n, k


def wmma_program(name: str) -> str:
    """A (row-major), B (column-major) and C (row-major) loaded from memory with wmma.load, the
    product stored with wmma.store.d (row-major, flat at ``out[0..M*N)``), then the A fragment's
    registers of lane t at ``out[M*N + t*R + j]`` (the layout, which the ISA leaves open)."""
    shape, t, tc, na, nb, nc = WMMA[name]
    m, n, k = _dims(shape)
    ebits = {"bf16": 16, "f16": 16, "tf32": 32, "s8": 8, "u8": 8, "s4": 4, "u4": 4, "b1": 1, "f64": 64}[t]
    abytes = m * k * ebits // 8
    region = 4 * REGION[t]
    cregion = {"f32": 4 * 3072 + 1024, "s32": 4 * 512, "f64": 4 * 3584 + 512}[tc]
    fa = "fd" if t == "f64" else "r"
    ra = [f"%{fa}{i}" for i in range(2, 2 + na)]
    rb = [f"%{fa}{i}" for i in range(12, 12 + nb)]
    fc = "fd" if tc == "f64" else "r"
    rc = [f"%{fc}{i}" for i in range(22, 22 + nc)]
    rd = [f"%{fc}{i}" for i in range(40, 40 + nc)]
    types = f"{tc}.{tc}" if t == "f16" else f"{tc}.{t}.{t}.{tc}"
    op = ".xor.popc" if name.endswith("_xor") else ".and.popc" if name.endswith("_and") else ""
    dwords = m * n * (2 if tc == "f64" else 1)
    awords = na * (2 if t == "f64" else 1)
    body = f"""    add.s64 %rd10, %rd2, {region};
    add.s64 %rd11, %rd2, {region + abytes};
    add.s64 %rd12, %rd2, {cregion};
    wmma.load.a.sync.aligned.row.{shape}.global.{t} {{{', '.join(ra)}}}, [%rd10], {k};
    wmma.load.b.sync.aligned.col.{shape}.global.{t} {{{', '.join(rb)}}}, [%rd11], {k};
    wmma.load.c.sync.aligned.row.{shape}.global.{tc} {{{', '.join(rc)}}}, [%rd12], {n};
    wmma.mma{op}.sync.aligned.row.col.{shape}.{types} {{{', '.join(rd)}}}, {{{', '.join(ra)}}}, {{{', '.join(rb)}}}, {{{', '.join(rc)}}};
    wmma.store.d.sync.aligned.row.{shape}.global.{tc} [%rd1], {{{', '.join(rd)}}}, {n};
    mul.wide.u32 %rd13, %r0, {4 * awords};
    add.s64 %rd13, %rd13, %rd1;
"""
    if t == "f64":
        body += "".join(f"    st.global.f64 [%rd13+{4 * dwords + 8 * j}], {r};\n" for j, r in enumerate(ra))
    else:
        body += "".join(f"    st.global.b32 [%rd13+{4 * dwords + 4 * j}], {r};\n" for j, r in enumerate(ra))
    words = -(-(dwords + 32 * awords) // 32)
    return kernel(words, body, what=f"wmma.{shape} {t} -> {tc}: load, mma, store; then the A fragment registers")


def matrix_moves() -> str:
    """movmatrix, and ldmatrix/stmatrix through generic addresses of shared memory."""
    head = ""
    b = ld("%r1", 3) + ld("%r2", 4)
    b += """    movmatrix.sync.aligned.m8n8.trans.b16 %r10, %r1;
    mov.u32 %r30, smem;
    mov.u64 %rd10, smem;
    cvta.shared.u64 %rd11, %rd10;
    mul.wide.u32 %rd12, %r0, 16;
    add.s64 %rd13, %rd11, %rd12;
    mov.b64 %rd14, {%r1, %r2};
    st.v2.u32 [%rd13], {%r1, %r2};
    add.s64 %rd15, %rd13, 8;
    st.v2.u32 [%rd15], {%r2, %r1};
    bar.sync 0;
    ldmatrix.sync.aligned.m8n8.x4.b16 {%r11, %r12, %r13, %r14}, [%rd13];
    ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r15, %r16}, [%rd10+128];
    bar.sync 0;
    stmatrix.sync.aligned.m8n8.x2.trans.b16 [%rd13], {%r1, %r2};
    bar.sync 0;
    ld.shared.u32 %r17, [%rd10];
    mul.wide.u32 %rd16, %r0, 4;
    add.s64 %rd17, %rd10, %rd16;
    ld.shared.u32 %r17, [%rd17];
    ld.shared.u32 %r18, [%rd17+128];
    ld.shared.u32 %r19, [%rd17+256];
    bar.sync 0;
    stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd12+0], {%r1};
    bar.sync 0;
    add.u32 %r31, %r30, %r0;
    shl.b32 %r32, %r0, 2;
    add.u32 %r31, %r30, %r32;
    ld.shared.u32 %r20, [%r31];
"""
    b = b.replace("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%rd12+0], {%r1};",
                  "cvt.u32.u64 %r33, %rd12;\n    add.u32 %r33, %r33, %r30;\n"
                  "    stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r33], {%r1};")
    b = b.replace("    .shared", "")
    text = kernel(11, b.replace("{%r1}, [%rd13];", "") + stores([f"%r{k}" for k in range(10, 21)]),
                  head=head, what="movmatrix; ldmatrix/stmatrix with generic and shared addresses")
    return text.replace("    ld.param.u64 %rd1, [out];", "    .shared .align 16 .b8 smem[1024];\n    ld.param.u64 %rd1, [out];", 1)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    np.save(OUT / "input.npy", make_input())
    progs = {"carry": carry(), "constaddr": constaddr(), "set": setops(), "bits": bits(), "cvtpack": cvtpack(),
             "video": video(), "matrix_moves": matrix_moves()}
    for name, spec in MMA.items():
        text = mma_program(*spec[:9], extra=spec[9], what=f"{spec[0]}: registers from the input, D out")
        if "mma.sp" in spec[0]:
            meta = SP_META_LANES if name.startswith("mma_spl_") else SP_META
            text = text.replace("    add.s64 %rd6, %rd2, %rd3;\n", "    add.s64 %rd6, %rd2, %rd3;\n" + meta, 1)
        target = "sm_90a"
        progs[name] = text.replace(".target sm_90a", f".target {target}")
    for name in WMMA:
        progs[name] = wmma_program(name)
    for name, text in progs.items():
        (OUT / f"{name}.ptx").write_text(text)
    print(f"wrote {len(progs)} programs and input.npy to {OUT}")


if __name__ == "__main__":
    main()
