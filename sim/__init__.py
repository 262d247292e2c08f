"""Simulators: the functional SIMT simulator for PTX (``run_kernel``), numerics, memory models.

    >>> import sim
    >>> result = sim.run_kernel("k.ptx", "k", grid=(4, 1, 1), block=(256, 1, 1), args=[x, y, np.int32(n)])  # doctest: +SKIP

``run_kernel``, ``RunResult`` and ``Problem`` load the PTX simulator when first asked for, so that
``sim.machines`` (the machine models ``validate-kernel`` reads) does not import it: a one-file
``validate-kernel`` has no use for the simulator (issue #15, start-up).
"""

import isa.dataclass_code  # noqa: E402,F401 - isa's import installs it: this package's dataclasses take cached code

__all__ = ["run_kernel", "RunResult", "Problem"]


def __getattr__(name: str):
    if name == "Problem":
        from .ptx.problems import Problem

        return Problem
    if name in ("RunResult", "run_kernel"):
        from .ptx import run

        return getattr(run, name)
    raise AttributeError(f"module 'sim' has no attribute {name!r}")
