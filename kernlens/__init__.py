"""kernlens: read GPU/NPU kernel assembly, tell what it really executes, run it on a simulated machine."""

#: the one place the version is written (pyproject.toml reads it: ``[tool.setuptools.dynamic]``)
__version__ = "0.1.0"


def one_blas_thread() -> None:
    """Ask numpy's OpenBLAS for one thread, unless the user chose a count
    (``OPENBLAS_NUM_THREADS``, ``GOTO_NUM_THREADS`` or ``OMP_NUM_THREADS``); effective only before
    numpy is imported, so the command-line entry points call it first.

    OpenBLAS starts a thread per core when numpy is imported, and its idle threads spin: on a
    2-core machine under load, measured 0.015 s less CPU for ``python -c 'import numpy'`` and
    ~0.03 s less for a warm 256^3 ``kernlens run`` with one thread; more cores, more threads. The
    simulator never calls BLAS (its products are integer ``einsum``s and element-wise float
    arithmetic); only a reference's float64 ``@`` does, and its results were byte-identical
    either way (measured: ``kernlens run`` of the 256^3 fp16 GEMM, output identical but for its
    timing line). Processes a command starts inherit the setting, which keeps its workers from
    over-subscribing the cores.
    """
    import os

    if not any(v in os.environ for v in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
