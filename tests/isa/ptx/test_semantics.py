"""PTX instruction facts: classes, units, dtypes, work and traffic, on real lines."""

from __future__ import annotations

import pytest

import isa
from isa.ir import Address, Immediate, Instruction, Register, Vector
from isa.ptx.semantics import CLASSES, describe
from isa.semantics import Scope, Unit
from isa.semantics import describe as describe_any
from tests.conftest import corpus_ptx_params


def _ins(text: str, operands=()) -> Instruction:
    op, *mods = text.split()[0].rstrip(";").split(".")
    return Instruction(op, tuple(mods), tuple(operands))


@pytest.mark.parametrize("form,classes,unit,flops,int_ops,scope", [
    ("fma.rn.f16", {"FP16_FMA"}, Unit.FP16, 2, 0, Scope.LANE),
    ("fma.rn.f16x2", {"FP16_FMA"}, Unit.FP16, 4, 0, Scope.LANE),
    ("fma.rn.bf16x2", {"BF16_FMA"}, Unit.FP16, 4, 0, Scope.LANE),
    ("fma.rn.f32", {"FP32_FMA"}, Unit.FP32, 2, 0, Scope.LANE),
    ("fma.rm.f32", {"FP32_FMA"}, Unit.FP32, 2, 0, Scope.LANE),
    ("mad.rn.f32", {"FP32_FMA"}, Unit.FP32, 2, 0, Scope.LANE),
    ("fma.rn.f64", {"FP64_FMA"}, Unit.FP64, 2, 0, Scope.LANE),
    ("add.f32", {"FP32_ARITH"}, Unit.FP32, 1, 0, Scope.LANE),
    ("add.f16", {"FP16_ARITH"}, Unit.FP16, 1, 0, Scope.LANE),
    ("ex2.approx.ftz.f32", {"SFU"}, Unit.SFU, 1, 0, Scope.LANE),
    ("rsqrt.approx.f32", {"SFU"}, Unit.SFU, 1, 0, Scope.LANE),
    ("div.full.f32", {"SFU"}, Unit.SFU, 1, 0, Scope.LANE),
    ("div.rn.f32", {"FP32_ARITH"}, Unit.FP32, 1, 0, Scope.LANE),
    ("dp4a.s32.s32", {"INT8_DP4A"}, Unit.INT, 0, 8, Scope.LANE),
    ("dp2a.lo.u32.u32", {"INT8_DP4A"}, Unit.INT, 0, 4, Scope.LANE),
    ("mad.lo.s32", {"INT_ARITH"}, Unit.INT, 0, 0, Scope.LANE),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", {"TENSOR_CORE"}, Unit.TENSOR, 2 * 16 * 8 * 16, 0, Scope.WARP),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", {"TENSOR_CORE"}, Unit.TENSOR, 4096, 0, Scope.WARP),
    # m8n8k4 .f16: four 8x8x4 products per warp, one per quad-pair (ISA 9.7.14.5.1); .f64: one
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", {"TENSOR_CORE"}, Unit.TENSOR, 4 * 2 * 8 * 8 * 4, 0, Scope.WARP),
    ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", {"TENSOR_CORE"}, Unit.TENSOR, 2 * 8 * 8 * 4, 0, Scope.WARP),
    ("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc", {"TENSOR_CORE"}, Unit.TENSOR, 0, 2 * 8 * 8 * 128,
     Scope.WARP),
    ("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", {"TENSOR_CORE"}, Unit.TENSOR, 0, 2 * 16 * 8 * 32,
     Scope.WARP),
    ("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32", {"TENSOR_CORE"}, Unit.TENSOR, 2 * 16 * 16 * 16, 0, Scope.WARP),
    ("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", {"TENSOR_CORE"}, Unit.TENSOR, 2 * 64 * 128 * 16, 0,
     Scope.WARPGROUP),
    ("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3", {"TENSOR_CORE"}, Unit.TENSOR, 2 * 64 * 64 * 32, 0,
     Scope.WARPGROUP),
    ("wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8", {"TENSOR_CORE"}, Unit.TENSOR, 0, 2 * 64 * 64 * 32,
     Scope.WARPGROUP),
    # sparse forms count the useful work, M*N*K (half of A is stored), not the dense equivalent
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", {"TENSOR_CORE"}, Unit.TENSOR,
     16 * 8 * 32, 0, Scope.WARP),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32", {"TENSOR_CORE"}, Unit.TENSOR,
     0, 16 * 8 * 64, Scope.WARP),
    ("wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.f16.f16", {"TENSOR_CORE"}, Unit.TENSOR, 64 * 128 * 32, 0,
     Scope.WARPGROUP),
    ("shfl.sync.bfly.b32", {"SHUFFLE"}, Unit.LSU, 0, 0, Scope.LANE),
    ("bar.sync", {"BARRIER"}, Unit.SYNC, 0, 0, Scope.LANE),
    ("bar.warp.sync", {"BARRIER"}, Unit.SYNC, 0, 0, Scope.LANE),
    ("bra.uni", {"BRANCH"}, Unit.CONTROL, 0, 0, Scope.LANE),
    ("setp.lt.s32", {"COMPARE"}, Unit.INT, 0, 0, Scope.LANE),
    ("atom.global.cas.b32", {"ATOMIC", "ATOMIC_CAS"}, Unit.LSU, 0, 0, Scope.LANE),
    ("red.global.add.f32", {"REDUCTION"}, Unit.LSU, 0, 0, Scope.LANE),
    ("cvt.rn.f16.f32", {"CONVERT", "CONVERT_NARROW"}, Unit.FP16, 0, 0, Scope.LANE),
    ("cvt.s64.s32", {"CONVERT"}, Unit.INT, 0, 0, Scope.LANE),
])
def test_classes_units_and_work(form, classes, unit, flops, int_ops, scope):
    info = describe(_ins(form))
    assert classes <= info.classes
    assert (info.unit, info.flops, info.int_ops, info.scope) == (unit, flops, int_ops, scope)
    assert info.known
    if ".sp" in form.split(".sync")[0]:
        assert info.extra["dense_equivalent_ops"] == 2 * (flops or int_ops)


@pytest.mark.parametrize("form,in_t,acc,out,shape", [
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "f16", "f32", "f32", (16, 8, 16)),
    ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", "f16", "f16", "f16", (16, 8, 16)),
    ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "tf32", "f32", "f32", (16, 8, 8)),
    ("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", "s8", "s32", "s32", (16, 8, 32)),
    ("wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32", "f16", "f32", "f32", (16, 16, 16)),
    ("wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32", "bf16", "f32", "f32", (16, 16, 16)),
    ("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "bf16", "f32", "f32", (64, 256, 16)),
    ("wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16", "f16", "f16", "f16", (64, 64, 16)),
])
def test_tensor_core_dtypes_and_shape(form, in_t, acc, out, shape):
    info = describe(_ins(form))
    assert (info.in_dtype, info.acc_dtype, info.out_dtype, info.shape) == (in_t, acc, out, shape)


@pytest.mark.parametrize("form,nbytes,space,load,store,scope", [
    ("ld.global.v4.f32", 16, "global", True, False, Scope.LANE),
    ("ld.global.nc.v4.f32", 16, "global", True, False, Scope.LANE),
    ("ld.global.f32", 4, "global", True, False, Scope.LANE),
    ("ld.shared.v4.b32", 16, "shared", True, False, Scope.LANE),
    ("ld.shared::cta.v2.f32", 8, "shared", True, False, Scope.LANE),
    ("ld.shared.u16", 2, "shared", True, False, Scope.LANE),
    ("ld.param.u64", 8, "param", True, False, Scope.LANE),
    ("ld.f32", 4, "generic", True, False, Scope.LANE),
    ("st.global.v4.b32", 16, "global", False, True, Scope.LANE),
    ("st.shared.v4.b16", 8, "shared", False, True, Scope.LANE),
    ("st.local.v4.f32", 16, "local", False, True, Scope.LANE),
    ("atom.global.add.f32", 4, "global", False, False, Scope.LANE),
    ("atom.global.add.v4.f32", 16, "global", False, False, Scope.LANE),
    ("ldmatrix.sync.aligned.m8n8.x1.shared.b16", 128, "shared", True, False, Scope.WARP),
    ("ldmatrix.sync.aligned.m8n8.x2.shared.b16", 256, "shared", True, False, Scope.WARP),
    ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", 512, "shared", True, False, Scope.WARP),
    ("stmatrix.sync.aligned.m8n8.x2.shared.b16", 256, "shared", False, True, Scope.WARP),
    ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16", 512, "global", True, False, Scope.WARP),
    ("wmma.store.d.sync.aligned.row.m16n16k16.global.f32", 1024, "global", False, True, Scope.WARP),
])
def test_bytes_and_space(form, nbytes, space, load, store, scope):
    info = describe(_ins(form))
    assert (info.bytes, info.space, info.is_load, info.is_store, info.scope) == (nbytes, space, load, store, scope)


def test_load_store_classes_by_space_and_width():
    assert {"LOAD", "LOAD_GLOBAL", "LOAD_GLOBAL_128"} <= describe(_ins("ld.global.nc.v4.f32")).classes
    assert {"STORE_SHARED", "STORE_SHARED_64"} <= describe(_ins("st.shared.v2.f32")).classes
    spill = describe(_ins("st.local.v4.f32"))
    assert "SPILL" in spill.classes and "STORE_LOCAL_128" in spill.classes
    assert "SPILL" in describe(_ins("ld.local.u32")).classes
    assert "SPILL" not in describe(_ins("ld.global.u32")).classes
    for info in (spill, describe(_ins("fma.rn.f16x2")), describe(_ins("cp.async.commit_group"))):
        assert info.classes <= set(CLASSES)


def test_cp_async_bytes_come_from_the_cp_size_operand():
    dst, src = Address(Register("%r40")), Address(Register("%rd33"))
    ca8 = describe(_ins("cp.async.ca.shared.global", (dst, src, Immediate(8), Register("%r41"))))
    cg16 = describe(_ins("cp.async.cg.shared.global", (dst, src, Immediate(16))))
    assert (ca8.bytes, ca8.space, ca8.extra["dst_space"]) == (8, "global", "shared")
    assert "ASYNC_COPY_64" in ca8.classes and "ASYNC_COPY_128" in cg16.classes
    assert cg16.bytes == 16 and cg16.is_load


def test_wgmma_shared_operand_bytes_depend_on_where_a_lives():
    desc = describe(_ins("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
                         (Vector((Register("%f1"),)), Register("%rd1"), Register("%rd2"))))
    regs = describe(_ins("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
                         (Vector((Register("%f1"),)), Vector((Register("%r1"),)), Register("%rd2"))))
    assert desc.bytes == 128 * 16 * 2 + 64 * 16 * 2 and desc.space == "shared"
    assert regs.bytes == 128 * 16 * 2


@pytest.mark.parametrize("form,in_t,out,rounding", [
    ("cvt.rn.f16.f32", "f32", "f16", "rn"),
    ("cvt.rz.f16.f32", "f32", "f16", "rz"),
    ("cvt.rni.s32.f32", "f32", "s32", "rni"),
    ("cvt.f32.bf16", "bf16", "f32", None),
    ("cvt.rn.f16x2.f32", "f32", "f16x2", "rn"),
    ("cvt.rn.satfinite.e4m3x2.f32", "f32", "e4m3x2", "rn"),
    ("ex2.approx.f32", "f32", "f32", "approx"),
])
def test_conversions_keep_rounding(form, in_t, out, rounding):
    info = describe(_ins(form))
    assert (info.in_dtype, info.out_dtype, info.rounding) == (in_t, out, rounding)


def test_unknown_opcode_is_other():
    info = describe(_ins("frobnicate.b32"))
    assert not info.known and info.classes == {"OTHER"}


def test_dispatch_through_isa_semantics():
    assert describe_any(_ins("fma.rn.f32"), "ptx").flops == 2


def test_memoised_by_opcode_and_modifiers():
    a = describe(_ins("fma.rn.f32"))
    b = describe(Instruction("fma", ("rn", "f32"), (Register("%f1"), Register("%f2"), Register("%f3"),
                                                    Register("%f4"))))
    assert a is b


@pytest.mark.parametrize("path", corpus_ptx_params(), ids=lambda p: p.name)
def test_every_corpus_instruction_is_described(path):
    module = isa.load(path)
    for fn in module.functions:
        for ins in fn.instructions:
            info = describe(ins)
            assert info.known, (ins.span.line, ins.full_opcode)
            assert info.classes and info.classes <= set(CLASSES), (ins.full_opcode, info.classes)
            if ins.opcode in ("ld", "st") and "param" not in ins.modifiers:
                assert info.bytes > 0, ins.full_opcode


def test_descriptions_remembered_by_spelling_still_read_the_operands_that_change_them():
    """describe() keeps a description per opcode spelling, except for the opcodes whose operands
    change it (cp.async's size, cp.async.bulk's, wgmma's A from registers or a descriptor)."""
    from isa.ptx import semantics

    semantics._SPELLED.clear()
    rd = Register("%rd1")
    small = describe(_ins("cp.async.ca.shared.global", (Address(rd), Address(rd), Immediate(4))))
    large = describe(_ins("cp.async.ca.shared.global", (Address(rd), Address(rd), Immediate(16))))
    assert (small.bytes, large.bytes) == (4, 16)
    f = Vector(tuple(Register(f"%f{i}") for i in range(4)))
    w = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"
    by_regs = describe(_ins(w, (f, Vector(tuple(Register(f"%r{i}") for i in range(4))), rd)))
    by_desc = describe(_ins(w, (f, Register("%rd2"), rd)))
    assert by_regs != by_desc
    fma = _ins("fma.rn.f32", (Register("%f1"),) * 4)
    assert describe(fma) is describe(_ins("fma.rn.f32")) and describe(fma).flops == 2
    assert semantics._SPELLED[("fma", ("rn", "f32"))][2] is describe(fma)


def test_remembered_descriptions_are_the_tables_on_every_corpus_instruction():
    from isa.ptx import opcodes, semantics
    from tests.conftest import corpus_or_skip

    corpus_or_skip()
    root = __import__("pathlib").Path(__file__).resolve().parents[3]
    n = 0
    for f in sorted((root.parent / "shared" / "corpus" / "ptx").glob("*.ptx")) + sorted((root / "examples" / "ptx").glob("*.ptx")):
        for fn in isa.load(f).functions:
            for ins in fn.instructions:
                name, mods = opcodes.split(ins)
                assert describe(ins) == semantics._describe(name, mods, semantics._operand_key(name, ins)), str(ins)
                n += 1
    assert n > 10000
