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
"""

from __future__ import annotations

import gc
import re
import threading
from pathlib import Path

from lark import Lark, Transformer
from lark.exceptions import UnexpectedInput, VisitError

from .. import ir
from ..errors import KernlensError, SemanticError, Span
from ..lark_errors import source_line, syntax_error
from ..ptx.parser import _PLUGINS, ACCELERATED

GRAMMAR = Path(__file__).with_name("grammar.lark")
_REGISTER = re.compile(r"(R\d+|RZ|UR\d+|URZ|U?P[0-6T]|B\d+|SB\d+|SR_\w+|SRZ|gsb\d+)$")
_LINEINFO = re.compile(r'//##\s*File\s+"([^"]*)"\s*,\s*line\s+(\d+)(?:\s*,\s*col\s+(\d+))?')
_OFFSET = re.compile(r"/\*([0-9a-f]{4,})\*/")
PTX_LINES = ".nv_debug_ptx_txt"

_TOKEN_NAMES = {
    "_NL": "end of line", "OFFSET": "offset (/*0010*/)", "OPCODE": "opcode (LDS.128)", "PRED": "predicate (P0)",
    "NAME": "register or name", "NUMBER": "number", "SPECIALF": "+INF/QNAN", "PREFIX": "operand prefix (c, desc)",
    "SUFFIX": "suffix (.reuse)", "TARGET": "branch target `(.L_x_0)", "LABEL": "label", "DIRECTIVE": "directive",
    "LINEINFO": "line-info comment", "FUNCTION_HEADER": "'Function : NAME'", "SEMICOLON": "';'", "COMMA": "','",
    "LSQB": "'['", "RSQB": "']'", "PLUS": "'+'", "MINUS": "'-'", "TILDE": "'~'", "VBAR": "'|'", "NOT": "'!'",
    "AT": "'@'", "$END": "end of file",
}
_new = object.__new__


def _span(file: str, tok) -> Span:
    s = _new(Span)
    d = s.__dict__
    d["file"] = file
    d["line"] = tok.line
    d["col"] = tok.column
    d["end_line"] = tok.end_line or tok.line
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

    # ---- operands ----
    def name(self, c):
        t = c[0]
        return _register(t.value, _span(self.file, t))

    def number(self, c):
        t = c[0]
        return _number(t.value, _span(self.file, t))

    def special_float(self, c):
        t = c[0].value
        v = float("inf") if "INF" in t else float("nan")
        return ir.Immediate(-v if t.startswith("-") else v, "float", t, span=_span(self.file, c[0]))

    def target(self, c):
        t = c[0]
        return ir.Symbol(t.value[2:-1], span=_span(self.file, t))

    def neg(self, c):
        return ir.Modified(c[0], "-", span=_first_span(c[0]))

    def inv(self, c):
        return ir.Modified(c[0], "~", span=_first_span(c[0]))

    def lnot(self, c):
        return ir.Negated(c[1], span=_span(self.file, c[0]))

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
                base = _register(t.value, _span(file, t))
            else:
                index = _register(t.value, _span(file, t))
        anchor = prefix if prefix is not None else terms[0]
        return ir.Address(base, int(offset), space, suffix.value[1:] if suffix is not None else None,
                          span=_span(file, anchor), index=index)

    # ---- statements ----
    def guard(self, c):
        return ir.Guard(c[1].value, negated=c[0] is not None, span=_span(self.file, c[1]))

    def instr(self, c):
        offset, guard, opcode = c[0], c[1], c[2]
        words = opcode.value.split(".")
        operands = tuple(x for x in c[3:] if x is not None)
        ins = ir.Instruction(words[0], tuple(words[1:]), operands, guard, span=_span(self.file, opcode), isa="sass")
        return ("instr", offset, ins)

    def directive(self, c):
        return ("directive", c[0].value, _span(self.file, c[0]))

    def label(self, c):
        return ("label", c[0].value[:-1], _span(self.file, c[0]))

    def lineinfo(self, c):
        m = _LINEINFO.match(c[0].value)
        return ("lineinfo", m.groups() if m else None, None)

    def function_header(self, c):
        return ("function", c[0].value.split(":", 1)[1].strip(), _span(self.file, c[0]))

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


def parse(text: str, file: str = "<sass>", target: str | None = None) -> ir.Module:
    """Parse a SASS listing into a :class:`isa.ir.Module` with ``isa='sass'``."""
    lark = _lark()
    was = gc.isenabled()
    gc.disable()
    try:
        with _LOCK:
            lark.options.transformer.file = file
            try:
                items = lark.parse(text if text.endswith("\n") else text + "\n")
            except UnexpectedInput as exc:
                raise syntax_error(exc, text, file, _describe_expected, {"_NL": "end of line"}) from None
            except VisitError as exc:  # pragma: no cover - a builder bug, surfaced with its place
                if isinstance(exc.orig_exc, KernlensError):
                    raise exc.orig_exc from None
                raise
        return _assemble(items, text, file, target)
    finally:
        if was:
            gc.enable()


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
