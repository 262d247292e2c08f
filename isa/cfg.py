"""The one control-flow graph of a function: basic blocks, edges, dominators, post-dominators,
natural loops and DOT. The analyzer (counts, dataflow), the PTX simulator (reconvergence points)
and the inspector (loops) all read this graph.

A block starts at the function entry, at every label that is a branch target (``bra`` targets and
the labels of the ``.branchtargets`` table a ``brx.idx`` names), and after every branch or
return; it holds a range of indices into ``Function.instructions``::

    $L__BB0_4:                        <- block 3 starts here (a branch target)
        fma.rn.f32  %f14, %f13, %f12, %f29;
        ...
        @%p6 bra    $L__BB0_4;        <- block 3 ends: edges to block 3 (taken) and block 4 (fall through)

Nodes are block ids (0 = entry); an edge's ``kind`` is ``taken``, ``fallthrough`` or ``jump``
(an unconditional branch; every target of an unguarded ``brx.idx`` is ``taken``). The graph is
kept as adjacency lists (``succ``, ``pred``, ``edge_kind``); blocks that can leave the function
(``ret``/``exit``/``trap``, guarded or not) are in ``exits``. ``graph`` gives it as a networkx
``DiGraph`` on demand. Dominators come from the iterative algorithm of Cooper, Harvey and Kennedy;
post-dominators from the same algorithm on the reversed graph with a virtual exit. Loops are
natural loops of back edges (an edge whose target dominates its source); loops that share a
header are merged. ``depth`` counts enclosing loops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from isa.ir import Directive, Function, Instruction, Register, Symbol

_BRANCH_OPCODES = frozenset({"bra", "brx"})
_END_OPCODES = frozenset({"ret", "exit", "trap"})

#: the virtual exit node of the post-dominator tree (every block in ``exits`` reaches it)
EXIT = -1


@dataclass
class Block:
    id: int
    start: int                 # index of the first instruction in Function.instructions
    end: int                   # one past the last
    label: str | None = None

    def __len__(self) -> int:
        return self.end - self.start


@dataclass
class Loop:
    header: int
    blocks: frozenset[int]
    latches: tuple[int, ...]
    depth: int = 1
    parent: int | None = None          # header of the enclosing loop
    children: list[int] = field(default_factory=list)


def branch_tables(fn: Function) -> dict[str, tuple[str, ...]]:
    """The ``.branchtargets`` tables of ``fn``: ``ts: .branchtargets L0, L1, L2;`` gives
    ``{"ts": ("L0", "L1", "L2")}``."""
    out: dict[str, tuple[str, ...]] = {}
    for s in fn.statements:
        if isinstance(s, Directive) and s.name == "branchtargets":
            name, _, rest = s.args.partition(":")
            out[name.strip()] = tuple(x.strip() for x in rest.split(",") if x.strip())
    return out


def _targets(ins: Instruction, labels: dict[str, int], tables: dict[str, tuple[str, ...]]) -> list[str]:
    """Label names a branch can go to: the label of ``bra L``, the table entries of ``brx.idx %r, ts``."""
    out = []
    for op in ins.operands:
        if isinstance(op, (Symbol, Register)):
            if op.name in labels:
                out.append(op.name)
            elif ins.opcode == "brx" and op.name in tables:
                out.extend(t for t in tables[op.name] if t in labels)
    return out


def is_branch(ins: Instruction) -> bool:
    return ins.opcode in _BRANCH_OPCODES


def is_end(ins: Instruction) -> bool:
    return ins.opcode in _END_OPCODES and ins.guard is None


class Cfg:
    """The control-flow graph of one function."""

    def __init__(self, fn: Function, branch_tables: dict[str, tuple[str, ...]] | None = None):
        self.fn = fn
        ins = fn.instructions
        labels = fn.labels
        self.tables = tables = globals()["branch_tables"](fn) if branch_tables is None else branch_tables
        index_label = {}
        for name, idx in labels.items():
            index_label.setdefault(idx, name)
        targets: set[int] = set()
        after: set[int] = set()                 # the instruction after each branch or end
        for k, i in enumerate(ins):
            op = i.opcode
            if op in _BRANCH_OPCODES:           # is_branch
                targets.update(labels[t] for t in _targets(i, labels, tables))
                after.add(k + 1)
            elif op in _END_OPCODES:
                after.add(k + 1)
        starts = {0} | {t for t in targets if t < len(ins)} | {k for k in after if k < len(ins)}
        starts_sorted = sorted(s for s in starts if s < len(ins)) if ins else [0]
        self.blocks: list[Block] = []
        for n, s in enumerate(starts_sorted):
            e = starts_sorted[n + 1] if n + 1 < len(starts_sorted) else len(ins)
            self.blocks.append(Block(n, s, e, index_label.get(s)))
        self.block_of_index = {}
        for b in self.blocks:
            self.block_of_index.update(dict.fromkeys(range(b.start, b.end), b.id))
        start_block = {b.start: b.id for b in self.blocks}
        # Plain adjacency lists in edge insertion order: the analyses walk these, which costs far
        # less than networkx calls on graphs this small; :attr:`graph` builds the networkx view.
        self.succ: list[list[int]] = [[] for _ in self.blocks]
        self.pred: list[list[int]] = [[] for _ in self.blocks]
        self.edge_kind: dict[tuple[int, int], str] = {}
        self.exits: set[int] = set()

        def add_edge(u: int, v: int, kind: str) -> None:
            if (u, v) not in self.edge_kind:
                self.succ[u].append(v)
                self.pred[v].append(u)
            self.edge_kind[(u, v)] = kind

        for b in self.blocks:
            if len(b) == 0:
                continue
            last = ins[b.end - 1]
            nxt = b.id + 1 if b.id + 1 < len(self.blocks) else None
            if is_branch(last):
                dests = list(dict.fromkeys(start_block[labels[t]] for t in _targets(last, labels, tables)
                                           if labels[t] in start_block))
                conditional = last.guard is not None or len(dests) > 1
                for d in dests:
                    add_edge(b.id, d, "taken" if conditional else "jump")
                if last.guard is not None and (b.id, nxt) not in self.edge_kind:
                    if nxt is not None:
                        add_edge(b.id, nxt, "fallthrough")
                    else:
                        self.exits.add(b.id)
                if not dests:              # a branch to no known label leaves what we can follow
                    self.exits.add(b.id)
            elif last.opcode in _END_OPCODES:
                self.exits.add(b.id)
                if last.guard is not None:
                    if nxt is not None:
                        add_edge(b.id, nxt, "fallthrough")
            elif nxt is not None:
                add_edge(b.id, nxt, "fallthrough")
            else:
                self.exits.add(b.id)       # runs off the end

    @cached_property
    def graph(self):
        """The graph as a networkx ``DiGraph`` (nodes are block ids, edge attribute ``kind``)."""
        import networkx as nx  # imported on demand: the analyses themselves do not need it

        g = nx.DiGraph()
        g.add_nodes_from(range(len(self.blocks)))
        for u, succ in enumerate(self.succ):
            for v in succ:
                g.add_edge(u, v, kind=self.edge_kind[(u, v)])
        return g

    def edges(self) -> list[tuple[int, int, str]]:
        """``(source, target, kind)`` for every edge, sources in block order."""
        return [(u, v, self.edge_kind[(u, v)]) for u, succ in enumerate(self.succ) for v in succ]

    # ---- dominators and loops ---------------------------------------------------------------

    @cached_property
    def preorder(self) -> list[int]:
        """Blocks in depth-first preorder from the entry (successors in edge order), then the
        unreachable ones in id order."""
        if not self.blocks:
            return []
        seen = {0}
        order = [0]
        stack = [iter(self.succ[0])]
        while stack:
            for v in stack[-1]:
                if v not in seen:
                    seen.add(v)
                    order.append(v)
                    stack.append(iter(self.succ[v]))
                    break
            else:
                stack.pop()
        order += [b.id for b in self.blocks if b.id not in seen]
        return order

    @cached_property
    def reachable(self) -> set[int]:
        if not self.blocks:
            return set()
        seen = {0}
        stack = [0]
        while stack:
            for v in self.succ[stack.pop()]:
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        return seen

    @cached_property
    def idom(self) -> dict[int, int]:
        """Immediate dominators of the reachable blocks (the entry maps to itself).

        The iterative algorithm of Cooper, Harvey and Kennedy over reverse postorder.
        """
        if not self.blocks:
            return {}
        return _dominators(0, dict(enumerate(self.succ)), dict(enumerate(self.pred)))

    def dominates(self, a: int, b: int) -> bool:
        """Whether block ``a`` dominates block ``b``."""
        idom = self.idom
        if b not in idom:
            return False
        while True:
            if a == b:
                return True
            p = idom[b]
            if p == b:
                return False
            b = p

    @cached_property
    def ipdom(self) -> dict[int, int]:
        """Immediate post-dominators: block -> block, or :data:`EXIT` (the virtual exit).

        Blocks that cannot reach an exit (an endless loop) are tied to the exit, so that every
        block has one; the entry of the reversed graph is :data:`EXIT`, which maps to itself."""
        n = len(self.blocks)
        if not n:
            return {}
        # reversed graph: EXIT -> exit blocks, and v -> u for every edge u -> v
        rsucc: dict[int, list[int]] = {EXIT: sorted(self.exits)}
        rpred: dict[int, list[int]] = {b: [] for b in range(n)}
        rpred[EXIT] = []
        for u in range(n):
            rsucc.setdefault(u, [])
        for u in range(n):
            for v in self.succ[u]:
                rsucc[v].append(u)
                rpred[u].append(v)
        for b in sorted(self.exits):
            rpred[b].append(EXIT)

        def reach() -> set[int]:
            seen = {EXIT}
            stack = [EXIT]
            while stack:
                for v in rsucc[stack.pop()]:
                    if v not in seen:
                        seen.add(v)
                        stack.append(v)
            return seen

        seen = reach()
        for b in range(n):               # blocks of endless loops: tied to EXIT
            if b not in seen:
                rsucc[EXIT].append(b)
                rpred[b].append(EXIT)
        return _dominators(EXIT, rsucc, rpred)

    def reconvergence_point(self, block: int) -> int:
        """The instruction index where the paths leaving ``block`` meet again (the start of its
        immediate post-dominator), or :data:`EXIT` when they meet only by leaving the function."""
        d = self.ipdom.get(block, EXIT)
        return EXIT if d == EXIT else self.blocks[d].start

    def reconvergence_pcs(self) -> list[int]:
        """For each instruction index: where the threads that diverge at it meet again, if it is a
        branch or a guarded return (the start of its block's immediate post-dominator, or
        :data:`EXIT`); :data:`EXIT` for every other instruction. The PTX simulator's SIMT stack
        waits there::

            @%p6 bra $L__BB0_4;     # divergent: both paths run, then meet at the ipdom
        """
        out = [EXIT] * len(self.fn.instructions)
        for b in self.blocks:
            if len(b):
                k = b.end - 1
                if self.fn.instructions[k].opcode in _BRANCH_OPCODES | _END_OPCODES:
                    out[k] = self.reconvergence_point(b.id)
        return out

    @cached_property
    def back_edges(self) -> list[tuple[int, int]]:
        reachable = self.reachable
        return [(u, v) for u in range(len(self.blocks)) for v in self.succ[u]
                if u in reachable and self.dominates(v, u)]

    @cached_property
    def loops(self) -> dict[int, Loop]:
        """Natural loops by header block id, with nesting depth and parent."""
        bodies: dict[int, set[int]] = {}
        latches: dict[int, list[int]] = {}
        for u, h in self.back_edges:
            body = {h, u}
            stack = [u]
            while stack:
                x = stack.pop()
                if x == h:
                    continue
                for p in self.pred[x]:
                    if p not in body and p in self.reachable:
                        body.add(p)
                        stack.append(p)
            bodies.setdefault(h, set()).update(body)
            latches.setdefault(h, []).append(u)
        loops = {h: Loop(h, frozenset(b), tuple(sorted(latches[h]))) for h, b in bodies.items()}
        order = sorted(loops, key=lambda h: len(loops[h].blocks))
        for h in order:
            enclosing = [o for o in order if o != h and h in loops[o].blocks and loops[h].blocks < loops[o].blocks]
            if enclosing:
                parent = min(enclosing, key=lambda o: len(loops[o].blocks))
                loops[h].parent = parent
                loops[parent].children.append(h)
        for h in loops:
            d, p = 1, loops[h].parent
            while p is not None:
                d, p = d + 1, loops[p].parent
            loops[h].depth = d
        return loops

    @cached_property
    def block_depth(self) -> dict[int, int]:
        depth = {b.id: 0 for b in self.blocks}
        for loop in self.loops.values():
            for b in loop.blocks:
                depth[b] = max(depth[b], loop.depth)
        return depth

    def innermost_loop(self, block: int) -> Loop | None:
        best = None
        for loop in self.loops.values():
            if block in loop.blocks and (best is None or loop.depth > best.depth):
                best = loop
        return best

    def depth_of_instruction(self, index: int) -> int:
        return self.block_depth[self.block_of_index[index]]

    @cached_property
    def max_depth(self) -> int:
        return max(self.block_depth.values(), default=0)

    # ---- export -----------------------------------------------------------------------------

    def to_dot(self, counts: dict[int, float] | None = None, name: str | None = None) -> str:
        """Graphviz DOT text: one box per block with its label, lines and instruction count."""
        fn = self.fn
        ins = fn.instructions
        title = name or fn.name
        out = [f'digraph "{_esc(title)}" {{', '  node [shape=box, fontname="monospace"];']
        loop_headers = set(self.loops)
        for b in self.blocks:
            first = ins[b.start].span.line if len(b) else 0
            last = ins[b.end - 1].span.line if len(b) else 0
            lines = [f"B{b.id}" + (f" {b.label}" if b.label else ""),
                     f"{len(b)} instr, lines {first}-{last}", f"loop depth {self.block_depth[b.id]}"]
            if counts is not None and b.id in counts and counts[b.id] is not None:
                lines.append(f"executed {counts[b.id]:g}x per thread")
            label = "\\l".join(_esc(x) for x in lines) + "\\l"
            style = ', style=bold' if b.id in loop_headers else ""
            out.append(f'  B{b.id} [label="{label}"{style}];')
        back = set(self.back_edges)
        for u, v, kind in self.edges():
            attrs = [f'label="{kind}"']
            if (u, v) in back:
                attrs.append("style=dashed")
            out.append(f"  B{u} -> B{v} [{', '.join(attrs)}];")
        out.append("}")
        return "\n".join(out) + "\n"


def _dominators(root: int, succ: dict[int, list[int]], pred: dict[int, list[int]]) -> dict[int, int]:
    """Immediate dominators of the nodes reachable from ``root`` (Cooper, Harvey and Kennedy)."""
    post: list[int] = []
    seen = {root}
    stack = [(root, iter(succ[root]))]
    while stack:
        node, it = stack[-1]
        for v in it:
            if v not in seen:
                seen.add(v)
                stack.append((v, iter(succ[v])))
                break
        else:
            stack.pop()
            post.append(node)
    rank = {b: i for i, b in enumerate(post)}
    idom = {root: root}
    changed = True
    while changed:
        changed = False
        for b in post[-2::-1]:
            new = None
            for p in pred[b]:
                if p not in idom:
                    continue
                if new is None:
                    new = p
                    continue
                a = p
                while a != new:  # intersect in the dominator tree
                    while rank[a] < rank[new]:
                        a = idom[a]
                    while rank[new] < rank[a]:
                        new = idom[new]
                new = a
            if idom.get(b) != new:
                idom[b] = new
                changed = True
    return idom


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')
