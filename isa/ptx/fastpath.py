"""A fast path past Lark for the common statement lines of a PTX body: instructions, ``.loc``,
labels and ``.reg .TYPE %name<N>;`` declarations.

Most lines of real PTX are one instruction alone on its line with registers, integers, hex floats,
simple addresses and brace vectors (``ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd8+16];``), or a
``.loc`` line. :func:`substitute` builds the IR of each such line here, exactly as the grammar's
builder (:class:`isa.ptx.parser._Builder`) would build it, spans included, and replaces each run
of consecutive such lines by one ``FASTRUN`` token (``\\x02`` and the run's number) on the run's
first line, the run's other lines left as their newlines: Lark then lexes and parses one token
where it read the whole run, at the same lines and columns for everything else. The builder turns
the token into the run's statements (and gives the run's leading instructions the ``.loc`` in
force where the run starts).

A line is taken only when it is certainly what the grammar would read there: anything unusual
(a comment inside the line, a string, ``(``, octal or binary integers, decimal floats, ``.unified``,
two statements on one line, ...) leaves the line to Lark. A run stands where a statement may
stand; if it stands anywhere else (a line that continues a statement begun on the line before it)
the substituted parse fails, and :func:`isa.ptx.parser.parse` parses the real text again, so that
every error, its place and its caret are always Lark's on the real text. The second pass
(``_Resolver``: opcodes, modifiers, registers declared) checks every instruction, fast or not.
``tests/isa/test_fastpath.py`` checks that the IR, every span and ``.loc`` included, is the
grammar's on every corpus and bundled PTX file.
"""

from __future__ import annotations

import dataclasses
import re
import struct

from .. import ir
from ..errors import Span

_new = object.__new__

_NAME = r"(?:[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+)"
_INT = r"(?:0[xX][0-9a-fA-F]+U?|[1-9][0-9]*U?|0U?)"        # no octal (017, 08) or binary: Lark's
_END = r"(?![A-Za-z0-9_$.])"
_COMP = r"\.(?:[xyzwrgba]|b[0-7]{1,4}|h[0-3]{1,2})(?![A-Za-z0-9_$])"    # COMPONENT or SELECTOR
_OPCODE = r"[a-z][a-z0-9_]*(?:\.[A-Za-z0-9_$]+(?:::[A-Za-z0-9_$]+)*)*"
_TAIL = r"[ \t]*(?://(?:(?!\*/)[^\n\r])*)?\r?"         # a line comment that closes no block comment

# One statement line: an instruction (guard, opcode, the operand text up to its ';') or a .loc.
_LINE = re.compile(
    rf"^[ \t]*(?:"
    rf"(?:@[ \t]*(?P<neg>![ \t]*)?(?P<guard>{_NAME})[ \t]+)?(?P<op>{_OPCODE})(?:[ \t]+(?P<args>[^;\n/\"()#:]*?))?[ \t]*;"
    rf"|\.loc[ \t]+(?P<lf>[1-9][0-9]*|0)[ \t]+(?P<ll>[1-9][0-9]*|0)[ \t]+(?P<lc>[1-9][0-9]*|0)"
    rf"(?:[ \t]*,[ \t]*function_name[ \t]+(?P<fn>{_NAME}|\.[A-Za-z_$][A-Za-z0-9_$]*)(?:[ \t]*\+[ \t]*(?P<fo>[1-9][0-9]*|0))?)?"
    rf"(?:[ \t]*,[ \t]*inlined_at[ \t]+(?P<i1>[1-9][0-9]*|0)[ \t]+(?P<i2>[1-9][0-9]*|0)[ \t]+(?P<i3>[1-9][0-9]*|0))?"
    rf"|(?P<label>{_NAME}[ \t]*:)(?!:)"
    rf"|\.reg[ \t]+\.(?P<rt>[A-Za-z_$][A-Za-z0-9_$]*)[ \t]+(?P<rn>{_NAME})[ \t]*<[ \t]*(?P<rc>[1-9][0-9]*|0)[ \t]*>[ \t]*;"
    rf"){_TAIL}$",
    re.M,
)

# One operand, its leading blanks included; the ',' after it (or the end) is checked by the caller.
_OPERAND = re.compile(
    rf"[ \t]*(?:"
    rf"(?P<n>{_NAME})(?P<c>{_COMP})?(?:[ \t]*\|[ \t]*(?:(?P<p>{_NAME})|(?P<ps>_(?![A-Za-z0-9_$]))))?"
    rf"|(?P<s>_)(?![A-Za-z0-9_$])(?:[ \t]*\|[ \t]*(?:(?P<sp>{_NAME})|(?P<ss>_(?![A-Za-z0-9_$]))))?"
    rf"|!(?P<neg>[ \t]*)(?P<nn>{_NAME})"
    rf"|(?P<minus>-[ \t]*)?(?P<i>{_INT}){_END}"
    rf"|(?P<f>0[fF][0-9a-fA-F]{{8}}|0[dD][0-9a-fA-F]{{16}})(?![A-Za-z0-9_$.])"
    rf"|\[[ \t]*(?:(?P<an>{_NAME})[ \t]*(?:(?P<sign>\+[ \t]*-|\+|-)[ \t]*(?P<ao>{_INT}){_END})?|(?P<aa>{_INT}){_END})[ \t]*\]"
    rf"|\{{(?P<v>[^{{}}]*)\}}"
    rf")[ \t]*"
)

_ELEMENT = re.compile(
    rf"[ \t]*(?:(?P<n>{_NAME})(?P<c>\.[xyzwrgba](?![A-Za-z0-9_$]))?|(?P<s>_)(?![A-Za-z0-9_$])"
    rf"|(?P<minus>-[ \t]*)?(?P<i>{_INT}){_END}|(?P<f>0[fF][0-9a-fA-F]{{8}}|0[dD][0-9a-fA-F]{{16}})(?![A-Za-z0-9_$.]))[ \t]*"
)

#: the marker of a run in the substituted text (the grammar's FASTRUN terminal)
MARK = "\x02"


class _Decline(Exception):
    """The line is not one the fast path takes: Lark reads it."""


def _int(t: str) -> int:
    t = t.rstrip("U")
    if t[:2] in ("0x", "0X"):
        return int(t[2:], 16)
    return int(t)


def _span(file: str, line: int, col: int, end_col: int) -> Span:
    s = _new(Span)
    d = s.__dict__
    d["file"] = file
    d["line"] = line
    d["col"] = col
    d["end_line"] = line
    d["end_col"] = end_col
    return s


_Register, _Symbol, _Immediate = ir.Register, ir.Symbol, ir.Immediate


# the grammar's keywords that NAME also matches: Lark may lex them as the keyword, never taken here
_KEYWORDS = frozenset({"function_name", "inlined_at"})


def _name(s: str, file: str, line: int, col: int):
    """The builder's ``name``: a register when it starts with ``%``, else a symbol."""
    if s[0] != "%" and s in _KEYWORDS:
        raise _Decline
    x = _new(_Register if s[0] == "%" else _Symbol)
    d = x.__dict__
    d["name"] = s
    if s[0] == "%":
        d["component"] = None
    d["span"] = _span(file, line, col, col + len(s))
    return x


def _register(s: str, comp: str, file: str, line: int, col: int):
    x = _new(_Register)
    d = x.__dict__
    d["name"] = s
    d["component"] = comp
    d["span"] = _span(file, line, col, col + len(s))
    return x


def _immediate(value, kind: str, text: str, span: Span):
    x = _new(_Immediate)
    d = x.__dict__
    d["value"] = value
    d["kind"] = kind
    d["text"] = text
    d["span"] = span
    return x


def _hex_float(t: str, file: str, line: int, col: int):
    span = _span(file, line, col, col + len(t))
    if t[1] in "fF":
        return _immediate(struct.unpack("<f", struct.pack("<I", int(t[2:], 16)))[0], "f32", t, span)
    return _immediate(struct.unpack("<d", struct.pack("<Q", int(t[2:], 16)))[0], "f64", t, span)


def _int_imm(m, g: str, minus: str | None, file: str, line: int, base: int):
    t = m.group(g)
    col = base + m.start(g)
    span = _span(file, line, col, col + len(t))
    if minus is not None:
        return _immediate(-_int(t), "int", "-" + t, span)
    return _immediate(_int(t), "int", t, span)


def _vector(text: str, file: str, line: int, base: int) -> ir.Vector:
    """The elements of a ``{...}`` (``text`` between the braces, its first character at column ``base``)."""
    elements = []
    pos, n = 0, len(text)
    if text.strip(" \t") == "":
        return ir.Vector(())
    match = _ELEMENT.match
    while True:
        m = match(text, pos)
        if m is None:
            raise _Decline
        if m.group("n") is not None:
            c = m.group("c")
            col = base + m.start("n")
            if c is None:
                elements.append(_name(m.group("n"), file, line, col))
            else:
                elements.append(_register(m.group("n"), c[1:], file, line, col))
        elif m.group("s") is not None:
            elements.append(ir.Sink())
        elif m.group("i") is not None:
            elements.append(_int_imm(m, "i", m.group("minus"), file, line, base))
        else:
            elements.append(_hex_float(m.group("f"), file, line, base + m.start("f")))
        pos = m.end()
        if pos == n:
            break
        if text[pos] != ",":
            raise _Decline
        pos += 1
    return ir.Vector(tuple(elements))


def _operands(args: str, file: str, line: int, base: int) -> tuple:
    """The operands of ``args`` (the text after the opcode, its first character at column ``base``)."""
    if "{" in args:                         # a vector's commas: operand by operand
        return _operands_scan(args, file, line, base)
    ops = []
    shapes = _SHAPES
    at = base
    for piece in args.split(","):
        shape = shapes.get(piece)
        if shape is None:
            shape = _shape(piece)
        if shape.__class__ is tuple:        # a plain name, an integer or [name+offset]: most operands
            kind, off, name, value, text, cls, size = shape
            col = at + off
            at += len(piece) + 1
            sp = _new(Span)
            sd = sp.__dict__
            sd["file"] = file
            sd["line"] = line
            sd["col"] = col
            sd["end_line"] = line
            sd["end_col"] = col + size
            x = _new(cls)
            d = x.__dict__
            if kind == 1:                   # an integer
                d["value"] = value
                d["kind"] = "int"
                d["text"] = text
                d["span"] = sp
                ops.append(x)
                continue
            d["name"] = name
            if cls is _Register:
                d["component"] = None
            d["span"] = sp
            if kind == 2:                   # [name+offset]: value is the offset
                a = _new(_Address)
                ad = a.__dict__
                ad.update(_ADDRESS_DEFAULTS)
                ad["base"] = x
                ad["offset"] = value
                x = a
            ops.append(x)
            continue
        ops.append(_one(shape, file, line, at))
        at += len(piece) + 1
    return tuple(ops)


_Address = ir.Address
_ADDRESS_DEFAULTS = {f.name: f.default for f in dataclasses.fields(ir.Address)}
assert all(v is not dataclasses.MISSING for k, v in _ADDRESS_DEFAULTS.items() if k not in ("base",))


#: operand text -> ``(kind, offset of the token, token, value, text, class, token length)`` for a
#: plain name (kind 0), an integer (1: its value and text) or ``[name+offset]`` (2: the offset),
#: else its match (built by :func:`_one`)
_SHAPES: dict = {}


def _shape(piece: str):
    m = _OPERAND.fullmatch(piece)
    if m is None:
        raise _Decline
    g = m.group
    shape = m
    n = g("n")
    if n is not None:
        if g("c") is None and g("p") is None and g("ps") is None and not (n[0] != "%" and n in _KEYWORDS):
            shape = (0, m.start("n"), n, None, None, _Register if n[0] == "%" else _Symbol, len(n))
    elif g("i") is not None:
        t = g("i")
        shape = (1, m.start("i"), t, -_int(t) if g("minus") is not None else _int(t),
                 "-" + t if g("minus") is not None else t, _Immediate, len(t))
    elif g("an") is not None and not (g("an")[0] != "%" and g("an") in _KEYWORDS):
        sign, n = g("sign"), g("an")
        shape = (2, m.start("an"), n, 0 if sign is None else (_int(g("ao")) if sign == "+" else -_int(g("ao"))),
                 None, _Register if n[0] == "%" else _Symbol, len(n))
    if len(_SHAPES) > 1 << 16:
        _SHAPES.clear()
    _SHAPES[piece] = shape
    return shape


def _operands_scan(args: str, file: str, line: int, base: int) -> tuple:
    ops = []
    pos, n = 0, len(args)
    match = _OPERAND.match
    while True:
        m = match(args, pos)
        if m is None:
            raise _Decline
        ops.append(_one(m, file, line, base))
        pos = m.end()
        if pos == n:
            return tuple(ops)
        if args[pos] != ",":
            raise _Decline
        pos += 1


def _one(m, file: str, line: int, base: int):
    """The operand of ``_OPERAND`` match ``m`` (its string's first character at column ``base``)."""
    g = m.group
    if g("n") is not None:
        col = base + m.start("n")
        c = g("c")
        op = _name(g("n"), file, line, col) if c is None else _register(g("n"), c[1:], file, line, col)
        if g("p") is not None:
            if c is not None:
                raise _Decline              # a component before '|': not a pair element
            op = ir.Pair(op, _name(g("p"), file, line, base + m.start("p")))
        elif g("ps") is not None:
            if c is not None:
                raise _Decline
            op = ir.Pair(op, ir.Sink())
        return op
    if g("s") is not None:
        if g("sp") is not None:
            return ir.Pair(ir.Sink(), _name(g("sp"), file, line, base + m.start("sp")))
        if g("ss") is not None:
            return ir.Pair(ir.Sink(), ir.Sink())
        return ir.Sink()
    if g("i") is not None:
        return _int_imm(m, "i", g("minus"), file, line, base)
    if g("f") is not None:
        return _hex_float(g("f"), file, line, base + m.start("f"))
    if g("nn") is not None:
        return ir.Negated(_name(g("nn"), file, line, base + m.start("nn")))
    if g("an") is not None:
        name = _name(g("an"), file, line, base + m.start("an"))
        sign = g("sign")
        return ir.Address(name, 0 if sign is None else (_int(g("ao")) if sign == "+" else -_int(g("ao"))))
    if g("aa") is not None:
        return ir.Address(None, _int(g("aa")))
    if g("v") is not None:
        return _vector(g("v"), file, line, base + m.start("v"))
    raise _Decline                          # pragma: no cover - every alternative is named above


def _statement(m, file: str, line: int, split: dict, line_start: int):
    """The IR of line match ``m`` (``line_start``: where its line starts in the text)."""
    g = m.group
    op_text = g("op")
    if op_text is None and g("lf") is None:
        # (each statement's fields filled in as its dataclass's __init__ fills them, in order)
        if g("label") is not None:          # a label alone on its line (the LABEL token, colon included)
            t = g("label")
            col = m.start("label") - line_start + 1
            x = _new(ir.Label)              # ir.Label(name, span=...)
            d = x.__dict__
            d["name"] = t.rstrip(": \t")
            d["span"] = _span(file, line, col, col + len(t))
            return x
        typ = g("rt")                       # .reg .TYPE %name<N>;
        if typ in ("v2", "v4", "v8"):
            raise _Decline
        col = m.start("rn") - line_start + 1
        x = _new(ir.RegisterDecl)           # ir.RegisterDecl(typ, (name,), count=N, vector=None, span=...)
        d = x.__dict__
        d["type"] = typ
        d["names"] = (g("rn"),)
        d["count"] = int(g("rc"))
        d["vector"] = None
        d["span"] = _span(file, line, col, col + len(g("rn")))
        return x
    if op_text is None:                     # .loc
        fname = g("fn")
        if fname is not None and g("fo") is not None:
            fname = f"{fname}+{g('fo')}"
        sl = _new(ir.SourceLoc)             # ir.SourceLoc(file, line, col, function name, inlined at)
        d = sl.__dict__
        d["file"] = int(g("lf"))
        d["line"] = int(g("ll"))
        d["col"] = int(g("lc"))
        d["function_name"] = fname
        d["inlined_at"] = None if g("i1") is None else (int(g("i1")), int(g("i2")), int(g("i3")))
        col = m.start("lf") - line_start + 1
        x = _new(ir.Loc)                    # ir.Loc(source loc, span=...)
        d = x.__dict__
        d["loc"] = sl
        d["span"] = _span(file, line, col, col + len(g("lf")))
        return x
    parts = split.get(op_text)
    if parts is None:
        name, *mods = op_text.split(".")
        parts = split[op_text] = (name, tuple(mods))
    op_col = m.start("op") - line_start + 1
    guard = None
    col = op_col
    if g("guard") is not None:
        gcol = m.start("guard") - line_start + 1
        guard = _new(ir.Guard)              # ir.Guard(register, negated, span=...)
        d = guard.__dict__
        d["register"] = g("guard")
        d["negated"] = g("neg") is not None
        d["span"] = _span(file, line, gcol, gcol + len(g("guard")))
        col = gcol
    args = g("args")
    ops = () if not args else _operands(args, file, line, m.start("args") - line_start + 1)
    ins = _new(ir.Instruction)
    d = ins.__dict__
    d["opcode"], d["modifiers"] = parts
    d["operands"] = ops
    d["guard"] = guard
    d["span"] = _span(file, line, col, op_col + len(op_text))
    d["loc"] = None
    d["scope"] = 0
    d["isa"] = "ptx"
    return ins


class Run:
    """The statements of one run of fast lines; ``head``: how many statements come before its
    first ``.loc`` (the instructions among them take the ``.loc`` in force where the run starts);
    ``last``: the run's last ``.loc`` (in force after it), or None."""

    __slots__ = ("statements", "head", "last")

    def __init__(self, statements: list, head: int, last):
        self.statements, self.head, self.last = statements, head, last


def substitute(text: str, file: str, start: int = 0) -> tuple[str, list[Run]]:
    """``text`` with every run of fast lines (from ``start`` on) replaced by its ``FASTRUN`` token,
    and the runs. The text itself, and no runs, when it holds the marker already."""
    if MARK in text:
        return text, []
    from .parser import _OPCODE_SPLIT as split

    runs: list[Run] = []
    parts: list[str] = []
    out_pos = 0                 # text[:out_pos] is in parts
    line, line_at = 1, 0        # the line number at text offset line_at
    stmts: list = []
    run_start = run_end = -1
    head, last = 0, None
    count = text.count
    for m in _lines(text, start):
        s = m.start()
        line += count("\n", line_at, s)
        line_at = s
        try:
            st = _statement(m, file, line, split, s)
        except _Decline:
            continue
        if stmts and _gap(text, run_end, s):
            stmts.append(st)            # continues the run (only blanks and line comments between)
        else:
            if stmts:
                _close(text, parts, runs, stmts, head, last, out_pos, run_start, run_end)
                out_pos = run_end
            stmts, run_start, head, last = [st], s, 0, None
        t = type(st)
        if t is ir.Instruction:
            if last is None:
                head = len(stmts)       # the run's instructions up to here take the .loc in force before it
            else:
                st.__dict__["loc"] = last
        elif t is ir.Loc:
            last = st.loc
        run_end = m.end()
    if stmts:
        _close(text, parts, runs, stmts, head, last, out_pos, run_start, run_end)
        out_pos = run_end
    if not runs:
        return text, []
    parts.append(text[out_pos:])
    return "".join(parts), runs


#: a ``.section NAME { ... }`` block (``nvcc -lineinfo``'s DWARF strings): its labels are
#: ``section_label``s, not statements, so the fast path reads no line of it (Lark does). Section
#: entries hold no braces, so the first ``}`` closes the block.
_SECTION = re.compile(r"^[ \t]*\.section\b[^{}]*\{[^}]*\}?", re.M)


def _lines(text: str, start: int):
    r"""The :data:`_LINE` matches of ``text`` from ``start`` on, outside ``.section`` blocks.

        >>> t = "ret;\n.section .debug_str\n{\n$L__info_string0:\n.b8 97,0\n}\n$L__BB0_1:\n"
        >>> [m.group().strip() for m in _lines(t, 0)]
        ['ret;', '$L__BB0_1:']
    """
    if ".section" not in text:
        yield from _unblanked(text, start, len(text))
        return
    pos = start
    for sec in _SECTION.finditer(text, start):
        yield from _unblanked(text, pos, sec.start())
        pos = sec.end()
    yield from _unblanked(text, pos, len(text))


#: a stretch of empty lines that :func:`_unblanked` steps over instead of trying :data:`_LINE` at
#: each of them: a big file's batch (:meth:`isa.ptx.chunks.Split.batch_text`) keeps every kernel
#: before its own at its lines as empty lines, up to a million of them
_BLANK_LINES = "\n" * 64
_NEWLINES = re.compile(r"\n+")


def _unblanked(text: str, a: int, b: int):
    r"""The :data:`_LINE` matches of ``text[a:b]``, stepping over each stretch of 64 or more empty
    lines (no match starts inside one: an empty line holds no statement). A scan stops at the
    newline that ends the stretch's first line and resumes at the line after its last: ``^`` and
    ``$`` read the real neighbours there, so the matches are those of one scan.

        >>> t = "ret;" + "\n" * 100 + "  exit;\n"
        >>> [(m.start(), m.group().strip()) for m in _unblanked(t, 0, len(t))]
        [(0, 'ret;'), (104, 'exit;')]
    """
    finditer, find = _LINE.finditer, text.find
    while True:
        k = find(_BLANK_LINES, a, b)
        if k < 0:
            yield from finditer(text, a, b)
            return
        yield from finditer(text, a, k)
        a = min(_NEWLINES.match(text, k).end(), b)


def _gap(text: str, a: int, b: int) -> bool:
    """Whether ``text[a:b]``, between two lines of a run, is blanks and line comments that close
    no block comment (blanked, they read the same: inside a block comment or out of one)."""
    gap = text[a:b]
    if not gap.strip():
        return True
    if "*/" in gap:
        return False
    for piece in gap.split("\n"):
        piece = piece.strip()
        if piece and not piece.startswith("//"):
            return False
    return True


def _close(text, parts, runs, stmts, head, last, out_pos, run_start, run_end) -> None:
    parts.append(text[out_pos:run_start])
    parts.append(f"{MARK}{len(runs)}")
    parts.append("\n" * text.count("\n", run_start, run_end))
    runs.append(Run(stmts, head, last))
