"""The SASS front end on real listings (nvdisasm 13.2 -c -gp of ptxas 13.0 cubins, in data/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from isa.errors import ParseError, SemanticError
from isa.ir import Address, Guard, Immediate, Label, Modified, Negated, Register, SourceLoc, Symbol
from isa.sass.compile import resources_from_log
from isa.sass.parser import offset, parse

DATA = Path(__file__).with_name("data")
LISTINGS = sorted(DATA.glob("*.sass"))


@pytest.mark.parametrize("path", LISTINGS, ids=[p.stem for p in LISTINGS])
def test_every_listing_parses_and_round_trips(path):
    m = parse(path.read_text(), str(path))
    assert m.isa == "sass" and m.kernels
    n = sum(len(f.instructions) for f in m.functions)
    lines = sum(1 for line in path.read_text().splitlines() if line.strip().startswith("/*")
                and line.strip()[2:6].isalnum() and ";" in line)
    assert n == lines                      # every instruction line became one instruction
    assert parse(m.emit()) == m            # canonical text reads back to the same IR


def test_sgemm_tiled_instructions_operands_and_ptx_lines():
    m = parse((DATA / "sgemm_tiled.sm_90.sass").read_text(), "sgemm_tiled.sass")
    assert m.target == "sm_90"
    fn = m.function("sgemm_tiled")
    assert fn.is_kernel
    first = fn.instructions[0]
    assert (first.opcode, first.operands) == ("LDC", (Register("R1"), Address(None, 0x28, "c[0x0]")))
    assert first.loc == SourceLoc(0, first.loc.line, 0) and first.loc.line > 0      # a PTX line (-gp)
    assert offset(m, first) == 0 and offset(m, fn.instructions[1]) == 0x10
    lds = [i for i in fn.instructions if i.opcode == "LDS"]
    assert lds and all(isinstance(i.operands[1], Address) for i in lds)
    bra = next(i for i in fn.instructions if i.opcode == "BRA" and i.guard is not None)
    assert isinstance(bra.guard, Guard) and isinstance(bra.operands[0], Symbol)
    assert bra.operands[0].name in {s.name for s in fn.body if isinstance(s, Label)}


def test_operand_forms():
    text = """\t.section\t.text.k,"ax",@progbits
k:
        /*0000*/                   HFMA2.MMA R13, -RZ, RZ, 0, 0 ;
        /*0010*/              @!P0 LDG.E.128.CONSTANT R4, desc[UR8][R8.64+-0x100] ;
        /*0020*/                   FSETP.GEU.AND P0, PT, |R2|.reuse, +INF, !PT ;
        /*0030*/                   LDS R3, [R2+UR4+0x10] ;
        /*0040*/                   HGMMA.64x64x16.F32 R24, gdesc[UR8].tnspB, R24, gsb0 ;
        /*0050*/                   RET.REL.NODEC R2 `(k) ;
        /*0060*/                   S2R R0, SR_TID.X ;
"""
    fn = parse(text).functions[0]
    h, g, f, s, w, r, t = fn.instructions
    assert h.modifiers == ("MMA",) and h.operands[1] == Modified(Register("RZ"), "-") \
        and h.operands[3] == Immediate(0)
    assert g.guard == Guard("P0", negated=True)
    assert g.operands[1] == Address(Register("R8", "64"), -0x100, "desc[UR8]")
    assert f.operands[2] == Modified(Register("R2"), "|", "reuse") and f.operands[3].value == float("inf")
    assert f.operands[4] == Negated(Register("PT"))
    assert s.operands[1] == Address(Register("R2"), 0x10, index=Register("UR4"))
    assert w.modifiers == ("64x64x16", "F32") and w.operands[1] == Address(Register("UR8"), 0, "gdesc", "tnspB")
    assert r.operands == (Register("R2"), Symbol("k"))
    assert t.operands[1] == Register("SR_TID", "X")
    assert not fn.is_kernel          # no .other ... STO_CUDA_ENTRY


def test_cuobjdump_listing_without_line_info():
    text = """
\tcode for sm_90
\t\tFunction : k
\t.headerflags\t@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */
                                                                             /* 0x000fe40000000800 */
        /*0010*/                   EXIT ;                                  /* 0x000000000000794d */
        ..........
"""
    m = parse(text)
    fn = m.function("k")
    assert [i.opcode for i in fn.instructions] == ["LDC", "EXIT"] and fn.instructions[0].loc is None


def test_bad_listing_is_a_located_parse_error():
    text = '\t.section\t.text.k,"ax",@progbits\nk:\n        /*0000*/   LDS R3, [R2+ ;\n'
    with pytest.raises(ParseError) as e:
        parse(text, "k.sass")
    err = e.value
    assert (err.span.file, err.span.line) == ("k.sass", 3) and err.span.col == 33
    assert "LDS R3, [R2+ ;" in err.source_line
    assert "number" in err.expected and "register or name" in err.expected
    assert err.render().startswith("k.sass:3:33: error: unexpected ';'")


def test_instruction_outside_a_function_is_a_semantic_error():
    with pytest.raises(SemanticError) as e:
        parse("        /*0000*/   EXIT ;\n", "x.sass")
    assert e.value.span.line == 1 and "outside any function" in e.value.message


def test_ptxas_log_resources():
    res = resources_from_log((DATA / "softmax.sm_90.ptxas.log").read_text())
    assert set(res) == {"softmax_rows_warp", "softmax_rows_block"}
    b = res["softmax_rows_block"]
    assert (b.registers, b.registers_allocated, b.shared_bytes, b.barriers, b.spill_stores) == (16, 16, 128, 1, 0)
    r = resources_from_log((DATA / "hfma2_axpy.sm_90.ptxas.log").read_text())["hfma2_axpy"]
    assert (r.registers, r.registers_allocated) == (10, 16)   # the H200 allocates 16 at least
