"""pytest plugin ``kernlens`` (registered through the ``pytest11`` entry point).

Fixtures:

* ``kernlens_load(path_or_text, kernel=None)`` -> :class:`analyzer.assertions.KernelCheck`
* ``kernlens_compile(cu_path, arch='sm_90', kernel=None, options=())`` compiles a ``.cu`` with nvcc
  (the test is skipped, with the reason, when nvcc is not on PATH).

The checks read like the intent and fail with the kernel, the expectation, what was found and the
nearest instructions with their source lines::

    def test_tensor_cores(kernlens_load):
        k = kernlens_load("build/gemm.sm_90.ptx", kernel="gemm")
        k.uses("TENSOR_CORE", at_least=1)
        k.never_uses("FP32_FMA")
        k.uses("ld.shared.v4", at_least=1)
        k.in_innermost_loop("mma")
        k.sequence("ld.shared", "mma", "bar.sync")
        k.intensity_at_least(10)
        k.no_spills()
        k.sass.uses("HMMA").uses("LDS.128", at_least=1).no_spills()   # what ptxas made of it
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def kernlens_load():
    """Load a kernel from a ``.ptx`` path or from PTX text: ``kernlens_load(path, kernel=name)``."""
    from .assertions import KernelCheck

    def load(path_or_text, kernel: str | None = None, **options) -> KernelCheck:
        return KernelCheck.load(path_or_text, kernel=kernel, **options)

    return load


@pytest.fixture
def kernlens_compile(tmp_path):
    """Compile a ``.cu`` to PTX with nvcc and load a kernel: ``kernlens_compile(path, arch='sm_90')``.

    Skips the test with the reason when nvcc is not on PATH.
    """
    from .assertions import KernelCheck

    def compile_(cu, arch: str = "sm_90", kernel: str | None = None, options: tuple[str, ...] = (),
                 **load_options) -> KernelCheck:
        nvcc = shutil.which("nvcc")
        if nvcc is None:
            pytest.skip("nvcc is not on PATH: cannot compile " + str(cu))
        src = Path(cu)
        out = Path(tmp_path) / (src.stem + f".{arch}.ptx")
        cmd = [nvcc, "-ptx", f"-arch={arch}", *options, str(src), "-o", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.fail(f"nvcc failed ({' '.join(cmd)}):\n{proc.stderr}", pytrace=False)
        return KernelCheck.load(out, kernel=kernel, **load_options)

    return compile_


def pytest_configure(config):
    config.addinivalue_line("markers", "kernlens: a test that checks what a GPU kernel executes")

