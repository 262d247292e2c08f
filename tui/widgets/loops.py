"""The Loops tab: a tree of loops with trip counts and the instructions that matter inside.

A node reads ``loop L370–L753  depth 1  ? (assumed 16 iterations)`` and its leaves ``L512  tensor core  mma.sync…``;
each node's data is a PTX line, so selecting it jumps the code view there.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Tree

from ..analysis import HEADLINE, LoopInfo
from ..model import KernelDoc
from .asm_view import format_count

_RANK = {c: i for i, c in enumerate(HEADLINE)}


def hot_instructions(doc: KernelDoc, loop: LoopInfo, limit: int = 6) -> list[int]:
    """Indices of the instructions to show under a loop: the highest dynamic counts when known,
    else the most significant classes (tensor core first), innermost first, in program order."""
    notes = doc.analysis.notes
    idx = list(range(loop.first, min(loop.last, len(notes) - 1) + 1))
    def rank(i: int) -> int:
        return min((_RANK[c] for c in notes[i].classes if c in _RANK), default=len(_RANK))

    # most executed first; among equals the most significant class (tensor core, FMAs, ...)
    ranked = sorted(idx, key=lambda i: (-(notes[i].dyn or 0), rank(i), -notes[i].depth, i))
    if all(notes[i].dyn is None for i in idx):
        ranked = [i for i in ranked if rank(i) < len(_RANK)]
    return sorted(ranked[:limit])


class LoopTree(Tree[int]):
    def set_doc(self, doc: KernelDoc) -> None:
        self.clear()
        a = doc.analysis
        lines = doc.instr_line
        self.root.set_label(Text(f"{doc.name}: {len(a.loops_flat())} loop(s)"))
        self.root.data = doc.first_line

        def add(parent, loops):
            for lp in loops:
                first, last = lines[lp.first], lines[min(lp.last, len(lines) - 1)]
                trip = lp.trip + ("" if lp.exact or lp.trip.startswith("?") else " (estimate)")
                node = parent.add(Text(f"loop L{first}–L{last}  depth {lp.depth}  {trip}"), data=first,
                                  expand=True)
                for i in hot_instructions(doc, lp):
                    n = a.notes[i]
                    ins = doc.fn.instructions[i]
                    dyn = format_count(n.dyn, n.exact)
                    label = Text(f"L{lines[i]:<5} {n.label:<16} {dyn:>7}  ")
                    label.append(ins.full_opcode, style="bold")
                    node.add_leaf(label, data=lines[i])
                add(node, lp.children)

        add(self.root, a.loops)
        if not a.loops:
            self.root.add_leaf(Text("no loops (no backward branch)"), data=doc.first_line)
        self.root.expand()
