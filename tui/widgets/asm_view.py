"""The assembly view: a line-API widget that renders only the rows on screen.

Each row is a gutter and the code::

    ▓  178 ┃  async wait        ·   24 │ 	cp.async.commit_group;

heat (shared-memory wavefronts when a run provided them), PTX line number, loop depth bars,
class label, dynamic count estimate, the CUDA/Triton line from ``.loc``, then the highlighted
assembly, which scrolls horizontally under a fixed gutter. Colours are component classes styled
in ``app.tcss``.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..highlight import KINDS, tokens
from ..model import KernelDoc

HEAT_CHARS = " ░▒▓█"


def format_count(x: float | None, exact: bool = True) -> str:
    """``1234567`` -> ``1.2M``; estimates get a ``~``."""
    if x is None:
        return ""
    prefix = "" if exact else "~"
    for div, suf in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{prefix}{x / div:.1f}{suf}"
    return f"{prefix}{x:.0f}" if float(x).is_integer() else f"{prefix}{x:.1f}"


def display_text(line: str) -> str:
    """A source line as shown: the usual leading tab becomes two spaces, other tabs stop at 4."""
    if line.startswith("\t"):
        line = "  " + line[1:]
    return line.expandtabs(4)


#: width of the class column: the longest label, ``store shared 128`` (16), uncut
CLASS_W = 16


class AsmView(ScrollView, can_focus=True):
    """Assembly with line numbers, annotations and a cursor row."""

    COMPONENT_CLASSES = {f"asm--{k}" for k in KINDS} | {
        "asm--gutter", "asm--lineno", "asm--depth", "asm--class", "asm--dyn", "asm--src", "asm--cursor",
        "asm--match", "asm--heat", "asm--sep", "asm--instr-line",
    }

    BINDINGS = [
        Binding("j,down", "cursor(1)", "Down", show=False),
        Binding("k,up", "cursor(-1)", "Up", show=False),
        Binding("ctrl+d,pagedown", "page(1)", "Page down", show=False),
        Binding("ctrl+u,pageup", "page(-1)", "Page up", show=False),
        Binding("home", "edge(0)", "Top", show=False),
        Binding("end,G", "edge(1)", "Bottom", show=False),
        Binding("h,left", "hscroll(-8)", show=False),
        Binding("l,right", "hscroll(8)", show=False),
        Binding("n", "match(1)", "Next match"),
        Binding("N", "match(-1)", "Prev match", show=False),
        Binding("J", "next_instr(1)", show=False),
        Binding("K", "next_instr(-1)", show=False),
    ]

    cursor = reactive(0, always_update=True)

    # heat, line, loop depth, class, dynamic count, source line, separator
    GUTTER = 2 + 6 + 5 + CLASS_W + 1 + 8 + 6 + 2

    @staticmethod
    def header() -> str:
        """Column titles aligned with the gutter."""
        return f"{'':2}{'line':>5} {'loop':<5}{'class':<{CLASS_W + 1}}{'count':>7} {'src':>5} │"

    class CursorMoved(Message):
        """The cursor row changed; ``line`` is the PTX line number."""

        def __init__(self, view: "AsmView", line: int) -> None:
            super().__init__()
            self.view = view
            self.line = line

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.doc: KernelDoc | None = None
        self.heat: dict[int, float] = {}
        self.matches: list[int] = []
        self._match_set: set[int] = set()
        self.query = ""
        self._styles: dict[str, Style] = {}
        self._gutter_cache: dict[int, list[Segment]] = {}

    # -- data -------------------------------------------------------------------------------

    def set_doc(self, doc: KernelDoc, heat: dict[int, float] | None = None) -> None:
        self.doc = doc
        self.heat = dict(heat or {})
        self._gutter_cache.clear()
        self.matches, self._match_set, self.query = [], set(), ""
        width = max((len(display_text(t)) for t in doc.lines), default=0)
        self.virtual_size = Size(self.GUTTER + width + 1, len(doc.lines))
        self.scroll_to(0, 0, animate=False)
        self.cursor = 0
        self.refresh()

    def set_heat(self, heat: dict[int, float]) -> None:
        """``PTX line -> 0..1``; drawn in the first gutter column."""
        self.heat = dict(heat)
        self._gutter_cache.clear()
        self.refresh()

    @property
    def line(self) -> int:
        """PTX line number under the cursor."""
        return self.doc.first_line + self.cursor if self.doc else 0

    def goto_line(self, line_no: int) -> bool:
        """Move the cursor to PTX line ``line_no``; False when it is outside this kernel."""
        if not self.doc or not (self.doc.first_line <= line_no <= self.doc.last_line):
            return False
        self.cursor = line_no - self.doc.first_line
        self._center()
        return True

    def search(self, query: str) -> int:
        """Mark rows matching ``query``; move to the first at or after the cursor. Returns the
        number of matches."""
        self.query = query
        self.matches = self.doc.search(query) if self.doc and query.strip() else []
        self._match_set = set(self.matches)
        if self.matches:
            after = [m for m in self.matches if m >= self.cursor]
            self.cursor = after[0] if after else self.matches[0]
            self._center()
        self.refresh()
        return len(self.matches)

    def match_position(self) -> int | None:
        """1-based position of the cursor among the matches."""
        try:
            return self.matches.index(self.cursor) + 1
        except ValueError:
            return None

    # -- actions ----------------------------------------------------------------------------

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(self.cursor + delta, self._rows() - 1))
        self._follow()

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_edge(self, end: int) -> None:
        self.cursor = self._rows() - 1 if end else 0
        self._follow()

    def action_hscroll(self, delta: int) -> None:
        self.scroll_to(x=max(0, self.scroll_offset.x + delta), animate=False)

    def action_match(self, direction: int) -> None:
        if not self.matches:
            return
        if direction > 0:
            nxt = [m for m in self.matches if m > self.cursor]
            self.cursor = nxt[0] if nxt else self.matches[0]
        else:
            prv = [m for m in self.matches if m < self.cursor]
            self.cursor = prv[-1] if prv else self.matches[-1]
        self._center()

    def action_next_instr(self, direction: int) -> None:
        """Jump to the next row holding an instruction."""
        if not self.doc:
            return
        row = self.cursor + direction
        while 0 <= row < self._rows():
            if self.doc.first_line + row in self.doc.line_instrs:
                self.cursor = row
                self._follow()
                return
            row += direction

    def _rows(self) -> int:
        return len(self.doc.lines) if self.doc else 0

    def _follow(self) -> None:
        top = self.scroll_offset.y
        h = max(1, self.scrollable_content_region.height)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + h:
            self.scroll_to(y=self.cursor - h + 1, animate=False)

    def _center(self) -> None:
        h = max(1, self.scrollable_content_region.height)
        self.scroll_to(y=max(0, self.cursor - h // 3), animate=False)

    def watch_cursor(self, old: int, new: int) -> None:
        top = self.scroll_offset.y
        w = self.size.width
        for row in (old, new):  # repaint the two rows only; scrolling repaints the rest
            self.refresh(Region(0, row - top, w, 1))
        if self.doc is not None:
            self.post_message(self.CursorMoved(self, self.line))

    def on_click(self, event: events.Click) -> None:
        if self.doc is None:
            return
        row = event.y + self.scroll_offset.y
        if 0 <= row < self._rows():
            self.cursor = row
        self.focus()

    def notify_style_update(self) -> None:
        self._styles.clear()
        self._gutter_cache.clear()
        super().notify_style_update()

    # -- rendering --------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        s = self._styles.get(name)
        if s is None:
            s = self._styles[name] = self.get_component_rich_style(f"asm--{name}", partial=True)
        return s

    def _gutter(self, row: int) -> list[Segment]:
        cached = self._gutter_cache.get(row)
        if cached is not None:
            return cached
        doc = self.doc
        line_no = doc.first_line + row
        idxs = doc.line_instrs.get(line_no)
        heat = self.heat.get(line_no)
        segs = [Segment((HEAT_CHARS[max(1, min(4, round(heat * 4)))] * 2) if heat else "  ", self._style("heat"))]
        segs.append(Segment(f"{line_no:>5} ", self._style("lineno")))
        if idxs:
            notes = doc.analysis.notes
            n = notes[idxs[0]] if idxs[0] < len(notes) else None
            depth = n.depth if n else 0
            bars = ("┃" * depth if depth <= 3 else f"┃{depth}") if depth else ""
            segs.append(Segment(f"{bars:<4} ", self._style("depth")))
            label = (n.label if n else "")[:CLASS_W]
            segs.append(Segment(f"{label:<{CLASS_W}} ", self._style("class")))
            dyn = format_count(n.dyn, n.exact) if n else ""
            segs.append(Segment(f"{dyn:>7} ", self._style("dyn")))
            loc = doc.loc_of(line_no)
            segs.append(Segment(f"{(':' + str(loc[1])) if loc else '':>5} ", self._style("src")))
        else:
            segs.append(Segment(" " * (5 + CLASS_W + 1 + 8 + 6), self._style("gutter")))
        segs.append(Segment("│ ", self._style("sep")))
        self._gutter_cache[row] = segs
        return segs

    def _code(self, row: int) -> list[Segment]:
        text = display_text(self.doc.lines[row])
        return [Segment(t, self._style(k) if k else Style()) for t, k in tokens(text)]

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = y + self.scroll_offset.y
        base = self.rich_style
        if self.doc is None or row >= len(self.doc.lines):
            return Strip.blank(width, base)
        gutter = Strip(self._gutter(row))
        code_w = max(0, width - gutter.cell_length)
        x = self.scroll_offset.x
        code = Strip(self._code(row)).crop(x, x + code_w).extend_cell_length(code_w)
        strip = Strip.join([gutter, code]).crop(0, width)
        # Segment styles win over the style applied, so apply from the strongest to the base.
        if row == self.cursor:
            strip = strip.apply_style(self._style("cursor"))
        elif row in self._match_set:
            strip = strip.apply_style(self._style("match"))
        return strip.apply_style(base)
