"""The text report's tables and rules, written directly: byte for byte what ``rich`` prints for
them (no colours, a fixed width), at a small fraction of its cost. Rich lays out every cell
through its segment machinery, four fifths of ``validate-kernel``'s time on a big file; the
report's tables are simple (one line per cell, fixed justification, a heavy-head box or none),
so they are written here, and whatever is not that simple (a line to wrap, markup, a table wider
than the page) is handed to rich itself, so the output stays rich's. ``tests/analyzer`` compares
the two on every corpus kernel.

    >>> c = Console(width=40)
    >>> t = Table(title="opcodes", title_justify="left")
    >>> t.add_column("opcode"); t.add_column("static", justify="right")
    >>> t.add_row("add.s32", "3")
    >>> c.print(t); print(c.getvalue(), end="")
    opcodes             
    ┏━━━━━━━━━┳━━━━━━━━┓
    ┃ opcode  ┃ static ┃
    ┡━━━━━━━━━╇━━━━━━━━┩
    │ add.s32 │      3 │
    └─────────┴────────┘
"""

from __future__ import annotations

import io
import re

#: False: everything goes through rich (the tests compare the two)
FAST = True
_EMOJI = re.compile(r":\S*?:")   # what rich might read as an emoji code


class Table:
    """The part of ``rich.table.Table`` the report uses (same arguments)."""

    def __init__(self, title: str | None = None, title_justify: str = "center", show_header: bool = True,
                 box: object = "heavy_head", pad_edge: bool = True):
        self.title, self.title_justify = title, title_justify
        self.show_header, self.box, self.pad_edge = show_header, box, pad_edge
        self.columns: list[tuple[str, str, str | None]] = []   # (header, justify, style)
        self.rows: list[tuple[str, ...]] = []

    def add_column(self, header: str = "", justify: str = "left", style: str | None = None) -> None:
        self.columns.append((header, justify, style))

    def add_row(self, *cells: str) -> None:
        self.rows.append(cells)

    def to_rich(self):
        from rich.table import Table as RichTable

        kw = {} if self.box == "heavy_head" else {"box": self.box}
        t = RichTable(title=self.title, title_justify=self.title_justify, show_header=self.show_header,
                      pad_edge=self.pad_edge, **kw)
        for header, justify, style in self.columns:
            t.add_column(header, justify=justify, style=style)
        for row in self.rows:
            t.add_row(*row)
        return t


def _simple(s: str) -> bool:
    """One line of plain text that rich prints as it is (one cell per character, no markup)."""
    got = _SIMPLE.get(s)
    if got is None:
        got = _simple_text(s)
        if len(_SIMPLE) >= 1 << 15:
            _SIMPLE.clear()
        _SIMPLE[s] = got
    return got


#: cell text -> :func:`_simple_text` (the report's cells repeat: class names, counts, opcodes)
_SIMPLE: dict[str, bool] = {}


def _simple_text(s: str) -> bool:
    t = s.replace("≈", "")
    if not (t.isascii() and t.isprintable()) or "[" in s:
        return False
    if ":" in s and _EMOJI.search(s):
        from rich._emoji_replace import _emoji_replace

        return _emoji_replace(s) == s
    return True


def _wrap(s: str, width: int) -> list[str]:
    """``s`` broken into lines as rich's ``Text.wrap`` breaks it (words, long ones folded; trailing
    spaces kept where they fit)."""
    t = s.replace("≈", "")
    if t.isascii() and t.isprintable():
        cuts = [0, *_divide(s, width), len(s)]
    else:                                       # pragma: no cover - _simple text is one of these
        from rich._wrap import divide_line

        cuts = [0, *divide_line(s, width), len(s)]
    lines = []
    for a, b in zip(cuts, cuts[1:]):
        piece = s[a:b]
        if len(piece) > width:
            tail = len(piece) - len(piece.rstrip())
            piece = piece[: len(piece) - min(tail, len(piece) - width)][:width]
        lines.append(piece)
    return lines


_WORD = re.compile(r"\s*\S+\s*")      # rich._wrap's word: blanks, the word, blanks after it


def _divide(text: str, width: int) -> list[int]:
    """Where rich's ``divide_line(text, width)`` breaks a text whose every character is one cell
    wide (printable ASCII and ``≈``): the same steps, with ``len`` for rich's cell lengths (and its
    fold of a word longer than the line into pieces of ``width`` characters)."""
    breaks: list[int] = []
    offset = 0
    m = _WORD.match(text, 0)
    while m is not None:
        start, end = m.span()
        word = m.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            pieces = [word[k:k + width] for k in range(0, len(word), width)]
            for k, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if k == len(pieces) - 1:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
        m = _WORD.match(text, end)
    return breaks


class Console:
    """Writes to a string (:meth:`getvalue`) what ``rich.console.Console(width=W, color_system=None,
    highlight=False)`` would."""

    def __init__(self, width: int = 80):
        self.width = width
        self.buf = io.StringIO()
        self._rich = None

    def getvalue(self) -> str:
        return self.buf.getvalue()

    def rich(self):
        if self._rich is None:
            from rich.console import Console as RichConsole

            self._rich = RichConsole(file=self.buf, width=self.width, force_terminal=False, color_system=None,
                                     highlight=False)
        return self._rich

    def rule(self, title: str) -> None:
        w = self.width
        if not FAST or not _simple(title) or len(title) > w - 4:
            self.rich().rule(title)
            return
        side = (w - len(title)) // 2
        right = min(side + 1, w - (side - 1) - len(title))
        line = "─" * (side - 1) + " " + title + " " + "─" * right
        self.buf.write(line[:w].ljust(w) + "\n")

    def print(self, obj, markup: bool = True) -> None:
        if isinstance(obj, Table):
            if not FAST or not self._table(obj):
                self.rich().print(obj.to_rich())
            return
        if FAST and _simple(obj):
            self.buf.write((obj if len(obj) <= self.width else "\n".join(_wrap(obj, self.width))) + "\n")
        else:
            self.rich().print(obj, markup=markup)

    def _table(self, t: Table) -> bool:
        """Write ``t`` when it is simple; False (nothing written) when rich must."""
        cells = [h for h, _, _ in t.columns] if t.show_header else []
        if not t.rows or any(s and not _simple(s) for row in t.rows for s in row) or \
                any(not _simple(s) for s in cells) or any(len(row) != len(t.columns) for row in t.rows):
            return False
        n = len(t.columns)
        widths = [max([len(r[i]) for r in t.rows] + ([len(t.columns[i][0])] if t.show_header else [])) for i in range(n)]
        out = []
        if t.box is None:
            # padding (0, 1) between columns; none at the edges without pad_edge
            pads = [(0 if (i == 0 and not t.pad_edge) else 1, 0 if (i == n - 1 and not t.pad_edge) else 1)
                    for i in range(n)]
            total = sum(w + a + b for w, (a, b) in zip(widths, pads))
            if t.title or t.show_header:
                return False
            if total > self.width:
                # rich narrows the widest column by the excess and wraps its cells (only that case here)
                full = [w + a + b for w, (a, b) in zip(widths, pads)]
                excess = total - self.width
                if n != 2 or t.columns[1][1] != "left" or full[1] - full[0] < excess:
                    return False
                widths[1] -= excess
                if any(len(word) > widths[1] for _, value in t.rows for word in value.split()):
                    return False             # rich crops such a word with an ellipsis in a cell
                for label, value in t.rows:
                    lines = _wrap(value, widths[1]) if len(value) > widths[1] else [value]
                    for k, line in enumerate(lines):
                        cells = (label if k == 0 else "", line)
                        out.append("".join(" " * a + _just(c, w, j) + " " * b
                                           for c, w, (a, b), (_, j, _) in zip(cells, widths, pads, t.columns)))
            else:
                for row in t.rows:
                    out.append("".join(" " * a + _just(c, w, j) + " " * b
                                       for c, w, (a, b), (_, j, _) in zip(row, widths, pads, t.columns)))
        else:
            total = sum(w + 2 for w in widths) + n + 1
            if total > self.width or not t.pad_edge:
                return False
            if t.title is not None:
                if len(t.title) > total or not _simple(t.title) or t.title_justify != "left":
                    return False
                out.append(t.title.ljust(total))
            out.append("┏" + "┳".join("━" * (w + 2) for w in widths) + "┓")
            if t.show_header:
                out.append("┃" + "┃".join(" " + _just(h, w, j) + " " for w, (h, j, _) in zip(widths, t.columns)) + "┃")
                out.append("┡" + "╇".join("━" * (w + 2) for w in widths) + "┩")
            for row in t.rows:
                out.append("│" + "│".join(" " + _just(s, w, j) + " " for s, w, (_, j, _) in zip(row, widths, t.columns))
                           + "│")
            out.append("└" + "┴".join("─" * (w + 2) for w in widths) + "┘")
        self.buf.write("\n".join(out) + "\n")
        return True


def _just(s: str, w: int, justify: str) -> str:
    return s.rjust(w) if justify == "right" else s.ljust(w)
