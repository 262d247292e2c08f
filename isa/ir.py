"""The ISA-neutral IR: modules, functions, declarations, instructions and operands.

Both front ends build it: the PTX front end (``isa.ptx``) and the Ascend-like one (``isa.ascend``).
Names say what a thing is, not how PTX spells it: a ``Guard`` is a predicate that gates an
instruction, an ``Address`` is a memory operand in some state space or buffer.

All nodes are frozen dataclasses. Source spans are kept on every node but never compared, so a
parse of ``Module.emit()`` output equals the module it came from.

A real PTX line and its IR::

    @%p8 st.global.v4.b32 [ %rd85 + 0 ], { %r1, %r2, %r3, %r4 };

    Instruction(opcode='st', modifiers=('global', 'v4', 'b32'),
                operands=(Address(base=Register('%rd85'), offset=0),
                          Vector((Register('%r1'), ...))),
                guard=Guard('%p8', negated=False))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator, Union

from .errors import Span

NOSPAN = Span()


def _span() -> Span:
    return field(default=NOSPAN, compare=False, repr=False)


# --------------------------------------------------------------------------------------------
# Operands
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Register:
    """A register by name: ``%r12``, ``%rd3``, ``%f1``, ``low`` (inline-asm scope), ``%tid.x``.

    Special registers keep their component: ``Register('%tid', component='x')``.
    """

    name: str
    component: str | None = None
    span: Span = _span()

    @property
    def text(self) -> str:
        return self.name if self.component is None else f"{self.name}.{self.component}"


@dataclass(frozen=True)
class Immediate:
    """A constant. ``kind`` is ``int``, ``f32`` (``0f3F800000``), ``f64`` (``0d...``) or ``float``
    (decimal, which PTX treats as f64). ``text`` keeps the spelling for faithful emission."""

    value: int | float
    kind: str = "int"
    text: str | None = field(default=None, compare=False)
    span: Span = _span()

    def spelled(self) -> str:
        if self.text is not None:
            return self.text
        if self.kind == "int":
            return str(self.value)
        if self.kind == "f32":
            import struct

            return "0f%08X" % struct.unpack("<I", struct.pack("<f", self.value))[0]
        import struct

        return "0d%016X" % struct.unpack("<Q", struct.pack("<d", self.value))[0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Immediate):
            return NotImplemented
        if self.kind != other.kind:
            return False
        if isinstance(self.value, float) and isinstance(other.value, float):
            if self.value != self.value and other.value != other.value:  # NaN payloads by text
                return (self.text or "") == (other.text or "")
        return self.value == other.value

    def __hash__(self) -> int:
        return hash((self.kind, self.value if self.value == self.value else "nan"))


@dataclass(frozen=True)
class Symbol:
    """A name that is not a register: a variable (``global_smem``), a label (``$L__BB0_2``), a
    function (``vprintf``), or a section (``.debug_abbrev``) in debug data."""

    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Expression:
    """A constant expression kept as canonical text (``foo+8``, ``$L__tmp1-$L__tmp0``,
    ``generic(bar)+4``). The value is computed by whoever needs it."""

    text: str
    span: Span = _span()


@dataclass(frozen=True)
class Address:
    """A memory operand: ``[%rd6+-4]``, ``[global_smem+1024]``, ``[%r39]``, ``[param0+0]``.

    ``space`` is set where the operand itself names a state space or buffer (the Ascend-like
    ISA writes ``ub[%s1+256]``); for PTX the space is in the opcode's modifiers.
    ``suffix`` keeps a trailing ``.unified``.
    """

    base: Register | Symbol | None
    offset: int = 0
    space: str | None = None
    suffix: str | None = None
    span: Span = _span()
    # SASS only: a second register term, ``[R2+UR4+0x10]`` (base R2, index UR4, offset 16)
    index: Register | None = None
    # PTX tensor/texture form ``[%rd17, {%r30, %r84}]`` (cp.async.bulk.tensor, tex, suld): the
    # tensor map (or texture) is ``base``, the coordinates are ``coords``
    coords: "Vector | None" = None


@dataclass(frozen=True)
class Vector:
    """A brace list ``{%f1, %f2, %f3, %f4}``; elements may be registers, immediates or ``_``."""

    elements: tuple[Operand, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Sink:
    """The bit bucket ``_``."""

    span: Span = _span()


@dataclass(frozen=True)
class Pair:
    """A dual destination ``p|q`` (``setp``, ``shfl.sync``, ``elect.sync``)."""

    first: Operand
    second: Operand
    span: Span = _span()


@dataclass(frozen=True)
class Negated:
    """A negated predicate source ``!%p1``."""

    operand: Operand
    span: Span = _span()


@dataclass(frozen=True)
class Sum:
    """A register (or symbol) plus a constant as a source operand: ``st.u64 [x], temp + 1;``
    (ptxas accepts it wherever a register source is allowed)."""

    base: Operand
    offset: int
    span: Span = _span()


@dataclass(frozen=True)
class Modified:
    """A source operand under a modifier: SASS ``-R13`` (``op='-'``), ``|R2|`` (``'|'``), ``~URZ``
    (``'~'``), PTX ``-%r2`` (``vmad.s32.s32.s32 %r1, -%r2, %r3, %r4;``); ``suffix`` keeps what
    follows the bars (``|R5|.reuse``). ``!P0`` is :class:`Negated`."""

    operand: Operand
    op: str
    suffix: str | None = None
    span: Span = _span()


@dataclass(frozen=True)
class OperandList:
    """A parenthesised list, used by calls: ``(retval0)``, ``(param0, param1)``."""

    items: tuple[Operand, ...]
    span: Span = _span()


Operand = Union[Register, Immediate, Symbol, Expression, Address, Vector, Sink, Pair, Negated, Sum, OperandList,
                Modified]


# --------------------------------------------------------------------------------------------
# Statements inside a body
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Guard:
    """The predicate gating an instruction: ``@%p2`` or ``@!%p1``."""

    register: str
    negated: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class SourceLoc:
    """Where a statement came from in the high-level source (from a PTX ``.loc``)."""

    file: int
    line: int
    col: int
    function_name: str | None = None
    inlined_at: tuple[int, int, int] | None = None


@dataclass(frozen=True)
class Instruction:
    """One machine statement.

    ``opcode`` is the first name (``ld``, ``mma``, ``cp``, ``copy_gm_to_cbuf``) and ``modifiers``
    the dotted words after it, without dots and in source order (``('async','cg','shared','global')``).
    Modifier order is free in PTX, so matchers should use :attr:`modset`.
    """

    opcode: str
    modifiers: tuple[str, ...] = ()
    operands: tuple[Operand, ...] = ()
    guard: Guard | None = None
    span: Span = _span()
    # Debug location of the high-level source line (last ``.loc`` before it), not compared.
    loc: SourceLoc | None = field(default=None, compare=False, repr=False)
    # Lexical scope id within the function (0 = function body); registers resolve through it.
    scope: int = field(default=0, compare=False, repr=False)
    # Which ISA's spelling this instruction is printed in (``ptx``, ``ascend`` or ``sass``).
    isa: str = field(default="ptx", compare=False, repr=False)

    @property
    def full_opcode(self) -> str:
        """The opcode spelled as in the source: ``ld.global.nc.v4.f32``."""
        return ".".join((self.opcode,) + self.modifiers)

    @cached_property
    def modset(self) -> frozenset[str]:
        return frozenset(self.modifiers)

    def __str__(self) -> str:
        if self.isa == "ascend":
            from .ascend.emit import emit_instruction as emit_ascend

            return emit_ascend(self)
        if self.isa == "sass":
            from .sass.emit import emit_instruction as emit_sass

            return emit_sass(self)
        from .emit import emit_instruction

        return emit_instruction(self)


@dataclass(frozen=True)
class Label:
    """``$L__BB0_2:``"""

    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Loc:
    """A ``.loc`` directive, kept in the body so that emission and line mapping both work."""

    loc: SourceLoc
    span: Span = _span()


@dataclass(frozen=True)
class Pragma:
    """``.pragma "nounroll";``"""

    text: str
    span: Span = _span()


@dataclass(frozen=True)
class RegisterDecl:
    """``.reg .b32 %r<359>;`` (``count`` = 359, names %r0..%r358) or ``.reg .f16 low, high;``."""

    type: str
    names: tuple[str, ...]
    count: int | None = None  # set for the parameterised form %r<N>
    vector: str | None = None
    span: Span = _span()

    def expanded(self) -> list[str]:
        if self.count is None:
            return list(self.names)
        return _numbered(self.names[0], self.count)


def _numbered(prefix: str, n: int) -> list[str]:
    """``[f"{prefix}0", ..., f"{prefix}{n - 1}"]``, the names sliced from one list per prefix that
    every declaration shares (a big module declares ``%r<N>`` in each of its thousands of kernels)."""
    names = _NUMBERED.get(prefix)
    if names is None or len(names) < n:
        names = [f"{prefix}{i}" for i in range(n)]
        if len(_NUMBERED) >= 1024:
            _NUMBERED.clear()
        _NUMBERED[prefix] = names
    return names[:n]


_NUMBERED: dict[str, list[str]] = {}


@dataclass(frozen=True)
class Variable:
    """A variable in a state space: module-scope ``.global``/``.const``/``.shared``, a demoted
    function-scope ``.shared``, ``.local`` depots, call-sequence ``.param`` declarations, kernel
    parameters (space ``param``), and Ascend-like buffers.

    ``dims`` holds array sizes; ``None`` marks an unsized dimension (``.extern .shared .b8 smem[];``).
    """

    space: str
    type: str
    name: str
    dims: tuple[int | None, ...] = ()
    align: int | None = None
    vector: str | None = None
    linkage: tuple[str, ...] = ()
    initializer: object = None  # nested tuples of Immediate/Expression
    ptr_space: str | None = None  # kernel params: .ptr .global
    ptr_align: int | None = None
    ptr: bool = False
    span: Span = _span()

    @property
    def element_bytes(self) -> int:
        from .types import type_bytes

        n = type_bytes(self.type)
        if self.vector:
            n *= int(self.vector[1:])
        return n

    @property
    def size_bytes(self) -> int | None:
        n = self.element_bytes
        for d in self.dims:
            if d is None:
                return None
            n *= d
        return n


@dataclass(frozen=True)
class Directive:
    """Any other dotted statement kept verbatim as name + argument text (``.maxnreg 32``)."""

    name: str
    args: str = ""
    span: Span = _span()


@dataclass(frozen=True)
class Scope:
    """A ``{ ... }`` block nested in a body; it may redeclare registers of an outer scope."""

    body: tuple[Statement, ...]
    id: int = field(default=0, compare=False)
    span: Span = _span()


Statement = Union[Instruction, Label, Loc, Pragma, RegisterDecl, Variable, Directive, Scope]


# --------------------------------------------------------------------------------------------
# Functions and modules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Function:
    """A kernel (``is_kernel``: PTX ``.entry``, an Ascend-like ``.kernel``) or a device function.

    ``body`` is ``None`` for a prototype. ``directives`` holds tuning directives in order:
    ``(('maxntid', (256, 1, 1)), ('minnctapersm', (2,)))``. ``attributes`` holds the rest
    (``noreturn``, ``abi_preserve 8``, the Ascend-like core type ``cube``/``vector``).
    """

    name: str
    is_kernel: bool
    params: tuple[Variable, ...] = ()
    returns: tuple[Variable, ...] = ()
    body: tuple[Statement, ...] | None = None
    linkage: tuple[str, ...] = ()
    directives: tuple[tuple[str, tuple], ...] = ()
    attributes: tuple[str, ...] = ()
    span: Span = _span()

    @cached_property
    def statements(self) -> list[Statement]:
        """Every statement of the body in order, nested scopes flattened (:func:`walk`, done once:
        the views below and the analyses read this list)."""
        out: list[Statement] = []
        _flatten(self.body or (), out)
        return out

    @cached_property
    def instructions(self) -> list[Instruction]:
        """Every instruction of the body in program order, nested scopes flattened."""
        return [s for s in self.statements if isinstance(s, Instruction)]

    @cached_property
    def labels(self) -> dict[str, int]:
        """Label name -> index into :attr:`instructions` of the instruction it precedes."""
        out: dict[str, int] = {}
        i = 0
        for s in self.statements:
            if isinstance(s, Label):
                out[s.name] = i
            elif isinstance(s, Instruction):
                i += 1
        return out

    @cached_property
    def declarations(self) -> list[RegisterDecl | Variable]:
        return [s for s in self.statements if isinstance(s, (RegisterDecl, Variable))]

    @cached_property
    def variables(self) -> list[Variable]:
        """The variables declared in the body (``.local``, ``.shared``, call ``.param``), in order."""
        return [s for s in self.declarations if isinstance(s, Variable)]

    @cached_property
    def scope_parents(self) -> dict[int, int]:
        """Scope id -> enclosing scope id (the body itself is scope 0)."""
        parents: dict[int, int] = {}
        _scope_parents(self.body or (), 0, parents)
        return parents

    @cached_property
    def scope_registers(self) -> dict[int, frozenset[str]]:
        """Scope id -> register names declared directly in it."""
        out: dict[int, set[str]] = {0: set()}
        _scope_registers(self.body or (), 0, out)
        return {k: frozenset(v) for k, v in out.items()}

    def register_key(self, name: str, scope: int) -> str:
        """A function-wide unique key for register ``name`` used in ``scope``.

        ``%temp`` declared in scopes 3 and 5 gives ``%temp@3`` and ``%temp@5``; a register of the
        function body keeps its name.
        """
        sid = scope
        regs = self.scope_registers
        parents = self.scope_parents
        while sid != 0:
            if name in regs.get(sid, ()):
                return f"{name}@{sid}"
            sid = parents.get(sid, 0)
        return name

    def emit(self) -> str:
        from .emit import emit_function

        return emit_function(self)


@dataclass(frozen=True)
class FileEntry:
    """``.file 1 "/path/kernel.cu", 1764000000, 4242``"""

    index: int
    name: str
    timestamp: int | None = None
    size: int | None = None
    span: Span = _span()


@dataclass(frozen=True)
class SectionEntry:
    """One line of a debug section: ``.b8 1,17,1``, ``.b32 .debug_abbrev``, or a label."""

    kind: str  # 'data' or 'label'
    type: str | None = None  # b8/b16/b32/b64
    values: tuple[Immediate | Expression, ...] = ()
    label: str | None = None


@dataclass(frozen=True)
class Section:
    """``.section .debug_info { ... }`` kept as structured data."""

    name: str
    entries: tuple[SectionEntry, ...] = ()
    span: Span = _span()


ModuleItem = Union[Function, Variable, FileEntry, Section, Pragma, Directive]


@dataclass(frozen=True)
class Module:
    """One assembly file. ``isa`` is ``ptx``, ``ascend`` or ``sass`` (a disassembled cubin).

    ``items`` keeps module-scope items in source order so emission reproduces the layout.
    """

    isa: str
    version: str | None = None
    targets: tuple[str, ...] = ()
    address_size: int | None = None
    items: tuple[ModuleItem, ...] = ()
    path: str | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False, repr=False)

    # The item lists are scanned once per module and kept (a fresh list is handed out each time):
    # analysing each kernel of a module with thousands asks for them once per kernel.
    @cached_property
    def _functions(self) -> tuple[Function, ...]:
        return tuple(i for i in self.items if isinstance(i, Function))

    @cached_property
    def _variables(self) -> tuple[Variable, ...]:
        return tuple(i for i in self.items if isinstance(i, Variable))

    @cached_property
    def _static_variables(self) -> tuple[Variable, ...]:
        inner = [d for f in self._functions for d in f.declarations
                 if isinstance(d, Variable) and d.space in ("global", "const")]
        return self._variables + tuple(inner)

    @cached_property
    def variable_positions(self) -> dict[str, tuple[int, ...]]:
        """Module variable name -> its positions in :attr:`variables` (kept: do not change it):
        a kernel's variables found by the names it uses, not by a scan of them all."""
        out: dict[str, list[int]] = {}
        for k, v in enumerate(self._variables):
            out.setdefault(v.name, []).append(k)
        return {name: tuple(ks) for name, ks in out.items()}

    @cached_property
    def variable_spaces(self) -> dict[str, str]:
        """Module variable name -> its state space (kept: do not change it)."""
        return {v.name: v.space for v in self._variables}

    @cached_property
    def device_functions(self) -> dict[str, Function]:
        """Name -> device function with a body (a ``.weak`` or prototype declaration gives way to
        it); kept: do not change it."""
        return {f.name: f for f in self._functions if f.body is not None and not f.is_kernel}

    @property
    def functions(self) -> list[Function]:
        return list(self._functions)

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self._functions if f.is_kernel and f.body is not None]

    @property
    def variables(self) -> list[Variable]:
        return list(self._variables)

    @property
    def static_variables(self) -> list[Variable]:
        """Module variables and the ``.global``/``.const`` variables declared inside functions
        (``{ .global .u32 counter; ... }``), which have static storage like module ones."""
        return list(self._static_variables)

    @cached_property
    def _files(self) -> dict[int, FileEntry]:
        return {i.index: i for i in self.items if isinstance(i, FileEntry)}

    @property
    def files(self) -> dict[int, FileEntry]:
        return dict(self._files)

    @property
    def sections(self) -> list[Section]:
        return [i for i in self.items if isinstance(i, Section)]

    @property
    def target(self) -> str | None:
        """The architecture target (``sm_90a``), without options such as ``debug``."""
        for t in self.targets:
            if t.startswith(("sm_", "compute_")) or self.isa != "ptx":
                return t
        return None

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name and f.body is not None:
                return f
        from .errors import InputError

        kernels = [f.name for f in self.kernels]
        names = ", ".join(kernels[:20]) + (f", ... {len(kernels) - 20} more" if len(kernels) > 20 else "")
        raise InputError(f"no kernel named '{name}' (kernels: {names or 'none'})",
                         Span(self.path) if getattr(self, "path", None) else None)

    def source_line(self, line: int) -> str | None:
        if not self.source or line <= 0:
            return None
        lines = self.source.splitlines()
        return lines[line - 1] if line - 1 < len(lines) else None

    def emit(self) -> str:
        if self.isa == "ascend":
            from .ascend.emit import emit_module as emit_ascend

            return emit_ascend(self)
        if self.isa == "sass":
            from .sass.emit import emit_module as emit_sass

            return emit_sass(self)
        from .emit import emit_module

        return emit_module(self)


# The two walks of nested scopes are functions, not closures that call themselves: such a closure
# is a reference cycle, garbage only the cyclic collector frees (validate-kernel keeps it off and
# collects a big file's batches without a full collection: tests/analyzer/test_big_speed.py).
def _scope_parents(body: tuple[Statement, ...], sid: int, parents: dict[int, int]) -> None:
    for s in body:
        if isinstance(s, Scope):
            parents[s.id] = sid
            _scope_parents(s.body, s.id, parents)


def _scope_registers(body: tuple[Statement, ...], sid: int, out: dict[int, set[str]]) -> None:
    out.setdefault(sid, set())
    for s in body:
        if isinstance(s, RegisterDecl):
            out[sid].update(s.expanded() if s.count is not None else s.names)
        elif isinstance(s, Scope):
            _scope_registers(s.body, s.id, out)


def _flatten(body: tuple[Statement, ...] | list[Statement], out: list[Statement]) -> None:
    """Append what :func:`walk` yields to ``out`` (without a generator step per statement)."""
    for s in body:
        if isinstance(s, Scope):
            _flatten(s.body, out)
        else:
            out.append(s)


def walk(body: tuple[Statement, ...] | list[Statement]) -> Iterator[Statement]:
    """Statements of a body in order, descending into nested scopes."""
    for s in body:
        if isinstance(s, Scope):
            yield from walk(s.body)
        else:
            yield s
