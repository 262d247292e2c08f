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
    if text[:1] != " " and text.isprintable() and max(map(len, text.split(" ")), default=0) <= width:
        return _divide_words(text, width)
    breaks: list[int] = []
    offset = 0
    for m in _WORD.finditer(text):      # each match ends where the next begins (or at the end)
        word = m.group()
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
            continue
        start = m.start()
        if length > width:
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
    return breaks


def _divide_words(text: str, width: int) -> list[int]:
    """:func:`_divide` of a text that starts with a word, whose blanks are spaces and whose every
    word fits on a line: a word stays on the line while its last character does (the spaces
    after it may run past the end), so each line ends before the first word that reaches past
    ``width`` characters from the line's start, found with one look at that place, not word by word.

        >>> _divide_words("issue fifteen big files", 12)
        [6, 14]
    """
    breaks: list[int] = []
    start, n = 0, len(text)
    while start + width < n:
        p = start + width               # the first place past the line
        if text[p] == " ":              # the next word starts after these spaces
            k = len(text) - len(text[p:].lstrip(" "))
            if k >= n:
                break
        else:                           # the word that holds p starts after the last space before it
            k = text.rfind(" ", start, p) + 1
        breaks.append(k)
        start = k
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
        n = len(t.columns)
        rows = t.rows
        if not rows or not _simple_rows(rows, n) or (t.show_header and not all(_simple(h) for h, _, _ in t.columns)):
            return False
        widths = [max(map(len, col)) for col in zip(*rows)]
        if t.show_header:
            widths = [max(w, len(h)) for w, (h, _, _) in zip(widths, t.columns)]
        justs = [j for _, j, _ in t.columns]
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
                if n != 2 or justs[1] != "left" or full[1] - full[0] < excess:
                    return False
                widths[1] -= excess
                if max(max(map(len, value.split()), default=0) for _, value in rows) > widths[1]:
                    return False             # rich crops such a word with an ellipsis in a cell
                row_of = _row_format("", "", "", widths, justs, pads).format
                for label, value in rows:
                    lines = _wrap(value, widths[1]) if len(value) > widths[1] else [value]
                    out.append(row_of(label, lines[0]))
                    out.extend(row_of("", line) for line in lines[1:])
            else:
                row_of = _row_format("", "", "", widths, justs, pads).format
                out.extend([row_of(*row) for row in rows])
        else:
            total = sum(w + 2 for w in widths) + n + 1
            if total > self.width or not t.pad_edge:
                return False
            if t.title is not None:
                if len(t.title) > total or not _simple(t.title) or t.title_justify != "left":
                    return False
                out.append(t.title.ljust(total))
            out.append("┏" + "┳".join("━" * (w + 2) for w in widths) + "┓")
            pads = [(1, 1)] * n
            if t.show_header:
                out.append(_row_format("┃", "┃", "┃", widths, justs, pads).format(*(h for h, _, _ in t.columns)))
                out.append("┡" + "╇".join("━" * (w + 2) for w in widths) + "┩")
            row_of = _row_format("│", "│", "│", widths, justs, pads).format
            out.extend([row_of(*row) for row in rows])
            out.append("└" + "┴".join("─" * (w + 2) for w in widths) + "┘")
        self.buf.write("\n".join(out) + "\n")
        return True


def _simple_rows(rows: list[tuple[str, ...]], n: int) -> bool:
    """Every row has ``n`` cells and every cell is empty or :func:`_simple`."""
    known = _SIMPLE.get
    for row in rows:
        if len(row) != n:
            return False
        for s in row:
            if s:
                ok = known(s)
                if not (_simple(s) if ok is None else ok):
                    return False
    return True


def _row_format(left: str, sep: str, right: str, widths: list[int], justs: list[str], pads: list) -> str:
    """A ``str.format`` template of one table row: each cell justified in its column's width
    (``{:>5}`` is ``rjust(5)``, ``{:<5}`` ``ljust(5)``), between its padding and the rules."""
    cells = []
    for w, j, (a, b) in zip(widths, justs, pads):
        spec = ("{:>%d}" if j == "right" else "{:<%d}") % w if w else "{}"
        cells.append(" " * a + spec + " " * b)
    return left + sep.join(cells) + right
