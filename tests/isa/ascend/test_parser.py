"""Ascend-like front end: parse into the shared IR, canonical emission round trip, errors with spans."""

from __future__ import annotations

import pytest

import isa
from isa import ir
from isa.errors import ParseError, SemanticError
from isa.semantics import Scope, Unit, describe

KERNEL = """\
.arch davinci-a2
.meta op=test n=4096
// row add
.kernel add_f16 .vector (.gm .f16 %x[4096], .gm .f16 %y[4096], .s32 %n)
{
    mov %s0, block_idx
    mul %s1, %s0, 256   ;
loop:
    copy_gm_to_ubuf ub[0], gm[%x+64], 0, 1, 8, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    vadds.f16 ub[256], ub[%s1-32], -0.5, 1, 1, 1, 8, 8
    vconv_f322f16r ub[0], ub[256], 1, 1, 1, 4, 8
    vector_dup.f16 ub[0], -inf, 1, 1, 1, 8, 8
    cmp.lt %p0, %s0, %n
    @!%p0 bra loop
    ret
}
"""


def test_parse_builds_shared_ir():
    m = isa.loads(KERNEL, "k.asm")
    assert m.isa == "ascend" and m.targets == ("davinci-a2",)
    k = m.kernels[0]
    assert k.name == "add_f16" and k.attributes == ("vector",)
    assert k.params[0] == ir.Variable("gm", "f16", "%x", dims=(4096,), ptr=True, ptr_space="gm")
    assert k.params[2] == ir.Variable("param", "s32", "%n")
    cp = k.instructions[2]
    assert cp.opcode == "copy_gm_to_ubuf"
    assert cp.operands[0] == ir.Address(None, 0, "ub")
    assert cp.operands[1] == ir.Address(ir.Register("%x"), 64, "gm")
    assert cp.span.line == 9 and cp.span.col == 5
    vadds = k.instructions[5]
    assert vadds.modifiers == ("f16",)
    assert vadds.operands[1] == ir.Address(ir.Register("%s1"), -32, "ub")
    assert vadds.operands[2] == ir.Immediate(-0.5, "float")
    conv = k.instructions[6]
    assert (conv.opcode, conv.modifiers) == ("vconv", ("f32", "f16", "r"))
    assert k.instructions[0].operands[1] == ir.Register("block_idx")
    bra = k.instructions[9]
    assert bra.guard == ir.Guard("%p0", negated=True) and bra.operands == (ir.Symbol("loop"),)
    assert k.labels == {"loop": 2}


def test_emit_round_trip_is_equal_and_stable():
    m = isa.loads(KERNEL, "k.asm")
    text = m.emit()
    m2 = isa.loads(text, "k2.asm")
    assert m2 == m
    assert m2.emit() == text
    assert "vconv_f322f16r ub[0], ub[256], 1, 1, 1, 4, 8" in text
    assert "vector_dup.f16 ub[0], -inf" in text


def test_examples_round_trip(examples):
    files = sorted((examples / "ascend").glob("*.asm"))
    assert len(files) >= 3
    for f in files:
        m = isa.load(str(f))
        assert isa.loads(m.emit(), "again.asm") == m, f.name


@pytest.mark.parametrize("text,cls,line,col,words", [
    ("    vaddx.f16 ub[0]\n", SemanticError, 3, 5, ["unknown intrinsic 'vaddx'", "vadd"]),
    ("    vadd.f16 ub[0], , 1\n", ParseError, 3, 21, ["unexpected ','", "register"]),
    ("    vadd.f16 ub[0], ub[0], gm[0], 1, 1, 1, 1, 8, 8, 8\n", SemanticError, 3, 28, ["operand 3", "ub"]),
    ("    vadd ub[0], ub[0], ub[0], 1, 1, 1, 1, 8, 8, 8\n", SemanticError, 3, 5, ["dtype", "vadd.f16"]),
    ("    mad.f16 l0c[0], l0a[0], l0b[0], 16, 16, 16\n", SemanticError, 3, 5, ["takes 10 operands, got 6"]),
    ("    bra nowhere\n", SemanticError, 3, 9, ["undefined label 'nowhere'"]),
    ("    set_flag PIPE_X, PIPE_V, EVENT_ID0\n", SemanticError, 3, 14, ["must be a pipe"]),
    ("    copy_gm_to_ubuf xb[0], gm[0], 0, 1, 1, 0, 0\n", SemanticError, 3, 21, ["unknown buffer 'xb'"]),
])
def test_errors_have_span_source_line_and_expected(text, cls, line, col, words):
    src = ".kernel k .vector ()\n{\n" + text + "}\n"
    with pytest.raises(cls) as info:
        isa.loads(src, "bad.asm")
    err = info.value
    assert (err.span.file, err.span.line, err.span.col) == ("bad.asm", line, col)
    rendered = err.render()
    assert rendered.startswith(f"bad.asm:{line}:{col}: error:")
    assert text.rstrip() in rendered
    for w in words:
        assert w in rendered


def test_semantics_table():
    m = isa.loads(""".kernel g .cube (.gm .f16 %a[1024])
{
    mad.f16 l0c[0], l0a[0], l0b[0], 128, 64, 256, 0, 0, 0, 1
    mad.s8 l0c[0], l0a[0], l0b[0], 16, 32, 16, 0, 0, 0, 0
    copy_gm_to_cbuf_multi_nd2nz_b16 l1[0], gm[%a], 0, 1, 128, 64, 0, 1024, 128, 1, 0
    load_cbuf_to_ca.f16 l0a[0], l1[0], 0, 8, 1, 3, 0, 0, 0
    copy_matrix_cc_to_gm.f32 gm[%a], l0c[0], 0, 256, 128, 1024, 128, 0, F322F16, 0, 0, 1
    vadd.f32 ub[0], ub[256], ub[512], 2, 1, 1, 1, 8, 8, 8
    set_flag PIPE_M, PIPE_FIX, EVENT_ID0
    add %s0, %s0, 1
}
""", "s.asm")
    ins = m.kernels[0].instructions
    mad = describe(ins[0], "ascend")
    assert (mad.unit, mad.in_dtype, mad.acc_dtype, mad.flops, mad.scope) == (Unit.CUBE, "f16", "f32", 2 * 128 * 64 * 256,
                                                                             Scope.INSTRUCTION)
    mad8 = describe(ins[1], "ascend")
    assert (mad8.acc_dtype, mad8.flops, mad8.int_ops) == ("s32", 0, 2 * 16 * 32 * 16)
    nd = describe(ins[2], "ascend")
    assert (nd.unit, nd.bytes, nd.space, nd.is_load) == (Unit.MTE2, 128 * 64 * 2, "gm->l1", True)
    ld = describe(ins[3], "ascend")
    assert (ld.unit, ld.bytes, ld.space) == (Unit.MTE1, 8 * 512, "l1->l0a")
    fx = describe(ins[4], "ascend")
    assert (fx.unit, fx.out_dtype, fx.bytes, fx.space) == (Unit.FIXPIPE, "f16", 256 * 128 * 2, "l0c->gm")
    v = describe(ins[5], "ascend")
    assert (v.unit, v.flops, v.extra["lanes"]) == (Unit.VECTOR, 128, 64)
    assert describe(ins[6], "ascend").unit == Unit.SYNC
    assert describe(ins[7], "ascend").unit == Unit.SCALAR
