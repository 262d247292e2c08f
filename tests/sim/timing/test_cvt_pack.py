"""ptxas packs two scalar ``cvt.rn.f16.f32`` of one basic block into one F2FP.F16.F32.PACK_AB
(examples/h200/pipe_atomic sass.txt, cvt_f16_ffma); sim/timing/sm.py op_facts marks the second of
each pair as issued inside the first (no issue slot, no pipe). The bf16 form is not packed."""

from types import SimpleNamespace

import pytest

import numpy as np

import isa
import sim
from isa.semantics import describe
from sim.timing.sm import load_params, op_facts
from tests.sim.timing.test_sm import _kernel as _sm_kernel


def _kernel(body: str) -> str:
    return _sm_kernel("    mov.f32 %f1, 0f3F800000;\n" + body,
                      regs=".reg .f32 %f<40>; .reg .b32 %r<40>; .reg .b64 %rd<8>; .reg .b16 %h<40>;")


def _sm_cycles(body: str, block: int) -> float:
    out = np.zeros(block * 8, np.float32)
    r = sim.run_kernel(isa.loads(_kernel(body)), "k", 1, block, [out, np.uint32(0)], timing="h200", sample="all")
    return r.timing["sm_cycles"]


def _facts(body: str):
    fn = isa.loads(_kernel(body)).functions[0]
    state = SimpleNamespace(instructions=fn.instructions, infos=[describe(i) for i in fn.instructions])
    return [f for f in op_facts(state, load_params()) if f.opcode.startswith("cvt.")]


def _cvts(op: str, n: int) -> str:
    return "\n".join(f"    {op} %h{1 + i % 32}, %f{1 + i % 8};" for i in range(n))


def test_every_second_f16_narrowing_is_packed_into_the_first():
    f = _facts(_cvts("cvt.rn.f16.f32", 3) + "\n    cvt.f32.f16 %f2, %h1;\n" + _cvts("cvt.rn.bf16.f32", 2))
    assert [(x.opcode, x.packed, x.pipe) for x in f] == [
        ("cvt.rn.f16.f32", False, "alu"), ("cvt.rn.f16.f32", True, None), ("cvt.rn.f16.f32", False, "alu"),
        ("cvt.f32.f16", False, "fma"), ("cvt.rn.bf16.f32", False, "alu"), ("cvt.rn.bf16.f32", False, "alu")]


def test_a_pair_does_not_span_a_branch():
    f = _facts("    cvt.rn.f16.f32 %h1, %f1;\n    bra L1;\nL1:\n    cvt.rn.f16.f32 %h2, %f2;")
    assert [x.packed for x in f] == [False, False]


def test_a_label_starts_a_new_block():
    """A label is a block start even without a branch before it (a loop head): no pair across it.
    Here the state carries its function (as a launch state does) so op_facts sees the labels."""
    fn = isa.loads(_kernel("    cvt.rn.f16.f32 %h1, %f1;\nL1:\n"
                           "    cvt.rn.f16.f32 %h2, %f2;")).functions[0]
    state = SimpleNamespace(instructions=fn.instructions, infos=[describe(i) for i in fn.instructions],
                            funcs=[SimpleNamespace(fn=fn, base=0)])
    assert [x.packed for x in op_facts(state, load_params()) if x.opcode.startswith("cvt.")] == [False, False]


def test_packed_pairs_halve_the_alu_time_of_f16_narrowing():
    """Four warps per sub-partition of independent conversions: the ALU takes 2 clk per F2FP, one per
    2 cvt.rn.f16.f32 (1 clk per conversion, issue-bound), against 2 clk per conversion unpacked."""
    def slope(op):
        return (_sm_cycles(_cvts(op, 128), block=512) - _sm_cycles(_cvts(op, 64), block=512)) / 64 / 4
    assert slope("cvt.rn.f16.f32") == pytest.approx(1.0, rel=0.1)
