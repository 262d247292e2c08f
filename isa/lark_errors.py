"""Lark's syntax exceptions as kernlens ``ParseError``s, for both front ends (PTX and Ascend).

Each parser only says how its terminals read in a message (``describe``, e.g. ``COMMA`` -> ``','``)
and how a few tokens read when found (``token_words``, e.g. ``_NL`` -> ``end of line``)::

    ld.global.f32 %f1, [%rd1
    }
    -> k.ptx:13:1: error: unexpected '}'  (expected one of: ']', '+', ...)
"""

from __future__ import annotations

from typing import Callable, Iterable

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from .errors import ParseError, Span, shorten


def source_line(text: str, line: int) -> str:
    """Line ``line`` (1-based) of ``text``, found without splitting a 50 MB file."""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return ""
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def repr_token(token) -> str:
    return f"'{shorten(str(token))}'"


def syntax_error(exc: UnexpectedInput, text: str, file: str, describe: Callable[[Iterable[str]], list[str]],
                 token_words: dict[str, str] | None = None) -> ParseError:
    """The ``ParseError`` for ``exc``: where it happened, what was found, and what was expected."""
    line = getattr(exc, "line", None) or 0
    col = getattr(exc, "column", None) or 0
    token = exc.token if isinstance(exc, UnexpectedToken) else None
    if isinstance(exc, UnexpectedEOF) or line <= 0 or (token is not None and token.type == "$END"):
        lines = text.rstrip().splitlines() or [""]
        return ParseError("unexpected end of file (is the file truncated?)",
                          Span(file, len(lines), len(lines[-1]) + 1),
                          expected=describe(getattr(exc, "expected", ()) or ()), source_line=lines[-1])
    if token is not None:
        word = (token_words or {}).get(token.type)
        end = col + max(1, len(str(token)))
        return ParseError(f"unexpected {word or repr_token(token)}",
                          Span(file, line, col, line, end) if word is None else Span(file, line, col),
                          expected=describe(exc.expected or ()), source_line=source_line(text, line))
    if isinstance(exc, UnexpectedCharacters):
        ch = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "?"
        return ParseError(f"unexpected character {ch!r}", Span(file, line, col),
                          expected=describe(exc.allowed or ()), source_line=source_line(text, line))
    return ParseError(str(exc).splitlines()[0], Span(file, line, col), source_line=source_line(text, line))
