"""The CUDA/Triton source beside the assembly, with the line the cursor's instruction came from.

A row looks like ``  24 │     acc = tl.dot(a, b, acc)``; the current line is marked with the
``src--current`` class and lines that produced some instruction of the kernel with ``src--used``.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class SourceView(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {"src--lineno", "src--current", "src--used", "src--text"}

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.lines: tuple[str, ...] = ()
        self.current: int | None = None
        self.used: set[int] = set()
        self.title = ""

    def set_source(self, lines: tuple[str, ...], used: set[int], title: str = "") -> None:
        self.lines, self.used, self.current, self.title = lines, set(used), None, title
        width = max((len(t.expandtabs(4)) for t in lines), default=0)
        self.virtual_size = Size(width + 8, len(lines))
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def show_line(self, line: int | None) -> None:
        """Mark source line ``line`` (1-based) and scroll it into the middle."""
        self.current = line
        if line is not None and self.lines:
            h = max(1, self.scrollable_content_region.height)
            top = self.scroll_offset.y
            if not (top <= line - 1 < top + h):
                self.scroll_to(y=max(0, line - 1 - h // 2), animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = y + self.scroll_offset.y
        base = self.rich_style
        if row >= len(self.lines):
            return Strip.blank(width, base)
        n = row + 1
        segs = [Segment(f"{n:>5} │ ", self.get_component_rich_style("src--lineno", partial=True))]
        x = self.scroll_offset.x
        text = self.lines[row].expandtabs(4)
        strip = Strip.join([Strip(segs), Strip([Segment(text)]).crop(x, x + width)]).crop(0, width)
        strip = strip.extend_cell_length(width)
        if n == self.current:
            strip = strip.apply_style(self.get_component_rich_style("src--current", partial=True))
        elif n in self.used:
            strip = strip.apply_style(self.get_component_rich_style("src--used", partial=True))
        return strip.apply_style(base)
