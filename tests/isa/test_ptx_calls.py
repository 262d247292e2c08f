"""Indirect calls and jump tables: .callprototype with '_' placeholders, .calltargets, .branchtargets."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import isa
from isa import ir
from tests.isa.ptx_helpers import HEADER

TEXT = HEADER + """.func (.param .b32 func_retval0) f1(.param .b32 a)
{
\t.reg .b32 %r<3>;
\tld.param.b32 %r1, [a];
\tst.param.b32 [func_retval0+0], %r1;
\tret;
}
.visible .entry k(.param .u64 p)
{
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<4>;
\tmov.u64 %rd1, f1;
\t{
\t.param .b32 param0;
\tst.param.b32 [param0+0], %r1;
\t.param .b32 retval0;
\tprototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);
\tcall (retval0), %rd1, (param0), prototype_0;
\tld.param.b32 %r2, [retval0+0];
\t}
\tmov.u32 %r3, 1;
\tts: .branchtargets L0, L1;
\tct: .calltargets f1;
\tbrx.idx %r3, ts;
L0:
\tret;
L1:
\tret;
}
"""


def test_prototype_and_target_lists_parse_with_every_name():
    fn = isa.loads(TEXT).kernels[0]
    directives = [s for s in ir.walk(fn.body) if isinstance(s, ir.Directive)]
    assert [(d.name, d.args) for d in directives] == [
        ("callprototype", "prototype_0: (.param .b32 _) _ (.param .b32 _)"),
        ("branchtargets", "ts: L0, L1"),
        ("calltargets", "ct: f1"),
    ]
    call = next(i for i in fn.instructions if i.opcode == "call")
    assert call.operands[1] == ir.Register("%rd1") and call.operands[3] == ir.Symbol("prototype_0")


def test_indirect_call_module_roundtrips_through_ptxas(tmp_path):
    m = isa.loads(TEXT)
    emitted = m.emit()
    assert isa.loads(emitted).items == m.items
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas is not on PATH")
    (tmp_path / "k.ptx").write_text(emitted)
    r = subprocess.run(["ptxas", "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
