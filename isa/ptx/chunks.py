"""Kernel-level chunks of a PTX file, found by a fast scan instead of a parse.

A big module (thousands of ``.entry`` definitions) need not be parsed whole to run or inspect
one kernel: :func:`entries` finds each kernel definition's extent by matching its braces (comments
and strings skipped), and :func:`select` blanks the definitions of every other kernel, keeping
each newline, so the parse of what is left reports the same lines and columns as the whole file.
Module-level declarations, ``.func`` definitions and directives are always kept.

    >>> text = '''.version 9.0
    ... .target sm_90
    ... .address_size 64
    ... .visible .entry a() { ret; }
    ... .visible .entry b() { ret; }'''
    >>> [(e.name, e.line) for e in entries(text)]
    [('a', 4), ('b', 5)]
    >>> select(text, {'b'}).splitlines()[3:]
    ['', '.visible .entry b() { ret; }']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator

_ENTRY = re.compile(r"^[ \t]*(?:\.(?:visible|weak|extern)[ \t]+)*\.entry[ \t]+([\w$%]+)", re.M)
# what brace matching must see: braces, parentheses, and the comments/strings that hide them
_TOKENS = re.compile(r'[{}();]|//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"', re.S)


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
            braces += 1
        elif c == "}":
            braces -= 1
            if braces == 0:
                return t.end()
            if braces < 0:
                return None
    return None


def _blank(piece: str) -> str:
    return "\n" * piece.count("\n")


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
