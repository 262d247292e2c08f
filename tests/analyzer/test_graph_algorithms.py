"""The CFG's own graph algorithms (preorder, reachability, dominators) against networkx on random
graphs, and bit-set reaching definitions against the textbook per-register sets on the corpus."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import isa
from isa.cfg import Block, Cfg
from analyzer.dataflow import Dataflow
from isa.ir import Register
from tests.conftest import EXAMPLES, corpus_ptx_files


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 14))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    return n, edges


def _cfg(n: int, edges) -> Cfg:
    """A Cfg over an arbitrary graph (no function behind it): blocks, adjacency, networkx graph."""
    cfg = Cfg.__new__(Cfg)
    cfg.blocks = [Block(i, i, i + 1) for i in range(n)]
    cfg.succ = [[] for _ in range(n)]
    cfg.pred = [[] for _ in range(n)]
    cfg.edge_kind = {}
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for u, v in edges:
        g.add_edge(u, v)
        if (u, v) not in cfg.edge_kind:
            cfg.succ[u].append(v)
            cfg.pred[v].append(u)
            cfg.edge_kind[(u, v)] = "jump"
    cfg.graph = g
    return cfg


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_dominators_reachability_and_preorder_match_networkx(graph):
    n, edges = graph
    cfg = _cfg(n, edges)
    want_idom = dict(nx.immediate_dominators(cfg.graph, 0))
    want_idom[0] = 0
    assert cfg.idom == want_idom
    assert cfg.reachable == nx.descendants(cfg.graph, 0) | {0}
    pre = list(nx.dfs_preorder_nodes(cfg.graph, 0))
    assert cfg.preorder == pre + [b for b in range(n) if b not in set(pre)]
    assert sorted(cfg.back_edges) == sorted(
        (u, v) for u, v in cfg.graph.edges if u in cfg.reachable and _dominates(want_idom, v, u))


def _dominates(idom: dict[int, int], a: int, b: int) -> bool:
    while True:
        if a == b:
            return True
        if idom[b] == b:
            return False
        b = idom[b]


def test_dominators_of_a_known_graph():
    # 0 -> 1 -> 2 -> 3, 1 -> 3, 3 -> 1 (loop), 4 unreachable -> 2
    cfg = _cfg(5, [(0, 1), (1, 2), (2, 3), (1, 3), (3, 1), (4, 2)])
    assert cfg.idom == {0: 0, 1: 0, 2: 1, 3: 1}
    assert cfg.back_edges == [(3, 1)]
    assert cfg.preorder == [0, 1, 2, 3, 4]
    assert cfg.reachable == {0, 1, 2, 3}


def _reference_block_in(flow: Dataflow) -> dict[int, dict[str, frozenset[int]]]:
    """Reaching definitions the textbook way: per block, register -> set of definitions."""
    cfg = flow.cfg
    gen = {}
    for b in cfg.blocks:
        g = {}
        for k in range(b.start, b.end):
            for r in flow.dests[k]:
                g[r] = k
        gen[b.id] = g
    out = {b.id: {} for b in cfg.blocks}
    inn = {b.id: {} for b in cfg.blocks}
    changed = True
    while changed:
        changed = False
        for b in cfg.blocks:
            merged: dict[str, frozenset[int]] = {}
            for p in cfg.graph.predecessors(b.id):
                for r, ds in out[p].items():
                    merged[r] = merged.get(r, frozenset()) | ds
            inn[b.id] = merged
            new = dict(merged)
            for r, k in gen[b.id].items():
                new[r] = frozenset((k,))
            if new != out[b.id]:
                out[b.id] = new
                changed = True
    return inn


def _kernels():
    files = corpus_ptx_files()[:12] or sorted((EXAMPLES / "ptx").glob("*.ptx"))
    return [(p, fn.name) for p in files for fn in isa.load(p).kernels]


@pytest.mark.parametrize("path,kernel", _kernels(), ids=lambda x: getattr(x, "name", x))
def test_bitset_reaching_definitions_match_per_register_sets(path, kernel):
    fn = isa.load(path).function(kernel)
    flow = Dataflow(Cfg(fn))
    ref = _reference_block_in(flow)
    assert flow.block_in == {b: regs for b, regs in ref.items()}
    # and instruction by instruction, for the registers each instruction reads
    checked = 0
    for at, ins in enumerate(flow.ins):
        for op in ins.operands[1:]:
            if type(op) is not Register or ins.scope:
                continue
            r = op.name
            b = flow.cfg.blocks[flow.cfg.block_of_index[at]]
            local = [k for k in range(b.start, at) if r in flow.dests[k]]
            assert flow.reaching(r, at) == (frozenset(local[-1:]) if local else ref[b.id].get(r, frozenset()))
            checked += 1
    assert checked > 0
