"""sim.arrays: the same values as numpy's np.unique and np.percentile, bit for bit, without
importing numpy.ma (tests/test_startup.py checks the import; these check the values)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sim.arrays import distinct, percentile


@pytest.mark.parametrize("seed", range(20))
def test_distinct_is_np_unique(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-5, 40, size=int(rng.integers(0, 300)), dtype=np.int64).reshape(-1)
    if seed % 2:
        a = a.astype(np.uint32)
    got = distinct(a)
    want = np.unique(a)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("return_index, return_counts", [(True, False), (False, True), (True, True)])
def test_distinct_with_first_indices_and_counts_is_np_unique(seed, return_index, return_counts):
    rng = np.random.default_rng(seed)
    a = rng.integers(-5, 40, size=int(rng.integers(0, 300)), dtype=np.int64)
    if seed % 3 == 1:
        a = a.astype(np.uint32)
    if seed % 3 == 2:
        a = a.reshape(-1, 1) if a.size % 2 else a
    got = distinct(a, return_index=return_index, return_counts=return_counts)
    want = np.unique(a, return_index=return_index, return_counts=return_counts)
    assert len(got) == len(want) == 1 + return_index + return_counts
    assert all(g.dtype == w.dtype and g.tolist() == w.tolist() for g, w in zip(got, want))


def test_distinct_of_small_and_nested_inputs():
    assert distinct(np.array([], np.int32)).tolist() == []
    assert distinct(np.array([7])).tolist() == [7]
    assert distinct([[3, 1], [3, 2]]).tolist() == [1, 2, 3]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("q", [0, 1, 25, 50, 99, 99.9, 100])
def test_percentile_is_np_percentile(seed, q):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    a = rng.standard_exponential(n) * 10.0 ** rng.integers(-9, 3)
    if seed % 3 == 0:
        a = np.round(a, 1)                       # repeated values
    for method in ("linear", "lower"):
        want = float(np.percentile(a, q, method=method))
        got = percentile(a, q, method=method)
        assert got == want, (n, q, method, got, want)       # exact: the same arithmetic


def test_percentile_with_infinities_and_nan():
    a = np.array([1.0, np.inf, 2.0, 3.0, np.inf])
    assert percentile(a, 99, method="lower") == float(np.percentile(a, 99, method="lower")) == np.inf
    assert percentile(a, 50, method="lower") == 3.0
    assert np.isnan(percentile(np.array([1.0, np.nan]), 50))
    with pytest.raises(ValueError):
        percentile(a, 50, method="nearest")


def test_neither_imports_numpy_ma():
    code = ("import sys; import numpy as np; from sim.arrays import distinct, percentile; "
            "distinct(np.arange(9) % 4); percentile(np.arange(9.0), 99); print('numpy.ma' in sys.modules)")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                         env=dict(os.environ, PYTHONPATH=str(root)))
    assert out.stdout.strip() == "False"
