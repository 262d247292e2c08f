"""sim.machines: a model file's parsed tables come from the on-disk cache, and a process whose
user cache is empty reads them from the copy the first parse left beside the models (start-up,
issue #15), as the Lark tables and the dataclasses' code are read from theirs."""

from __future__ import annotations

import sys

import pytest

from sim import machines


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setattr(machines, "INSTALLED", tmp_path / "installed")
    monkeypatch.delenv("KERNLENS_NO_CACHE", raising=False)
    machines._read.cache_clear()
    yield tmp_path
    machines._read.cache_clear()


def test_an_empty_user_cache_reads_the_tables_beside_the_models(fresh, monkeypatch):
    monkeypatch.setenv("KERNLENS_CACHE", str(fresh / "first"))
    tables = machines.load("h200")[1]
    (copy,) = (fresh / "installed").glob("h200.toml-*.pickle")
    monkeypatch.setenv("KERNLENS_CACHE", str(fresh / "second"))     # a new user: nothing cached
    machines._read.cache_clear()
    monkeypatch.setitem(sys.modules, "tomllib", None)                # parsing would fail: import tomllib
    assert machines.load("h200")[1] == tables
    assert (fresh / "second" / "machine" / copy.name.split("-", 1)[1]).exists()   # now in the user cache too


def test_a_damaged_copy_is_parsed_again_and_replaced(fresh, monkeypatch):
    monkeypatch.setenv("KERNLENS_CACHE", str(fresh / "first"))
    tables = machines.load("h200")[1]
    (copy,) = (fresh / "installed").glob("h200.toml-*.pickle")
    good = copy.read_bytes()
    copy.write_bytes(good[:-10])
    monkeypatch.setenv("KERNLENS_CACHE", str(fresh / "second"))
    machines._read.cache_clear()
    assert machines.load("h200")[1] == tables
    assert copy.read_bytes() == good
