"""Every real PTX file parses; emit() output is accepted by ptxas and parses back to an equal IR.

Covers the shared corpus (nvcc 13 and Triton output), the project's own examples, and what nvcc 13
emits for every corpus ``.cu`` at sm_80 and sm_90, plain, with ``-lineinfo`` and with ``-G``.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import isa
from isa import ir
from tests.conftest import CORPUS, EXAMPLES, corpus_ptx_files

EXAMPLE_PTX = sorted((EXAMPLES / "ptx").glob("*.ptx"))
NVCC_VARIANTS = {"plain": [], "lineinfo": ["-lineinfo"], "G": ["-G"]}


def _ptxas(text: str, arch: str, workdir: Path, name: str) -> subprocess.CompletedProcess:
    path = workdir / name
    path.write_text(text)
    return subprocess.run(["ptxas", f"-arch={arch}", str(path), "-o", str(path.with_suffix(".cubin"))],
                          capture_output=True, text=True, timeout=300)


def _check_roundtrip(path: Path, workdir: Path, use_ptxas: bool) -> str | None:
    """None when ``path`` parses, re-parses equal, and (optionally) ptxas accepts the emitted text."""
    m = isa.load(path)
    emitted = m.emit()
    again = isa.loads(emitted, "emitted.ptx")
    if again.items != m.items or again.targets != m.targets or again.version != m.version:
        for a, b in zip(m.items, again.items):
            if a != b:
                return f"{path.name}: re-parsed IR differs at {getattr(a, 'name', a)!r}"
        return f"{path.name}: re-parsed IR differs"
    if use_ptxas:
        r = _ptxas(emitted, m.target, workdir, path.name)
        if r.returncode != 0:
            return f"{path.name}: ptxas rejected emitted text:\n{r.stderr[:2000]}"
    return None


def test_every_corpus_file_parses_into_kernels(corpus, manifest):
    files = corpus_ptx_files()
    assert len(files) == 44
    entries_by_file: dict[str, set[str]] = {}
    for e in manifest["entries"]:
        for target, rel in e["ptx"].items():
            entries_by_file.setdefault(Path(rel).name, set()).add(e["entry"])
    for path in files:
        m = isa.load(path)
        names = {k.name for k in m.kernels}
        assert entries_by_file[path.name] <= names, path.name
        assert m.version in ("9.0", "8.7")


def test_instruction_counts_match_the_manifest_statement_counts(corpus, manifest):
    for e in manifest["entries"]:
        for target, rel in e["ptx"].items():
            fn = isa.load(CORPUS / rel).function(e["entry"])
            assert len(fn.instructions) == e["static_counts"][target]["_statements"], (e["name"], target)


@pytest.mark.parametrize("path", corpus_ptx_files() + EXAMPLE_PTX, ids=lambda p: p.name)
def test_corpus_and_examples_roundtrip(path, tmp_path):
    if not path.exists():
        pytest.skip("../shared/corpus is not present")
    use_ptxas = shutil.which("ptxas") is not None
    assert _check_roundtrip(path, tmp_path, use_ptxas) is None


def test_emitted_text_is_accepted_by_ptxas_for_examples(tmp_path):
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas is not on PATH")
    assert EXAMPLE_PTX, "the project ships example PTX"
    for path in EXAMPLE_PTX:
        m = isa.load(path)
        r = _ptxas(m.emit(), m.target, tmp_path, path.name)
        assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def nvcc_outputs(corpus):
    """PTX that nvcc 13 emits for every corpus .cu: {sm_80, sm_90} x {plain, -lineinfo, -G}."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    workdir = Path(tempfile.mkdtemp(prefix="kernlens-nvcc-"))
    jobs = []
    for cu in sorted((corpus / "cuda").glob("*.cu")):
        for arch in ("sm_80", "sm_90"):
            for variant, flags in NVCC_VARIANTS.items():
                out = workdir / f"{cu.stem}.{arch}.{variant}.ptx"
                jobs.append((["nvcc", "-ptx", f"-arch={arch}", *flags, str(cu), "-o", str(out)], out))

    def compile_one(job):
        cmd, out = job
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        return out, r

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(compile_one, jobs))
    failed = [(out.name, r.stderr[:500]) for out, r in results if r.returncode != 0]
    assert not failed, failed
    yield [out for out, _ in results]
    shutil.rmtree(workdir, ignore_errors=True)


def test_nvcc_output_for_every_corpus_source_roundtrips(nvcc_outputs, tmp_path):
    assert len(nvcc_outputs) == 18 * 2 * 3
    use_ptxas = shutil.which("ptxas") is not None

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for p in pool.map(lambda p: _check_roundtrip(p, tmp_path, use_ptxas), nvcc_outputs) if p]
    assert problems == []


def test_debug_builds_keep_line_information(nvcc_outputs):
    g = next(p for p in nvcc_outputs if p.name == "sgemm_smem_tiled.sm_90.G.ptx")
    m = isa.load(g)
    assert "debug" in m.targets
    names = {s.name for s in m.sections}
    assert {".debug_info", ".debug_abbrev", ".debug_loc"} <= names
    fn = m.kernels[0]
    located = [i for i in fn.instructions if i.loc is not None]
    assert len(located) == len(fn.instructions)  # -G attaches a .loc to everything
    cu_files = [f for f in m.files.values() if f.name.endswith("sgemm_smem_tiled.cu")]
    assert cu_files and any(i.loc.file == cu_files[0].index for i in located)
    li = isa.load(next(p for p in nvcc_outputs if p.name == "sgemm_smem_tiled.sm_90.lineinfo.ptx"))
    assert [s.name for s in li.sections] == [".debug_str"] or all(s.name.startswith(".debug") for s in li.sections)
    assert any(i.loc is not None and i.loc.line > 0 for i in li.kernels[0].instructions)


def test_emit_is_a_fixed_point(corpus):
    path = corpus / "ptx" / "tt_matmul_fp16.sm_90.ptx"
    once = isa.load(path).emit()
    assert isa.loads(once).emit() == once


def test_ir_equality_ignores_spans():
    a = isa.loads(".version 9.0\n.target sm_90\n.address_size 64\n.entry k()\n{\nret;\n}\n", "a.ptx")
    b = isa.loads("\n\n.version 9.0\n.target sm_90\n.address_size 64\n\n.entry k() { ret; }\n", "b.ptx")
    assert a.items == b.items
    assert a.kernels[0].instructions[0].span != b.kernels[0].instructions[0].span
    assert isinstance(a.kernels[0].instructions[0], ir.Instruction)
