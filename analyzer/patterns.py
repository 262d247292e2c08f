"""Instruction patterns and expectations, as ``validate-kernel --expect`` and the pytest plugin spell them.

A *name* is either a class (upper case: ``TENSOR_CORE``, ``LOAD_SHARED_128``) or an opcode
pattern (``ld.shared.v4``, ``mma.sync``, ``cvt.f16.f32``). An opcode pattern names the canonical
opcode and some of its modifiers; an instruction matches when it has that canonical opcode and
every listed modifier, in any order, except that type words keep their relative order
(``cvt.f16.f32`` is f32 -> f16 and does not match ``cvt.f32.f16``). A word also matches its
``::`` refinements (``ld.shared`` matches ``ld.shared::cta.u32``). A pattern that names no known
instruction matches by prefix of the dotted words (``wgmma`` matches every ``wgmma.*``)::

    ld.shared.v4        matches   ld.shared.v4.f32 {%f1,%f2,%f3,%f4}, [%r39];
    mma.sync            matches   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ...
    cp.async            matches   cp.async.cg.shared.global [%r18], [%rd12], 16;   (not commit_group)

An expectation is ``NAME OP N`` with OP one of ``>= <= == > <`` (``TENSOR_CORE>=1``).
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from functools import lru_cache

from isa.errors import InputError
from isa.ir import Instruction
from isa.types import ALL_TYPES

OPS = {">=": operator.ge, "<=": operator.le, "==": operator.eq, ">": operator.gt, "<": operator.lt}
_EXPECT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.:]*)\s*(>=|<=|==|>|<)\s*(\d+)\s*$")
_TYPE_WORDS = frozenset(ALL_TYPES) | {"f32x2", "u16x2", "s16x2"}


def is_class_name(name: str) -> bool:
    """Class names are upper case (``FP16_FMA``); opcode patterns are lower case."""
    return name.isupper() or (name[:1].isupper() and "_" in name and "." not in name)


@dataclass(frozen=True)
class Pattern:
    """A compiled opcode pattern (see the module docstring)."""

    text: str
    canonical: str | None          # resolved canonical opcode, or None for a prefix pattern
    words: frozenset[str]          # non-type modifiers that must be present
    types: tuple[str, ...]         # type words that must appear in this order
    prefix: tuple[str, ...]        # dotted words for prefix matching

    def matches(self, ins: Instruction, isa: str = "ptx") -> bool:
        canon, mods = _split(ins, isa)
        if self.canonical is None:
            full = tuple(canon.split(".")) + tuple(mods)
            return full[: len(self.prefix)] == self.prefix
        if canon != self.canonical:
            return False
        for w in self.words:
            if w not in mods and not any(m.startswith(w + "::") for m in mods):
                return False
        if self.types:
            it = iter(m for m in mods if m in _TYPE_WORDS)
            return all(any(t == m for m in it) for t in self.types)
        return True

    def similarity(self, ins: Instruction, isa: str = "ptx") -> float:
        """How close an instruction is to this pattern, 0..1 (for 'nearest instructions' hints)."""
        canon, mods = _split(ins, isa)
        want = set(self.prefix)
        have = set(canon.split(".")) | set(mods)
        score = len(want & have) / max(1, len(want | have))
        if self.prefix and canon.split(".")[0] == self.prefix[0]:
            score += 1.0
        return score


def _split(ins: Instruction, isa: str) -> tuple[str, tuple[str, ...]]:
    if isa == "ptx":
        from isa.ptx.opcodes import split

        return split(ins)
    return ins.opcode, tuple(ins.modifiers)


@lru_cache(maxsize=1024)
def compile_pattern(text: str, isa: str = "ptx") -> Pattern:
    """Compile an opcode pattern such as ``ld.shared.v4``."""
    words = tuple(w for w in text.strip().split(".") if w)
    if not words or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", words[0]):
        raise InputError(f"not an opcode pattern: '{text}'")
    resolved = None
    if isa == "ptx":
        from isa.ptx.opcodes import resolve

        resolved = resolve(words[0], words[1:])
    else:
        resolved = (words[0], words[1:])
    if resolved is None:
        return Pattern(text, None, frozenset(), (), words)
    canon, mods = resolved
    types = tuple(m for m in mods if m in _TYPE_WORDS)
    return Pattern(text, canon, frozenset(m for m in mods if m not in _TYPE_WORDS), types, words)


@dataclass(frozen=True)
class Expectation:
    """``NAME OP N``: a class or opcode pattern, a comparison and a count."""

    name: str
    op: str
    count: int
    text: str = ""

    @property
    def is_class(self) -> bool:
        return is_class_name(self.name)

    def holds(self, found: int) -> bool:
        return OPS[self.op](found, self.count)

    def __str__(self) -> str:
        return f"{self.name}{self.op}{self.count}"


def parse_expectation(text: str) -> Expectation:
    """Parse ``TENSOR_CORE>=1`` or ``ld.shared.v4 >= 2``; raise :class:`InputError` otherwise."""
    m = _EXPECT.match(text)
    if not m:
        raise InputError(f"bad expectation '{text}': expected NAME OP N with OP one of >= <= == > < "
                         f"(for example TENSOR_CORE>=1 or ld.shared.v4>=1)")
    return Expectation(m.group(1), m.group(2), int(m.group(3)), text)


def forbid(name: str) -> Expectation:
    """``--forbid NAME`` is ``NAME==0``."""
    return Expectation(name, "==", 0, f"--forbid {name}")
