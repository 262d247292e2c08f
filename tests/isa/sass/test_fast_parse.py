"""The line reader (``parse(fast=True)``, the default) gives the IR the Lark grammar gives, spans and
line info included, on every listing here and on the ones a few odd lines send back to the grammar."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from isa.errors import ParseError, Span
from isa.sass import parser as P

DATA = Path(__file__).with_name("data")
LISTINGS = sorted(DATA.glob("*.sass"))


def deep(x):
    """Everything of an IR node, the fields left out of ``==`` (spans, loc) too."""
    if isinstance(x, Span):
        return ("Span", x.file, x.line, x.col, x.end_line, x.end_col)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__,) + tuple(deep(getattr(x, f.name)) for f in dataclasses.fields(x))
    if isinstance(x, (tuple, list)):
        return tuple(deep(y) for y in x)
    if isinstance(x, float) and x != x:
        return "nan"
    return x


def same(text: str) -> None:
    fast, grammar = P.parse(text, "t.sass"), P.parse(text, "t.sass", fast=False)
    assert deep(fast.functions) == deep(grammar.functions)
    assert fast.targets == grammar.targets
    return fast


@pytest.mark.parametrize("path", LISTINGS, ids=[p.stem for p in LISTINGS])
def test_fast_reader_equals_the_grammar_on_every_listing(path):
    m = same(path.read_text())
    assert sum(len(f.instructions) for f in m.functions) > 10
    assert any(i.loc is not None for f in m.functions for i in f.instructions)


ODD = """\t.section\t.text.k,"ax",@progbits
\t.other\tk,@"STO_CUDA_ENTRY STV_DEFAULT"
k:
.text.k:
\t//## File ".nv_debug_ptx_txt", line 7
        /*0000*/                   HFMA2.MMA R13, -RZ, RZ, 0, 0 ;
        /*0010*/              @!P0 LDG.E.128.CONSTANT R4, desc[UR8][R8.64+-0x100] ;
        /*0020*/                   FSETP.GEU.AND P0, PT, |R2|.reuse, +INF, !PT ;
\t//## File ".nv_debug_ptx_txt", line 9, col 3
        /*0030*/                   LDS R3, [R2+UR4+0x10] ;
        /*0040*/                   HGMMA.64x64x16.F32 R24, gdesc[UR8].tnspB, R24, gsb0 ;
        /*0050*/                   RET.REL.NODEC R2 `(k) ;
        /*0060*/                   BSSY B0, `(.L_x_2) ;
        /*0070*/                   FMUL R1,  R2 ,-QNAN ;
        /*0080*/  @ P1 FADD R1, - R2, 1.5e-07 ;
        /*0090*/                   MOV R1, c[0x0][0x28] ;  /* 0x00000a0000017a02 */
        /*00a0*/                   IADD3 R1, ~R2, -0x1, INF ;
.L_x_2:
        /*00b0*/                   EXIT ;
        /*00c0*/                   MOV R20, 32@lo((k + .L_x_2@srel)) ;
        /*00d0*/                   RET.ABS.NODEC R20 0x0 ;
"""


def test_fast_reader_equals_the_grammar_on_odd_spellings():
    m = same(ODD)
    ins = m.functions[0].instructions
    assert len(ins) == 14
    assert [i.loc.line for i in ins[:3]] == [7, 7, 7] and (ins[3].loc.line, ins[3].loc.col) == (9, 3)
    assert ins[0].operands[0].span.col == ins[0].span.col + len("HFMA2.MMA ")


def test_cuobjdump_listing_through_the_grammar_lines():
    text = """
\tcode for sm_90
\t\tFunction : k
\t.headerflags\t@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                  /* 0x00000a0000017a02 */
                                                                           /* 0x000fe40000000f00 */
        /*0010*/                   EXIT ;                                  /* 0x000000000000794d */
"""
    m = same(text)
    assert m.functions[0].is_kernel and [i.opcode for i in m.functions[0].instructions] == ["MOV", "EXIT"]


def test_a_bad_line_gives_the_grammars_error_with_its_place():
    text = ODD.replace("LDS R3, [R2+UR4+0x10] ;", "LDS R3, [R2+UR4+0x10 ;")
    with pytest.raises(ParseError) as fast:
        P.parse(text, "t.sass")
    with pytest.raises(ParseError) as grammar:
        P.parse(text, "t.sass", fast=False)
    assert str(fast.value) == str(grammar.value) and fast.value.span.line == 10


def test_relocations_and_a_return_offset_parse_and_read_back():
    # what nvdisasm prints for a call through a register (examples/ptx/calls/reduce_calls_G.sm_90.ptx)
    from isa.ir import Expression, Immediate, Register

    m = same(ODD)
    mov, ret = m.functions[0].instructions[-2:]
    assert mov.operands == (Register("R20"), Expression("32@lo((k + .L_x_2@srel))"))
    assert ret.full_opcode == "RET.ABS.NODEC" and ret.operands == (Register("R20"), Immediate(0))
    assert P.parse(m.emit()) == m
