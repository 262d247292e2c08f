"""SASS semantics tables on real lines (from the listings in data/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from isa.sass.parser import parse
from isa.sass.semantics import CLASSES, describe
from isa.semantics import Scope, Unit

DATA = Path(__file__).with_name("data")


def one(line: str):
    m = parse('\t.section\t.text.k,"ax",@progbits\n        /*0000*/  ' + line + "\n")
    return describe(m.functions[0].instructions[0])


@pytest.mark.parametrize("line,classes,unit,flops,int_ops,nbytes,space,scope", [
    ("HMMA.16816.F32.BF16 R4, R12, R16, R4 ;", {"TENSOR_CORE", "HMMA"}, Unit.TENSOR, 4096, 0, 0, None, Scope.WARP),
    ("HMMA.16816.F32 R4, R12, R16, R4 ;", {"TENSOR_CORE", "HMMA"}, Unit.TENSOR, 4096, 0, 0, None, Scope.WARP),
    ("IMMA.16832.S8.S8.SAT R4, R8, R12, R4 ;", {"TENSOR_CORE", "IMMA"}, Unit.TENSOR, 0, 8192, 0, None, Scope.WARP),
    ("HGMMA.64x64x16.F32 R24, gdesc[UR8], R24, gsb0 ;", {"TENSOR_CORE", "HGMMA"}, Unit.TENSOR, 131072, 0,
     4096, "shared", Scope.WARPGROUP),
    ("QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24, gsb0 ;", {"TENSOR_CORE", "QGMMA"}, Unit.TENSOR,
     262144, 0, 4096, "shared", Scope.WARPGROUP),
    ("FFMA R4, R28, R4, R13 ;", {"FP32_FMA", "FP32_ARITH"}, Unit.FP32, 2, 0, 0, None, Scope.LANE),
    ("HFMA2 R9, R9, R12, R9 ;", {"FP16_FMA", "FP16_ARITH"}, Unit.FP16, 4, 0, 0, None, Scope.LANE),
    ("HFMA2.BF16_V2 R9, R9, R12, -RZ ;", {"BF16_FMA", "FP16_ARITH"}, Unit.FP16, 4, 0, 0, None, Scope.LANE),
    ("HFMA2.MMA R13, -RZ, RZ, 0, 0 ;", {"MOVE"}, Unit.TENSOR, 0, 0, 0, None, Scope.LANE),
    ("DFMA R4, R2, R6, R4 ;", {"FP64_FMA", "FP64_ARITH"}, Unit.FP64, 2, 0, 0, None, Scope.LANE),
    ("IDP.4A.S8.S8 R5, R6, R7, R5 ;", {"INT8_DP4A", "INT_ARITH"}, Unit.INT, 0, 8, 0, None, Scope.LANE),
    ("LDS.128 R4, [R19+0x10] ;", {"LOAD", "LOAD_SHARED", "LOAD_SHARED_128"}, Unit.LSU, 0, 0, 16, "shared",
     Scope.LANE),
    ("LDS.U16 R4, [R19] ;", {"LOAD", "LOAD_SHARED", "LOAD_SHARED_16"}, Unit.LSU, 0, 0, 2, "shared", Scope.LANE),
    ("STS.64 [R3], R4 ;", {"STORE", "STORE_SHARED", "STORE_SHARED_64"}, Unit.LSU, 0, 0, 8, "shared", Scope.LANE),
    ("LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;", {"LOAD", "LOAD_GLOBAL", "LOAD_GLOBAL_128"}, Unit.LSU, 0, 0, 16,
     "global", Scope.LANE),
    ("STG.E.U16 desc[UR4][R2.64], R5 ;", {"STORE", "STORE_GLOBAL", "STORE_GLOBAL_16"}, Unit.LSU, 0, 0, 2,
     "global", Scope.LANE),
    ("LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR4][R4.64] ;", {"ASYNC_COPY", "ASYNC_COPY_128"}, Unit.LSU, 0, 0, 16,
     "global", Scope.LANE),
    ("LDSM.16.M88.4 R4, [R2] ;", {"LDMATRIX"}, Unit.LSU, 0, 0, 512, "shared", Scope.WARP),
    ("ATOMS.ADD R3, [R2], R5 ;", {"ATOMIC"}, Unit.LSU, 0, 0, 4, "shared", Scope.LANE),
    ("RED.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R5 ;", {"REDUCTION"}, Unit.LSU, 0, 0, 4, "global",
     Scope.LANE),
    ("MUFU.EX2 R5, R4 ;", {"SFU", "FP32_ARITH"}, Unit.SFU, 1, 0, 0, None, Scope.LANE),
    ("SHFL.BFLY PT, R3, R2, 0x1, 0x1f ;", {"SHUFFLE"}, Unit.LSU, 0, 0, 0, None, Scope.LANE),
    ("BAR.SYNC.DEFER_BLOCKING 0x0 ;", {"BARRIER"}, Unit.SYNC, 0, 0, 0, None, Scope.LANE),
    ("STL [R1+0x10], R4 ;", {"STORE", "STORE_LOCAL", "STORE_LOCAL_32", "SPILL"}, Unit.LSU, 0, 0, 4, "local",
     Scope.LANE),
    ("UTMALDG.2D [UR8], [UR4] ;", {"ASYNC_COPY", "TMA"}, Unit.LSU, 0, 0, 0, "global", Scope.INSTRUCTION),
    ("UIADD3 UR5, UR4, 0x1000, URZ ;", {"INT_ARITH", "UNIFORM"}, Unit.INT, 0, 0, 0, None, Scope.LANE),
    ("IMAD.MOV.U32 R5, RZ, RZ, R3 ;", {"MOVE"}, Unit.INT, 0, 0, 0, None, Scope.LANE),
])
def test_real_lines(line, classes, unit, flops, int_ops, nbytes, space, scope):
    info = describe_one = one(line)
    assert set(describe_one.classes) == classes and classes <= set(CLASSES)
    assert (info.unit, info.flops, info.int_ops, info.bytes, info.space, info.scope) == \
        (unit, flops, int_ops, nbytes, space, scope)
    assert info.known


def test_tensor_dtypes_and_shapes():
    h = one("HMMA.16816.F32.BF16 R4, R12, R16, R4 ;")
    assert (h.in_dtype, h.acc_dtype, h.shape) == ("bf16", "f32", (16, 8, 16))
    q = one("QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24, gsb0 ;")
    assert (q.in_dtype, q.acc_dtype, q.shape) == ("e4m3", "f32", (64, 64, 32))
    i = one("IMMA.16832.S8.S8.SAT R4, R8, R12, R4 ;")
    assert (i.in_dtype, i.acc_dtype, i.shape) == ("s8", "s32", (16, 8, 32))
    a_regs = one("HGMMA.64x64x16.F32 R24, R152, gdesc[UR8], R24, gsb0 ;")
    assert a_regs.bytes == 64 * 16 * 2 and a_regs.extra["a_from"] == "registers"


@pytest.mark.parametrize("path", sorted(DATA.glob("*.sass")), ids=lambda p: p.stem)
def test_tables_know_every_opcode_of_the_listings(path):
    m = parse(path.read_text())
    unknown = {i.full_opcode for f in m.functions for i in f.instructions if not describe(i).known}
    assert not unknown
