"""One big launch on all local cores: CTA ranges across forked processes (``run_kernel(jobs=N)``).

    r = sim.run_kernel("sgemm.ptx", "gemm", grid, block, args, jobs=16)

The grid is cut into ``jobs`` contiguous ranges of linear CTA indices; each forked worker runs its
range on a private copy of the argument buffers and returns the bytes its CTAs changed, its
statistics and its problems. The parent applies the changed bytes of every worker to the caller's
buffers (CTAs of a GEMM, a row reduction or a softmax write disjoint bytes, so the result is the
one-process result) and sums the statistics. A kernel that contains atomics or reductions to
memory (``atom``, ``red``), whose CTAs may communicate, runs in one process; so does a launch with
listeners (they must see every event in the caller's process), or where ``fork`` is not available.
"""

from __future__ import annotations

import multiprocessing as mp
import os

import numpy as np

_JOB = None          # (module, entry, grid, block, args, dyn, kwargs), inherited by forked workers


def _communicates(fn) -> bool:
    return any(i.opcode in ("atom", "red", "red.async", "cp.reduce.async.bulk") for i in fn.instructions)


def _worker(rng):
    from .run import run_kernel

    module, entry, grid, block, args, dyn, kw = _JOB
    local = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    res = run_kernel(module, entry, grid, block, local, dyn, ctas=rng, **kw)
    changes = {}
    for i, (a, b) in enumerate(zip(args, local)):
        if isinstance(a, np.ndarray):
            x, y = a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)
            idx = np.flatnonzero(x != y)
            if len(idx):
                changes[i] = (idx, y[idx])
    stats = {k: v for k, v in res.stats.items() if k != "memory_by_pc"}
    stats["memory_by_pc"] = res.stats.get("memory_by_pc")
    return changes, stats, res.problems


def _merge(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = _merge(out[k], v) if k in out else v
        return out
    if isinstance(a, (int, float, np.integer, np.floating)) and isinstance(b, (int, float, np.integer, np.floating)) \
            and not isinstance(a, bool):
        return a + b
    return a


def run_parallel(module, entry, grid, block, args, dyn, *, jobs, listeners=(), **kw):
    """The launch across ``jobs`` processes, or None when it must run in one (see the module doc)."""
    global _JOB
    from .run import RunResult, _dims3

    fn = module.function(entry)
    grid = _dims3(grid, "grid")
    ncta = grid[0] * grid[1] * grid[2]
    jobs = min(int(jobs), ncta)
    if jobs < 2 or listeners or _communicates(fn) or "fork" not in mp.get_all_start_methods():
        return None
    bounds = np.linspace(0, ncta, jobs + 1).round().astype(int)
    ranges = [(int(bounds[i]), int(bounds[i + 1])) for i in range(jobs) if bounds[i + 1] > bounds[i]]
    _JOB = (module, entry, grid, block, list(args), dyn, kw)
    try:
        with mp.get_context("fork").Pool(len(ranges)) as pool:
            parts = pool.map(_worker, ranges, chunksize=1)
    finally:
        _JOB = None
    stats, problems = {}, []
    for i, (changes, st, probs) in enumerate(parts):
        for k, (idx, vals) in changes.items():
            a = args[k]
            if a.flags.writeable:
                a.reshape(-1).view(np.uint8)[idx] = vals
        mbp = st.pop("memory_by_pc", None)
        stats = _merge(stats, st) if i else dict(st)
        if mbp:
            stats["memory_by_pc"] = _merge(stats.get("memory_by_pc", {}), mbp) if i else mbp
        problems.extend(probs)
    for key in ("ctas_per_batch", "threads_per_cta"):
        if key in parts[0][1]:
            stats[key] = parts[0][1][key]
    stats["ctas"] = ncta
    stats["jobs"] = len(ranges)
    stats["cpu_count"] = os.cpu_count()
    return RunResult(fn.name, stats, problems)
