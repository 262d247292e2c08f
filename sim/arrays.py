"""Two array statistics the simulator and the checker need, kept inside numpy's core.

``np.unique(a)`` and ``np.percentile`` (which calls it) import ``numpy.ma`` on first use in numpy
2.x (``_unique1d`` asks ``np.ma.is_masked``): about 10 ms of CPU, measured by ``bench/startup.py``,
that no simulated launch needs and that every cold ``kernlens run`` paid (and a ``--timing`` one,
through the timing model's sector counts). These two functions give the same values from a sort.
"""

from __future__ import annotations

import numpy as np


def distinct(a, *, return_index: bool = False, return_counts: bool = False):
    """The sorted distinct values of ``a`` (flattened), as ``np.unique(a)`` returns them for an
    array without NaN (the simulator's CTA ids, warp ids, slots, sizes and addresses; the timing
    model's sector ids), with, as ``np.unique`` gives them, the index in ``a`` of each value's first
    occurrence (``return_index``) and how many times it occurs (``return_counts``): ``(values,
    index, counts)`` for those asked for."""
    flat = np.asarray(a).ravel()
    if return_index:
        order = np.argsort(flat, kind="stable")      # stable: the first occurrence leads its run
        s = flat[order]
    else:
        s = np.sort(flat)
    keep = np.empty(s.size, dtype=bool)
    if s.size:
        keep[0] = True
        np.not_equal(s[1:], s[:-1], out=keep[1:])
    values = s[keep] if s.size > 1 else s
    if not (return_index or return_counts):
        return values
    out = [values]
    starts = np.flatnonzero(keep)
    if return_index:
        out.append(order[starts])
    if return_counts:
        out.append(np.diff(np.append(starts, s.size)))
    return tuple(out)


def percentile(a, q: float, method: str = "linear") -> float:
    """``np.percentile(a, q, method=method)`` of the values of ``a`` for the methods ``"linear"``
    and ``"lower"``, computed as numpy 2.x's ``_quantile`` computes it: the virtual index
    ``(n - 1) * q / 100``, its floor for ``"lower"``, and for ``"linear"`` numpy's two-sided
    interpolation (``a + (b - a) * t`` below t = 0.5, ``b - (b - a) * (1 - t)`` from it). NaN
    when ``a`` holds a NaN; ``a`` must not be empty."""
    if method not in ("linear", "lower"):
        raise ValueError(f"percentile: method {method!r} is not 'linear' or 'lower'")
    s = np.sort(np.asarray(a, dtype=np.float64).ravel())
    n = s.size
    if n == 0:
        raise ValueError("percentile of an empty array")
    if np.isnan(s[-1]):
        return float("nan")
    v = (n - 1) * (q / 100)
    lo = int(np.floor(v))
    if method == "lower" or lo >= n - 1:
        return float(s[min(lo, n - 1)])
    t = v - lo
    below, above = s[lo], s[lo + 1]
    d = above - below
    return float(above - d * (1 - t) if t >= 0.5 else below + d * t)
