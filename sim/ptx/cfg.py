"""Control-flow graph of a PTX function and the reconvergence point of every branch.

A divergent ``@%p6 bra $L__BB0_4;`` reconverges at the immediate post-dominator of its basic
block: the first instruction that every path from the branch must reach. A branch whose paths
only meet at the function's exit gets -1 (its threads reconverge only by exiting).
"""

from __future__ import annotations

import networkx as nx

from isa import ir

EXIT = -1
_TERMINATORS = frozenset({"ret", "exit", "trap"})


def _target(ins: ir.Instruction, fn: ir.Function) -> int | None:
    for op in ins.operands:
        if isinstance(op, (ir.Symbol, ir.Register)) and op.name in fn.labels:
            return fn.labels[op.name]
    return None


def _brx_targets(s: ir.Instruction, fn: ir.Function, tables) -> list[int]:
    """Instruction indices a ``brx.idx %r, table;`` can jump to."""
    for op in s.operands:
        if isinstance(op, (ir.Symbol, ir.Register)) and op.name in tables:
            return [fn.labels[t] for t in tables[op.name] if t in fn.labels]
    return []


def reconvergence_points(fn: ir.Function, branch_tables=None) -> list[int]:
    """For each instruction index: the reconvergence pc if it is a branch, else -1.

    ``branch_tables`` maps ``.branchtargets`` names to label lists (``brx.idx`` successors)."""
    ins = fn.instructions
    n = len(ins)
    tables = branch_tables or {}
    leaders = {0}
    for i, s in enumerate(ins):
        if s.opcode in ("bra", "brx") or s.opcode in _TERMINATORS:
            if i + 1 < n:
                leaders.add(i + 1)
            t = _target(s, fn)
            if t is not None:
                leaders.add(t)
            if s.opcode == "brx":
                leaders.update(_brx_targets(s, fn, tables))
    leaders.update(v for v in fn.labels.values() if v < n)
    starts = sorted(x for x in leaders if x < n)
    block_of = {}
    ends = {}
    for k, st in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else n
        ends[st] = end
        for i in range(st, end):
            block_of[i] = st
    g = nx.DiGraph()
    g.add_node(EXIT)
    for st in starts:
        g.add_node(st)
        last = ends[st] - 1
        s = ins[last]
        fall = ends[st] if ends[st] < n else EXIT
        if s.opcode in _TERMINATORS:
            g.add_edge(st, EXIT if s.guard is None else fall)
            if s.guard is not None:
                g.add_edge(st, EXIT)
        elif s.opcode == "bra":
            t = _target(s, fn)
            g.add_edge(st, block_of.get(t, EXIT) if t is not None else EXIT)
            if s.guard is not None:
                g.add_edge(st, fall)
        elif s.opcode == "brx":
            for t in _brx_targets(s, fn, tables) or [EXIT]:
                g.add_edge(st, block_of.get(t, EXIT))
            if s.guard is not None:
                g.add_edge(st, fall)
        else:
            g.add_edge(st, fall)
    # blocks that cannot reach the exit (infinite loops) still need a post-dominator: link them
    rev = g.reverse(copy=True)
    reach = nx.descendants(rev, EXIT) | {EXIT}
    for st in starts:
        if st not in reach:
            rev.add_edge(EXIT, st)
    ipdom = nx.immediate_dominators(rev, EXIT)
    out = [EXIT] * n
    for i, s in enumerate(ins):
        if s.opcode in ("bra", "brx") or s.opcode in _TERMINATORS:
            d = ipdom.get(block_of[i], EXIT)
            out[i] = EXIT if d == EXIT else d
    return out
