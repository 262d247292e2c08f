"""Error types that carry a source span.

Every layer (front ends, analyzer, simulators) raises these; only the CLI turns them into
``file:line:col: error: message`` text with the source line and a caret, and into exit code 2.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Span:
    """A place in a source file. Lines and columns are 1-based.

    Spans never take part in IR equality: two parses of the same kernel from different
    files compare equal.
    """

    file: str = "<text>"
    line: int = 0
    col: int = 0
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


_MAX_SHOWN = 160  # characters of a source line shown around an error


def shorten(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters for a message (a 50 MB token stays readable)."""
    return text if len(text) <= limit else text[:limit] + "..."


class KernlensError(Exception):
    """Base of all errors kernlens reports to a user."""

    kind = "error"

    def __init__(self, message: str, span: Span | None = None, *, expected: list[str] | None = None,
                 source_line: str | None = None, notes: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.span = span
        self.expected = list(expected or [])
        self.source_line = source_line
        self.notes = list(notes or [])

    def __str__(self) -> str:  # pragma: no cover - exercised through render()
        return self.render()

    def render(self) -> str:
        """``file:line:col: error: message``, the source line, a caret, and what was expected."""
        out = []
        if self.span is not None and self.span.line:
            out.append(f"{self.span.file}:{self.span.line}:{self.span.col}: {self.kind}: {self.message}")
            if self.source_line is not None:
                line = self.source_line.rstrip("\n").replace("\t", " ")
                caret_col = max(1, self.span.col)
                width = 1
                if self.span.end_line == self.span.line and self.span.end_col > self.span.col:
                    width = self.span.end_col - self.span.col
                if len(line) > _MAX_SHOWN:  # show a window around the caret, not a 50 MB line
                    start = max(0, caret_col - 1 - _MAX_SHOWN // 2)
                    line = ("..." if start else "") + line[start:start + _MAX_SHOWN] + "..."
                    caret_col = caret_col - start + (3 if start else 0)
                width = max(1, min(width, _MAX_SHOWN // 2))
                out.append("  " + line)
                out.append("  " + " " * (caret_col - 1) + "^" + "~" * (width - 1))
        elif self.span is not None:
            out.append(f"{self.span.file}: {self.kind}: {self.message}")
        else:
            out.append(f"{self.kind}: {self.message}")
        if self.expected:
            shown = sorted(self.expected)
            more = ""
            if len(shown) > 12:
                more = f" (and {len(shown) - 12} more)"
                shown = shown[:12]
            out.append("  expected one of: " + ", ".join(shown) + more)
        for note in self.notes:
            out.append("  note: " + note)
        return "\n".join(out)


class ParseError(KernlensError):
    """The text is not valid assembly for the front end that read it."""


class SemanticError(KernlensError):
    """The text parses but breaks a rule of the ISA (unknown opcode, undeclared register...)."""


class InputError(KernlensError):
    """A file that is not text, cannot be read, or a bad command-line value."""


class SimulationError(KernlensError):
    """The simulator could not go on (not undefined behaviour, which is reported, not raised)."""


@dataclass
class Diagnostic:
    """A warning or note that does not stop processing (e.g. ``--lenient`` unknown opcodes)."""

    message: str
    span: Span | None = None
    severity: str = "warning"
    notes: list[str] = field(default_factory=list)

    def render(self, source_line: str | None = None) -> str:
        err = KernlensError(self.message, self.span, source_line=source_line, notes=self.notes)
        err.kind = self.severity
        return err.render()
