"""A list of findings that each point at an assembly line; choosing one jumps there.

The Run tab lists undefined behaviour and the hottest memory lines with it, the Timeline tab the
problems the timing run met::

    line    54  out_of_bounds ×1  4-byte store to global 0x7f0000000820 is outside every buffer

Enter or a click posts :class:`JumpList.Jump`; the app moves the Code tab's cursor to the line.
"""

from __future__ import annotations

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option


class JumpList(OptionList):
    """Options carrying an assembly line number."""

    class Jump(Message):
        """Show ``line`` in the Code tab."""

        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def set_items(self, items: list[tuple[int, Text | str]]) -> None:
        """Replace the options with ``(line, prompt)`` pairs; hide the list when there are none."""
        self.clear_options()
        self._targets = [line for line, _ in items]
        self.add_options([Option(prompt, id=str(i)) for i, (_, prompt) in enumerate(items)])
        self.display = bool(items)
        if items:
            self.highlighted = 0

    def prompts(self) -> list[str]:
        """The options' text as shown (tests read this)."""
        return [str(self.get_option_at_index(i).prompt) for i in range(self.option_count)]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Jump(self._targets[int(event.option.id)]))
