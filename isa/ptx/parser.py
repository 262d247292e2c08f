"""PTX text -> :class:`isa.ir.Module`.

The Lark grammar (``grammar.lark``) is LALR(1) with the contextual lexer; the transformer below
runs inline while parsing, so no parse tree is ever built, and it attaches each ``.loc`` line to
the instructions after it as it goes. A second pass (:class:`_Resolver`) numbers lexical scopes,
tells registers from symbols (``low`` in ``{.reg .f16 low,high; ...}`` is a register,
``global_smem`` is a symbol), and checks opcodes, targets and register declarations; it rebuilds
only the nodes that change. Parsing runs on lark-cython when it is installed (:data:`ACCELERATED`),
on pure-Python Lark otherwise, with the same result.

    >>> m = parse('''.version 9.0
    ... .target sm_90
    ... .address_size 64
    ... .visible .entry k(.param .u64 p) { .reg .b32 %r<2>; mov.u32 %r1, %tid.x; ret; }''')
    >>> m.kernels[0].instructions[0].full_opcode
    'mov.u32'
"""

from __future__ import annotations

import os
import re
import struct
import threading
from dataclasses import replace

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput, VisitError

from .. import ir
from ..cache import gc_paused as _gc_paused
from ..errors import Diagnostic, KernlensError, ParseError, SemanticError, Span
from ..lark_errors import source_line as _line
from ..lark_errors import syntax_error

#: the grammar file (a path as text: the front end imports no pathlib, ~3 ms of CPU with what it imports)
GRAMMAR = os.path.join(os.path.dirname(__file__), "grammar.lark")

# lark-cython, where installed, runs the same LALR tables and contextual lexer in compiled code; its
# tokens are not ``str`` subclasses, so the builder reads ``tok.value`` and tests with ``_TOKENS``.
try:  # an optional accelerator: pure-Python Lark without it
    import lark_cython as _lark_cython

    _PLUGINS = _lark_cython.plugins
    _TOKENS: tuple[type, ...] = (Token, _lark_cython.Token)
except ImportError:
    _PLUGINS = None
    _TOKENS = (Token,)

#: Whether parses run on lark-cython: installed, and not turned off with ``KERNLENS_PURE_LARK=1``.
ACCELERATED = _PLUGINS is not None and not os.environ.get("KERNLENS_PURE_LARK")

SPECIAL_REGISTERS = frozenset(
    """%tid %ntid %ctaid %nctaid %laneid %warpid %nwarpid %smid %nsmid %gridid %clock %clock_hi
    %clock64 %globaltimer %globaltimer_lo %globaltimer_hi %lanemask_eq %lanemask_le %lanemask_lt
    %lanemask_ge %lanemask_gt %clusterid %nclusterid %cluster_ctaid %cluster_nctaid %cluster_ctarank
    %cluster_nctarank %is_explicit_cluster %dynamic_smem_size %total_smem_size %aggr_smem_size
    %reserved_smem_offset_begin %reserved_smem_offset_end %reserved_smem_offset_cap
    %reserved_smem_offset_0 %reserved_smem_offset_1 %current_graph_exec %pm0 %pm1 %pm2 %pm3 %pm4
    %pm5 %pm6 %pm7 %pm0_64 %pm1_64 %pm2_64 %pm3_64 %pm4_64 %pm5_64 %pm6_64 %pm7_64""".split()
) | frozenset(f"%envreg{i}" for i in range(32))

_TARGET_RE = re.compile(r"^(sm|compute)_\d+[af]?$")
TARGET_OPTIONS = frozenset({"texmode_unified", "texmode_independent", "debug", "map_f64_to_f32"})

# Friendly names for grammar terminals in "expected" lists.
_TERMINAL_NAMES = {
    "NAME": "a name", "INT": "an integer", "FLOAT": "a number", "F32HEX": "0f hex float",
    "F64HEX": "0d hex float", "STRING": "a string", "OPCODE": "an opcode", "LABEL": "a label", "DOTNAME": "'.type'",
    "COMPONENT": "'.x'", "VERSION_NUMBER": "a version (9.0)", "PERF_NAME": "a tuning directive",
    "$END": "end of file", "UNIFIED": "'.unified'",
}


_new = object.__new__


def _mkspan(file: str, line: int, col: int, end_line: int, end_col: int) -> Span:
    """``Span(file, line, col, end_line, end_col)`` without the frozen dataclass's ``__init__`` (hot path)."""
    s = _new(Span)
    d = s.__dict__
    d["file"] = file
    d["line"] = line
    d["col"] = col
    d["end_line"] = end_line
    d["end_col"] = end_col
    return s


def _pos(tok, file: str) -> Span:
    end_col = tok.end_column or (tok.column + len(tok.value))
    return _mkspan(file, tok.line, tok.column, tok.end_line or tok.line, end_col)


def _int(tok, file: str = "<text>") -> int:
    """The value of a PTX integer literal token: ``0x1F``, ``0b101``, ``017`` (octal), ``42U``.
    A literal that is none of these (``08``: 8 is no octal digit) is a located ``ParseError``."""
    t = str(tok).rstrip("U")
    try:
        if t[:2] in ("0x", "0X"):
            return int(t[2:], 16)
        if t[:2] in ("0b", "0B"):
            return int(t[2:], 2)
        if len(t) > 1 and t[0] == "0":
            return int(t, 8)
        return int(t)
    except ValueError:
        pass
    if len(t) > 1 and t[0] == "0" and t.isdigit():
        why = f"invalid octal integer literal '{tok}': a leading 0 makes it octal, and octal digits are 0-7"
        expected = [t.lstrip("0") or "0", "0x" + t.lstrip("0")]
    else:
        why, expected = f"invalid integer literal '{tok}'", None
    span = _pos(tok, file) if getattr(tok, "line", None) else Span(file)
    raise ParseError(why, span, expected=expected)


def _f32(text: str) -> float:
    return struct.unpack("<f", struct.pack("<I", int(text[2:], 16)))[0]


def _f64(text: str) -> float:
    return struct.unpack("<d", struct.pack("<Q", int(text[2:], 16)))[0]


class _Param:
    """A parsed attribute of a declaration before it is folded into a Variable."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value):
        self.kind = kind
        self.value = value


class _Dims(tuple):
    """Array dimensions of a declaration (kept apart from initialiser tuples)."""


_OPCODE_SPLIT: dict[str, tuple[str, tuple[str, ...]]] = {}  # "ld.global.f32" -> ("ld", ("global", "f32"))


class _Builder(Transformer):
    """Builds IR nodes while Lark parses (inline transformer: no tree).

    Tokens are read through ``.value``/``.line``/``.column`` only, so that Lark's ``Token`` and
    lark-cython's both work.
    """

    def __init__(self, file: str):
        super().__init__()
        self.file = file
        self.scope_counter = 0
        self.last_loc: ir.SourceLoc | None = None  # (not `loc`: that is a rule) last ``.loc`` of the function being read
        self.runs: list = []                       # the FASTRUN tokens' statements (isa.ptx.fastpath)

    def span(self, tok) -> Span:
        s = _new(Span)  # _mkspan inlined: this runs for most tokens
        d = s.__dict__
        d["file"] = self.file
        d["line"] = tok.line
        d["col"] = tok.column
        d["end_line"] = tok.end_line
        d["end_col"] = tok.end_column
        return s

    # ---- header
    def start(self, c):
        header, *items = c
        return header, items

    def header(self, c):
        version, targets, *rest = c
        return version, targets, (rest[0] if rest else None)

    def version(self, c):
        return c[0].value

    def target(self, c):
        return list(c)

    def target_name(self, c):
        return c[0]

    def address_size(self, c):
        return _int(c[0], self.file)

    # ---- variables
    def linkage(self, c):
        return c[0].value[1:]

    def space(self, c):
        return c[0]

    def align_attr(self, c):
        return _Param("align", _int(c[0], self.file))

    def type_attr(self, c):
        return _Param("type", c[0])

    def ptr_attr(self, c):
        return _Param("ptr", True)

    def var_name(self, c):
        return c[0]

    def dims(self, c):
        return _Dims(c)

    def dim(self, c):
        return _int(c[0], self.file) if c and c[0] is not None else None

    def initializer(self, c):
        return c[0]

    def init_list(self, c):
        return tuple(x for x in c if x is not None)

    def var_decl(self, c):
        space_tok = c[0]
        attrs = [x for x in c[1:] if isinstance(x, _Param)]
        rest = [x for x in c[1:] if not isinstance(x, _Param)]
        name = rest[0]
        dims = ()
        init = None
        for x in rest[1:]:
            if isinstance(x, _Dims):
                dims = x
            else:
                init = x
        return _make_variable(self, space_tok.value[1:], attrs, name, dims, init, (), self.span(space_tok))

    def local_var(self, c):
        return c[0]

    def module_var(self, c):
        *links, var = c
        return replace(var, linkage=tuple(links))

    # ---- functions
    def param_group(self, c):
        return tuple(x for x in c if x is not None)

    def param(self, c):
        attrs = [x for x in c if isinstance(x, _Param)]
        toks = [x for x in c if isinstance(x, _TOKENS)]
        dims = next((x for x in c if isinstance(x, _Dims)), ())
        name = toks[-1]
        return _make_variable(self, "param", attrs, name, dims, None, (), self.span(name))

    def reg_param(self, c):
        """``.func (.reg .b32 rval) foo (.reg .b32 N)``: a parameter passed in a register."""
        return replace(self.param(c), space="reg")

    def entry_head(self, c):
        self.last_loc = None  # reduced before the body: statements are reduced in source order after it
        name = c[0]
        params = c[1] if len(c) > 1 and c[1] is not None else ()
        return ("entry", name, params, (), ())

    def func_head(self, c):
        self.last_loc = None
        name_idx = next(k for k, x in enumerate(c) if isinstance(x, _TOKENS))
        name = c[name_idx]
        attrs = tuple(x for x in c if type(x) is str)
        rets = c[name_idx - 1] if name_idx > 0 and isinstance(c[name_idx - 1], tuple) else ()
        params = c[name_idx + 1] if name_idx + 1 < len(c) and isinstance(c[name_idx + 1], tuple) else ()
        return ("func", name, params, rets, attrs)

    def noreturn(self, c):
        return "noreturn"

    def abi_preserve(self, c):
        return f"abi_preserve {_int(c[0], self.file)}"

    def abi_preserve_control(self, c):
        return f"abi_preserve_control {_int(c[0], self.file)}"

    def perf_directive(self, c):
        if isinstance(c[0], ir.Pragma):
            return c[0]
        return (c[0].value[1:], tuple(_int(x, self.file) for x in c[1:] if x is not None))

    def body(self, c):
        return ("body", tuple(c[0]) if c else ())

    def first_statement(self, c):
        return c

    def next_statement(self, c):
        statements = c[0]
        statements.append(c[1])
        return statements

    def _run(self, tok) -> list:
        """The statements of a run of fast lines (:mod:`isa.ptx.fastpath`), its leading instructions
        given the ``.loc`` in force here."""
        k = int(tok.value[1:])
        if k >= len(self.runs):         # the character in a file (no run put it there)
            raise ParseError("unexpected control character '\\x02'", self.span(tok))
        run = self.runs[k]
        if run.head and self.last_loc is not None:
            loc = self.last_loc
            for ins in run.statements[: run.head]:
                if type(ins) is ir.Instruction:
                    ins.__dict__["loc"] = loc
        if run.last is not None:
            self.last_loc = run.last
        return run.statements

    def first_run(self, c):
        return list(self._run(c[0]))

    def next_run(self, c):
        statements = c[0]
        statements.extend(self._run(c[1]))
        return statements

    def function(self, c):
        links = [x for x in c if type(x) is str]
        head = next(x for x in c if isinstance(x, tuple) and x and x[0] in ("entry", "func"))
        kind, name, params, rets, attrs = head
        directives = []
        body = None
        for x in c:
            if isinstance(x, tuple) and x and x[0] == "body":
                body = x[1]
            elif isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and x is not head:
                directives.append(x)
            elif isinstance(x, ir.Pragma):
                directives.append(("pragma", (x.text,)))
        return ir.Function(
            name=name.value, is_kernel=(kind == "entry"), params=tuple(params), returns=tuple(rets),
            body=body, linkage=tuple(links), directives=tuple(directives), attributes=attrs,
            span=self.span(name),
        )

    # ---- statements
    def scope(self, c):
        self.scope_counter += 1
        return ir.Scope(body=tuple(c[0]) if c else (), id=self.scope_counter)

    def label(self, c):
        return ir.Label(c[0].value.rstrip(": \t"), span=self.span(c[0]))

    def reg_plain(self, c):
        return (c[0].value, None, c[0])

    def reg_range(self, c):
        return (c[0].value, _int(c[1], self.file), c[0])

    def reg_decl(self, c):
        types = [x.value[1:] for x in c if isinstance(x, _TOKENS)]
        items = [x for x in c if isinstance(x, tuple)]
        vector = next((t for t in types if t in ("v2", "v4", "v8")), None)
        typ = next((t for t in types if t not in ("v2", "v4", "v8")), "b32")
        first_tok = items[0][2]
        if len(items) == 1 and items[0][1] is not None:
            return ir.RegisterDecl(typ, (items[0][0],), count=items[0][1], vector=vector, span=self.span(first_tok))
        if any(i[1] is not None for i in items):
            # mixed list such as `.reg .b32 %r<4>, %x;` is split into several declarations
            decls = []
            for n, cnt, tok in items:
                decls.append(ir.RegisterDecl(typ, (n,), count=cnt, vector=vector, span=self.span(tok)))
            return ir.Scope(body=tuple(decls), id=-1)  # flattened by the resolver
        return ir.RegisterDecl(typ, tuple(i[0] for i in items), vector=vector, span=self.span(first_tok))

    def loc(self, c):
        file, line, col = (_int(x, self.file) for x in c[:3])
        fname = None
        inlined = None
        for extra in c[3:]:
            if extra[0] == "function":
                fname = extra[1]
            else:
                inlined = extra[1]
        self.last_loc = ir.SourceLoc(file, line, col, fname, inlined)
        return ir.Loc(self.last_loc, span=self.span(c[0]))

    def loc_function(self, c):
        return ("function", c[0])

    def loc_inlined(self, c):
        return ("inlined", tuple(_int(x, self.file) for x in c))

    def loc_target(self, c):
        return c[0].value if len(c) == 1 or c[1] is None else f"{c[0].value}+{c[1].value}"

    def pragma(self, c):
        return ir.Pragma(", ".join(x.value for x in c), span=self.span(c[0]))

    def callprototype(self, c):
        tok = c[0]
        name = tok.value.rstrip(": \t")
        rest = " ".join(_render_group(x) if isinstance(x, tuple) else x.value for x in c[1:])
        return ir.Directive("callprototype", f"{name}: {rest}", span=self.span(tok))

    def targets_directive(self, c):
        tok = c[0]
        name = tok.value.rstrip(": \t")
        kind = c[1].value[1:]  # calltargets or branchtargets
        return ir.Directive(kind, f"{name}: " + ", ".join(x.value for x in c[2:]), span=self.span(tok))

    # ---- instructions
    def guard_pos(self, c):
        return ir.Guard(c[0].value, False, span=self.span(c[0]))

    def guard_neg(self, c):
        return ir.Guard(c[0].value, True, span=self.span(c[0]))

    def instruction(self, c):
        # c: [guard] OPCODE [operand ("," operand)*] ";" with every token kept (`!instruction`)
        if type(c[0]) is ir.Guard:
            guard = c[0]
            name_tok = c[1]
            ops = tuple(c[2:-1:2])
        else:
            guard = None
            name_tok = c[0]
            ops = tuple(c[1:-1:2])
        split = _OPCODE_SPLIT.get(name_tok.value)
        if split is None:
            name, *mods = name_tok.value.split(".")
            split = (name, tuple(mods))
            if len(_OPCODE_SPLIT) < 4096:
                _OPCODE_SPLIT[name_tok.value] = split
        name, mods = split
        if guard:
            line, col = guard.span.line, guard.span.col
        else:
            line, col = name_tok.line, name_tok.column
        return ir.Instruction(name, mods, ops, guard,
                              span=_mkspan(self.file, line, col, name_tok.line, name_tok.end_column), loc=self.last_loc)

    def name(self, c):
        t = c[0]
        s = t.value
        if s[0] == "%":
            return ir.Register(s, None, self.span(t))
        return ir.Symbol(s, self.span(t))

    def name_component(self, c):
        t = c[0]
        return ir.Register(t.value, c[1].value[1:], self.span(t))

    def name_plus(self, c):
        return ir.Sum(self.name(c), _int(c[1], self.file), self.span(c[0]))

    def name_minus(self, c):
        return ir.Sum(self.name(c), -_int(c[1], self.file), self.span(c[0]))

    def minus_name(self, c):
        return ir.Modified(self.name(c), "-", span=self.span(c[0]))

    def minus_name_component(self, c):
        return ir.Modified(self.name_component(c), "-", span=self.span(c[0]))

    def sink(self, c):
        return ir.Sink()

    def pair(self, c):
        return ir.Pair(c[0], c[1])

    def negated(self, c):
        return ir.Negated(self.name(c))

    def operand_list(self, c):
        # Lark shares the ("," operand) repetition with `!instruction`, which keeps its commas
        return ir.OperandList(tuple(x for x in c if x is not None and not isinstance(x, _TOKENS)))

    def vector(self, c):
        return ir.Vector(tuple(x for x in c if x is not None))

    # addresses keep their tokens (`!address`): c[0] is "[", the last is "]"
    def addr_plain(self, c):
        return ir.Address(self.name(c[1:]), 0)

    def addr_plus(self, c):
        return ir.Address(self.name(c[1:]), _int(c[-2], self.file))

    def addr_plus_neg(self, c):
        return ir.Address(self.name(c[1:]), -_int(c[-2], self.file))

    def addr_abs(self, c):
        return ir.Address(None, _int(c[1], self.file))

    def addr_coords(self, c):
        # [tensormap, {x, y, ...}]: c is "[", NAME, ",", Vector, "]"
        vec = next(x for x in c if isinstance(x, ir.Vector))
        return ir.Address(self.name(c[1:2]), 0, coords=vec)

    def addr_unified(self, c):
        return replace(c[0], suffix=c[1].value[1:])

    def pos_int(self, c):
        t = c[0].value
        return ir.Immediate(_int(c[0], self.file), "int", t, self.span(c[0]))

    def neg_int(self, c):
        t = c[0].value
        return ir.Immediate(-_int(c[0], self.file), "int", "-" + t, self.span(c[0]))

    def f32_imm(self, c):
        t = c[0].value
        return ir.Immediate(_f32(t), "f32", t, self.span(c[0]))

    def f64_imm(self, c):
        t = c[0].value
        return ir.Immediate(_f64(t), "f64", t, self.span(c[0]))

    def float_imm(self, c):
        t = c[0].value
        return ir.Immediate(float(t), "float", t, self.span(c[0]))

    def neg_float_imm(self, c):
        t = c[0].value
        return ir.Immediate(-float(t), "float", "-" + t, self.span(c[0]))

    # ---- constant expressions
    def c_int(self, c):
        t = c[0].value
        return ir.Immediate(_int(c[0], self.file), "int", t)

    def c_neg_int(self, c):
        t = c[0].value
        return ir.Immediate(-_int(c[0], self.file), "int", "-" + t)

    def c_f32(self, c):
        t = c[0].value
        return ir.Immediate(_f32(t), "f32", t)

    def c_f64(self, c):
        t = c[0].value
        return ir.Immediate(_f64(t), "f64", t)

    def c_float(self, c):
        t = c[0].value
        return ir.Immediate(float(t), "float", t)

    def c_neg_float(self, c):
        t = c[0].value
        return ir.Immediate(-float(t), "float", "-" + t)

    def c_name(self, c):
        return ir.Expression(c[0].value)

    def c_call(self, c):
        return ir.Expression(f"{c[0].value}({_expr_text(c[1])})")

    def c_mask(self, c):
        return ir.Expression(f"{c[0].value}({_expr_text(c[1])})")

    def c_paren(self, c):
        return ir.Expression(f"({_expr_text(c[0])})")

    def expr_add(self, c):
        return ir.Expression(f"{_expr_text(c[0])}+{_expr_text(c[1])}")

    def expr_sub(self, c):
        return ir.Expression(f"{_expr_text(c[0])}-{_expr_text(c[1])}")

    # ---- debug information
    def file_entry(self, c):
        idx, name, *rest = c
        ts = _int(rest[0], self.file) if len(rest) > 0 and rest[0] is not None else None
        size = _int(rest[1], self.file) if len(rest) > 1 and rest[1] is not None else None
        return ir.FileEntry(_int(idx, self.file), _unquote(name.value), ts, size, span=self.span(idx))

    def section_label(self, c):
        return ir.SectionEntry("label", label=c[0].value.rstrip(": \t"))

    def section_data(self, c):
        return ir.SectionEntry("data", type=c[0].value[1:], values=tuple(c[1:]))

    def section(self, c):
        return ir.Section(c[0].value, tuple(c[1:]), span=self.span(c[0]))


def _unquote(tok: str) -> str:
    s = str(tok)[1:-1]
    return s.replace('\\"', '"').replace("\\\\", "\\")


def _expr_text(x) -> str:
    if isinstance(x, ir.Immediate):
        return x.spelled()
    return x.text


def _render_group(params: tuple) -> str:
    from ..emit import emit_param

    return "(" + ", ".join(emit_param(p) for p in params) + ")"


def _make_variable(b: _Builder, space: str, attrs, name: Token, dims, init, linkage, span: Span) -> ir.Variable:
    align = None
    typ = None
    vector = None
    ptr = False
    ptr_space = None
    ptr_align = None
    seen_ptr = False
    for a in attrs:
        if a.kind == "ptr":
            ptr = seen_ptr = True
        elif a.kind == "align":
            if seen_ptr:
                ptr_align = a.value
            else:
                align = a.value
        else:
            word = str(a.value)[1:]
            if word in ("v2", "v4", "v8"):
                vector = word
            elif seen_ptr and word in ("global", "shared", "const", "local", "shared::cta", "shared::cluster"):
                ptr_space = word
            else:
                from ..types import is_type

                if not is_type(word):
                    raise SemanticError(f"unknown type '.{word}' in declaration of '{name}'",
                                        _pos(a.value, b.file))
                typ = word
    if typ is None:
        raise SemanticError(f"declaration of '{name}' has no type", span)
    return ir.Variable(space=space, type=typ, name=str(name), dims=tuple(dims or ()), align=align, vector=vector,
                       linkage=tuple(linkage), initializer=init, ptr_space=ptr_space, ptr_align=ptr_align, ptr=ptr,
                       span=_pos(name, b.file))


_LOCK = threading.Lock()
_LARKS: dict[bool, Lark] = {}


#: Where the first process that builds Lark's tables also keeps a copy of its cache entry, beside
#: the grammar, as Python keeps bytecode beside the sources: a process whose user cache is empty (a
#: new user, a fresh CI home, a cleared cache) takes them from here instead of building them
#: (~0.1 s CPU). The entry's name is its key and its header holds a digest (:mod:`isa.cache`), so
#: another grammar's, Lark's or Python's copy is never read.
INSTALLED_TABLES = os.path.join(os.path.dirname(GRAMMAR), "__pycache__")

#: the options the tables are built with (part of their key)
_OPTIONS = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": True}
#: options not saved with the tables: given again when they are loaded (Lark's own cache does so)
_GIVEN_AT_LOAD = ("transformer", "_plugins", "postlex", "lexer_callbacks")


def _tables_key(grammar: str, accelerated: bool) -> str:
    """The cache name of the grammar's LALR tables: the grammar text, the options, the Lark and
    Python versions and the accelerator."""
    import sys

    import lark as lark_pkg

    from .. import cache

    return cache.key("ptx-lark-tables", grammar, repr(sorted(_OPTIONS.items())), lark_pkg.__version__,
                     repr(sys.version_info[:2]), repr(accelerated))


def _load_tables(key: str, given: dict) -> Lark | None:
    """The parser from the cached tables (the user cache, else the copy beside the grammar), or
    None: cache off, no entry, or an entry this Lark cannot load."""
    import pickle

    from .. import cache

    saved = cache.load("lark", key)
    if saved is None:
        name = f"{key}.pickle"
        user, installed = cache.folder_text("lark"), os.path.join(INSTALLED_TABLES, name)
        if not cache.copy_if_missing(installed, user and os.path.join(user, name)):
            return None
        saved = cache.load("lark", key)
        if saved is None:                # a damaged copy (the digest says so): replaced by the next build
            _remove(installed)
            return None
    try:
        return Lark._load_from_dict(**pickle.loads(saved), **given)    # what Lark(cache=...) does on a hit
    except Exception:  # noqa: BLE001 - tables another Lark wrote (the key says not, but): build them
        return None


def _store_tables(key: str, lark: Lark) -> None:
    """The tables into the user cache, and a copy beside the grammar if none is there (other
    grammars' copies there removed: one install, one grammar)."""
    import io

    from .. import cache

    buf = io.BytesIO()
    lark.save(buf, exclude_options=_GIVEN_AT_LOAD)
    if not cache.store("lark", key, buf.getvalue()):
        return
    name = f"{key}.pickle"
    if cache.copy_if_missing(os.path.join(cache.folder_text("lark"), name), os.path.join(INSTALLED_TABLES, name)):
        for other in os.listdir(INSTALLED_TABLES):
            if other.endswith(".pickle") and other != name:
                _remove(os.path.join(INSTALLED_TABLES, other))


def _remove(path) -> None:
    """Remove the file ``path`` if it is there (``Path.unlink(missing_ok=True)``)."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _lark(accelerated: bool | None = None) -> Lark:
    """The shared LALR parser (on lark-cython or pure Lark, default :data:`ACCELERATED`); its
    inline transformer is re-targeted for each parse under a lock. Its tables come from the
    on-disk cache when they are there (:func:`_load_tables`), else are built and stored."""
    if accelerated is None:
        accelerated = ACCELERATED
    lark = _LARKS.get(accelerated)
    if lark is None:
        if accelerated and _PLUGINS is None:
            raise RuntimeError("lark-cython is not installed")
        given = {"transformer": _Builder("<text>"), **({"_plugins": _PLUGINS} if accelerated else {})}
        with open(GRAMMAR) as f:        # (as Path.read_text: the default encoding)
            grammar = f.read()
        key = _tables_key(grammar, accelerated)
        lark = _load_tables(key, given)
        if lark is None:
            lark = Lark(grammar, **_OPTIONS, **given)
            _store_tables(key, lark)
        # After each reduction the parser looks up ``rule.origin.name`` in a table keyed by plain
        # strings; a Token name there costs a Python-level ``Token.__eq__`` per reduction.
        for rule in lark.rules:
            rule.origin.name = str(rule.origin.name)
        _LARKS[accelerated] = lark
    return lark


def _describe_expected(lark: Lark, names) -> list[str]:
    out = []
    for n in sorted(set(names or ())):
        if n == "FASTRUN":                 # the fast path's marker: never in a file
            continue
        if n in _TERMINAL_NAMES:
            out.append(_TERMINAL_NAMES[n])
            continue
        try:
            term = lark.get_terminal(n)
            pat = term.pattern
            out.append(f"'{pat.value}'" if pat.type == "str" else n.lower())
        except Exception:  # noqa: BLE001 - any unknown terminal name is shown raw
            out.append(n)
    return sorted(set(out))


#: Whether parses take the common instruction and ``.loc`` lines past Lark (:mod:`isa.ptx.fastpath`):
#: on unless ``KERNLENS_NO_FAST_PATH=1``. The IR is the same either way (tests/isa/test_fastpath.py).
FAST_PATH = not os.environ.get("KERNLENS_NO_FAST_PATH")


def parse(text: str, file: str = "<text>", *, lenient: bool = False, diagnostics: list | None = None,
          fast: bool | None = None) -> ir.Module:
    """Parse PTX ``text``; ``file`` names it in spans and errors.

    With ``lenient``, unknown opcodes and modifiers become warnings appended to ``diagnostics``
    instead of errors. ``fast`` (default :data:`FAST_PATH`): build the common statement lines without
    Lark (:mod:`isa.ptx.fastpath`); any error there and the text is parsed again without it, so
    that errors are always Lark's on the real text.
    """
    with _gc_paused():
        if fast if fast is not None else FAST_PATH:
            from .fastpath import substitute

            if not text.strip():
                raise ParseError("empty file: expected '.version'", Span(file, 1, 1), source_line="")
            sub, runs = substitute(text, file)
            if runs:
                found: list = []
                try:
                    module = _parse(text, file, lenient, found, sub, runs)
                except KernlensError:
                    pass                # said again below, from the real text
                else:
                    if diagnostics is not None:
                        diagnostics.extend(found)
                    return module
        return _parse(text, file, lenient, diagnostics)


def _parse(text: str, file: str, lenient: bool, diagnostics: list | None, parsed: str | None = None,
           runs: list | None = None) -> ir.Module:
    """The module of ``text``; Lark reads ``parsed`` (``text`` with the fast path's ``runs``
    substituted) where given."""
    if not text.strip():
        raise ParseError("empty file: expected '.version'", Span(file, 1, 1), source_line="")
    if parsed is None:
        parsed, runs = text, []
    with _LOCK:
        lark = _lark()
        builder = lark.options.transformer
        builder.file = file
        builder.scope_counter = 0
        builder.last_loc = None
        builder.runs = runs
        try:
            header, items = lark.parse(parsed)
            failure = None
        except UnexpectedInput as exc:
            failure = _syntax_error(exc, text, file, lark)
        except VisitError as exc:
            if not isinstance(exc.orig_exc, KernlensError):
                raise
            failure = exc.orig_exc
        except KernlensError as exc:
            failure = exc
        except RecursionError:
            failure = ParseError("input nests too deeply to parse", Span(file, 1, 1))
        finally:
            builder.runs = []
    if failure is not None:
        if failure.span and failure.source_line is None:
            failure.source_line = _line(text, failure.span.line)
        _forget_frames(failure)
        try:
            raise failure
        finally:
            failure = None          # this frame does not hold the exception whose traceback holds it
    version, targets, address_size = header
    for t in targets:
        if not (_TARGET_RE.match(str(t)) or str(t) in TARGET_OPTIONS):
            raise SemanticError(f"unknown .target '{t}'", _pos(t, file), source_line=_line(text, t.line),
                                expected=["sm_80", "sm_90", "sm_90a", "compute_90", "debug"])
    items = _Resolver(text, lenient, diagnostics).items(items)
    return ir.Module(isa="ptx", version=version, targets=tuple(str(t) for t in targets),
                     address_size=address_size, items=tuple(items), path=file, source=text)


def _forget_frames(exc: BaseException) -> None:
    """Drop the frames of the parse that ``exc`` (and the exceptions it was raised from) went
    through: an exception kept in a local of a frame of its own traceback is a reference cycle,
    and those frames hold the IR built so far. Without them the failed parse is freed as soon as
    the caller lets the error go (the fast path's retry on the real text, a big file's batch parsed
    again), not by the cyclic collector, which validate-kernel leaves off for a big file's batches."""
    import traceback

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        traceback.clear_frames(exc.__traceback__)
        exc.__traceback__ = None
        exc = exc.__cause__ or exc.__context__


def _syntax_error(exc: UnexpectedInput, text: str, file: str, lark: Lark) -> ParseError:
    return syntax_error(exc, text, file, lambda names: _describe_expected(lark, names))


class _Resolver:
    """Second pass: scope ids, registers vs symbols, opcode and declaration checks.

    The builder already attached ``.loc`` lines; nodes that need no change are kept as they are
    (most instructions), so the pass mostly checks.
    """

    def __init__(self, text: str, lenient: bool, diagnostics: list | None):
        self.text = text
        self.lenient = lenient
        self.diagnostics = diagnostics if diagnostics is not None else []
        self.validate = _validator()

    def items(self, items: list) -> list:
        return [self.function(i) if type(i) is ir.Function and i.body is not None else i for i in items]

    def error(self, cls, message: str, span: Span, **kw):
        return cls(message, span, source_line=_line(self.text, span.line) if span.line else None, **kw)

    def function(self, fn: ir.Function) -> ir.Function:
        self.next_id = 0
        # `.reg` parameters and results are registers of the function's body
        regs = {p.name for p in fn.params + fn.returns if p.space == "reg"}
        body = self.body(fn.body, 0, regs or None)
        return fn if body is fn.body else replace(fn, body=body)

    def body(self, stmts: tuple, sid: int, outer: set[str] | None) -> tuple:
        """``stmts`` resolved in scope ``sid``; the same tuple when nothing changed."""
        # declarations are visible from anywhere in their scope (PTX allows use before declaration
        # in straight-line order only in practice, but labels/regs are scope-wide).
        local: set[str] = set()
        for s in stmts:
            t = type(s)
            if t is ir.RegisterDecl:
                local.update(s.expanded())
            elif t is ir.Scope and s.id == -1:
                for d in s.body:
                    local.update(d.expanded())
        visible = local if outer is None else outer | local
        out = []
        changed = False
        instruction = self.instruction
        for s in stmts:
            t = type(s)
            if t is ir.Instruction:
                new = instruction(s, sid, visible)
                changed = changed or new is not s
                out.append(new)
            elif t is ir.Scope:
                changed = True
                if s.id == -1:
                    out.extend(s.body)
                    continue
                self.next_id += 1
                new_id = self.next_id
                inner = self.body(s.body, new_id, visible)
                out.append(ir.Scope(inner, id=new_id, span=s.span))
            else:
                out.append(s)
        return tuple(out) if changed else stmts

    def instruction(self, ins: ir.Instruction, sid: int, visible: set[str]) -> ir.Instruction:
        if self.validate is not None:
            problem = self.validate(ins)
            if problem:
                if self.lenient:
                    self.diagnostics.append(Diagnostic(problem, ins.span))
                else:
                    raise self.error(SemanticError, problem, ins.span)
        ops = ins.operands
        new_ops = None
        operand = self.operand
        for k, o in enumerate(ops):
            t = type(o)
            if t is ir.Register:  # the common case, checked here rather than in operand()
                name = o.name
                if name[0] == "%" and name not in visible and name not in SPECIAL_REGISTERS:
                    self.check_register(name, o.span, visible)  # raises
                n = o
            elif t is ir.Immediate:
                n = o
            else:
                n = operand(o, visible)
            if n is not o and new_ops is None:
                new_ops = list(ops[:k])
            if new_ops is not None:
                new_ops.append(n)
        guard = ins.guard
        if guard is not None:
            self.check_register(guard.register, guard.span, visible)
        if new_ops is None and sid == ins.scope:
            return ins
        return replace(ins, operands=ops if new_ops is None else tuple(new_ops), scope=sid)

    def check_register(self, name: str, span: Span, visible: set[str]) -> None:
        if name[0] == "%" and name not in visible and name not in SPECIAL_REGISTERS:
            raise self.error(SemanticError, f"register '{name}' is used but not declared", span)

    def operand(self, op, visible: set[str]):
        """``op`` with declared plain names turned into registers (``op`` itself when unchanged)."""
        t = type(op)
        if t is ir.Register:
            if op.component is None or op.name not in SPECIAL_REGISTERS:
                self.check_register(op.name, op.span, visible)
            return op
        if t is ir.Symbol:
            if op.name in visible:
                return ir.Register(op.name, span=op.span)
            if op.name == "WARP_SZ":     # the predefined constant (ISA 4.5.1): the warp size
                return ir.Immediate(32, "int", "WARP_SZ", op.span)
            return op
        if t is ir.Sum:
            new = self.operand(op.base, visible)
            if type(new) is ir.Symbol:   # symbol + constant: an address expression
                return ir.Expression(f"{new.name}{'-' if op.offset < 0 else '+'}{abs(op.offset)}")
            if type(new) is ir.Immediate:
                return ir.Immediate(new.value + op.offset, "int", emit_sum(new.text, op.offset), op.span)
            return op if new is op.base else replace(op, base=new)
        if t is ir.Address:
            base = op.base
            if base is None:
                return op
            new = self.operand(base, visible)
            coords = op.coords if op.coords is None else self.operand(op.coords, visible)
            return op if new is base and coords is op.coords else replace(op, base=new, coords=coords)
        if t is ir.Vector:
            els = tuple(self.operand(e, visible) for e in op.elements)
            return op if all(a is b for a, b in zip(els, op.elements)) else replace(op, elements=els)
        if t is ir.Pair:
            first, second = self.operand(op.first, visible), self.operand(op.second, visible)
            return op if first is op.first and second is op.second else replace(op, first=first, second=second)
        if t is ir.Negated or t is ir.Modified:
            new = self.operand(op.operand, visible)
            return op if new is op.operand else replace(op, operand=new)
        if t is ir.OperandList:
            items = tuple(self.operand(e, visible) for e in op.items)
            return op if all(a is b for a, b in zip(items, op.items)) else replace(op, items=items)
        return op


def emit_sum(text: str, offset: int) -> str:
    return f"{text}{'-' if offset < 0 else '+'}{abs(offset)}"


def _validator():
    """The opcode table's ``validate`` (imported on first use)."""
    from .opcodes import validate

    return validate
