"""Device-function calls (``call`` with ``.param`` call sequences), ``brx.idx``, and ``nvcc -G`` builds.

The kernels are compiled here by nvcc (skipped without it): ``data/calls.cu`` with ``-O3`` and
with ``-G`` (debug builds call every helper, keep locals in ``.local`` depots addressed through
``%SP``/``%SPL`` and ``cvta.local``, and recurse for real), and three corpus sources with ``-G``
run at their manifest launch against ``reference.py``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import isa
import sim
from tests.conftest import CORPUS, corpus_or_skip, tool_or_skip

DATA = Path(__file__).parent / "data"
N = 100


def _nvcc_ptx(src: Path, out: Path, *flags: str) -> str:
    nvcc = tool_or_skip("nvcc")
    subprocess.run([nvcc, "-arch=sm_90", *flags, "-ptx", str(src), "-o", str(out)], check=True,
                   capture_output=True, timeout=120)
    text = out.read_text()
    # isa's parser does not take the '_' placeholders of a .callprototype yet: name them
    return text.replace("(.param .b32 _) _ (.param .b32 _, .param .b32 _)",
                        "(.param .b32 r) proto (.param .b32 a, .param .b32 b)")


@pytest.fixture(scope="module", params=["-O3", "-G"])
def calls_module(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("calls") / f"calls{request.param}.ptx"
    return request.param, isa.loads(_nvcc_ptx(DATA / "calls.cu", out, request.param), str(out))


def _inputs():
    rng = np.random.default_rng(7)
    return rng.standard_normal(N).astype(np.float32), rng.integers(-1000, 1000, N).astype(np.int32)


def _collatz(k: int) -> int:
    s = 0
    while k != 1:
        k = 3 * k + 1 if k & 1 else k // 2
        s += 1
    return s


def test_calls_with_scalar_and_struct_parameters_loops_and_divergent_returns(calls_module):
    flag, module = calls_module
    x, _ = _inputs()
    out = np.zeros(N, np.float32)
    steps = np.zeros(N, np.int32)
    res = sim.run_kernel(module, "calls", 2, 64, [x, out, steps, np.int32(N)])
    assert res.problems == []
    assert res.stats["opcode_threads"]["call.uni"] >= 6 * N           # 6 calls per live thread at least
    i = np.arange(N)
    f32 = np.float32
    v = x * (i & 7).astype(f32) + f32(0.5)                              # scale(x, k): x*k+0.5 (fma under -O3)
    if flag == "-O3":
        v = (x.astype(np.float64) * (i & 7) + 0.5).astype(f32)
    pair_a, pair_b, pair_c = v * f32(2), i * 3, v.astype(np.float64) / 3.0
    v = (pair_a + pair_b.astype(f32)) + pair_c.astype(f32)             # use_pair(make_pair(v, i))
    sums = []
    for k in (i & 7) + 1:                                               # arr_sum: a local array in the callee
        loc = [x[j % k] * f32(j) for j in range(8)]
        s = f32(0)
        for j in range(k):
            s = f32(s + loc[j])
        sums.append(s)
    expected = (v + np.array(sums, f32)).astype(f32)
    expected[i % 3 == 0] = 0                                            # write_out returns early for i % 3 == 0
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-6)
    assert np.array_equal(out == 0, i % 3 == 0)
    assert steps.tolist() == [_collatz(k + 1) for k in range(N)]       # a data-dependent loop per thread


def test_recursion_indirect_calls_and_switch(calls_module):
    flag, module = calls_module
    x, xi = _inputs()
    i = np.arange(N)
    out = np.zeros(N, np.int32)
    res = sim.run_kernel(module, "recurse", 2, 64, [out, np.int32(N)])
    assert res.problems == [] and out.tolist() == [math.factorial(k % 10) for k in range(N)]
    if flag == "-G":                                                    # -G keeps fact() recursive
        assert res.stats["opcode_threads"]["call.uni"] > 2 * N
    fo = np.zeros(N, np.float32)
    res = sim.run_kernel(module, "indirect", 2, 64, [x, fo, np.int32(N)])
    assert res.problems == [] and res.stats["opcodes"]["call"] == 4     # one indirect call per warp
    f32 = np.float32
    assert np.array_equal(fo, np.where(i & 1, x * i.astype(f32), x + i.astype(f32)).astype(f32))
    so = np.zeros(N, np.int32)
    res = sim.run_kernel(module, "sw", 2, 64, [xi, so, np.int32(N)])
    table = {0: lambda v: 11, 1: lambda v: 23, 2: lambda v: v * 5, 3: lambda v: 7 - v, 4: lambda v: 99,
             5: lambda v: v << 2, 6: lambda v: 1234, 7: lambda v: -5, 8: lambda v: v ^ 0x55, 9: lambda v: 42}
    assert res.problems == [] and so.tolist() == [table.get(int(v) & 15, lambda v: 0)(int(v)) for v in xi]


def test_brx_idx_jumps_by_index_and_reconverges():
    module = isa.load(DATA / "brx_idx.ptx")
    inp = np.arange(32, dtype=np.uint32) * 7 + 1                       # & 3 -> 1, 0, 3, 2, 1, ...
    out = np.zeros(32, np.uint32)
    res = sim.run_kernel(module, "k", 1, 32, [out, inp, np.int32(0)])
    assert res.problems == []
    idx = inp & 3
    expected = np.select([idx == 0, idx == 1, idx == 2, idx == 3],
                         [np.uint32(10), np.uint32(11), inp + np.uint32(1001), np.uint32(101)]).astype(np.uint32)
    expected[30:] = 100                                                 # guard false: no jump
    assert out.tolist() == expected.tolist()
    # all four targets and the fall-through ran once each as a group, and every lane stored once
    assert res.stats["opcodes"]["st.global.u32"] == 1


def test_brx_idx_past_the_table_is_reported(tmp_path):
    text = (DATA / "brx_idx.ptx").read_text().replace("and.b32 %r3, %r2, 3;", "and.b32 %r3, %r2, 7;")
    module = isa.loads(text, str(tmp_path / "brx7.ptx"))
    inp = np.arange(32, dtype=np.uint32)
    out = np.zeros(32, np.uint32)
    res = sim.run_kernel(module, "k", 1, 32, [out, inp, np.int32(0)])
    bad = [p for p in res.problems if p.kind == "bad_branch"]
    assert bad and all("past the 4 targets of ts" in p.message for p in bad)
    assert {p.thread[0] for p in bad} <= {k for k in range(30) if k & 7 >= 4}
    assert out[:4].tolist() == [10, 11, 1003, 101]                      # in-range lanes still ran their case


def test_call_to_a_function_without_a_body_says_so():
    text = """
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) ext_fn (.param .b32 ext_fn_param_0);
.visible .entry k(.param .u64 k_out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [k_out];
    mov.u32 %r1, %tid.x;
    {
    .param .b32 param0;
    st.param.b32 [param0+0], %r1;
    .param .b32 retval0;
    call.uni (retval0), ext_fn, (param0);
    ld.param.b32 %r2, [retval0+0];
    }
    st.global.u32 [%rd1], %r2;
    ret;
}
"""
    from isa.errors import SimulationError
    module = isa.loads(text, "ext.ptx")
    with pytest.raises(SimulationError, match="ext_fn.*external function without a body"):
        sim.run_kernel(module, "k", 1, 32, [np.zeros(1, np.uint32)])


# ------------------------------------------------------------------ corpus kernels built with -G
@lru_cache(maxsize=None)
def _reference():
    spec = importlib.util.spec_from_file_location("corpus_reference_for_calls", CORPUS / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("source,entries", [
    ("sgemm_smem_tiled", ["sgemm_smem_tiled32"]),
    ("bf16_smem_gemm", ["bf16_gemm_smem_tiled"]),          # bf16 conversions are calls under -G
    ("reduce_two_pass", ["reduce_sum_pass1", "reduce_sum_pass2"]),
])
def test_corpus_kernels_built_with_debug_info_match_the_reference(source, entries, tmp_path):
    corpus_or_skip()
    from sim import launch as L

    out = tmp_path / f"{source}.G.ptx"
    module = isa.loads(_nvcc_ptx(CORPUS / "cuda" / f"{source}.cu", out, "-G"), str(out))
    assert "debug" in module.targets
    manifest = {e["name"]: e for e in json.loads((CORPUS / "manifest.json").read_text())["entries"]}
    for name in entries:
        e = manifest[name]
        ex = L.execute(module, L.spec_from_entry(e), e["entry"])
        assert ex.problems == ()
        expected = getattr(_reference(), e["reference"])(
            {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in ex.inputs.items()})
        for o, ref in expected.items():
            ok, mabs, mrel, nbad = _reference().compare(ex.outputs[o], ref, e["tolerance"]["rtol"],
                                                         e["tolerance"]["atol"])
            assert ok, f"{name}.{o}: max abs {mabs}, max rel {mrel}, {nbad} outside"
        if source == "bf16_smem_gemm":
            assert ex.stats["opcodes"]["call.uni"] > 10_000
            assert ex.stats["load_bytes_by_space"]["local"] > 0      # %SP depots read back


def test_heat_of_a_callee_lands_on_the_callee_lines(calls_module):
    from sim.memory.heat import MemoryHeat
    _, module = calls_module
    x, _ = _inputs()
    heat = MemoryHeat()
    sim.run_kernel(module, "calls", 2, 64, [x, np.zeros(N, np.float32), np.zeros(N, np.int32), np.int32(N)],
                   listeners=[heat])
    fn = module.function("calls")
    body = range(fn.span.line, fn.instructions[-1].span.line + 1)
    store = [line for line, s in heat.by_line(fn).items() if s.global_store_sectors and line not in body]
    wo = module.function("_Z9write_outPfif")
    assert store and all(wo.span.line <= line <= wo.instructions[-1].span.line for line in store)


def test_cyclic_nodes_agree_with_networkx_on_random_graphs():
    """The call graph's recursive functions (an iterative Tarjan, so that a launch need not import
    networkx) are the nodes networkx finds on a cycle, on 300 seeded random graphs."""
    import random

    import networkx as nx

    from sim.ptx.calls import cyclic_nodes

    rng = random.Random(15)
    for _ in range(300):
        n = rng.randint(1, 12)
        succ = {f"f{i}": [f"f{rng.randrange(n)}" for _ in range(rng.randint(0, 3))] for i in range(n)}
        g = nx.DiGraph()
        g.add_nodes_from(succ)
        g.add_edges_from((a, b) for a, bs in succ.items() for b in bs)
        want = {v for c in nx.strongly_connected_components(g) if len(c) > 1 or any(g.has_edge(v, v) for v in c)
                for v in c}
        assert cyclic_nodes(succ) == want, succ
    assert cyclic_nodes({"a": ["b"], "b": ["c"], "c": []}) == set()
    assert cyclic_nodes({"a": ["a"], "b": ["a"]}) == {"a"}
    assert cyclic_nodes({"a": ["b"], "b": ["a"], "c": ["a"]}) == {"a", "b"}
