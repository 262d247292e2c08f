"""run_kernel reuses a decoded kernel for repeated launches (same module object, geometry and
parameter bytes) and stays correct: fresh memory, counters and problems each time."""

from __future__ import annotations

import numpy as np

import isa
import sim

from .kernels import ptx

BODY = """
    ld.global.u32 %r3, [%rd11];
    ld.param.u32 %r4, [k_n];
    mad.lo.s32 %r2, %r3, %r4, %r1;
"""


def test_second_launch_reuses_the_decoded_kernel_with_new_inputs():
    from sim.ptx import run as runmod

    module = isa.loads(ptx(BODY))
    runs, machines = [], []
    for seed in (1, 2):
        inp = np.random.default_rng(seed).integers(0, 1000, 64).astype(np.uint32)
        out = np.zeros(64, np.uint32)
        res = sim.run_kernel(module, "k", 1, 64, [out, inp, np.int32(3)])
        assert out.tolist() == (inp * 3 + np.arange(64)).tolist()
        runs.append(res)
        machines.append(list(runmod._DECODED[id(module)][1].values()))
    first, second = runs
    assert second.stats["warp_instructions"] == first.stats["warp_instructions"]      # counters start afresh
    assert second.stats["global_load_sectors"] == first.stats["global_load_sectors"] == 8
    # the second launch ran on the machine the first decoded (by identity, not by a timing that a loaded
    # machine can reverse)
    assert len(machines[0]) == 1 and machines[1] == machines[0]


def test_a_different_scalar_or_size_decodes_again_and_problems_do_not_leak():
    module = isa.loads(ptx(BODY))
    inp = np.arange(64, dtype=np.uint32)
    out = np.zeros(64, np.uint32)
    sim.run_kernel(module, "k", 1, 64, [out, inp, np.int32(3)])
    out = np.zeros(64, np.uint32)
    sim.run_kernel(module, "k", 1, 64, [out, inp, np.int32(5)])         # k_n is read from the parameters
    assert out.tolist() == (inp * 5 + np.arange(64)).tolist()
    short = np.zeros(32, np.uint32)                                    # out of bounds for threads 32-63
    bad = sim.run_kernel(module, "k", 1, 64, [short, inp, np.int32(5)])
    assert bad.problems and all(p.kind == "out_of_bounds" for p in bad.problems)
    out = np.zeros(64, np.uint32)
    again = sim.run_kernel(module, "k", 1, 64, [out, inp, np.int32(5)])
    assert again.problems == [] and out.tolist() == (inp * 5 + np.arange(64)).tolist()


def test_a_cached_machine_keeps_its_decoding_not_its_last_launchs_memory():
    """The cache holds decoded programs only: after the run, global memory, listeners (the timing
    model's event streams) and the race shadows are dropped; a bench that ran every microbenchmark in
    one process grew to 8 GB and was killed when each cached machine kept its launch's buffers."""
    from sim.ptx import run as runmod

    module = isa.loads(ptx(BODY))
    inp = np.arange(64, dtype=np.uint32)
    out = np.zeros(64, np.uint32)
    sim.run_kernel(module, "k", 1, 64, [out, inp, np.int32(3)], timing="h200")
    (M,) = runmod._DECODED[id(module)][1].values()
    assert M.gmem is None and M.listeners == [] and M.all_listeners == []
    assert M.order is None or getattr(M.order, "w_who", None) is None
    out = np.zeros(64, np.uint32)
    res = sim.run_kernel(module, "k", 1, 64, [out, inp, np.int32(3)], timing="h200")   # relaunch after release
    assert out.tolist() == (inp * 3 + np.arange(64)).tolist() and res.timing["cycles"] > 0


def test_the_decoded_machines_go_with_their_module():
    import gc
    import weakref

    from sim.ptx import run as runmod

    module = isa.loads(ptx(BODY))
    sim.run_kernel(module, "k", 1, 64, [np.zeros(64, np.uint32), np.arange(64, dtype=np.uint32), np.int32(3)])
    mid = id(module)
    (M,) = runmod._DECODED[mid][1].values()
    gone = weakref.ref(M)
    del M, module
    gc.collect()
    assert gone() is None and mid not in runmod._DECODED
