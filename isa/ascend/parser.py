"""Parser of the Ascend-like assembly into the shared IR (``isa.ir.Module(isa='ascend')``).

A kernel and its IR::

    .kernel add_f16 .vector (.gm .f16 %x[4096], .gm .f16 %y[4096])
    {
        copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 256, 0, 0
    }

    Function(name='add_f16', is_kernel=True, attributes=('vector',),
             params=(Variable(space='gm', type='f16', name='%x', dims=(4096,), ptr=True), ...),
             body=(Instruction('copy_gm_to_ubuf', (), (Address(None, 0, 'ub'),
                   Address(Register('%x'), 0, 'gm'), Immediate(0), ...)),))

Syntax errors raise :class:`isa.errors.ParseError` (span, expected tokens, source line);
unknown intrinsics, wrong operand kinds or counts raise :class:`isa.errors.SemanticError`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedInput, VisitError

from .. import ir
from ..errors import KernlensError, ParseError, SemanticError, Span
from ..lark_errors import syntax_error
from ..types import is_type
from .opcodes import (BUFFERS, COMPARES, CONV_TYPES, OPCODES, ORDERS, PIPE_NAMES, QUANT_MODES,
                      split_opcode)

SPECIAL_REGISTERS = ("block_idx", "block_num", "subblock_idx")

_TOKEN_NAMES = {
    "_NL": "end of line", "COMMA": "','", "LSQB": "'['", "RSQB": "']'", "LPAR": "'('", "RPAR": "')'",
    "LBRACE": "'{'", "RBRACE": "'}'", "COLON": "':'", "REG": "register (%name)", "IDENT": "name",
    "INT": "integer", "FLOAT": "float", "MODS": "modifier (.f16)", "DOTWORD": "type (.gm/.f16)",
    "CORE": "core type (.cube/.vector)", "HEADER": "header (.meta/.arch)", "SEMICOLON": "';'",
    "SIGN": "'+' or '-'", "AT": "'@'", "NOT": "'!'", "KERNEL": "'.kernel'", "__ANON_0": "'.kernel'",
    "$END": "end of file",
}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = (Path(__file__).with_name("grammar.lark")).read_text()
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


class _Build(Transformer):
    def __init__(self, file: str, lines: list[str]):
        super().__init__(visit_tokens=False)
        self.file = file
        self.lines = lines

    # ---- helpers ----
    def span(self, meta_or_tok) -> Span:
        m = meta_or_tok
        if isinstance(m, Token):
            return Span(self.file, m.line or 0, m.column or 0, m.end_line or 0, m.end_column or 0)
        if getattr(m, "empty", False):
            return Span(self.file)
        return Span(self.file, m.line, m.column, m.end_line, m.end_column)

    def error(self, msg: str, span: Span, **kw) -> SemanticError:
        line = self.lines[span.line - 1] if 0 < span.line <= len(self.lines) else None
        return SemanticError(msg, span, source_line=line, **kw)

    # ---- operands ----
    def reg(self, c):
        t = c[0]
        return ir.Register(str(t), span=self.span(t))

    def sym(self, c):
        t = c[0]
        if str(t) in SPECIAL_REGISTERS:
            return ir.Register(str(t), span=self.span(t))
        return ir.Symbol(str(t), span=self.span(t))

    def integer(self, t) -> int:
        """The value of an INT token; ``08`` (no octal digit, no leading zeros in decimal) is a
        located error, as ptxas and the PTX front end say, not Python's ValueError."""
        try:
            return int(str(t), 0)
        except ValueError:
            raise self.error(f"invalid integer literal {str(t)!r} (a leading 0 needs 0x, 0o or 0b: "
                             f"write {str(t).lstrip('0') or '0'})", self.span(t)) from None

    def int(self, c):
        t = c[0]
        return ir.Immediate(self.integer(t), "int", span=self.span(t))

    def float(self, c):
        t = c[0]
        return ir.Immediate(float(str(t)), "float", span=self.span(t))

    def addr_reg(self, c):
        return (ir.Register(str(c[0]), span=self.span(c[0])), 0)

    def addr_reg_off(self, c):
        off = self.integer(c[2])
        return (ir.Register(str(c[0]), span=self.span(c[0])), off if str(c[1]) == "+" else -off)

    def addr_abs(self, c):
        return (None, self.integer(c[0]))

    def address(self, c):
        space, (base, off) = c
        if str(space) not in BUFFERS:
            raise self.error(f"unknown buffer '{space}'", self.span(space), expected=list(BUFFERS))
        return ir.Address(base, off, space=str(space), span=self.span(space))

    # ---- statements ----
    def guard(self, c):
        neg, r = (c[0], c[1]) if len(c) == 2 else (None, c[0])
        return ir.Guard(str(r), negated=neg is not None, span=self.span(r))

    @v_args(meta=True)
    def label(self, meta, c):
        return ir.Label(str(c[0]), span=self.span(meta))

    @v_args(meta=True)
    def instr(self, meta, c):
        guard, name, mods = c[0], c[1], c[2]
        operands = tuple(o for o in c[3:] if o is not None)
        span = self.span(meta)
        split = split_opcode(str(name))
        if split is None:
            near = sorted(n for n in OPCODES if n[:3] == str(name)[:3])[:12]
            raise self.error(f"unknown intrinsic '{name}'", self.span(name), expected=near)
        opcode, implied = split
        modifiers = implied + (tuple(str(mods)[1:].split(".")) if mods is not None else ())
        instr = ir.Instruction(opcode, modifiers, operands, guard=guard, span=span, isa="ascend")
        self.check(instr, name)
        return instr

    def check(self, ins: ir.Instruction, name_tok) -> None:
        spec = OPCODES[ins.opcode]
        mods = ins.modifiers
        where = self.span(name_tok)
        if ins.opcode == "cmp":
            if len(mods) != 1 or mods[0] not in COMPARES:
                raise self.error(f"cmp needs one comparison modifier, got '{'.'.join(mods)}'", where,
                                 expected=[f"cmp.{c}" for c in COMPARES])
        elif ins.opcode == "vconv":
            if mods[0] not in CONV_TYPES or mods[1] not in CONV_TYPES:
                raise self.error(f"bad conversion {mods}", where)
        elif spec.dtypes is not None:
            optional = spec.pipe == "S"  # scalar arithmetic is integer unless .f32
            if len(mods) > 1 or (not mods and not optional) or (mods and mods[0] not in spec.dtypes):
                raise self.error(f"{ins.opcode} needs a dtype modifier, got '{'.'.join(mods) or 'none'}'", where,
                                 expected=[f"{ins.opcode}.{d}" for d in spec.dtypes])
        elif mods:
            raise self.error(f"{ins.opcode} takes no modifiers, got '.{'.'.join(mods)}'", where)
        if len(ins.operands) != len(spec.operands):
            raise self.error(f"{ins.opcode} takes {len(spec.operands)} operands, got {len(ins.operands)}",
                             ins.span, notes=[f"example: {spec.example}"] if spec.example else None)
        for i, (kind, op) in enumerate(zip(spec.operands, ins.operands)):
            ok = _kind_ok(kind, op)
            if not ok:
                raise self.error(f"operand {i + 1} of {ins.opcode} must be {_KIND_TEXT.get(kind, kind + ' address')}",
                                 op.span if op.span.line else ins.span,
                                 notes=[f"example: {spec.example}"] if spec.example else None)

    @v_args(meta=True)
    def param(self, meta, c):
        words = [str(w)[1:] for w in c if isinstance(w, Token) and w.type == "DOTWORD"]
        reg = next(w for w in c if isinstance(w, Token) and w.type == "REG")
        dims = next((d for d in c if isinstance(d, tuple)), ())
        span = self.span(meta)
        types = [w for w in words if is_type(w)]
        spaces = [w for w in words if w in BUFFERS]
        if len(types) != 1 or len(spaces) > 1 or len(types) + len(spaces) != len(words):
            raise self.error(f"parameter {reg}: expected '[.gm] .<type>', got '{' '.join('.' + w for w in words)}'",
                             span)
        if spaces and spaces[0] != "gm":
            raise self.error(f"parameter {reg}: kernel parameters live in gm, not {spaces[0]}", span)
        if spaces and not dims:
            raise self.error(f"GM parameter {reg} needs an element count: {reg}[N]", span)
        if spaces:
            return ir.Variable("gm", types[0], str(reg), dims=dims, ptr=True, ptr_space="gm", span=span)
        return ir.Variable("param", types[0], str(reg), span=span)

    def dims(self, c):
        return (self.integer(c[0]),)

    def body(self, c):
        out = []
        for s in c:
            if isinstance(s, (ir.Label, ir.Instruction)):
                out.append(s)
        return tuple(out)

    @v_args(meta=True)
    def kernel(self, meta, c):
        name, core = c[0], c[1]
        params = tuple(p for p in c[2:-1] if isinstance(p, ir.Variable))
        body = c[-1]
        seen = set()
        for p in params:
            if p.name in seen:
                raise self.error(f"duplicate parameter {p.name}", p.span)
            seen.add(p.name)
        labels = {s.name for s in body if isinstance(s, ir.Label)}
        for s in body:
            if isinstance(s, ir.Instruction) and s.opcode == "bra":
                target = s.operands[0].name
                if target not in labels:
                    raise self.error(f"branch to undefined label '{target}'", s.operands[0].span,
                                     expected=sorted(labels))
        return ir.Function(str(name), True, params=params, body=body, attributes=(str(core)[1:],),
                           span=self.span(meta))

    @v_args(meta=True)
    def header(self, meta, c):
        text = str(c[0]).strip()
        name, _, args = text[1:].partition(" ")
        return ir.Directive(name, args.strip(), span=self.span(meta))

    def start(self, c):
        return list(c)


_KIND_TEXT = {"I": "an integer or register", "V": "a scalar (number or register)", "R": "a register",
              "P": "a pipe (PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL)",
              "E": "an event (EVENT_ID0..EVENT_ID7, an integer or a register)", "L": "a label",
              "Q": "a quant mode (" + ", ".join(QUANT_MODES) + ")", "O": "an order (" + ", ".join(ORDERS) + ")"}


def _kind_ok(kind: str, op) -> bool:
    if kind == "I":
        return isinstance(op, ir.Register) or (isinstance(op, ir.Immediate) and op.kind == "int")
    if kind == "V":
        return isinstance(op, (ir.Register, ir.Immediate))
    if kind == "R":
        return isinstance(op, ir.Register) and op.name.startswith("%")
    if kind == "P":
        return isinstance(op, ir.Symbol) and op.name in PIPE_NAMES
    if kind == "E":
        return (isinstance(op, ir.Symbol) and op.name.startswith("EVENT_ID") and op.name[8:].isdigit()) or \
            isinstance(op, ir.Register) or (isinstance(op, ir.Immediate) and op.kind == "int")
    if kind == "L":
        return isinstance(op, ir.Symbol)
    if kind == "Q":
        return isinstance(op, ir.Symbol) and op.name in QUANT_MODES
    if kind == "O":
        return isinstance(op, ir.Symbol) and op.name in ORDERS
    return isinstance(op, ir.Address) and op.space in kind.split("|")


def parse(text: str, file: str = "<text>") -> ir.Module:
    """Parse Ascend-like assembly text into a :class:`~isa.ir.Module` with ``isa='ascend'``."""
    lines = text.splitlines()
    if not text.strip():
        raise ParseError("empty file: expected '.kernel'", Span(file, 1, 1), source_line="")
    try:
        tree = _parser().parse(text if text.endswith("\n") else text + "\n")
    except UnexpectedInput as exc:
        raise syntax_error(exc, text, file, _describe_expected, {"_NL": "end of line"}) from None
    try:
        items = _Build(file, lines).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, KernlensError):
            raise exc.orig_exc from None
        raise
    targets = tuple(d.args for d in items if isinstance(d, ir.Directive) and d.name == "arch")
    return ir.Module("ascend", targets=targets, items=tuple(items), path=None if file == "<text>" else file,
                     source=text)


def _describe_expected(names) -> list[str]:
    return sorted({_TOKEN_NAMES.get(e, e) for e in names if not e.startswith("__")} |
                  {_TOKEN_NAMES.get(e, "'.kernel'") for e in names if e.startswith("__")})
