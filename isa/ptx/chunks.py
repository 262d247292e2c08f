"""Kernel-level chunks of a PTX file, found by a fast scan instead of a parse.

A big module (thousands of ``.entry`` definitions) need not be parsed whole to run or inspect
one kernel: :func:`entries` finds each kernel definition's extent by matching its braces (comments
and strings skipped), and :func:`select` blanks the definitions of every other kernel, keeping
each newline (and the columns after a definition on its last line), so the parse of what is
left reports the same lines and columns as the whole file.
Module-level declarations, ``.func`` definitions and directives are always kept.

    >>> text = '''.version 9.0
    ... .target sm_90
    ... .address_size 64
    ... .visible .entry a() { ret; }
    ... .visible .entry b() { ret; }'''
    >>> [(e.name, e.line) for e in entries(text)]
    [('a', 4), ('b', 5)]
    >>> [line.strip() for line in select(text, {'b'}).splitlines()[3:]]
    ['', '.visible .entry b() { ret; }']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator

_ENTRY = re.compile(r"^[ \t]*(?:\.(?:visible|weak|extern)[ \t]+)*\.entry[ \t]+([\w$%]+)", re.M)
# what brace matching must see: braces, parentheses, and the comments/strings that hide them
_TOKENS = re.compile(r'[{}();]|//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"', re.S)
# inside a body only the braces count (a ';' or parenthesis there ends nothing): what hides no
# brace (other characters, comments, strings, and a ``{...}`` closed on its line with none of
# those inside, a vector operand: +1 then -1) is stepped over in the pattern, up to the next brace
# that changes the depth; a lone ``/`` or ``"`` (no comment, no string) is a character
_BRACE = re.compile(r'(?:[^{}/"]++|//[^\n]*+|/\*.*?\*/|"(?:[^"\\\n]|\\.)*+"|\{[^{}/"\n]*+\}|[/"])*+([{}])', re.S)


@dataclass(frozen=True)
class Entry:
    """One ``.entry`` definition: ``text[start:end]`` from its first directive to its ``}``."""

    name: str
    start: int
    end: int
    line: int


def entries(text: str) -> list[Entry]:
    """Every ``.entry`` definition with a body, in file order. A declaration without a body, or a
    definition whose braces do not close, ends the scan there (the parser will say what is wrong)."""
    out: list[Entry] = []
    pos, line, line_at = 0, 1, 0
    for m in _ENTRY.finditer(text):
        if m.start() < pos:
            continue                      # inside the previous definition (a comment or string)
        end = _body_end(text, m.end())
        if end is None:
            break
        line += text.count("\n", line_at, m.start())
        line_at = m.start()
        out.append(Entry(m.group(1), m.start(), end, line))
        pos = end
    return out


def _body_end(text: str, pos: int) -> int | None:
    parens = braces = 0
    for t in _TOKENS.finditer(text, pos):
        c = t.group()
        if c == "(":
            parens += 1
        elif c == ")":
            parens -= 1
        elif c == ";" and parens == 0 and braces == 0:
            return None                   # a prototype: no body
        elif c == "{":
            return _body_close(text, t.end()) if parens == 0 else _after_open(text, t.end(), parens)
        elif c == "}":
            return None
    return None


def _body_close(text: str, pos: int) -> int | None:
    """Where the body whose ``{`` ends at ``pos`` closes (after its ``}``)."""
    braces = 1
    match = _BRACE.match
    while True:
        t = match(text, pos)
        if t is None:
            return None
        pos = t.end()
        if t.group(1) == "{":
            braces += 1
        else:
            braces -= 1
            if braces == 0:
                return pos


def _after_open(text: str, pos: int, parens: int) -> int | None:
    """A ``{`` inside parentheses (not PTX, but scanned as before): braces and parentheses both count."""
    braces = 1
    for t in _TOKENS.finditer(text, pos):
        c = t.group()
        if c == "(":
            parens += 1
        elif c == ")":
            parens -= 1
        elif c == "{":
            braces += 1
        elif c == "}":
            braces -= 1
            if braces == 0:
                return t.end()
            if braces < 0:
                return None
    return None


def _blank(piece: str) -> str:
    """``piece``'s newlines, then blanks to where its last line ends: what follows it on that line
    keeps its column."""
    nl = piece.rfind("\n")
    return "\n" * piece.count("\n") + " " * (len(piece) - nl - 1)


def select(text: str, names: Iterable[str], found: list[Entry] | None = None) -> str:
    """``text`` with the definitions of every kernel not in ``names`` replaced by their newlines."""
    keep = set(names)
    parts, pos = [], 0
    for e in found if found is not None else entries(text):
        if e.name in keep:
            continue
        parts.append(text[pos:e.start])
        parts.append(_blank(text[e.start:e.end]))
        pos = e.end
    parts.append(text[pos:])
    return "".join(parts)


def batches(text: str, max_chars: int = 1 << 20, found: list[Entry] | None = None) -> Iterator[tuple[list[str], str]]:
    """``(kernel names, text)`` per batch of consecutive kernels of about ``max_chars``: each text is
    the file with only that batch's kernel definitions kept (the same lines and columns). One
    batch, the whole text, when the file is small or has no kernels. ``found``: :func:`entries`
    of ``text`` when the caller has them already."""
    found = entries(text) if found is None else found
    if len(text) <= max_chars or not found:
        yield [e.name for e in found], text
        return
    # the text outside every kernel, kept in each batch, with the kernels' newlines in between
    outside, pos = [], 0
    for e in found:
        outside.append(text[pos:e.start])
        pos = e.end
    tail = text[pos:]
    i = 0
    while i < len(found):
        j, size = i, 0
        while j < len(found) and (j == i or size + found[j].end - found[j].start <= max_chars):
            size += found[j].end - found[j].start
            j += 1
        parts = []
        for k, e in enumerate(found):
            parts.append(outside[k])
            piece = text[e.start:e.end]
            parts.append(piece if i <= k < j else _blank(piece))
        parts.append(tail)
        yield [e.name for e in found[i:j]], "".join(parts)
        i = j


# the module header: what every batch text keeps in front of its kernels (checked in Split.make)
_GAP = r"(?:\s|//[^\n]*|/\*.*?\*/)"
_HEAD = re.compile(rf"\A{_GAP}*\.version{_GAP}+[0-9.]+{_GAP}+\.target{_GAP}+[\w$]+(?:{_GAP}*,{_GAP}*[\w$]+)*"
                   rf"(?:{_GAP}+\.address_size{_GAP}+\d+)?", re.S)


class Split:
    """A big PTX file parsed as its module-level part once and its kernels batch by batch.

    :meth:`module` gives, for a batch of consecutive kernels, the module that parsing the file with
    every other kernel blanked gives (:func:`batches`): the same items in the same order with the
    same spans, ``source`` the whole text. The module-level part (declarations, ``.func``
    definitions, ``.file`` lines: everything outside the kernels) is parsed once here, not once per
    batch; each batch parses only the header and its own kernels, at their lines and columns.
    ``Split.make`` returns None where that cannot be done exactly (no header it recognises, or the
    module-level part does not parse: the caller then parses :func:`batches`, whose errors are the
    whole file's).
    """

    def __init__(self, text: str, file: str, found: list[Entry], outside, head_end: int, lenient: bool):
        self.text, self.file, self.found, self.outside = text, file, found, outside
        self.head_end, self.lenient = head_end, lenient
        # the module-level items in source order, with their (line, column) places
        self.keys = [(i.span.line, i.span.col) for i in outside.items]
        self.starts = []                  # (line, column) of each kernel's first character
        for e in found:
            self.starts.append((e.line, e.start - (text.rfind("\n", 0, e.start) + 1) + 1))

    @classmethod
    def make(cls, text: str, file: str, found: list[Entry] | None = None, *, lenient: bool = False,
             diagnostics: list | None = None) -> "Split | None":
        from . import parser
        from ..errors import KernlensError

        found = entries(text) if found is None else found
        head = _HEAD.match(text)
        if not found or head is None:
            return None
        try:
            outside = parser.parse(select(text, (), found), file, lenient=lenient, diagnostics=diagnostics)
            alone = parser.parse(text[: head.end()], file)
        except KernlensError:
            return None
        if (alone.version, alone.targets, alone.address_size) != \
                (outside.version, outside.targets, outside.address_size):
            return None                   # the header is more than the part kept in front of each batch
        if any(not getattr(i, "span", None) or not i.span.line for i in outside.items):
            return None                   # an item without a place could not be put in order
        return cls(text, file, found, outside, head.end(), lenient)

    def batch_text(self, i: int, j: int) -> str:
        """The header and kernels ``i..j-1`` at their places, every other line blank."""
        text, found = self.text, self.found
        parts, pos = [text[: self.head_end]], self.head_end
        for e in found[i:j]:
            nl = text.rfind("\n", pos, e.start)          # the kernel's line starts after it
            parts.append("\n" * text.count("\n", pos, e.start))
            parts.append(" " * (e.start - (nl + 1 if nl >= 0 else pos)))
            parts.append(text[e.start:e.end])
            pos = e.end
        return "".join(parts)

    def module(self, i: int, j: int, diagnostics: list | None = None):
        """The module of kernels ``i..j-1`` (see the class)."""
        from dataclasses import replace

        from . import parser

        got = parser.parse(self.batch_text(i, j), self.file, lenient=self.lenient, diagnostics=diagnostics)
        kernels = list(got.items)
        if [getattr(k, "name", None) for k in kernels] != [e.name for e in self.found[i:j]]:
            # not expected (entries() found these definitions): the file with the others blanked
            return parser.parse(self.piece(i, j), self.file, lenient=self.lenient, diagnostics=diagnostics)
        items, a, outside, keys = [], 0, self.outside.items, self.keys
        for k, fn in zip(range(i, j), kernels):
            while a < len(outside) and keys[a] < self.starts[k]:
                items.append(outside[a])
                a += 1
            items.append(fn)
        items.extend(outside[a:])
        return replace(self.outside, items=tuple(items), source=self.text)

    def piece(self, i: int, j: int) -> str:
        """The whole text with every kernel but ``i..j-1`` blanked (what :func:`batches` parses)."""
        keep = {e.name for e in self.found[i:j]}
        return select(self.text, keep, self.found)

    def batches(self, max_chars: int = 1 << 20) -> list[tuple[int, int]]:
        """``(i, j)`` ranges of consecutive kernels of about ``max_chars`` each."""
        out, i, found = [], 0, self.found
        while i < len(found):
            j, size = i, 0
            while j < len(found) and (j == i or size + found[j].end - found[j].start <= max_chars):
                size += found[j].end - found[j].start
                j += 1
            out.append((i, j))
            i = j
        return out


def jobs_wanted(jobs: int | None) -> int:
    """Worker processes for a big file's batches: ``jobs`` when given (1: in this process), else
    the CPUs this process may run on. Only where ``fork`` exists (Linux, macOS): elsewhere 1."""
    import multiprocessing
    import os

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if jobs:
        return max(1, jobs)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:            # macOS
        return max(1, os.cpu_count() or 1)
