"""Rough edges of the front ends' command lines (issue #15): located errors for empty inputs."""

from __future__ import annotations

import pytest

from kernlens.cli import main


@pytest.mark.parametrize("name", ["empty.asm", "empty.ptx"])
@pytest.mark.parametrize("command", [["fmt"], ["analyze"]])
def test_empty_file_is_a_located_error(tmp_path, capsys, name, command):
    path = tmp_path / name
    path.write_text("\n  \n")
    rc = main(command + [str(path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith(f"{path}:1:1: error: empty file"), err


def test_validate_kernel_no_kernels_names_the_file(tmp_path, capsys):
    from analyzer.cli import main as validate

    path = tmp_path / "nok.asm"
    path.write_text("// only a header\n.arch davinci\n")
    assert validate([str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"{path}: error: no kernels in")


def test_pyproject_license_is_an_spdx_string():
    """A TOML-table ``project.license`` makes setuptools >= 77 print a deprecation banner on every
    build (six times in ``make demo``); an SPDX string needs setuptools >= 77 to build."""
    import tomllib
    from pathlib import Path

    doc = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert doc["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in doc["build-system"]["requires"]


@pytest.mark.parametrize("dtype,most", [("f32", 2040), ("f16", 4080)])
def test_generate_reduce_says_the_largest_row_it_supports(capsys, dtype, most):
    assert main(["generate", "reduce", "--rows", "4", "--cols", str(most * 2), "--dtype", dtype]) == 2
    err = capsys.readouterr().err
    assert f"--cols {most} or fewer for {dtype}" in err and "internal error" not in err
    assert main(["generate", "reduce", "--rows", "4", "--cols", str(most), "--dtype", dtype]) == 0
    assert ".kernel" in capsys.readouterr().out


def test_validate_kernel_does_not_import_the_simulator():
    """Start-up (issue #15): a one-file validate-kernel reads sim.machines, never sim.ptx (the
    simulator: ~0.1 s of imports)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = ("import sys, analyzer.cli as c; rc = c.main([sys.argv[1], '-o', '/dev/null']); "
            "print(sorted(m for m in sys.modules if m.startswith('sim.ptx')))")
    out = subprocess.run([sys.executable, "-c", code, str(root / "examples" / "ptx" / "hgemm_wmma.sm_90.ptx")],
                         capture_output=True, text=True, cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_ptx_parser_tables_are_cached_on_disk_and_give_the_same_parse(tmp_path, monkeypatch):
    """Start-up (issue #15): the LALR tables are built once and loaded after (~0.1 s -> ~0.01 s),
    from the user cache or, where that is empty, from the copy the first build left beside the
    grammar; a damaged copy is rebuilt, and with the cache off nothing is read or written."""
    from pathlib import Path

    import lark.parsers.lalr_analysis as lalr

    import isa
    import isa.ptx.parser as parser

    src = (Path(__file__).resolve().parents[2] / "examples" / "ptx" / "hgemm_wmma.sm_90.ptx").read_text()
    want = isa.loads(src, "k.ptx", cache=False).emit()
    builds = []
    build = lalr.LALR_Analyzer.compute_lalr
    monkeypatch.setattr(lalr.LALR_Analyzer, "compute_lalr", lambda self: (builds.append(1), build(self))[1])
    monkeypatch.delenv("KERNLENS_NO_CACHE", raising=False)
    installed = tmp_path / "beside-the-grammar"
    monkeypatch.setattr(parser, "INSTALLED_TABLES", installed)
    installed.mkdir()
    (installed / "another-grammar.pickle").write_bytes(b"old")

    def new_process(user_cache: str):
        monkeypatch.setenv("KERNLENS_CACHE", str(tmp_path / user_cache))
        monkeypatch.setattr(parser, "_LARKS", {})
        builds.clear()
        return isa.loads(src, "k.ptx", cache=False).emit()

    assert new_process("user1") == want and builds                         # built, then stored twice:
    (entry,) = (tmp_path / "user1" / "lark").iterdir()
    assert entry.stat().st_size > 1000
    assert sorted(p.name for p in installed.iterdir()) == [entry.name]      # (the other grammar's gone)
    assert new_process("user1") == want and not builds                     # from the user cache
    assert new_process("user2") == want and not builds                     # an empty one: from the copy
    assert (tmp_path / "user2" / "lark" / entry.name).read_bytes() == entry.read_bytes()
    (installed / entry.name).write_bytes(entry.read_bytes()[:-10])          # a damaged copy: built again
    assert new_process("user3") == want and builds
    assert (installed / entry.name).read_bytes() == (tmp_path / "user3" / "lark" / entry.name).read_bytes()
    monkeypatch.setenv("KERNLENS_NO_CACHE", "1")
    monkeypatch.setattr(parser, "_LARKS", {})
    (installed / entry.name).unlink()
    builds.clear()
    assert isa.loads(src, "k.ptx", cache=False).emit() == want and builds   # off: built, nothing written
    assert not installed.joinpath(entry.name).exists()
