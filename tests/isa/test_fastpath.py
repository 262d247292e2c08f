"""isa.ptx.fastpath (issue #15, big files): the statement lines built without Lark (instructions,
.loc, labels, .reg ranges) are the grammar's
IR exactly, every span, ``.loc``, scope and spelling included, on every corpus and bundled PTX file;
lines it does not take are left to Lark; errors are Lark's, at the same place with the same caret."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import isa
from isa import ir
from isa.errors import KernlensError
from isa.ptx import fastpath, parser
from tests.conftest import CORPUS, EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((CORPUS / "ptx").glob("*.ptx")) + sorted(EXAMPLES.rglob("*.ptx"))


def dump(x):
    """Everything an IR node holds, spans and non-compared fields included, as nested tuples."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__,) + tuple((f.name, dump(getattr(x, f.name))) for f in dataclasses.fields(x)
                                           if f.name != "source")
    if isinstance(x, (tuple, list)):
        return tuple(dump(e) for e in x)
    if isinstance(x, float) and x != x:
        return "nan"
    return x


def both(text: str, file: str = "t.ptx", **kw):
    """(fast-path module or error, Lark-only module or error)."""
    out = []
    for fast in (True, False):
        try:
            out.append(parser.parse(text, file, fast=fast, **kw))
        except KernlensError as exc:
            out.append(exc)
    return out


def test_every_corpus_and_bundled_file_gives_the_grammar_ir():
    assert len(FILES) >= 90, "the bundled examples are missing"
    taken = lines = 0
    for path in FILES:
        text = path.read_text()
        try:
            slow = parser.parse(text, str(path), fast=False)
        except KernlensError:
            continue                      # a file of errors (examples/ptx/bugs): tested below
        fast = parser.parse(text, str(path), fast=True)
        assert dump(fast.items) == dump(slow.items), path.name
        assert (fast.version, fast.targets, fast.address_size) == (slow.version, slow.targets, slow.address_size)
        _, runs = fastpath.substitute(text, str(path))
        taken += sum(1 for r in runs for s in r.statements if type(s) in (ir.Loc, ir.Instruction))
        lines += sum(1 for fn in slow.functions for s in _walk(fn.body or ()) if type(s) in (ir.Loc, ir.Instruction))
    # most statement lines of real PTX are taken: the fast path is not a no-op (measured: ~95 %)
    assert taken > 0.85 * lines, (taken, lines)


def _walk(body):
    for s in body:
        yield s
        if type(s) is ir.Scope:
            yield from _walk(s.body)


def test_lines_it_takes_and_lines_it_leaves():
    text = """.version 8.7
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<3>;
    .reg .b32 %r<9>;
    .reg .b64 %rd<4>;
    .reg .f32 %f<5>;
    .loc 1 7 3
    ld.param.u64 %rd1, [p];
    @!%p1 bra $L;
    mov.u32 %r1, %tid.x; // a comment
    add.s32 %r2, %r1, -0x10;
    mov.b32 %f1, 0f3F800000;
    ld.global.v4.f32 {%f1, %f2, _, %f4}, [%rd1+-16];
    shfl.sync.bfly.b32 %r3|%p2, %r2, 1, 31, -1;
    mov.u32 %r4, 017;
    mov.f32 %f3, 1.5;
    add.s32 %r5, %r1, 1; add.s32 %r6, %r1, 2;
    call.uni (%r7), f, (%r1);
$L:
    .loc 1 8 5, function_name $L__info_string0, inlined_at 1 7 3
    ret;
}
"""
    sub, runs = fastpath.substitute(text, "t.ptx")
    def what(s):
        t = type(s)
        return {ir.Instruction: lambda: s.opcode, ir.Loc: lambda: str(s.loc.line), ir.Label: lambda: s.name,
                ir.RegisterDecl: lambda: f"{s.names[0]}<{s.count}>"}[t]()

    taken = [type(s).__name__ + ":" + what(s) for r in runs for s in r.statements]
    assert taken == ["RegisterDecl:%p<3>", "RegisterDecl:%r<9>", "RegisterDecl:%rd<4>", "RegisterDecl:%f<5>",
                     "Loc:7", "Instruction:ld", "Instruction:bra", "Instruction:mov", "Instruction:add",
                     "Instruction:mov", "Instruction:ld", "Instruction:shfl", "Label:$L", "Loc:8", "Instruction:ret"]
    # octal, decimal floats, two statements on a line and calls are Lark's: their lines are untouched
    for kept in ("mov.u32 %r4, 017;", "mov.f32 %f3, 1.5;", "add.s32 %r5, %r1, 1; add.s32 %r6, %r1, 2;",
                 "call.uni (%r7), f, (%r1);"):
        assert kept in sub
    assert sub.count("\n") == text.count("\n")
    fast, slow = both(text, lenient=True)
    assert dump(fast.items) == dump(slow.items)
    ins = {i.span.line: i for i in fast.kernels[0].instructions}
    assert ins[12].guard.negated and ins[12].span.col == ins[12].guard.span.col == 7   # @! then the name
    assert ins[14].operands[2].text == "-0x10" and ins[14].operands[2].value == -16
    assert ins[16].operands[1].offset == -16 and ins[16].loc.line == 7
    assert ins[24].loc.function_name == "$L__info_string0" and ins[24].loc.inlined_at == (1, 7, 3)


@pytest.mark.parametrize("bad, where", [
    ("    add.s32 %r2, %r9, 1;", "register '%r9' is used but not declared"),
    ("    mov.u32 %r1, 08;", "invalid octal integer literal '08'"),
    ("    mov.u32 %r1 %r2;", "error"),
    ("    frob.u32 %r1, %r2;", "frob"),
    ("    mov.u32 %r1,\n        %r2.q;", "error"),
    ("    add.s32 %r2, %r1, 1\n    ret;", "error"),
])
def test_errors_are_the_grammar_errors_at_the_same_place(bad, where):
    text = (".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
            "    .reg .b32 %r<3>;\n    mov.u32 %r1, %tid.x;\n" + bad + "\n    ret;\n}\n")
    fast, slow = both(text)
    assert isinstance(fast, KernlensError) and isinstance(slow, KernlensError)
    assert type(fast) is type(slow) and str(fast) == str(slow) and fast.span == slow.span
    assert fast.source_line == slow.source_line and fast.render() == slow.render()
    assert where in str(fast) or where == "error"


def test_a_line_that_continues_a_statement_is_not_a_run():
    # `ret;` alone on its line looks like a fast line, but it continues the `.loc` ... no: the line
    # after an unfinished instruction (`mov.u32 %r1,`) starts no statement; the real text decides
    text = (".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
            "    .reg .b32 %r<3>;\n    mov.u32 %r1,\n    x;\n    ret;\n}\n")
    fast, slow = both(text)
    assert type(fast) is type(slow) and str(fast) == str(slow)


def test_lines_in_a_block_comment_stay_comment():
    text = (".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
            "    .reg .b32 %r<3>;\n    /* disabled:\n    mov.u32 %r1, %r2;\n    add.s32 %r1, %r1, 1;\n"
            "    */ mov.u32 %r2, 3;\n    ret;\n}\n")
    fast, slow = both(text)
    assert dump(fast.items) == dump(slow.items)
    assert [i.opcode for i in fast.kernels[0].instructions] == ["mov", "ret"]


def test_a_text_with_the_marker_is_parsed_as_it_is():
    text = ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() { \x020 ret; }\n"
    assert fastpath.substitute(text, "t.ptx") == (text, [])
    fast, slow = both(text)
    assert isinstance(fast, KernlensError) and fast.render() == slow.render()
    assert "control character" in str(fast) and fast.span.line == 4


def test_the_cli_parse_takes_the_fast_path():
    path = EXAMPLES / "ptx" / "hgemm_wmma.sm_90.ptx"
    text = path.read_text()
    _, runs = fastpath.substitute(text, str(path))
    assert runs and parser.FAST_PATH
    assert dump(isa.loads(text, str(path), cache=False).items) == dump(parser.parse(text, str(path), fast=False).items)


def test_every_corpus_and_bundled_file_is_parsed_once(monkeypatch):
    """No file falls off the fast path (a substituted parse that fails is parsed again from the real
    text, twice the work): nvcc -lineinfo files end with DWARF ``.section`` blocks whose labels
    (``$L__info_string0:``) are section entries, not statements, and stay Lark's."""
    parses = []
    real = parser._parse
    monkeypatch.setattr(parser, "_parse", lambda *a, **k: parses.append(a[1]) or real(*a, **k))
    sections = 0
    for path in FILES:
        text = path.read_text()
        try:
            parser.parse(text, str(path), fast=False)
        except KernlensError:
            continue                      # a file of errors
        parses.clear()
        parser.parse(text, str(path), fast=True)
        assert parses == [str(path)], path.name
        sections += ".section" in text
    assert sections >= 20                 # (the lineinfo files: reduce_sum, hgemm_wmma, dot_dp4a...)


def test_a_section_s_lines_are_left_to_lark():
    text = (".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n$L__BB0_1:\n    ret;\n}\n"
            "\t.section\t.debug_str\n\t{\n$L__info_string0:\n.b8 107,0\n\t}\n"
            ".visible .entry j()\n{\n$L__BB1_1:\n    ret;\n}\n")
    sub, runs = fastpath.substitute(text, "t.ptx")
    labels = [s.name for r in runs for s in r.statements if type(s) is ir.Label]
    assert labels == ["$L__BB0_1", "$L__BB1_1"] and "$L__info_string0:" in sub
    fast, slow = both(text)
    assert dump(fast.items) == dump(slow.items)


class _Scans:
    """:data:`fastpath._LINE` with the ranges it is asked to scan recorded."""

    def __init__(self, pattern):
        self.pattern, self.ranges = pattern, []

    def finditer(self, text, pos=0, endpos=None):
        endpos = len(text) if endpos is None else endpos
        self.ranges.append((pos, endpos))
        return self.pattern.finditer(text, pos, endpos)


@pytest.mark.parametrize("section", [False, True])
def test_a_stretch_of_empty_lines_is_stepped_over(monkeypatch, section):
    """A big file's batch (isa.ptx.chunks.Split.batch_text) keeps the kernels before its own as
    empty lines, up to a million: the fast path scans none of them (measured on the 30 MB file's
    middle batch, 536 k empty lines: its substitution 0.185 -> 0.151 s of CPU) and takes the same
    lines as one scan of the whole text, at the same places."""
    head = ".version 8.0\n.target sm_90\n.address_size 64\n"
    if section:
        head += "\t.section\t.debug_str\n\t{\n$L__info_string0:\n.b8 107,0\n\t}\n"
    body = ".visible .entry k(.param .u64 p)\n{\n    .reg .b32 %r<3>;\n    mov.u32 %r1, %tid.x;\n$L__BB0_1:\n" \
           "    add.s32 %r2, %r1, 1;\n\n\n    ret;\n}\n"
    text = head + "\n" * 100_000 + "    " + body + "\n" * 70 + body.replace("k(", "j(")
    monkeypatch.setattr(fastpath, "_LINE", _Scans(fastpath._LINE))
    sub, runs = fastpath.substitute(text, "t.ptx")
    blank = range(len(head) + 64, len(head) + 100_000 - 64)
    scanned = fastpath._LINE.ranges
    assert scanned and not any(a <= blank.start and blank.stop <= b for a, b in scanned), scanned
    monkeypatch.undo()
    every = [m.span() for m in fastpath._LINE.finditer(text) if not section or m.start() > len(head)]
    taken = [m.span() for m in fastpath._lines(text, 0)]
    assert taken == every and len(taken) == 2 * 5
    fast, slow = both(text)
    assert dump(fast.items) == dump(slow.items) and fast.kernels[1].span.line == slow.kernels[1].span.line > 100_000
