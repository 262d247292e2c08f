"""The text report written without rich (analyzer.plaintext) is byte for byte rich's, on every
kernel of the corpus and the examples, at the default width and a narrow one (more wrapping)."""

from __future__ import annotations

from pathlib import Path

import pytest

import analyzer.plaintext as plaintext
import isa
from analyzer.dataflow import Launch
from analyzer.patterns import parse_expectation
from analyzer.render import render_text
from analyzer.report import analyze_function

from ..conftest import corpus_ptx_files

ROOT = Path(__file__).resolve().parents[2]
FILES = corpus_ptx_files() + sorted((ROOT / "examples").rglob("*.ptx")) + sorted((ROOT / "examples").rglob("*.asm"))


def _reports(path: Path):
    try:
        module = isa.load(path)
    except isa.KernlensError:
        return []
    out = []
    for i, fn in enumerate(module.kernels):
        launch = Launch((2, 1, 1), (64, 1, 1)) if i % 2 else Launch()
        r = analyze_function(module, fn, launch=launch)
        r.check([parse_expectation("TENSOR_CORE>=1"), parse_expectation("ld.shared.v4>=1"),
                 parse_expectation("fma.rn.f32==3")])
        out.append(r)
    return out


def _both(monkeypatch, reports, width):
    fast = render_text(reports, width=width)
    monkeypatch.setattr(plaintext, "FAST", False)
    slow = render_text(reports, width=width)
    monkeypatch.setattr(plaintext, "FAST", True)
    return fast, slow


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_plain_text_is_richs(monkeypatch, path):
    reports = _reports(path)
    if not reports:
        pytest.skip("no kernels")
    for width in (110, 64):
        fast, slow = _both(monkeypatch, reports, width)
        assert fast == slow


def test_the_fallbacks_are_richs(monkeypatch):
    """Markup, emoji codes, wide tables and wrapped titles go to rich itself."""
    c = plaintext.Console(width=40)
    t = plaintext.Table(title="a title longer than the table it names", title_justify="left")
    t.add_column("x")
    t.add_row("[bold]y[/bold]")
    c.print(t)
    c.print("a :smile: and [red]markup[/red] " * 3, markup=False)
    c.rule("x" * 60)
    monkeypatch.setattr(plaintext, "FAST", False)
    r = plaintext.Console(width=40)
    r.print(t)
    r.print("a :smile: and [red]markup[/red] " * 3, markup=False)
    r.rule("x" * 60)
    assert c.getvalue() == r.getvalue()


def test_line_breaks_are_richs_on_words_longer_than_the_line_and_blank_runs():
    """analyzer.plaintext._divide (the breaks of a line of one-cell characters) is rich's
    divide_line on generated lines: long words folded, runs of blanks, '≈', every width."""
    import random

    from rich._wrap import divide_line

    rnd = random.Random(15)
    alphabet = "ab≈,:-.%()_ " + " " * 4
    texts = ["", " ", "   leading", "trailing   ", "a" * 50, "x " * 30, "≈ 12,345 executed per thread (estimate)"]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(1, 120))) for _ in range(3000)]
    for text in texts:
        for width in (1, 2, 3, 7, 16, 40, 64, 110):
            assert plaintext._divide(text, width) == divide_line(text, width), (text, width)
