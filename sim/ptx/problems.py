"""Undefined behaviour found while simulating, as data.

A planted bug and what the simulator reports for it::

    st.global.f32 [%rd9], %f1;      // one element past the end of C

    Problem(kind='out_of_bounds', kernel='k', instruction='st.global.f32 [%rd9], %f1;',
            ptx_line=41, source='k.cu:12', cta=(0, 0, 0), thread=(31, 0, 0),
            address=0x7f0000000280, buffer='C (param 2): 4 bytes past the end of 640 bytes',
            message='4-byte store to global 0x7f0000000280 is outside every buffer')
"""

from __future__ import annotations

from dataclasses import dataclass

#: kinds of problem the simulator reports
KINDS = ("out_of_bounds", "misaligned", "uninitialized_shared", "barrier_divergence", "max_steps",
         "shared_race", "null_pointer", "async_race", "global_race", "deadlock")


@dataclass(frozen=True)
class Problem:
    """One undefined-behaviour finding at one instruction for one thread (or one CTA)."""

    kind: str
    kernel: str
    instruction: str
    ptx_line: int
    source: str | None
    cta: tuple[int, int, int] | None
    thread: tuple[int, int, int] | None
    address: int | None
    buffer: str | None
    message: str

    def __str__(self) -> str:
        where = f"line {self.ptx_line}"
        if self.source:
            where += f" ({self.source})"
        who = ""
        if self.cta is not None:
            who = f" cta={self.cta}"
        if self.thread is not None:
            who += f" thread={self.thread}"
        text = f"{self.kind}: {self.kernel} {where}{who}: {self.message}"
        if self.buffer:
            text += f" [{self.buffer}]"
        return text


class ProblemLog:
    """Collects problems, keeping at most ``per_site`` of each (kind, instruction) pair; the rest
    are only counted (``suppressed``) so a kernel that goes wrong for every thread stays cheap."""

    def __init__(self, per_site: int = 8):
        self.per_site = per_site
        self.items: list[Problem] = []
        self.counts: dict[tuple[str, int], int] = {}
        self.suppressed = 0

    def room(self, kind: str, pc: int) -> int:
        """How many more problems of this kind may be recorded at instruction ``pc``."""
        return self.per_site - self.counts.get((kind, pc), 0)

    def add(self, pc: int, problem: Problem) -> None:
        key = (problem.kind, pc)
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        if n < self.per_site:
            self.items.append(problem)
        else:
            self.suppressed += 1

    def count_only(self, kind: str, pc: int, n: int) -> None:
        self.counts[(kind, pc)] = self.counts.get((kind, pc), 0) + n
        self.suppressed += n
