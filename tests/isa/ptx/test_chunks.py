"""isa.ptx.chunks: kernel definitions found by a scan; parsing one kernel of a many-kernel file."""

from pathlib import Path

import pytest

import isa
from isa.errors import InputError
from isa.ptx import chunks

ROOT = Path(__file__).resolve().parents[3]
SGEMM = ROOT / "examples" / "ptx" / "sgemm_tiled.sm_90.ptx"
REDUCE = ROOT / "examples" / "ptx" / "reduce_sum.sm_90.ptx"

TWO = """.version 9.0
.target sm_90
.address_size 64
// a brace in a comment: {
.visible .entry a(.param .u64 p)
.maxntid 32, 1, 1
{
\t.reg .b32 %r<3>;
\tmov.b32 {%r1, %r2}, 0;   // a vector brace
\tret;
}
.func (.param .b32 r) f(.param .b32 x);
.visible .entry b() { ret; }
"""


def test_entries_skip_prototypes_comments_and_vector_braces():
    found = chunks.entries(TWO)
    assert [(e.name, e.line) for e in found] == [("a", 5), ("b", 13)]
    assert TWO[found[0].start:found[0].end].rstrip().endswith("ret;\n}")
    assert TWO[found[1].start:found[1].end] == ".visible .entry b() { ret; }"


def test_select_keeps_lines_and_other_declarations():
    text = chunks.select(TWO, {"b"})
    assert text.count("\n") == TWO.count("\n")
    m = isa.loads(TWO, "two.ptx", kernels=["b"])
    assert [k.name for k in m.kernels] == ["b"]
    assert m.kernels[0].span.line == 13
    assert m.source == TWO                 # the module's source is the whole file
    assert [f.name for f in m.functions if f.body is None] == ["f"]


def _big() -> str:
    """sgemm_tiled and reduce_sum side by side, with an invalid third kernel after them."""
    a, b = SGEMM.read_text(), REDUCE.read_text()
    body_b = b[b.index(".visible .entry"):]
    bad = "\n.visible .entry broken() { this is not ptx; }\n"
    return a + "\n" + body_b + bad


def test_one_kernel_of_a_file_parses_alone_with_the_file_lines():
    text = _big()
    with pytest.raises(isa.KernlensError):
        isa.loads(text, "big.ptx")                       # the whole file has a broken kernel
    whole_sgemm = isa.load(SGEMM).function("sgemm_tiled")
    m = isa.loads(text, "big.ptx", kernels=["sgemm_tiled"])
    fn = m.function("sgemm_tiled")
    assert [k.name for k in m.kernels] == ["sgemm_tiled"]
    assert [str(i) for i in fn.instructions] == [str(i) for i in whole_sgemm.instructions]
    assert [i.span.line for i in fn.instructions] == [i.span.line for i in whole_sgemm.instructions]
    r = isa.loads(text, "big.ptx", kernels=["reduce_sum"]).function("reduce_sum")
    offset = text[: text.index(".visible .entry reduce_sum")].count("\n")
    assert r.span.line == offset + 1


def test_batches_cover_every_kernel_once_with_file_lines():
    text = _big().replace("\n.visible .entry broken() { this is not ptx; }\n", "\n")
    out = list(chunks.batches(text, max_chars=100))
    assert [names for names, _ in out] == [["sgemm_tiled"], ["reduce_sum"]]
    for names, piece in out:
        assert piece.count("\n") == text.count("\n")
        assert [k.name for k in isa.loads(piece, "big.ptx").kernels] == names


def test_unknown_kernel_parses_whole_and_names_a_bounded_list():
    text = "".join([TWO] + [f".visible .entry k{i}() {{ ret; }}\n" for i in range(40)])
    m = isa.loads(text, "many.ptx", kernels=["nope"])
    assert len(m.kernels) == 42
    with pytest.raises(InputError) as exc:
        m.function("nope")
    assert "k17, ... 22 more" in str(exc.value)
