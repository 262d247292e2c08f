"""The tensor-map operand ``[%rd17, {%r30, %r84}]`` (cp.async.bulk.tensor, as Triton emits it for
sm_90a TMA descriptors): parsed into an Address with coordinates, its registers read, printed back."""

from __future__ import annotations

import isa
from isa.emit import emit_operand
from isa.ptx.registers import registers

PTX = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 64 .b8 k_param_0[128])
{
    .reg .b32 %r<100>;
    .reg .b64 %rd<20>;
    .shared .align 128 .b8 smem[4096];
    .shared .align 8 .b64 bar;
    mov.b64 %rd17, k_param_0;
    mov.u32 %r27, smem;
    mov.u32 %r29, bar;
    mov.u32 %r30, 0;
    mov.u32 %r84, 64;
    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r27], [%rd17, {%r30, %r84}], [%r29];
    cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd17, {%r30, %r84, 7}], [%r27];
    ret;
}
"""


def _tensor_ins(mod):
    fn = mod.functions[0]
    return [i for i in fn.instructions if i.full_opcode.startswith("cp.async.bulk.tensor")]


def test_tensor_map_operand_parses_with_its_coordinates():
    mod = isa.loads(PTX)
    load, store = _tensor_ins(mod)
    src = load.operands[1]
    assert src.base.name == "%rd17"
    assert [e.name for e in src.coords.elements] == ["%r30", "%r84"]
    assert emit_operand(src) == "[%rd17, {%r30, %r84}]"
    assert registers(load).reads == ("%r27", "%rd17", "%r30", "%r84", "%r29")
    dst = store.operands[0]
    assert emit_operand(dst) == "[%rd17, {%r30, %r84, 7}]"
    assert dst.coords.elements[2].value == 7
    assert registers(store).reads == ("%rd17", "%r30", "%r84", "%r27")


def test_plain_addresses_have_no_coordinates():
    mod = isa.loads(PTX)
    (load, _) = _tensor_ins(mod)
    assert load.operands[0].coords is None and emit_operand(load.operands[2]) == "[%r29]"
