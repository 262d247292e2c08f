"""The PTX parser on lark-cython builds exactly what it builds on pure-Python Lark: the same IR,
down to the fields equality ignores (spans, ``.loc`` lines, scope ids, immediate spellings), and
the same error reports."""

from __future__ import annotations

import dataclasses

import pytest

from isa.errors import KernlensError
from isa.ptx import parser
from tests.conftest import EXAMPLES, corpus_ptx_files


def _lark_cython_or_skip() -> None:
    if parser._PLUGINS is None:
        pytest.skip("lark-cython is not installed: only the pure-Python parser exists here")


def _parse(text: str, name: str, accelerated: bool, monkeypatch):
    monkeypatch.setattr(parser, "ACCELERATED", accelerated)
    return parser.parse(text, name)


def _full(x):
    """Every field of an IR value, compared or not (the module's source text aside)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__,) + tuple(
            (f.name, _full(getattr(x, f.name))) for f in dataclasses.fields(x) if f.name != "source")
    if isinstance(x, (tuple, list)):
        return tuple(_full(e) for e in x)
    if isinstance(x, float) and x != x:
        return ("nan",)
    return (type(x).__name__, x)


def _files():
    files = corpus_ptx_files()
    return files or sorted((EXAMPLES / "ptx").glob("*.ptx"))


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_same_ir_with_and_without_lark_cython(path, monkeypatch):
    _lark_cython_or_skip()
    text = path.read_text()
    fast = _parse(text, str(path), True, monkeypatch)
    slow = _parse(text, str(path), False, monkeypatch)
    assert fast == slow
    assert _full(fast) == _full(slow)
    for f_fn, s_fn in zip(fast.functions, slow.functions):
        if f_fn.body is not None:
            assert [(i.loc, i.scope) for i in f_fn.instructions] == [(i.loc, i.scope) for i in s_fn.instructions]


def test_compared_files_have_locs_and_nested_scopes():
    """The comparison above covers ``.loc`` attachment and scope numbering (calls: see below)."""
    modules = [parser.parse(p.read_text(), str(p)) for p in _files()]
    instructions = [i for m in modules for f in m.functions if f.body is not None for i in f.instructions]
    assert any(i.loc is not None for i in instructions)
    assert any(i.scope > 0 for i in instructions)


_HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
_BROKEN = {
    "unexpected token": _HEAD + ".visible .entry k() { .reg .b32 %r<3>; add.s32 %r1, %r2 %r2; ret; }",
    "unexpected character": _HEAD + ".visible .entry k() { .reg .b32 %r<3>; add.s32 %r1, %r2, #; ret; }",
    "end of file": _HEAD + ".visible .entry k() { .reg .b32 %r<3>; add.s32 %r1, %r2, %r2;",
    "unknown opcode": _HEAD + ".visible .entry k() { .reg .b32 %r<3>; fmaa.rn.f32 %r1, %r2, %r2, %r1; }",
    "undeclared register": _HEAD + ".visible .entry k() { .reg .b32 %r<3>; mov.u32 %r7, %r1; ret; }",
    "bad type": _HEAD + ".visible .entry k(.param .u77 p) { ret; }",
    "bad target": ".version 8.0\n.target gpu90\n.address_size 64\n",
}


@pytest.mark.parametrize("kind", sorted(_BROKEN))
def test_same_errors_with_and_without_lark_cython(kind, monkeypatch):
    _lark_cython_or_skip()
    text = _BROKEN[kind]
    rendered = []
    for accelerated in (True, False):
        with pytest.raises(KernlensError) as info:
            _parse(text, "broken.ptx", accelerated, monkeypatch)
        rendered.append((type(info.value).__name__, info.value.render()))
    assert rendered[0] == rendered[1]
    assert "broken.ptx:" in rendered[0][1]


def test_call_operand_lists_drop_their_commas(monkeypatch):
    """``!instruction`` keeps its commas and Lark shares the ("," operand) repetition with the
    parenthesised operand list: its commas must not leak into the IR."""
    text = _HEAD + """.func (.param .b32 r) f(.param .b32 a, .param .b32 b) { ret; }
.visible .entry k() {
    .param .b32 param0;
    .param .b32 param1;
    .param .b32 retval0;
    call.uni (retval0), f, (param0, param1, param0, param1, param0);
    ret;
}"""
    for accelerated in ((True, False) if parser._PLUGINS is not None else (False,)):
        m = _parse(text, "call.ptx", accelerated, monkeypatch)
        call = m.kernels[0].instructions[0]
        assert [type(o).__name__ for o in call.operands] == ["OperandList", "Symbol", "OperandList"]
        assert [s.name for s in call.operands[2].items] == ["param0", "param1", "param0", "param1", "param0"]
