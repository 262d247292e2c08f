"""The FMA pipe as two 16-lane halves shared by FP32 and packed fp16 work (examples/h200/pipe_atomic,
measured on the H200; sim/timing/sm.py)."""

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import isa
import sim
from sim import launch
from isa.ptx.semantics import describe
from sim.timing.sm import load_params, op_facts
from tests.sim.timing.test_sm import _kernel as _sm_kernel

ROOT = Path(__file__).resolve().parents[3]
MB = ROOT / "examples" / "microbench"
TRUTH = ROOT / "examples" / "h200" / "pipe_atomic" / "microbench.json"


def _kernel(body: str) -> str:
    """test_sm's kernel with 40 registers of each kind, %f1 = 1.0 and %r5 = two fp16 ones before ``body``."""
    return _sm_kernel("    mov.f32 %f1, 0f3F800000;\n    mov.b32 %r5, 0x3C003C00;\n" + body,
                      regs=".reg .f32 %f<40>; .reg .b32 %r<40>; .reg .b64 %rd<8>;")


def _sm_cycles(body: str, block: int = 128) -> float:
    out = np.zeros(block * 8, np.float32)
    r = sim.run_kernel(isa.loads(_kernel(body)), "k", 1, block, [out, np.uint32(0)], timing="h200", sample="all")
    return r.timing["sm_cycles"]


def _ffma(i):
    return f"    fma.rn.f32 %f{2 + i % 8}, %f1, %f1, %f1;"


def _hfma2(i):
    return f"    fma.rn.f16x2 %r{6 + i % 8}, %r5, %r5, %r5;"


def test_hfma2_takes_both_fma_halves_and_ffma_one():
    """One warp per sub-partition: FFMAs issue one per clock (a half each for 2 clk), HFMA2s one per
    2 clk (both halves), and interleaved each HFMA2 waits for the half the FFMA before it holds: 4 clk
    per pair (hfma2_ffma_mix_4w measured 4.07; separate pipes gave 2, one pipe of 1 + 2 clk 3)."""
    def slope(op):       # clk per instruction (or pair): the extra time of n more
        return (_sm_cycles("\n".join(op(i) for i in range(128))) - _sm_cycles("\n".join(op(i) for i in range(64)))) / 64

    ffma = slope(_ffma)
    hfma2 = slope(_hfma2)
    mix = slope(lambda i: _hfma2(i) + "\n" + _ffma(i))
    assert ffma == pytest.approx(1.0, rel=0.05)
    assert hfma2 == pytest.approx(2.0, rel=0.05)
    assert mix == pytest.approx(4.0, rel=0.05)


def test_conversions_are_not_packed_fp16_work():
    """cvt.f32.f16 is HADD2.F32 (an FP32-rate op on one FMA half), cvt.rn.f16x2.f32 F2FP on the ALU
    (cvt_f16_ffma: 2 of its 3 ops per link count on ncu's FMA pipe at 1 clk each)."""
    src = _kernel("""    .reg .b16 %h<4>;
    cvt.rn.f16.f32 %h1, %f1;
    cvt.f32.f16 %f2, %h1;
    cvt.rn.f16x2.f32 %r6, %f1, %f2;
    fma.rn.f16x2 %r7, %r6, %r6, %r6;""")
    fn = isa.loads(src).functions[0]
    state = SimpleNamespace(instructions=fn.instructions, infos=[describe(i) for i in fn.instructions])
    pipes = {f.opcode: f.pipe for f in op_facts(state, load_params())}
    assert pipes["cvt.rn.f16.f32"] == "alu"
    assert pipes["cvt.f32.f16"] == "fma"
    assert pipes["cvt.rn.f16x2.f32"] == "alu"
    assert pipes["fma.rn.f16x2"] == "fp16"


def _entry(name):
    return next(e for e in json.loads((MB / "manifest.json").read_text())["entries"] if e["name"] == name)


def _predict(name):
    spec = launch.load_launch(f"{MB / 'manifest.json'}#{name}")
    module = isa.load(MB / _entry(name)["ptx"]["sm_90"])
    fn = launch.kernel_function(module, spec, None)
    decoded = launch.build_inputs(spec, spec.seed_for(fn.name))
    device = launch.device_buffers(spec, decoded)
    return sim.run_kernel(module, fn.name, spec.grid, spec.block, launch.kernel_args(spec, device, decoded),
                          spec.shared_bytes(module.target), timing="h200", sample="all").timing


def _measured(name):
    return json.loads(TRUTH.read_text())["launches"][name]["ncu"]["gpc__cycles_elapsed.max"]


def test_a_waiting_hfma2_claims_the_fma_pipe():
    """Four warps per sub-partition, HFMA2 and FFMA interleaved: an HFMA2 waiting for the busy half
    keeps FFMAs of other warps off the free one; without that the FFMAs fill the gaps and the launch
    is 8.5 % faster than the H200's 122,650 cycles (112,184)."""
    t = _predict("hfma2_ffma_mix_16w")
    assert t["cycles"] == pytest.approx(_measured("hfma2_ffma_mix_16w"), rel=0.05)
    assert t["pipes"]["fma"]["utilization"] > 0.75        # ncu: sm__pipe_fma_cycles_active 82 %
