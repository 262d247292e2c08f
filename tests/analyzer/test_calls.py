"""Counting through calls and resolving generic addresses (issue 12).

``examples/ptx/calls/reduce_calls_G.sm_90.ptx`` is what ``nvcc -G -arch=sm_90 -ptx`` (CUDA 13.0)
makes of ``reduce_calls.cu``: a warp reduction whose ``__shfl_down_sync`` and ``atomicAdd`` stay
device functions (``atomicAdd`` calls ``__fAtomicAdd`` in turn) and whose loads and atomics are
generic.  The simulator runs it; the analyzer must find the SHUFFLE and ATOMIC it executes and
count the global bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import isa
import sim
from analyzer.cli import main as validate_kernel
from analyzer.report import analyze_module
from analyzer.dataflow import Launch

PTX = Path(__file__).resolve().parents[2] / "examples" / "ptx" / "calls" / "reduce_calls_G.sm_90.ptx"
KERNEL = "_Z12reduce_callsPKfPfi"


def _report(text: str, **kw):
    return analyze_module(isa.loads(text, "reduce_calls.ptx"), kernel=KERNEL, **kw)[0]


@pytest.fixture(scope="module")
def simulated():
    x = np.arange(256, dtype=np.float32)
    out = np.zeros(1, np.float32)
    r = sim.run_kernel(isa.load(str(PTX)), KERNEL, (1, 1, 1), (256, 1, 1), [x, out, np.int32(256)])
    assert out[0] == x.sum()
    return r.stats


@pytest.mark.parametrize("weak", [False, True])
def test_the_shuffle_and_atomic_of_called_functions_are_found(weak):
    text = PTX.read_text()
    if weak:                                   # clang -O0 declares the helpers .weak
        text = text.replace("\n.func ", "\n.weak .func ")
        assert text.count(".weak .func") == 4
    r = _report(text)
    # the kernel's own body has neither; they are counted at the two call sites
    own = {i.opcode for i in r.function.instructions}
    assert "atom" not in own and not any(o.startswith("shfl") for o in own)
    assert r.count("SHUFFLE") == 1 and r.count("ATOMIC") == 1
    assert r.classes["CALL"] == 3                      # two in the kernel, one in atomicAdd
    (k,) = r.matching("ATOMIC")
    assert r.instructions[k].full_opcode == "atom.add.f32"         # the source line, as written
    assert r.where(k).endswith("(in __fAtomicAdd: line 236 calls _ZN36_INTERNAL_136ab1d2_6_red_cu_c8d09b839atomicAddEPff, "
                               "line 45 calls __fAtomicAdd)")
    assert r.call_site(k) == next(j for j, i in enumerate(r.function.instructions) if i.span.line == 236)
    assert [c["callee"][-20:] for c in r.to_json()["calls"]] == ["_shfl_down_syncEjfji", "d09b839atomicAddEPff"]
    if weak:                                   # and the simulator runs the .weak functions' bodies
        x, out = np.arange(64, dtype=np.float32), np.zeros(1, np.float32)
        res = sim.run_kernel(isa.loads(text, "weak.ptx"), KERNEL, (1, 1, 1), (64, 1, 1), [x, out, np.int32(64)])
        assert out[0] == x.sum() and res.stats["opcode_threads"]["atom.add.f32"] == 2


def test_dynamic_counts_follow_the_simulator(simulated):
    r = _report(PTX.read_text(), params={KERNEL + "_param_2": 256}, launch=Launch((1, 1, 1), (256, 1, 1)))
    dyn = r.dynamic()
    ops = simulated["opcode_threads"]
    # every lane 0 of the 8 warps calls atomicAdd once: exact, as the simulator executes it
    assert dyn["mix"]["ATOMIC"] == ops["atom.add.f32"] == 8 and dyn["mix_exact"]["ATOMIC"]
    # the shuffle loop (off = 16, 8, 4, 2, 1: -G code tests through not.pred and carries off
    # through copies and a shift) is run through its exit test: 5 iterations, exact
    assert [lo["iterations"] for lo in r.to_json()["loops"]] == [5]
    assert dyn["mix"]["SHUFFLE"] == ops["shfl.sync.down.b32"] == 256 * 5 and dyn["mix_exact"]["SHUFFLE"]
    # every executed instruction, the callees' included, as the simulator counts them
    assert dyn["instructions"] == {"value": simulated["thread_instructions"], "exact": True}
    assert dyn["bytes"]["param"]["value"] == simulated["bytes_by_space"]["param"]
    # generic ld.f32 [%rd5] (kernel pointer + offset) and atom.add.f32 [%rd1] (the pointer passed
    # down two calls) are global: 4 bytes per executed load and atomic, as the simulator counts them
    assert dyn["bytes"]["global"]["value"] == 4 * (ops["ld.f32"] + ops["atom.add.f32"]) == 1056
    assert "generic" not in dyn["bytes"]
    assert r.to_json()["generic_resolved"] == {"141": "global"}
    assert any("counted through the callee bodies" in n for n in dyn["notes"])


def test_before_calls_were_followed_the_kernel_had_no_shuffle():
    """The counts without the callees: what the analyzer gave before (and what the kernel's own
    body holds)."""
    r = _report(PTX.read_text())
    own = range(len(r.function.instructions))
    assert not [k for k in r.matching("SHUFFLE") if k in own]


def test_validate_kernel_passes_the_expectations(capsys):
    rc = validate_kernel([str(PTX), "--kernel", KERNEL, "--expect", "SHUFFLE>=1", "--expect", "ATOMIC>=1",
                          "--expect", "LOAD_GLOBAL>=1"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "FAIL" not in out


RECURSIVE = """
.version 8.0
.target sm_90
.address_size 64
.func (.param .b32 r) fact(.param .b32 n)
{
  .reg .b32 %r<4>;
  .reg .pred %p1;
  ld.param.b32 %r1, [n];
  setp.le.s32 %p1, %r1, 1;
  @%p1 bra DONE;
  sub.s32 %r2, %r1, 1;
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], %r2;
  call (b), fact, (a);
  ld.param.b32 %r3, [b];
  }
  mul.lo.s32 %r1, %r1, %r3;
DONE:
  st.param.b32 [r], %r1;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 sm[32];
  ld.param.u64 %rd1, [out];
  {
  .param .b32 a;
  .param .b32 b;
  st.param.b32 [a], 5;
  call (b), fact, (a);
  ld.param.b32 %r1, [b];
  }
  mov.u64 %rd2, sm;
  cvta.shared.u64 %rd3, %rd2;
  st.u32 [%rd3], %r1;
  ld.u32 %r2, [%rd3+4];
  st.u32 [%rd1], %r2;
  ld.u64 %rd2, [%rd1+8];
  st.u32 [%rd2], %r2;
  ret;
}
"""


def test_recursion_is_bounded_and_said():
    r = analyze_module(isa.loads(RECURSIVE, "rec.ptx"))[0]
    assert [sub.name for _, sub in r.inlined] == ["fact"]
    assert r.inlined[0][1].inlined == []               # fact's call of itself is not expanded
    notes = r.dynamic()["notes"]
    assert any(n.startswith("recursive call to fact at line 17: not expanded") for n in notes)
    assert r.classes["INT_ARITH"] >= 2                 # fact's sub and mul are counted in k


def test_generic_accesses_resolve_where_the_address_is_known():
    r = analyze_module(isa.loads(RECURSIVE, "rec.ptx"))[0]
    lines = r.to_json()["generic_resolved"]
    # cvta.shared of a .shared variable (+4): shared; the kernel's pointer parameter (+8): global;
    # the pointer loaded from memory at line 43 (line 44's %rd2): not known, counted as generic
    assert lines == {"40": "shared", "41": "shared", "42": "global", "43": "global"}
    assert r.classes["STORE_SHARED"] == 1 and r.classes["LOAD_SHARED"] == 1 and r.classes["STORE_GENERIC"] == 1
    assert r.classes["STORE_GLOBAL"] == 1 and r.classes["LOAD_GLOBAL"] == 1
    assert any("1 generic memory instruction(s) whose address is not traced" in n for n in r.dynamic()["notes"])


def test_indirect_and_external_calls_are_said():
    text = RECURSIVE.replace("  mov.u64 %rd2, sm;", """  {
  .param .b32 c;
  .param .b32 d;
  st.param.b32 [c], 1;
  call (d), %rd1, (c), proto;
  call.uni (d), vprintf, (c);
  }
  mov.u64 %rd2, sm;""").replace(".visible .entry k", """.extern .func (.param .b32 r) vprintf(.param .b32 a);
.visible .entry k""").replace("  .shared .align 4 .b32 sm[32];", """  .shared .align 4 .b32 sm[32];
  proto: .callprototype (.param .b32 _) _ (.param .b32 _);""")
    r = analyze_module(isa.loads(text, "calls.ptx"))[0]
    notes = r.dynamic()["notes"]
    assert "k: 1 indirect call(s) (through a register): the callee is not known here, its body is not counted" in notes
    assert "k: calls of functions without a body in this file (vprintf) are counted as the call only" in notes
