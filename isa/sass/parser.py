"""Parser of SASS listings (``nvdisasm -c -gp``, ``cuobjdump -sass``) into the shared IR.

A listing line and its IR::

    //## File ".nv_debug_ptx_txt", line 101
    /*0310*/                   LDS.128 R4, [R19+0x10] ;

    Instruction(opcode='LDS', modifiers=('128',),
                operands=(Register('R4'), Address(base=Register('R19'), offset=16)),
                isa='sass', loc=SourceLoc(file=0, line=101, col=0))

``loc`` carries the line-info comment that precedes the instruction: with ``-gp`` (what
:mod:`isa.sass.compile` asks for) it is the PTX line the instruction came from (``loc.file == 0``);
a source-file annotation (``-g``) gives ``loc.file == 1``. The instruction's offset in the code
section is :func:`offset`. Each ``.text.NAME`` section (or cuobjdump ``Function : NAME`` block)
becomes a :class:`isa.ir.Function`, a kernel when ``.other NAME,@"STO_CUDA_ENTRY ..."`` says so.

The grammar (``grammar.lark``) is LALR(1) with the contextual lexer and an inline transformer (no
parse tree), on lark-cython where installed (as the PTX front end). Syntax errors raise
:class:`isa.errors.ParseError` (span, what was expected, the listing line); an instruction outside
any function raises :class:`isa.errors.SemanticError`.

The grammar is the definition; the lines nvdisasm prints by the thousand (instructions with the
usual operand forms, line-info comments, labels, directives) are read by a line reader that builds
the same IR, spans and ``loc`` included, four times faster (0.15 s CPU instead of 0.65 s for
the 13,064 instructions of the corpus's three listings), and hands any other line to the grammar alone; a line
the grammar refuses makes the whole text go through the grammar, for its located error.
``tests/isa/sass/test_fast_parse.py`` holds the two to the same result.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

from lark import Lark, Transformer
from lark.exceptions import UnexpectedInput, VisitError

from .. import ir
from ..errors import KernlensError, SemanticError, Span
from ..lark_errors import source_line, syntax_error
from ..ptx.parser import _PLUGINS, ACCELERATED, _gc_paused

GRAMMAR = Path(__file__).with_name("grammar.lark")
_REGISTER = re.compile(r"(R\d+|RZ|UR\d+|URZ|U?P[0-6T]|B\d+|SB\d+|SR_\w+|SRZ|gsb\d+)$")
_LINEINFO = re.compile(r'//##\s*File\s+"([^"]*)"\s*,\s*line\s+(\d+)(?:\s*,\s*col\s+(\d+))?')
_OFFSET = re.compile(r"/\*([0-9a-f]{4,})\*/")
PTX_LINES = ".nv_debug_ptx_txt"

_TOKEN_NAMES = {
    "_NL": "end of line", "OFFSET": "offset (/*0010*/)", "OPCODE": "opcode (LDS.128)", "PRED": "predicate (P0)",
    "NAME": "register or name", "NUMBER": "number", "RELOC": "relocation (32@lo(...))", "SPECIALF": "+INF/QNAN", "PREFIX": "operand prefix (c, desc)",
    "SUFFIX": "suffix (.reuse)", "TARGET": "branch target `(.L_x_0)", "LABEL": "label", "DIRECTIVE": "directive",
    "LINEINFO": "line-info comment", "FUNCTION_HEADER": "'Function : NAME'", "SEMICOLON": "';'", "COMMA": "','",
    "LSQB": "'['", "RSQB": "']'", "PLUS": "'+'", "MINUS": "'-'", "TILDE": "'~'", "VBAR": "'|'", "NOT": "'!'",
    "AT": "'@'", "$END": "end of file",
}
_new = object.__new__


def _span(file: str, tok, dl: int = 0) -> Span:
    s = _new(Span)
    d = s.__dict__
    d["file"] = file
    d["line"] = tok.line + dl
    d["col"] = tok.column
    d["end_line"] = (tok.end_line or tok.line) + dl
    d["end_col"] = tok.end_column or (tok.column + len(tok.value))
    return s


_REGS: dict[str, tuple] = {}


def _register(text: str, span: Span) -> ir.Register | ir.Symbol:
    hit = _REGS.get(text)
    if hit is None:
        name, _, rest = text.partition(".")
        hit = _REGS[text] = (bool(_REGISTER.match(name)), name, rest or None)
    if hit[0]:
        return ir.Register(hit[1], hit[2], span=span)
    return ir.Symbol(text, span=span)


def _number(text: str, span: Span) -> ir.Immediate:
    t = text.lower()
    if "0x" in t:
        return ir.Immediate(int(t, 16), "int", text, span=span)
    if "." in t or "e" in t:
        return ir.Immediate(float(t), "float", text, span=span)
    return ir.Immediate(int(t), "int", text, span=span)


def _first_span(x) -> Span:
    return getattr(x, "span", None) or ir.NOSPAN


class _Builder(Transformer):
    """Builds IR nodes while Lark parses (inline transformer); reads tokens through ``.value``,
    ``.line`` and ``.column`` only, so Lark's and lark-cython's tokens both work."""

    def __init__(self, file: str):
        super().__init__()
        self.file = file
        self.dl = 0          # added to token lines (a single line parsed alone: its line number - 1)

    # ---- operands ----
    def name(self, c):
        t = c[0]
        return _register(t.value, _span(self.file, t, self.dl))

    def number(self, c):
        t = c[0]
        return _number(t.value, _span(self.file, t, self.dl))

    def reloc(self, c):
        t = c[0]
        return ir.Expression(t.value, span=_span(self.file, t, self.dl))

    def special_float(self, c):
        t = c[0].value
        v = float("inf") if "INF" in t else float("nan")
        return ir.Immediate(-v if t.startswith("-") else v, "float", t, span=_span(self.file, c[0], self.dl))

    def target(self, c):
        t = c[0]
        return ir.Symbol(t.value[2:-1], span=_span(self.file, t, self.dl))

    def neg(self, c):
        return ir.Modified(c[0], "-", span=_first_span(c[0]))

    def inv(self, c):
        return ir.Modified(c[0], "~", span=_first_span(c[0]))

    def lnot(self, c):
        return ir.Negated(c[1], span=_span(self.file, c[0], self.dl))

    def absval(self, c):
        return ir.Modified(c[0], "|", c[1].value[1:] if c[1] is not None else None, span=_first_span(c[0]))

    def terms(self, c):
        return c

    def mem(self, c):
        prefix, first, second, suffix = c
        space = prefix.value if prefix is not None else None
        terms = first
        if second is not None:          # c[0x0][0x28], desc[UR8][R8.64]
            space = (space or "") + "[" + "+".join(t.value for t in first) + "]"
            terms = second
        base = index = None
        offset = 0
        file = self.file
        for t in terms:
            if t.type == "NUMBER":
                offset += _number(t.value, ir.NOSPAN).value
            elif base is None:
                base = _register(t.value, _span(file, t, self.dl))
            else:
                index = _register(t.value, _span(file, t, self.dl))
        anchor = prefix if prefix is not None else terms[0]
        return ir.Address(base, int(offset), space, suffix.value[1:] if suffix is not None else None,
                          span=_span(file, anchor, self.dl), index=index)

    # ---- statements ----
    def guard(self, c):
        return ir.Guard(c[1].value, negated=c[0] is not None, span=_span(self.file, c[1], self.dl))

    def instr(self, c):
        offset, guard, opcode = c[0], c[1], c[2]
        words = opcode.value.split(".")
        operands = tuple(x for x in c[3:] if x is not None)
        ins = ir.Instruction(words[0], tuple(words[1:]), operands, guard, span=_span(self.file, opcode, self.dl),
                             isa="sass")
        return ("instr", offset, ins)

    def directive(self, c):
        return ("directive", c[0].value, _span(self.file, c[0], self.dl))

    def label(self, c):
        return ("label", c[0].value[:-1], _span(self.file, c[0], self.dl))

    def lineinfo(self, c):
        m = _LINEINFO.match(c[0].value)
        return ("lineinfo", m.groups() if m else None, None)

    def function_header(self, c):
        return ("function", c[0].value.split(":", 1)[1].strip(), _span(self.file, c[0], self.dl))

    def start(self, c):
        return c


_LARKS: dict[bool, Lark] = {}
_LOCK = threading.Lock()


def _lark(accelerated: bool | None = None) -> Lark:
    if accelerated is None:
        accelerated = ACCELERATED
    lark = _LARKS.get(accelerated)
    if lark is None:
        options = {"_plugins": _PLUGINS} if accelerated and _PLUGINS is not None else {}
        lark = Lark(GRAMMAR.read_text(), parser="lalr", lexer="contextual", maybe_placeholders=True,
                    transformer=_Builder("<sass>"), **options)
        for rule in lark.rules:
            rule.origin.name = str(rule.origin.name)
        _LARKS[accelerated] = lark
    return lark


def parse(text: str, file: str = "<sass>", target: str | None = None, *, fast: bool = True) -> ir.Module:
    """Parse a SASS listing into a :class:`isa.ir.Module` with ``isa='sass'``.

    ``fast`` (the default) reads the regular lines (instructions with the operand forms nvdisasm
    prints, line-info comments, labels, directives) with the line reader :func:`_fast_items` and hands
    every other line to the Lark grammar alone; the IR, spans included, is the one the grammar gives
    for the whole text (``tests/isa/sass/test_fast_parse.py`` checks it on every listing).
    ``fast=False`` parses the whole text with the grammar."""
    with _gc_paused():
        items = _fast_items(text, file) if fast else None
        if items is None:
            items = _lark_items(text, file)
        return _assemble(items, text, file, target)


def _lark_items(text: str, file: str, dl: int = 0):
    """The grammar's items for ``text`` (its lines numbered from ``dl + 1``)."""
    lark = _lark()
    with _LOCK:
        builder = lark.options.transformer
        builder.file, builder.dl = file, dl
        try:
            return lark.parse(text if text.endswith("\n") else text + "\n")
        except UnexpectedInput as exc:
            if dl:
                raise
            raise syntax_error(exc, text, file, _describe_expected, {"_NL": "end of line"}) from None
        except VisitError as exc:  # pragma: no cover - a builder bug, surfaced with its place
            if isinstance(exc.orig_exc, KernlensError):
                raise exc.orig_exc from None
            raise
        finally:
            builder.dl = 0


# ---- the line reader: the regular lines without the grammar, the same IR as the grammar's ----
# Each pattern is the grammar's terminal of the same name (grammar.lark), anchored to a whole piece.

_F_INSTR = re.compile(r"([ \t]*)(/\*[0-9a-f]{4,}\*/)[ \t]+(?:@(!?)(U?P[0-6T])[ \t]+)?"
                      r"([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)(?:[ \t]+([^;`]*?))?(?:[ \t]*(`\([^)`]*\)))?"
                      r"[ \t]*;[ \t]*(?:/\* [^*]*\*/[ \t]*)?\Z")
_F_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*\Z")
_F_NUMBER = re.compile(r"-?(?:0x[0-9a-fA-F]+|\d+\.\d*(?:e[+-]?\d+)?|\d+e[+-]?\d+|\d+)\Z")
_F_TERM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*|-?(?:0x[0-9a-fA-F]+|\d+\.\d*(?:e[+-]?\d+)?"
                     r"|\d+e[+-]?\d+|\d+)")
_F_MEM = re.compile(r"([a-z][a-z0-9]*)?\[([^\]\s]+)\](?:\[([^\]\s]+)\])?(\.[A-Za-z0-9_]+)?\Z")
_F_LABEL = re.compile(r"[.$A-Za-z_][A-Za-z0-9_.$]*:\Z")
_F_DIRECTIVE = re.compile(r"\.[a-z][a-z_]*(?:[ \t]|\Z)")
_F_HEADER = re.compile(r"code for sm_\w|Fatbin \w+ code:|=|\.{5}")
_F_SUFFIX = re.compile(r"\.[A-Za-z0-9_]+\Z")
_F_COMMENT = re.compile(r"/\* [^*]*\*/\Z")
_SPECIAL = {"INF", "QNAN", "+INF", "-INF", "+QNAN", "-QNAN", "+SNAN", "-SNAN"}


class _Bad(Exception):
    """A piece the line reader does not read: the grammar reads its line."""


def _sp(file: str, line: int, col: int, n: int) -> Span:
    """The span of ``n`` characters at ``line``:``col`` (made as the frozen Span would be, faster)."""
    s = _new(Span)
    d = s.__dict__
    d["file"] = file
    d["line"] = d["end_line"] = line
    d["col"] = col
    d["end_col"] = col + n
    return s


def _f_terms(text: str, file: str, line: int, col: int) -> list[tuple[str, str, int]]:
    """``R2+UR4+0x10`` -> [(kind, text, column)]: the grammar's ``terms`` (NAME or NUMBER joined by '+')."""
    out = []
    pos = 0
    n = len(text)
    while True:
        m = _F_TERM.match(text, pos)
        if m is None:
            raise _Bad
        t = m.group()
        out.append(("NUMBER" if t[0] == "-" or t[0].isdigit() else "NAME", t, col + pos))
        pos = m.end()
        if pos == n:
            return out
        if text[pos] != "+":
            raise _Bad
        pos += 1


def _f_operand(t: str, file: str, line: int, col: int):
    """One operand's text (no white space in it) at column ``col`` -> the IR the grammar builds."""
    if _F_NAME.match(t):
        if t.startswith(("INF.", "QNAN.")):
            raise _Bad                                        # SPECIALF ends at a word boundary: INF.x
        if t == "INF" or t == "QNAN":
            return ir.Immediate(float("inf") if t == "INF" else float("nan"), "float", t,
                                span=_sp(file, line, col, len(t)))
        return _register(t, _sp(file, line, col, len(t)))
    c = t[0]
    if c == "-" or c == "+" or c.isdigit():
        if _F_NUMBER.match(t):
            return _number(t, _sp(file, line, col, len(t)))
        if t in _SPECIAL:
            v = float("inf") if "INF" in t else float("nan")
            return ir.Immediate(-v if c == "-" else v, "float", t, span=_sp(file, line, col, len(t)))
        if c == "-" and len(t) > 1:
            inner = _f_operand(t[1:], file, line, col + 1)
            return ir.Modified(inner, "-", span=_first_span(inner))
        raise _Bad
    if c == "!" and len(t) > 1:
        return ir.Negated(_f_operand(t[1:], file, line, col + 1), span=_sp(file, line, col, 1))
    if c == "~" and len(t) > 1:
        inner = _f_operand(t[1:], file, line, col + 1)
        return ir.Modified(inner, "~", span=_first_span(inner))
    if c == "|":
        end = t.find("|", 1)
        if end < 2:
            raise _Bad
        suffix = t[end + 1:]
        if suffix and not _F_SUFFIX.match(suffix):
            raise _Bad
        inner = _f_operand(t[1:end], file, line, col + 1)
        return ir.Modified(inner, "|", suffix[1:] or None, span=_first_span(inner))
    m = _F_MEM.match(t)
    if m is None:
        raise _Bad
    prefix, a, b, suffix = m.groups()
    first = _f_terms(a, file, line, col + m.start(2))
    space = prefix
    terms = first
    if b is not None:
        space = (space or "") + "[" + "+".join(x[1] for x in first) + "]"
        terms = _f_terms(b, file, line, col + m.start(3))
    base = index = None
    offset = 0
    for kind, x, xc in terms:
        if kind == "NUMBER":
            offset += _number(x, ir.NOSPAN).value
        elif base is None:
            base = _register(x, _sp(file, line, xc, len(x)))
        else:
            index = _register(x, _sp(file, line, xc, len(x)))
    anchor = _sp(file, line, col, len(prefix)) if prefix is not None else _sp(file, line, terms[0][2], len(terms[0][1]))
    return ir.Address(base, int(offset), space, suffix[1:] if suffix is not None else None, span=anchor, index=index)


_PLANS: dict[str, tuple] = {}         # operand text -> how to build it (0 register, 1 symbol, 2 number, 3 other)
_OPWORDS: dict[str, tuple[str, tuple[str, ...]]] = {}
_LOCS: dict[str, ir.SourceLoc | None] = {}


def _plan(t: str) -> tuple:
    if _F_NAME.match(t) and not t.startswith(("INF", "QNAN")):
        name, _, rest = t.partition(".")
        if _REGISTER.match(name):
            return (0, name, rest or None)
        return (1, t)
    if (t[0] == "-" or t[0].isdigit()) and _F_NUMBER.match(t):
        v = _number(t, ir.NOSPAN)
        return (2, v.value, v.kind)
    return (3,)


def _lineinfo_loc(s: str) -> ir.SourceLoc | None:
    m = _LINEINFO.match(s)
    if m is None:
        return None
    fname, line, col = m.groups()
    return ir.SourceLoc(0 if fname == PTX_LINES else 1, int(line), int(col or 0))


def _pieces(ops: str, start: int) -> list[tuple[str, int]]:
    """``R1, c[0x0][0x28]`` at column ``start`` -> [(operand text, its column)]."""
    out = []
    pos = start
    for piece in ops.split(","):
        t = piece.strip()
        if not t or " " in t or "\t" in t:
            raise _Bad
        out.append((t, pos + piece.index(t)))
        pos += len(piece) + 1
    return out


def _fast_items(text: str, file: str) -> list | None:
    """The grammar's items for ``text``, the regular lines read here and the others by the grammar
    line by line; None where the text is not line-regular (``\\r``), so that the grammar reads it all.

    The items are those :func:`_assemble` takes, with each instruction's ``loc`` already set from the
    line-info comment before it (the comments themselves are not passed on). The IR nodes are made
    as their dataclasses make them, their fields set directly (the same objects, without the frozen
    classes' per-field checks)."""
    if "\r" in text:
        return None
    out: list = []
    append = out.append
    ins_match = _F_INSTR.match
    new = _new
    Instruction, Register, Symbol, Immediate, Guard = ir.Instruction, ir.Register, ir.Symbol, ir.Immediate, ir.Guard
    plans, opwords, locs = _PLANS, _OPWORDS, _LOCS
    loc = None
    for n, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if not s:
            continue
        c = s[0]
        try:
            if c == "/":
                if s.startswith("//##"):
                    hit = locs.get(s, False)
                    if hit is False:
                        hit = locs[s] = _lineinfo_loc(s)
                    if hit is not None:
                        loc = hit
                    continue
                if s.startswith("//") or _F_COMMENT.match(s):
                    continue                                  # a comment
                m = ins_match(raw)
                if m is None:
                    raise _Bad
                _lead, _off, neg, pred, opcode, ops, target = m.groups()
                guard = None
                if pred is not None:
                    sp = _sp(file, n, m.start(4) + 1, len(pred))
                    guard = new(Guard)
                    d = guard.__dict__
                    d["register"] = pred
                    d["negated"] = neg == "!"
                    d["span"] = sp
                operands = []
                if ops:
                    pieces = ops.split(", ")
                    start = m.start(6) + 1
                    if target is not None and pieces[-1].endswith(","):
                        pieces[-1] = pieces[-1][:-1]              # 'BSSY B0, `(.L_x_2)': the target after a comma
                    for t in pieces:
                        if not t or " " in t or "," in t or "\t" in t:
                            break
                    else:
                        t = None
                    if t is None:                             # the usual spelling: 'R1, R2, 0x1'
                        spots = []
                        for t in pieces:
                            spots.append((t, start))
                            start += len(t) + 2
                    else:
                        spots = _pieces(ops[:-1] if target is not None and ops.rstrip().endswith(",") else ops,
                                        m.start(6) + 1)
                    for t, col in spots:
                        p = plans.get(t)
                        if p is None:
                            p = plans[t] = _plan(t)
                        k = p[0]
                        if k == 3:
                            operands.append(_f_operand(t, file, n, col))
                            continue
                        sp = _sp(file, n, col, len(t))
                        if k == 0:
                            o = new(Register)
                            d = o.__dict__
                            d["name"] = p[1]
                            d["component"] = p[2]
                        elif k == 1:
                            o = new(Symbol)
                            d = o.__dict__
                            d["name"] = t
                        else:
                            o = new(Immediate)
                            d = o.__dict__
                            d["value"] = p[1]
                            d["kind"] = p[2]
                            d["text"] = t
                        d["span"] = sp
                        operands.append(o)
                if target is not None:
                    operands.append(Symbol(target[2:-1], span=_sp(file, n, m.start(7) + 1, len(target))))
                w = opwords.get(opcode)
                if w is None:
                    words = opcode.split(".")
                    w = opwords[opcode] = (words[0], tuple(words[1:]))
                sp = _sp(file, n, m.start(5) + 1, len(opcode))
                ins = new(Instruction)
                d = ins.__dict__
                d["opcode"], d["modifiers"] = w
                d["operands"] = tuple(operands)
                d["guard"] = guard
                d["span"] = sp
                d["loc"] = loc
                d["scope"] = 0
                d["isa"] = "sass"
                append(("instr", None, ins))
                continue
            col = len(raw) - len(raw.lstrip()) + 1
            if _F_LABEL.match(s):
                append(("label", s[:-1], _sp(file, n, col, len(s))))
                continue
            if c == "." and _F_DIRECTIVE.match(s):
                value = raw[col - 1:]
                if s.startswith(".section"):
                    words = s.split()
                    if len(words) > 1 and words[1].startswith(".text."):
                        loc = None                            # a new function
                append(("directive", value, _sp(file, n, col, len(value))))
                continue
            if _F_HEADER.match(s):
                continue
            raise _Bad
        except _Bad:
            try:
                items = _lark_items(raw, file, n - 1)
            except (UnexpectedInput, KernlensError):
                return None                                   # the grammar's own error, for the whole text
            for item in items:                                # the same line-info bookkeeping as _assemble's
                kind, a, b = item
                if kind == "lineinfo":
                    if a is not None:
                        fname, line, lcol = a
                        loc = ir.SourceLoc(0 if fname == PTX_LINES else 1, int(line), int(lcol or 0))
                    continue
                if kind == "instr" and loc is not None:
                    object.__setattr__(b, "loc", loc)
                elif kind == "function" or (kind == "directive" and a.split()[0] == ".section"
                                            and len(a.split()) > 1 and a.split()[1].startswith(".text.")):
                    loc = None
                append(item)
    return out


def _assemble(items, text: str, file: str, arch: str | None) -> ir.Module:
    functions: list[dict] = []
    entries: set[str] = set()
    current = None
    loc = None
    setattr_ = object.__setattr__
    for kind, a, b in items:
        if kind == "instr":
            if current is None:
                span = b.span
                raise SemanticError("instruction outside any function (no '.section .text.NAME' or "
                                    "'Function : NAME' before it)", span, source_line=source_line(text, span.line))
            if loc is not None:
                setattr_(b, "loc", loc)
            current["body"].append(b)
        elif kind == "lineinfo":
            if a is not None:
                fname, line, col = a
                loc = ir.SourceLoc(0 if fname == PTX_LINES else 1, int(line), int(col or 0))
        elif kind == "label":
            if current is not None and a not in (current["name"], ".text." + current["name"]):
                current["body"].append(ir.Label(a, span=b))
        elif kind == "directive":
            words = a.split()
            if words[0] == ".section" and len(words) > 1 and words[1].startswith(".text."):
                current = {"name": words[1][len(".text."):].split(",")[0], "body": [], "span": b}
                functions.append(current)
                loc = None
            elif words[0] == ".other" and "STO_CUDA_ENTRY" in a:
                entries.add(words[1].split(",")[0])
            elif words[0] == ".target" and len(words) > 1 and arch is None:
                arch = words[1]
        elif kind == "function":
            current = {"name": a, "body": [], "span": b}
            entries.add(a)
            functions.append(current)
            loc = None
    fns = tuple(ir.Function(f["name"], f["name"] in entries, body=tuple(f["body"]), span=f["span"])
                for f in functions)
    return ir.Module("sass", targets=(arch,) if arch else (), items=fns, path=file if file != "<sass>" else None,
                     source=text)


def offset(module: ir.Module, ins: ir.Instruction) -> int | None:
    """The code offset nvdisasm printed before ``ins`` (``/*0310*/`` -> 0x310)."""
    line = module.source_line(ins.span.line)
    m = _OFFSET.search(line or "")
    return int(m.group(1), 16) if m else None


def _describe_expected(names) -> list[str]:
    return sorted({_TOKEN_NAMES.get(n, f"'{n.lower()}'" if n.isupper() else n) for n in names})
