"""Simulators: the functional SIMT simulator for PTX (``run_kernel``), numerics, memory models.

    >>> import sim
    >>> result = sim.run_kernel("k.ptx", "k", grid=(4, 1, 1), block=(256, 1, 1), args=[x, y, np.int32(n)])  # doctest: +SKIP
"""

from .ptx.problems import Problem
from .ptx.run import RunResult, run_kernel

__all__ = ["run_kernel", "RunResult", "Problem"]
