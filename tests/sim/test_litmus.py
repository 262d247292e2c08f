"""Litmus tests of the PTX memory model on the relaxed memory (``memory_model="relaxed"``).

The PTX files are in ``tests/sim/litmus`` (written by ``make_litmus.py`` there). For each, every
outcome over :data:`SEEDS` seeds must be one the PTX memory model allows, and where the model
allows the test's weak outcome, some seed must produce it. The default memory model ("sc") gives
the sequentially consistent outcome only.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import isa
import sim

HERE = Path(__file__).parent / "litmus"
SEEDS = 48

MP, SB, LB, IRIW = (1, 0), (0, 0), (1, 1), (1, 0, 1, 0)
#: test -> (number of result registers, weak outcome, weak allowed by PTX, other forbidden outcomes)
TESTS = {
    "mp": (2, MP, True, ()), "mp_cta": (2, MP, True, ()), "mp_writer_fence": (2, MP, True, ()),
    "mp_sc_cta_across_ctas": (2, MP, True, ()),
    "mp_sc_gpu": (2, MP, False, ()), "mp_acqrel_gpu": (2, MP, False, ()), "mp_sc_sys": (2, MP, False, ()),
    "mp_sc_cta": (2, MP, False, ()), "mp_relacq_cta": (2, MP, False, ()), "mp_relacq_gpu": (2, MP, False, ()),
    "sb": (2, SB, True, ()), "sb_cta": (2, SB, True, ()), "sb_sc_cta_across_ctas": (2, SB, True, ()),
    "sb_sc_gpu": (2, SB, False, ()), "sb_sc_cta": (2, SB, False, ()),
    "lb": (2, LB, True, ()), "lb_sc_gpu": (2, LB, False, ()),
    "iriw": (4, IRIW, True, ()), "iriw_sc_gpu": (4, IRIW, False, ()),
    "corr": (2, None, False, ((1, 0), (2, 0), (2, 1))), "corr_cta": (2, None, False, ((1, 0), (2, 0), (2, 1))),
}
#: load buffering's weak outcome (both loads read the other thread's later store) comes from
#: sim.ptx.order.hoist_stores: a relaxed store right after an independent relaxed load may be
#: performed first, and the path lets its sibling run before it loads


@lru_cache(maxsize=None)
def _module(name):
    return isa.load(HERE / f"{name}.ptx")


def outcome(name: str, nregs: int, model: str, seed: int) -> tuple:
    mod = _module(name)
    text = (HERE / f"{name}.ptx").read_text()
    cta = "placement cta" in text
    threads = {2: 2, 4: 4}[nregs]
    mem = np.zeros(64, np.uint32)
    out = np.zeros(4, np.uint32)
    grid, block = ((1, 32 * threads) if cta else (threads, 32))
    r = sim.run_kernel(mod, "litmus", grid, block, [mem, out], memory_model=model, seed=seed,
                       check_races=False, memory_stats=False)
    assert not r.problems, r.problems
    return tuple(int(v) for v in out[:nregs])


@pytest.mark.parametrize("name", sorted(TESTS))
def test_litmus_outcomes_are_allowed_and_weak_ones_appear(name):
    nregs, weak, allowed, forbidden = TESTS[name]
    seen = {outcome(name, nregs, "relaxed", s) for s in range(SEEDS)}
    bad = set(forbidden) | ({weak} if weak is not None and not allowed else set())
    assert not seen & bad, f"{name}: forbidden outcome(s) {sorted(seen & bad)} among {sorted(seen)}"
    if allowed:
        assert weak in seen, f"{name}: the allowed weak outcome {weak} never appeared in {SEEDS} seeds: {sorted(seen)}"


@pytest.mark.parametrize("name", sorted(TESTS))
def test_default_memory_model_is_sequentially_consistent(name):
    nregs, weak, allowed, forbidden = TESTS[name]
    got = outcome(name, nregs, "sc", 0)
    assert got != weak and got not in forbidden


def test_load_buffering_needs_the_store_to_go_first():
    """The weak LB outcome appears only through hoisted stores: with the hoisting off, no seed gives it."""
    import sim.ptx.order as order

    nregs, weak = 2, LB
    real = order.hoist_stores
    try:
        order.hoist_stores = lambda M: 0
        _module.cache_clear()
        seen = {outcome("lb", nregs, "relaxed", s) for s in range(SEEDS)}
    finally:
        order.hoist_stores = real
        _module.cache_clear()
    assert weak not in seen and seen


def test_same_seed_same_outcome():
    assert [outcome("iriw", 4, "relaxed", 5) for _ in range(3)] == [outcome("iriw", 4, "relaxed", 5)] * 3
