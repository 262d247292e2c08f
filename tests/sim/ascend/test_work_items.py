"""What the timing model prices is a named type (issue 15: positional work tuples)."""

from __future__ import annotations

import isa
from sim.ascend.events import Mad, Move, ScalarLoad, Vec
from sim.ascend.machine import load_machine
from sim.ascend.run import run_module
from sim.ascend.timing import gm_traffic


def test_work_items_are_named():
    res = run_module(isa.load("examples/ascend/vadd_f16.asm"), load_machine("davinci-a2"), cores=1, functional=False)
    events = res.launch.events
    works = [ev.work for evs in events for ev in evs if ev.work is not None]
    assert {type(w) for w in works} <= {Mad, Move, Vec, ScalarLoad}
    moves = [w for w in works if isinstance(w, Move)]
    # tiles of 256 f16 (512 B): x and y in, z out
    assert sorted({(w.path, w.nbytes) for w in moves}) == [("gm->ub", 512), ("ub->gm", 512)]
    assert all(w.kind == "move" and w.span is not None for w in moves)
    vec = [w for w in works if isinstance(w, Vec)]
    assert vec and vec[0].kind == "vec" and vec[0].name.startswith("vadd")
    # every element of x, y and z (3 x 4096 f16) crosses once
    assert gm_traffic(events) == sum(w.nbytes for w in moves) == 3 * 4096 * 2


def test_mad_work_counts_fractals():
    assert Mad(8, "f16").kind == "mad" and Mad(8, "f16").fractals == 8


def test_gm_unique_bytes_are_the_distinct_bytes_accessed():
    """unique_bytes <= bytes (issue 15: 81,920 moved with 82,432 'unique' counted in 512-B blocks)."""
    from isa.generate.gemm import GemmConfig, gemm_kernel
    from isa.generate.vector import ReduceConfig, reduce_kernel

    m = load_machine("davinci-a2")
    t = run_module(isa.loads(reduce_kernel(ReduceConfig("sum", "f16", 40, 1000))), m, functional=False).timing
    # 40 rows of 1000 f16 read once, 40 f16 sums written
    assert (t.gm_bytes, t.gm_unique_bytes) == (40 * 1000 * 2 + 40 * 2,) * 2
    cfg = GemmConfig("f16", 100, 72, 40)
    t = run_module(isa.loads(gemm_kernel(cfg)), m, functional=False).timing
    # A 100x40 and B 40x72 read once each, C 100x72 written
    assert t.gm_unique_bytes == (100 * 40 + 40 * 72 + 100 * 72) * 2 == 28160
    assert t.gm_bytes == 28160
