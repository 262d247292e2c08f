"""Source names of kernel parameters from CUDA signatures: one scan of each source finds every
kernel's signature (:func:`analyzer.params._signatures`), the same one a search for that kernel's
name finds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyzer import params

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "examples" / "cuda").rglob("*.cu")) + sorted((ROOT.parent / "shared" / "corpus" / "cuda").glob("*.cu"))

TRICKY = """
__global__ void __launch_bounds__(256) tiled(const float* A, float* B, int n) {}
__global__ __launch_bounds__(128, 2) void bounded(int *out, int k = 4) {}
__global__ __cluster_dims__(2, 1, 1) void clustered(float *x) {}
__global__ void tiled_v2 (int a, int b) {}
__global__ void tiled(double* again) {}
__global__ void__bad(int x) {}
__global____global__ void twice(int y) {}
__global__ void $dollar(int z) {}
"""


def _by_search(name: str, text: str) -> str | None:
    m = re.search(params._SIG.format(name=re.escape(name)), text)
    return m.group(1) if m else None


@pytest.mark.parametrize("text", [TRICKY] + [p.read_text(errors="replace") for p in SOURCES],
                         ids=["tricky"] + [p.name for p in SOURCES])
def test_one_scan_finds_what_a_search_for_each_name_finds(text):
    found = params._signatures(text)
    names = set(re.findall(r"[\w$]+", text))
    assert len(found) >= (1 if text is not TRICKY else 6)
    for name in names - {"__launch_bounds__"}:      # source_names searches for that one
        assert found.get(name) == _by_search(name, text), name
    assert params._signatures(text) is found        # scanned once


def test_tricky_signatures():
    found = params._signatures(TRICKY)
    assert found["tiled"] == "const float* A, float* B, int n"      # the first of two
    assert found["bounded"] == "int *out, int k = 4"
    assert found["clustered"] == "float *x"
    assert found["tiled_v2"] == "int a, int b"
    assert found["twice"] == "int y"
    assert found["$dollar"] == "int z"
    assert "__bad" not in found and "void__bad" not in found


def test_source_names_of_a_kernel_in_a_cu_beside_the_ptx(tmp_path):
    import isa

    (tmp_path / "k.cu").write_text("__global__ void k(float *out, int n) {}\n")
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.0\n.target sm_90\n.address_size 64\n"
                   ".visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)\n{\n ret;\n}\n")
    m = isa.load(ptx)
    assert params.source_names(m, m.kernels[0]) == ["out", "n"]


def test_a_kernel_named_like_the_attribute_is_searched_for(tmp_path):
    import isa

    (tmp_path / "k.cu").write_text("__global__ void __launch_bounds__(256) k(float *out) {}\n")
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.0\n.target sm_90\n.address_size 64\n"
                   ".visible .entry __launch_bounds__(.param .u64 p)\n{\n ret;\n}\n")
    m = isa.load(ptx)
    assert params.source_names(m, m.kernels[0]) == [None]      # '256' names no parameter


_TWO_KERNELS = (".version 8.0\n.target sm_90\n.address_size 64\n"
                ".visible .entry a(.param .u64 a_param_0)\n{\n ret;\n}\n"
                ".visible .entry b(.param .u64 b_param_0)\n{\n ret;\n}\n")


def test_the_triton_json_beside_the_ptx_is_read_once_per_file(tmp_path, monkeypatch):
    """A report written with ``-o k.json`` beside ``k.ptx`` (tens of MB for a big file) was parsed
    again for every kernel of the next run on ``k.ptx``: 27 s of CPU on a 5 MB slice."""
    import builtins
    import json

    import isa

    (tmp_path / "k.json").write_text(json.dumps({"arg_names": ["x_ptr"], "pad": "y" * 1000}))
    ptx = tmp_path / "k.ptx"
    ptx.write_text(_TWO_KERNELS)
    m = isa.load(ptx)
    opened, real = [], builtins.open
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: (opened.append(str(f)), real(f, *a, **k))[1])
    assert [params.source_names(m, k) for k in m.kernels] == [["x_ptr"], ["x_ptr"]]
    assert opened.count(str(tmp_path / "k.json")) <= 1


def test_a_json_beside_the_ptx_that_is_not_an_object_names_nothing(tmp_path):
    import isa

    (tmp_path / "k.json").write_text("[1, 2, 3]")
    ptx = tmp_path / "k.ptx"
    ptx.write_text(_TWO_KERNELS)
    m = isa.load(ptx)
    assert params.source_names(m, m.kernels[1]) == [None]
