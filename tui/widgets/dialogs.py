"""Small modal screens: go to a PTX line."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class GotoLine(ModalScreen[int | None]):
    """Ask for a PTX line number; dismisses with the number or ``None``."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, first: int, last: int) -> None:
        super().__init__()
        self.first, self.last = first, last

    def compose(self) -> ComposeResult:
        with Vertical(id="goto-box"):
            yield Label(f"Go to PTX line ({self.first}–{self.last} in this kernel, or any line of the file)")
            yield Input(placeholder="line number", type="integer", id="goto-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            self.dismiss(int(event.value))
        except ValueError:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
