"""CFG, dominators, natural loops, nesting depth and DOT on real and small kernels."""

from __future__ import annotations

from pathlib import Path

import networkx as nx

import isa
from isa.cfg import EXIT, Cfg
from tests.isa.ptx_helpers import HEADER, kernel

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


# ---- one CFG for analyzer, simulator and inspector (issue #10) -------------------------------

BRX = Path(__file__).resolve().parents[1] / "sim" / "ptx" / "data" / "brx_idx.ptx"


def _brx_cfg():
    fn = isa.loads(BRX.read_text()).kernels[0]
    return fn, Cfg(fn)


def test_brx_idx_targets_of_the_branchtargets_table_have_the_brx_block_as_predecessor():
    fn, cfg = _brx_cfg()
    brx = next(i for i, s in enumerate(fn.instructions) if s.opcode == "brx")
    b = cfg.block_of_index[brx]
    targets = {cfg.block_of_index[fn.labels[name]] for name in ("L0", "L1", "L2", "L3")}
    assert set(cfg.succ[b]) == targets | {b + 1}          # four table targets + the guard-false path
    for t in targets:
        assert b in cfg.pred[t]
        assert cfg.edge_kind[(b, t)] == "taken"
    assert cfg.edge_kind[(b, b + 1)] == "fallthrough"
    assert cfg.reachable == set(range(len(cfg.blocks)))


def test_reconvergence_of_brx_is_the_block_every_target_reaches():
    fn, cfg = _brx_cfg()
    brx = next(i for i, s in enumerate(fn.instructions) if s.opcode == "brx")
    assert cfg.reconvergence_pcs()[brx] == fn.labels["LEND"]


def test_unguarded_brx_has_no_fall_through_and_guarded_ret_is_an_exit():
    text = HEADER + """
.visible .entry k(.param .u32 k_n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    ld.param.u32 %r1, [k_n];
    setp.eq.u32 %p1, %r1, 0;
    @%p1 ret;
    ts: .branchtargets A, B;
    brx.idx %r1, ts;
A:  add.u32 %r2, %r1, 1;
    ret;
B:  add.u32 %r2, %r1, 2;
    ret;
}
"""
    fn = isa.loads(text).kernels[0]
    cfg = Cfg(fn)
    ret = next(i for i, s in enumerate(fn.instructions) if s.opcode == "ret")
    brx = next(i for i, s in enumerate(fn.instructions) if s.opcode == "brx")
    b_ret, b_brx = cfg.block_of_index[ret], cfg.block_of_index[brx]
    assert b_ret in cfg.exits and cfg.succ[b_ret] == [b_brx]
    a, b = cfg.block_of_index[fn.labels["A"]], cfg.block_of_index[fn.labels["B"]]
    assert cfg.succ[b_brx] == [a, b]                      # no edge into A by falling through
    assert cfg.reconvergence_pcs()[brx] == EXIT and cfg.reconvergence_pcs()[ret] == EXIT
