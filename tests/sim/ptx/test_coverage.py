"""docs/ptx-coverage.md is the output of ``python -m sim.ptx.coverage`` (so the table of what is
parsed, analysed and simulated cannot drift from the opcode, semantics and builder tables)."""

from __future__ import annotations

from pathlib import Path

from sim.ptx import coverage

DOC = Path(__file__).resolve().parents[3] / "docs" / "ptx-coverage.md"


def test_committed_coverage_doc_equals_the_generated_one():
    assert DOC.read_text() == coverage.render(), "regenerate: python -m sim.ptx.coverage > docs/ptx-coverage.md"


def test_the_table_knows_what_was_added_and_what_is_left():
    rows = {r[0].strip("`"): r for r in coverage.opcode_rows()}
    for name in ("set", "cvt.pack", "bfind", "bmsk", "vadd", "vmad", "vset4", "movmatrix", "szext", "fns"):
        assert rows[name][4] == "yes", name
    assert rows["mma.sp"][4] == "partial"
    assert rows["mma"][4] == "yes"
    forms = {(r[0], r[1], r[2]): r[3] for r in coverage.tensor_rows()}
    assert forms[("wmma.mma", "m16n16k16", "bf16 -> f32")] == "yes"
    assert forms[("mma.sync", "m8n8k4", "f64 -> f64")] == "yes"
    assert forms[("mma.sp", "m16n8k32", "s8 -> s32")] == "yes"
    assert forms[("mma.sp", "m16n8k16", "tf32 -> f32")] == "yes"
    assert [f for f, v in forms.items() if f[0] == "mma.sp" and v != "yes"] == []
