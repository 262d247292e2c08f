"""Shared fixtures: where the project's examples and the (optional) shared corpus live."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"


def corpus_or_skip() -> Path:
    if not (CORPUS / "manifest.json").exists():
        pytest.skip(NO_CORPUS)
    return CORPUS


@pytest.fixture(scope="session")
def corpus() -> Path:
    return corpus_or_skip()


@pytest.fixture(scope="session")
def manifest(corpus) -> dict:
    return json.loads((corpus / "manifest.json").read_text())


def corpus_ptx_files() -> list[Path]:
    return sorted((CORPUS / "ptx").glob("*.ptx")) if CORPUS.exists() else []


NO_CORPUS = "../shared/corpus is not present (it ships with the team checkout, not with a clone)"


def corpus_ptx_params() -> list:
    """``corpus_ptx_files()`` for ``pytest.mark.parametrize("path", ...)``: without the corpus, one
    case that skips with the reason (an empty list would skip as "got empty parameter set")."""
    return corpus_ptx_files() or [pytest.param(None, marks=pytest.mark.skip(reason=NO_CORPUS), id="no-corpus")]


def tool_or_skip(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not on PATH")
    return path


@pytest.fixture(scope="session")
def examples() -> Path:
    return EXAMPLES


@pytest.fixture
def sass_tools():
    """Skips the test where the SASS tools (ptxas + nvdisasm or cuobjdump) are not installed."""
    import isa.sass

    if not isa.sass.available():
        pytest.skip(isa.sass.note())


@pytest.fixture
def no_sass_tools(monkeypatch):
    """kernlens pointed at a ptxas that does not exist: what happens where the tools are absent."""
    from isa.sass import compile as c

    monkeypatch.setenv("KERNLENS_PTXAS", "/nonexistent/ptxas")
    c._which.cache_clear()
    yield
    monkeypatch.undo()
    c._which.cache_clear()
