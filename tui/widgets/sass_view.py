"""The SASS ptxas made of the kernel, beside its PTX, each row tied to its PTX line (``-lineinfo``).

A row looks like ``  101 │ /*0310*/ LDS.128 R4, [R19] ;``: the PTX line, the code offset and the
instruction. Rows made from the PTX line under the code view's cursor carry ``sass--current``;
with the focus here, ``j``/``k`` move a cursor (``sass--cursor``) and ``x`` or ``Enter`` jump back
to that row's PTX line (:class:`SassView.Jump`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip


@dataclass(frozen=True)
class SassRow:
    text: str                 # '/*0310*/ LDS.128 R4, [R19] ;' or a label
    ptx_line: int | None      # the PTX line the instruction came from


class SassView(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {"sass--lineno", "sass--current", "sass--cursor", "sass--label"}
    BINDINGS = [
        Binding("j,down", "move(1)", "Down", show=False),
        Binding("k,up", "move(-1)", "Up", show=False),
        Binding("x,enter", "jump", "To PTX"),
    ]

    class Jump(Message):
        """Go to PTX line ``line`` in the code view."""

        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    class CursorMoved(Message):
        def __init__(self, row: int) -> None:
            super().__init__()
            self.row = row

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.rows: tuple[SassRow, ...] = ()
        self.current: int | None = None
        self.cursor = 0
        self.message_text = ""

    def set_rows(self, rows, message: str = "") -> None:
        rows = tuple(r if isinstance(r, SassRow) else SassRow(*r) for r in rows)
        self.rows, self.current, self.cursor, self.message_text = rows, None, 0, message
        width = max((len(r.text) for r in self.rows), default=len(message))
        self.virtual_size = Size(width + 9, max(1, len(self.rows)))
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def rows_of(self, ptx_line: int | None) -> list[int]:
        return [i for i, r in enumerate(self.rows) if ptx_line is not None and r.ptx_line == ptx_line]

    def show_ptx_line(self, line: int | None) -> None:
        """Mark the rows PTX line ``line`` became and scroll the first into view."""
        self.current = line
        hits = self.rows_of(line)
        if hits:
            self._scroll_into_view(hits[0])
        self.refresh()

    def focus_ptx_line(self, line: int | None) -> bool:
        """Put the cursor on the first row of PTX line ``line`` (False when it has none)."""
        hits = self.rows_of(line)
        if not hits:
            return False
        self.current = line
        self.cursor = hits[0]
        self._scroll_into_view(self.cursor)
        self.refresh()
        return True

    def _scroll_into_view(self, row: int) -> None:
        h = max(1, self.scrollable_content_region.height)
        top = self.scroll_offset.y
        if not (top <= row < top + h):
            self.scroll_to(y=max(0, row - h // 2), animate=False)

    def action_move(self, delta: int) -> None:
        if not self.rows:
            return
        self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))
        self._scroll_into_view(self.cursor)
        self.refresh()
        self.post_message(self.CursorMoved(self.cursor))

    def action_jump(self) -> None:
        if self.rows and self.rows[self.cursor].ptx_line:
            self.post_message(self.Jump(self.rows[self.cursor].ptx_line))

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = y + self.scroll_offset.y
        base = self.rich_style
        if not self.rows:
            text = self.message_text if y == 0 else ""
            return Strip([Segment(text[:width])]).extend_cell_length(width).apply_style(base)
        if row >= len(self.rows):
            return Strip.blank(width, base)
        r = self.rows[row]
        n = f"{r.ptx_line:>5}" if r.ptx_line else "     "
        segs = [Segment(f"{n} │ ", self.get_component_rich_style("sass--lineno", partial=True))]
        x = self.scroll_offset.x
        strip = Strip.join([Strip(segs), Strip([Segment(r.text)]).crop(x, x + width)]).crop(0, width)
        strip = strip.extend_cell_length(width)
        if self.has_focus and row == self.cursor:
            strip = strip.apply_style(self.get_component_rich_style("sass--cursor", partial=True))
        elif self.current is not None and r.ptx_line == self.current:
            strip = strip.apply_style(self.get_component_rich_style("sass--current", partial=True))
        elif r.text.endswith(":"):
            strip = strip.apply_style(self.get_component_rich_style("sass--label", partial=True))
        return strip.apply_style(base)
