"""One test per grammar pitfall in ../shared/facts/ptx.md §9 (27 of them), on real compiler spellings."""

from __future__ import annotations

import struct

import pytest

import isa
from isa import ir
from tests.isa.ptx_helpers import HEADER, kernel, module, only


def test_01_identifiers_with_dollar_percent_underscore():
    m = module(""".global .align 1 .b8 _$_str[2] = {65, 0};
.global .align 1 .b8 $str[2] = {66, 0};
.visible .entry k()
{
\t.reg .b64 %SP;
\t.reg .b64 %SPL;
\t.reg .b64 %rd<2>;
$L__BB0_2:
\tmov.u64 \t%SPL, __local_depot0;
\tmov.u64 %rd1, $str;
\tbra.uni \t$L__BB0_2;
}
""")
    assert [v.name for v in m.variables] == ["_$_str", "$str"]
    fn = m.kernels[0]
    assert fn.labels == {"$L__BB0_2": 0}
    mov, mov2, bra = fn.instructions
    assert mov.operands == (ir.Register("%SPL"), ir.Symbol("__local_depot0"))
    assert mov2.operands[1] == ir.Symbol("$str")
    assert bra.operands == (ir.Symbol("$L__BB0_2"),)


def test_02_negative_immediates_and_plus_minus_offsets():
    fn = kernel("""\tmov.u32 \t%r48, -1;
\tadd.s32 \t%r133, %r48, -2;
\tbar.warp.sync \t-1;
\tld.global.f32 \t%f2, [%rd6+-4];
""")
    mov, add, bar, ld = fn.instructions
    assert mov.operands[1] == ir.Immediate(-1)
    assert add.operands[2] == ir.Immediate(-2)
    assert bar.operands == (ir.Immediate(-1),)
    assert ld.operands[1] == ir.Address(ir.Register("%rd6"), -4)


def test_03_hex_floats_win_over_decimal_ints():
    fn = kernel("""\tfma.rn.f32 \t%f3, %f1, %f2, 0f3F800000;
\tadd.f64 \t%fd3, %fd1, 0d3FF0000000000000;
\tmov.b32 \t%r1, 0f00000000;
\tmul.f32 \t%f4, %f1, 0F40490FDB;
""")
    fma, add, mov, mul = fn.instructions
    assert fma.operands[3] == ir.Immediate(1.0, "f32")
    assert add.operands[2] == ir.Immediate(1.0, "f64")
    assert mov.operands[1] == ir.Immediate(0.0, "f32")
    assert mul.operands[2].value == struct.unpack("<f", struct.pack("<I", 0x40490FDB))[0]
    # a decimal float with no leading digit is a float (f64) literal
    assert only(kernel("\tmul.f64 %fd1, %fd2, .05;")).operands[2] == ir.Immediate(0.05, "float")


def test_04_hex_ints_any_case_unsigned_suffix_and_large_values():
    fn = kernel("""\tor.b64 \t%rd2, %rd1, 4611686293305294848;
\tand.b32 \t%r2, %r1, 0XFF0000;
\tand.b32 \t%r3, %r1, 0x10U;
\tand.b32 \t%r4, %r1, 0xff;
\tand.b32 \t%r5, %r1, 017;
\tor.b64 \t%rd3, %rd1, 18446744073709551615;
""")
    vals = [i.operands[2].value for i in fn.instructions]
    assert vals == [4611686293305294848, 0xFF0000, 0x10, 0xFF, 0o17, 2**64 - 1]


def test_05_nested_scopes_redeclare_names():
    fn = kernel("""\t{
\t.reg .b32 %temp;
\tmov.b64 \t{%temp, %r4}, %rd2;
\t}
\t{
\t.reg .b32 %temp;
\tmov.b64 \t{%r5, %temp}, %rd3;
\t{ { mov.b32 %r6, %temp; } }
\t}
""")
    a, b, c = fn.instructions
    assert a.scope != b.scope and b.scope != 0 and c.scope not in (0, a.scope, b.scope)
    keys = {fn.register_key("%temp", i.scope) for i in (a, b)}
    assert len(keys) == 2  # two different %temp registers
    assert fn.register_key("%temp", c.scope) == fn.register_key("%temp", b.scope)  # inner sees enclosing
    assert fn.register_key("%r4", a.scope) == "%r4"


def test_06_inner_scope_registers_without_percent():
    fn = kernel("""\t{.reg .f16 low,high;
\t mov.b32 {low,high}, %r21;
\t mov.b16 %rs5, low;}
""")
    unpack, mov = fn.instructions
    assert unpack.operands[0] == ir.Vector((ir.Register("low"), ir.Register("high")))
    assert mov.operands[1] == ir.Register("low")


def test_07_param_declarations_in_bodies():
    fn = kernel("""\t{ // callseq 0, 0
\t.param .align 8 .b8 param0[16];
\t.param .b32 retval0;
\tst.param.f32 \t[param0+0], %f46;
\t}
""")
    decls = [d for d in fn.declarations if isinstance(d, ir.Variable)]
    assert [(d.space, d.type, d.name, d.dims, d.align) for d in decls] == [
        ("param", "b8", "param0", (16,), 8), ("param", "b32", "retval0", (), None)]
    assert fn.instructions[0].operands[0] == ir.Address(ir.Symbol("param0"), 0)


CALL_MODULE = """.func  (.param .b32 func_retval0) _Z7dev_fmaff(
\t.param .b32 _Z7dev_fmaff_param_0,
\t.param .b32 _Z7dev_fmaff_param_1
)
{
\t.reg .f32 %f<4>;
\tld.param.f32 \t%f1, [_Z7dev_fmaff_param_0];
\tld.param.f32 \t%f2, [_Z7dev_fmaff_param_1];
\tfma.rn.f32 \t%f3, %f1, %f2, %f1;
\tst.param.f32 \t[func_retval0+0], %f3;
\tret;
}
.func _Z4nopv()
{
\tret;
}
.visible .entry k()
{
\t.reg .f32 %f<50>;
\t{ // callseq 0, 0
\t.reg .b32 temp_param_reg;
\t.param .b32 param0;
\tst.param.f32 \t[param0+0], %f46;
\t.param .b32 param1;
\tst.param.f32 \t[param1+0], %f28;
\t.param .b32 retval0;
\tcall.uni (retval0), 
\t_Z7dev_fmaff, 
\t(
\tparam0, 
\tparam1
\t);
\tld.param.f32 \t%f46, [retval0+0];
\t} // callseq 0
\tcall.uni _Z4nopv;
\tcall.uni _Z4nopv, ();
\tret;
}
"""


def test_08_calls_spanning_lines_with_and_without_return():
    m = module(CALL_MODULE)
    fn = m.kernels[0]
    calls = [i for i in fn.instructions if i.opcode == "call"]
    assert calls[0].operands == (ir.OperandList((ir.Symbol("retval0"),)), ir.Symbol("_Z7dev_fmaff"),
                                 ir.OperandList((ir.Symbol("param0"), ir.Symbol("param1"))))
    assert calls[1].operands == (ir.Symbol("_Z4nopv"),)
    assert calls[2].operands == (ir.Symbol("_Z4nopv"), ir.OperandList(()))
    dev = m.functions[0]
    assert not dev.is_kernel and [r.name for r in dev.returns] == ["func_retval0"]


def test_09_extern_prototype_with_semicolon_on_its_own_line():
    m = module(""".extern .func  (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0,
\t.param .b64 vprintf_param_1
)
;
.weak .func  (.param .align 2 .b8 func_retval0[2]) _ZNK13__nv_bfloat16cv17__nv_bfloat16_rawEv ( .param .b64 a ) ;
""")
    vp, weak = m.functions
    assert vp.body is None and vp.linkage == ("extern",) and [p.name for p in vp.params] == [
        "vprintf_param_0", "vprintf_param_1"]
    assert weak.returns[0].dims == (2,) and weak.returns[0].align == 2 and weak.linkage == ("weak",)
    assert m.kernels == []


def test_10_tuning_directives_between_signature_and_body():
    m = module(""".visible .entry k(
\t.param .u32 n
)
.maxntid 256, 1, 1
.minnctapersm 2
.reqnctapercluster 2, 1, 1
{
\tret;
}
""")
    assert m.kernels[0].directives == (("maxntid", (256, 1, 1)), ("minnctapersm", (2,)),
                                       ("reqnctapercluster", (2, 1, 1)))


def test_11_pragma_after_label_at_module_scope_and_before_body():
    m = module(""".pragma "nounroll";
.visible .entry k()
.pragma "enable_smem_spilling";
{
$L__BB0_1:
\t.pragma "nounroll";
\tret;
}
""")
    assert m.items[0] == ir.Pragma('"nounroll"')
    fn = m.kernels[0]
    assert ("pragma", ('"enable_smem_spilling"',)) in fn.directives
    assert any(isinstance(s, ir.Pragma) for s in fn.body)
    assert fn.labels == {"$L__BB0_1": 0}


def test_12_loc_extended_form_and_file_with_timestamp():
    m = module(""".visible .entry k()
{
\t.reg .b32 %r<2>;
\t.loc\t1 0 3
\tmov.u32 %r1, %tid.x;
\t.loc\t2 440 9, function_name $L__info_string0, inlined_at 1 26 3
\tret;
}
\t.file\t1 "/src/kernel.cu", 1764000000, 4242
\t.file\t2 "/usr/local/cuda/include/cuda_fp16.hpp"
""")
    mov, ret = m.kernels[0].instructions
    assert mov.loc == ir.SourceLoc(1, 0, 3)
    assert ret.loc == ir.SourceLoc(2, 440, 9, "$L__info_string0", (1, 26, 3))
    assert m.files[1] == ir.FileEntry(1, "/src/kernel.cu", 1764000000, 4242)
    assert m.files[2].timestamp is None
    assert ".loc\t2 440 9, function_name $L__info_string0, inlined_at 1 26 3" in m.emit()


def test_13_debug_sections():
    m = module(""".visible .entry k()
{
$L__func_begin0:
\tret;
$L__func_end0:
}
\t.section\t.debug_str
\t{
$L__info_string0:
.b8 95,90,78,51,0
\t}
\t.section\t.debug_info
\t{
.b32 159                                // Length of Unit
.b32 .debug_abbrev                      // section name as operand
.b64 $L__func_begin0
.b32 .debug_loc+229
.b8 -11
.b32 $L__func_end0-$L__func_begin0
\t}
\t.section\t.debug_macinfo\t{\t}
""")
    s_str, s_info, s_mac = m.sections
    assert s_str.entries[0] == ir.SectionEntry("label", label="$L__info_string0")
    assert [v.value for v in s_str.entries[1].values] == [95, 90, 78, 51, 0]
    vals = [e.values[0] for e in s_info.entries]
    assert vals[1] == ir.Expression(".debug_abbrev") and vals[2] == ir.Expression("$L__func_begin0")
    assert vals[3] == ir.Expression(".debug_loc+229") and vals[4] == ir.Immediate(-11)
    assert vals[5] == ir.Expression("$L__func_end0-$L__func_begin0")
    assert s_mac.entries == ()


def test_14_one_element_vector_as_scalar_destination():
    ins = only(kernel("\tld.global.b32 { %r24 }, [ %rd25 + 0 ];"))
    assert ins.operands == (ir.Vector((ir.Register("%r24"),)), ir.Address(ir.Register("%rd25"), 0))


def test_15_vectors_with_immediates_sinks_and_64_registers():
    fn = kernel("""\t{ mov.b32 %f29, {0,%rs6};}
\tmov.b64 {%r1, _}, %rd1;
\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8, %f9, %f10, %f11, %f12, %f13, %f14, %f15, %f16, %f17, %f18, %f19, %f20, %f21, %f22, %f23, %f24, %f25, %f26, %f27, %f28, %f29, %f30, %f31, %f32, %f33, %f34, %f35, %f36, %f37, %f38, %f39, %f40, %f41, %f42, %f43, %f44, %f45, %f46, %f47, %f48, %f49, %f50, %f51, %f52, %f53, %f54, %f55, %f56, %f57, %f58, %f59, %f60, %f61, %f62, %f63}, %rd2, %rd3, %p1, 1, 1, 0, 1;
""", header=".version 8.7\n.target sm_90a\n.address_size 64\n")
    mov, unpack, wg = fn.instructions
    assert mov.operands[1] == ir.Vector((ir.Immediate(0), ir.Register("%rs6")))
    assert unpack.operands[0] == ir.Vector((ir.Register("%r1"), ir.Sink()))
    assert len(wg.operands[0].elements) == 64 and wg.operands[3] == ir.Register("%p1")


def test_16_dual_destinations():
    fn = kernel("""\tsetp.lt.s32 \t%p1|%p2, %r1, %r2;
\tshfl.sync.down.b32 \t%r49|%p3, %r46, %r34, %r47, %r48;
\telect.sync _|%p4, 0xffffffff;
\tsetp.lt.and.s32 %p5|_, %r1, %r2, !%p1;
""")
    setp, shfl, elect, setp2 = fn.instructions
    assert setp.operands[0] == ir.Pair(ir.Register("%p1"), ir.Register("%p2"))
    assert shfl.operands[0] == ir.Pair(ir.Register("%r49"), ir.Register("%p3"))
    assert elect.operands[0] == ir.Pair(ir.Sink(), ir.Register("%p4"))
    assert setp2.operands[3] == ir.Negated(ir.Register("%p1"))


def test_17_double_colon_modifiers_in_any_order():
    fn = kernel("""\tld.global.L1::evict_last.L2::64B.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];
\tatom.global.gpu.acq_rel.add.f32 %f5, [ %rd3 + 0 ], %f6;
\tatom.acq_rel.gpu.global.add.f32 %f5, [ %rd3 + 0 ], %f6;
\tfence.proxy.async.shared::cta;
""")
    ld, a1, a2, fence = fn.instructions
    assert ld.modifiers == ("global", "L1::evict_last", "L2::64B", "v4", "f32")
    assert a1.modset == a2.modset and a1.modifiers != a2.modifiers
    assert fence.modifiers == ("proxy", "async", "shared::cta")


def test_18_open_opcode_namespace():
    fn = kernel("""\tcp.async.cg.shared.global [%r18], [%rd1], 16;
\tcp.async.ca.shared.global [ %r40 + 0 ], [ %rd3 + 0 ], 0x8, %r41;
\tcp.async.commit_group;
\tcp.async.wait_group 0;
\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r4], %r7;
\tldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r2, %r3, %r4}, [%r20+32768];
""")
    assert [i.full_opcode for i in fn.instructions] == [
        "cp.async.cg.shared.global", "cp.async.ca.shared.global", "cp.async.commit_group", "cp.async.wait_group",
        "mbarrier.try_wait.parity.shared::cta.b64", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"]
    assert fn.instructions[-1].operands[1] == ir.Address(ir.Register("%r20"), 32768)


def test_19_guards_on_any_identifier_with_or_without_space():
    fn = kernel("""\t@%p2 bra \t$L__BB1_2;
\t@!%p1 bra $L__BB1_2;
\t@! %p1 bra $L__BB1_2;
\t{ .reg .pred P1; @P1 bra $L__BB1_2; }
$L__BB1_2:
\tret;
""")
    g = [i.guard for i in fn.instructions[:4]]
    assert g[0] == ir.Guard("%p2") and g[1] == ir.Guard("%p1", True) and g[2] == ir.Guard("%p1", True)
    assert g[3] == ir.Guard("P1")


def test_20_labels_alone_or_before_statements_and_before_closing_brace():
    m = module(""".visible .entry k()
{
$L__BB0_1: ret;
$L__BB0_2:
\tret;
$L__func_end0:
}
""")
    fn = m.kernels[0]
    assert fn.labels == {"$L__BB0_1": 0, "$L__BB0_2": 1, "$L__func_end0": 2}
    assert sum(isinstance(s, ir.Label) for s in fn.body) == 3


def test_21_comments_everywhere():
    fn = kernel("""\t// begin inline asm
\t{ // callseq 0, 0
\tmov.u32 %r1, %r2; /* block
comment */ mov.u32 %r3, %r4; // trailing
\t} // callseq 0
\t// end inline asm
""")
    assert [str(i) for i in fn.instructions] == ["mov.u32 \t%r1, %r2;", "mov.u32 \t%r3, %r4;"]


@pytest.mark.parametrize("targets,expected", [
    ("sm_80, debug", ("sm_80", "debug")), ("sm_90a", ("sm_90a",)), ("sm_100f", ("sm_100f",)),
    ("compute_90", ("compute_90",)),
])
def test_22_target_lists_and_suffixes(targets, expected):
    m = isa.loads(f".version 9.0\n.target {targets}\n.address_size 64\n")
    assert m.targets == expected
    assert m.target == expected[0]


def test_23_pointer_parameter_attributes():
    m = module(""".visible .entry k(
\t.param .u64 .ptr .global .align 1 k_param_0,
\t.param .u64 .ptr.global.align 16 k_param_1,
\t.param .align 8 .b8 k_param_2[16]
)
{
\tret;
}
""")
    p0, p1, p2 = m.kernels[0].params
    assert (p0.ptr, p0.ptr_space, p0.ptr_align, p0.type) == (True, "global", 1, "u64")
    assert (p1.ptr, p1.ptr_space, p1.ptr_align) == (True, "global", 16)
    assert (p2.align, p2.dims, p2.size_bytes) == (8, (16,), 16)


def test_24_dynamic_shared_memory_is_an_unsized_array():
    m = module(""".extern .shared .align 16 .b8 global_smem[];
.visible .entry k()
{
\t.reg .b32 %r<2>;
\tmov.b32 %r1, global_smem;
\tret;
}
""")
    (smem,) = m.variables
    assert (smem.linkage, smem.space, smem.align, smem.dims, smem.size_bytes) == (("extern",), "shared", 16, (None,), None)
    assert m.kernels[0].instructions[0].operands[1] == ir.Symbol("global_smem")


def test_25_byte_array_initialisers_hold_little_endian_floats():
    m = module(".const .align 4 .b8 cvals[16] = {0, 0, 128, 63, 0, 0, 32, 64, 0, 0, 64, 192, 205, 204, 204, 61};\n"
               ".global .s32 offsets[][2] = {{-1, 0}, {0, -1}};\n")
    cvals, offsets = m.variables
    raw = bytes(v.value for v in cvals.initializer)
    assert struct.unpack("<4f", raw)[:3] == (1.0, 2.5, -3.0)
    assert offsets.dims == (None, 2)
    assert offsets.initializer == ((ir.Immediate(-1), ir.Immediate(0)), (ir.Immediate(0), ir.Immediate(-1)))


def test_26_function_scope_shared_variables():
    fn = kernel("""\t// demoted variable
\t.shared .align 4 .b8 _ZZ6kernelE2As[4096];
\tmov.u32 %r1, _ZZ6kernelE2As;
""")
    (var,) = [d for d in fn.declarations if isinstance(d, ir.Variable)]
    assert (var.space, var.size_bytes, var.align) == ("shared", 4096, 4)


def test_27_mixed_whitespace():
    fn = kernel("and.b32  \t%r36, %r1,\t\t%r2  ;\n  st.shared.v2.b16 [ %r23 + 0 ], { %rs7, %rs8 };\n")
    a, st = fn.instructions
    assert a.operands == (ir.Register("%r36"), ir.Register("%r1"), ir.Register("%r2"))
    assert st.operands[0] == ir.Address(ir.Register("%r23"), 0)


def test_special_registers_and_components():
    fn = kernel("\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.y;\n\tmov.u64 %rd1, %clock64;\n")
    assert [i.operands[1] for i in fn.instructions] == [ir.Register("%tid", "x"), ir.Register("%ctaid", "y"),
                                                       ir.Register("%clock64")]


def test_spans_point_at_the_statement():
    text = HEADER + ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\t@%p1 mov.u32 %r1, %r2;\n}\n"
    with pytest.raises(isa.SemanticError) as err:
        isa.loads(text, "x.ptx")
    assert (err.value.span.line, err.value.span.col) == (7, 3)  # %p1 is not declared
    fn = kernel("\tmov.u32 %r1, %r2;")
    assert fn.instructions[0].span.line == 14 and fn.instructions[0].span.col == 2
