"""Token kinds for one line of assembly, for syntax highlighting.

The kinds are names of component classes styled in ``app.tcss`` (``asm--opcode`` ...), so the
colours follow the theme (dark or light). A real line and its tokens::

    @%p8 st.global.v4.b32 [ %rd85 + 0 ], { %r1, %r2, %r3, %r4 };

    guard '@%p8', opcode 'st', modifier '.global.v4.b32', register '%rd85', number '0', ...

Works for PTX and for the Ascend-like assembly (``copy_gm_to_cbuf``, ``ub[%s1+256]``).
"""

from __future__ import annotations

import re
from functools import lru_cache

KINDS = ("comment", "directive", "label", "guard", "opcode", "modifier", "register", "number",
         "string", "symbol", "punct")

_TOKEN = re.compile(
    r"""
    (?P<comment>//.*$|/\*.*?(\*/|$)|\#.*$)
  | (?P<string>"[^"]*"?)
  | (?P<guard>@!?%?[\w$]+)
  | (?P<register>%[\w$]+(\.[xyzw])?(?![\w$]))
  | (?P<number>-?(0[fFdD][0-9A-Fa-f]+|0[xX][0-9A-Fa-f]+U?|\d+\.\d*([eE][-+]?\d+)?|\d+U?)(?![\w$]))
  | (?P<dotted>\.[A-Za-z_][\w:]*)
  | (?P<word>[A-Za-z_$][\w$]*)
  | (?P<punct>[{}\[\](),;+\-*|!<>=:]+)
  | (?P<space>\s+)
  | (?P<other>.)
    """,
    re.VERBOSE,
)
_LABEL_DEF = re.compile(r"^(\s*)([A-Za-z_$][\w$]*)(:)")


@lru_cache(maxsize=8192)
def tokens(line: str) -> tuple[tuple[str, str | None], ...]:
    """``(text, kind)`` pairs covering ``line`` exactly; kind ``None`` is plain text."""
    out: list[tuple[str, str | None]] = []
    pos = 0
    m = _LABEL_DEF.match(line)
    if m and not line[m.end():].startswith(":"):
        if m.group(1):
            out.append((m.group(1), None))
        out.append((m.group(2), "label"))
        out.append((":", "punct"))
        pos = m.end()
    expect_opcode = True  # the first word of a statement is its opcode
    after_opcode = False  # dotted words right after the opcode are its modifiers
    for t in _TOKEN.finditer(line, pos):
        kind, text = t.lastgroup, t.group()
        if kind == "space":
            out.append((text, None))
            continue
        if kind == "dotted":
            if after_opcode:
                kind = "modifier"
            else:
                kind = "directive"
                expect_opcode = False
        elif kind == "word":
            if expect_opcode:
                kind, expect_opcode, after_opcode = "opcode", False, True
                out.append((text, kind))
                continue
            kind = "symbol"
        elif kind == "guard":
            out.append((text, kind))
            continue
        elif kind == "punct":
            if ";" in text:
                expect_opcode = True
        elif kind == "other":
            kind = None
        if kind != "modifier":
            after_opcode = False
        out.append((text, kind))
    return tuple(out)
