"""kernlens.paths gives what pathlib gives for the path operations of a command's start-up."""

from __future__ import annotations

import itertools
from pathlib import Path

from kernlens import paths

PIECES = ["", ".", "..", "/", "//", "///", "a", "a.b", ".bashrc", "a.", "x.tar.gz", "dir.d", "..x", "...", "a..b",
          " ", "é.ptx"]


def _cases():
    out = set()
    for n in range(1, 4):
        for combo in itertools.product(PIECES, repeat=n):
            out.add("/".join(combo))
            out.add("".join(combo))
    return sorted(out)


def test_each_function_is_pathlib_s():
    cases = _cases()
    assert len(cases) > 5000
    for c in cases:
        p = Path(c)
        assert (paths.text(c), paths.parent(c), paths.suffix(c), paths.stem(c), paths.joined(c, "reference.py"),
                paths.name(c)) == (str(p), str(p.parent), p.suffix, p.stem, str(p / "reference.py"), p.name), c
        if p.name:
            assert paths.with_suffix(c, ".json") == str(p.with_suffix(".json")), c
            assert paths.with_name(c, "k.cu") == str(p.with_name("k.cu")), c
    assert paths.text(Path("a//b/")) == "a/b" and paths.suffix(Path("k.PTX")) == ".PTX"
    for a in ("", "x", "/x", "//x"):
        for b in ("/abs/n.toml", "//two", "rel/./n.toml"):
            assert paths.joined(a, b) == str(Path(a) / b), (a, b)


def test_exists_and_is_file_are_pathlib_s(tmp_path):
    (tmp_path / "f.txt").write_text("x")
    (tmp_path / "d").mkdir()
    for p in ("f.txt", "d", "missing", "f.txt/below", "d/", "f.txt/", ""):
        q = tmp_path / p if p else tmp_path
        for given in (str(q), q, str(q) + "/"):
            assert (paths.exists(given), paths.is_file(given)) == (Path(given).exists(), Path(given).is_file()), given
