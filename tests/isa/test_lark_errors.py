"""isa.lark_errors: both front ends report syntax errors through one function, with the same shape."""

from __future__ import annotations

import pytest

import isa
from isa.errors import ParseError
from isa.lark_errors import source_line
from tests.isa.ptx_helpers import DECLS, HEADER


def test_source_line_is_one_based_and_empty_past_the_end():
    text = "a\nbb\nccc"
    assert [source_line(text, n) for n in (1, 2, 3, 4)] == ["a", "bb", "ccc", ""]


def test_truncated_files_say_so_in_both_isas():
    ptx = HEADER + f".visible .entry k()\n{{\n{DECLS}\tmov.u32 %r1,"
    with pytest.raises(ParseError) as p:
        isa.loads(ptx, "t.ptx")
    asm = ".kernel k .vector ()\n{\n  set_flag PIPE_MTE"
    with pytest.raises(ParseError) as a:
        isa.loads(asm, "t.asm", isa="ascend")
    for exc, text in ((p.value, ptx), (a.value, asm)):
        lines = text.splitlines()
        assert exc.message == "unexpected end of file (is the file truncated?)"
        assert (exc.span.line, exc.span.col) == (len(lines), len(lines[-1]) + 1)
        assert exc.source_line == lines[-1]


def test_unexpected_token_spans_the_token_in_both_isas():
    with pytest.raises(ParseError) as p:
        isa.loads(HEADER + f".visible .entry k()\n{{\n{DECLS}\tmov.u32 %r1, %r2 %r3;\n}}\n", "t.ptx")
    with pytest.raises(ParseError) as a:
        isa.loads(".kernel k .vector ()\n{\n  vadd.f16 ub[0] ub[1]\n}\n", "t.asm", isa="ascend")
    assert p.value.message == "unexpected '%r3'" and p.value.span.end_col - p.value.span.col == 3
    assert a.value.message == "unexpected 'ub'" and (a.value.span.line, a.value.span.col) == (3, 18)
    assert a.value.span.end_col == 20 and a.value.render().startswith("t.asm:3:18: error: unexpected 'ub'")
