"""CFG, dominators, natural loops, nesting depth and DOT on real and small kernels."""

from __future__ import annotations

import networkx as nx

import isa
from analyzer.cfg import Cfg
from tests.isa.ptx_helpers import kernel

NESTED = """
\tmov.u32 %r1, 0;
$L_outer:
\tmov.u32 %r2, 0;
$L_inner:
\tfma.rn.f32 %f1, %f2, %f3, %f1;
\tadd.s32 %r2, %r2, 1;
\tsetp.lt.s32 %p1, %r2, 8;
\t@%p1 bra $L_inner;
\tadd.s32 %r1, %r1, 1;
\tsetp.lt.s32 %p2, %r1, 4;
\t@%p2 bra $L_outer;
\tret;
"""


def test_blocks_edges_and_nested_loops():
    cfg = Cfg(kernel(NESTED))
    assert [len(b) for b in cfg.blocks] == [1, 1, 4, 3, 1]
    assert isinstance(cfg.graph, nx.DiGraph)
    assert set(cfg.graph.edges) == {(0, 1), (1, 2), (2, 2), (2, 3), (3, 1), (3, 4)}
    assert sorted(cfg.back_edges) == [(2, 2), (3, 1)]
    assert set(cfg.loops) == {1, 2}
    assert cfg.loops[1].blocks == {1, 2, 3} and cfg.loops[1].depth == 1
    assert cfg.loops[2].blocks == {2} and cfg.loops[2].depth == 2 and cfg.loops[2].parent == 1
    assert cfg.block_depth == {0: 0, 1: 1, 2: 2, 3: 1, 4: 0}
    assert cfg.dominates(1, 3) and not cfg.dominates(3, 1)
    assert cfg.max_depth == 2


def test_dot_export_marks_loops_and_back_edges():
    cfg = Cfg(kernel(NESTED))
    dot = cfg.to_dot({0: 1, 1: 4, 2: 32, 3: 4, 4: 1})
    assert dot.startswith('digraph "k" {')
    assert "B2 -> B2 [label=\"taken\", style=dashed];" in dot
    assert "executed 32x per thread" in dot
    assert dot.count("->") == 6


def test_corpus_sgemm_naive(corpus):
    fn = isa.load(corpus / "ptx" / "sgemm_naive.sm_90.ptx").kernels[0]
    cfg = Cfg(fn)
    assert len(cfg.blocks) == 10
    assert {h: sorted(l.blocks) for h, l in cfg.loops.items()} == {4: [4], 7: [7]}
    fma_lines = [k for k, i in enumerate(fn.instructions) if i.opcode == "fma"]
    assert all(cfg.depth_of_instruction(k) == 1 for k in fma_lines)
    # the unrolled loop header is a branch target label
    assert cfg.blocks[4].label == "$L__BB0_4"
