"""PTX forms ptxas accepts that nvcc and Triton do not emit: vector-typed registers and their
components, ``.reg`` parameters with several results, ``reg + imm`` sources, ``WARP_SZ``, and
``.global``/``.const`` variables declared inside a function.  Expected values follow from the
PTX ISA (5.4.2 vectors, 11.2.2 .reg parameters, 4.5.1 WARP_SZ, 6.4 operands)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import isa
import sim
from isa.errors import SimulationError

FORMS = Path(__file__).resolve().parents[3] / "examples" / "ptx" / "isa" / "forms"


def _run(text: str, n: int = 12):
    out = np.zeros(n, np.uint32)
    res = sim.run_kernel(isa.loads(text), "k", 1, 1, [out])
    return out, res


def test_vector_registers_reg_parameters_and_operand_forms():
    out, res = _run((FORMS / "vectors_calls.ptx").read_text())
    assert not res.problems
    # v = {1, 9, 3, 4} after mov.v4 and mov v.y; v.x + v.y + 1; v.w = WARP_SZ; two(10) = (11, 42);
    # function-scope .global inner = 3 and .const cin = 4; w = {out, 7}: w.x + w.y
    assert out[:10].tolist() == [1, 9, 3, 4, 11, 32, 11, 42, 3, 4]
    assert out[10] == 7 and out[11] != 0     # low and high word of the generic address out + 7


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_ptxas_accepts_the_forms_and_their_canonical_text(tmp_path):
    src = FORMS / "vectors_calls.ptx"
    canon = tmp_path / "canon.ptx"
    canon.write_text(isa.load(str(src)).emit())
    for f in (src, canon):
        r = subprocess.run(["ptxas", "-arch=sm_90", str(f), "-o", str(tmp_path / "x.o")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_forms_round_trip_through_the_emitter():
    m = isa.load(str(FORMS / "vectors_calls.ptx"))
    assert isa.loads(m.emit()) == m


HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 temp;
    .reg .v2 .b32 pair;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
"""


@pytest.mark.parametrize("line, message", [
    ("mov.b32 temp, 1;\n    st.global.u32 [%rd1], temp.w;",
     "'.w' selects a component of a vector register, but 'temp' is declared .b32 (not .v2/.v4)"),
    ("mov.b32 pair.z, 1;", "'pair.z': a .v2 register has components x, y"),
    ("mov.b32 temp, 1;\n    add.u32 temp, temp.b1, 1;", "'.b1' is a byte/half-word selector, allowed only in video"),
])
def test_misused_components_name_the_real_problem(line, message):
    with pytest.raises(SimulationError, match=message.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)")):
        _run(HEAD + "    " + line + "\n    ret;\n}\n")


def test_reg_plus_immediate_wraps_in_the_instruction_type():
    out, res = _run(HEAD + "    mov.b32 temp, -1;\n    st.global.u32 [%rd1], temp + 2;\n"
                    "    mov.u64 %rd2, 5;\n    st.global.u64 [%rd1+8], %rd2 - 6;\n    ret;\n}\n", 4)
    assert not res.problems
    assert out.tolist() == [1, 0, 0xFFFFFFFF, 0xFFFFFFFF]
