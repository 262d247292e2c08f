"""The functional SIMT simulator for PTX (``run_kernel``) and its pieces."""

from .problems import Problem
from .run import RunResult, run_kernel

__all__ = ["run_kernel", "RunResult", "Problem"]
