"""The timing model's speed work must not move a predicted figure.

Sampled CTAs run together in one functional batch (any list of CTA ids, ``LaunchState.cta_ids``)
instead of one batch per CTA; per-warp streams are keyed by launch warp id, so the replay sees the
same streams and every modelled figure must be equal. Each case runs the launch twice: with the
default batching and with ``batch_threads`` = one CTA (the old one-CTA-per-batch path), and
compares cycles, stalls, pipes, memory and occupancy exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

import isa
import sim
from sim import launch as L
from tests.conftest import CORPUS, EXAMPLES, corpus_or_skip

SKIP = {"model_seconds", "predict_seconds", "_slices"}


def _timed(module, entry, spec, batch_threads=16384, sample="auto"):
    decoded = L.build_inputs(spec, spec.seed_for(entry))
    device = L.device_buffers(spec, decoded)
    r = sim.run_kernel(module, entry, spec.grid, spec.block, L.kernel_args(spec, device, decoded),
                       spec.shared_bytes(module.target), timing="h200", sample=sample, batch_threads=batch_threads)
    return r, device


def _same(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for k in a:
        if k not in SKIP:
            assert a[k] == b[k], k


def _spec(obj):
    return L.parse_launch(obj)


def _gemm(M, N, K, grid, block, dt="f32", out="f32", names=("A", "B", "C")):
    return {"grid": grid, "block": block, "dynamic_shared_bytes": 0,
            "args": [{"buffer": names[0], "dtype": dt, "shape": [M, K], "init": "randn", "role": "in"},
                     {"buffer": names[1], "dtype": dt, "shape": [K, N], "init": "randn", "role": "in"},
                     {"buffer": names[2], "dtype": out, "shape": [M, N], "init": "zeros", "role": "out"},
                     {"scalar": "M", "dtype": "s32", "value": M}, {"scalar": "N", "dtype": "s32", "value": N},
                     {"scalar": "K", "dtype": "s32", "value": K}]}


def test_sampled_ctas_in_one_batch_predict_what_one_cta_per_batch_does():
    """sgemm_tiled (examples) on 24 x 24 CTAs of 16 x 16: SM 0's CTAs 0, 132, 264, 396, 528 are sampled."""
    module = isa.load(str(EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"))
    spec = _spec(_gemm(384, 384, 32, [24, 24, 1], [16, 16, 1]))
    fast, dev = _timed(module, "sgemm_tiled", spec)
    slow, _ = _timed(module, "sgemm_tiled", spec, batch_threads=256)
    assert fast.sampled and fast.timing["sampled"] and not fast.complete
    assert fast.timing["simulated_ctas"] == slow.timing["simulated_ctas"] >= 2
    assert fast.stats["ctas_per_batch"] > 1 and slow.stats["ctas_per_batch"] == 1
    _same(fast.timing, slow.timing)
    # the sampled CTAs computed their tiles: CTA 132 is (x=12, y=5) -> C rows 80..95, cols 192..207
    A = L.build_inputs(spec, spec.seed_for("sgemm_tiled"))
    C = dev["C"].reshape(384, 384)
    ref = (A["A"].astype(np.float64) @ A["B"].astype(np.float64))[80:96, 192:208]
    assert np.allclose(C[80:96, 192:208], ref, atol=1e-3)
    assert not C[0:16, 16:32].any()            # CTA 1 was not sampled


def test_sampled_launch_runs_a_batch_of_exactly_its_sampled_ctas():
    """The batch holds the 5 sampled CTAs, not batch_threads // 256 = 64 slots of which 59 start exited
    (every instruction's registers and events would span them), and predicts what a batch of one CTA does."""
    module = isa.load(str(EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"))
    spec = _spec(_gemm(384, 384, 32, [24, 24, 1], [16, 16, 1]))
    fast, _ = _timed(module, "sgemm_tiled", spec)
    slow, _ = _timed(module, "sgemm_tiled", spec, batch_threads=256)
    assert fast.timing["sampled"] and fast.timing["simulated_ctas"] == 5
    assert fast.stats["ctas_per_batch"] == 5
    _same(fast.timing, slow.timing)


CASES = [
    # (corpus entry, spec override): cp.async groups, wgmma groups, mma.sync, atomics, a row reduction
    ("hgemm_cp_async_double_buffer", _gemm(2048, 2048, 64, [64, 64, 1], [128, 1, 1], "f16", "f16")),
    ("wgmma_f16_m64n64k16_gemm", _gemm(2048, 2048, 64, [32, 32, 1], [128, 1, 1], "f16", "f32", ("A", "W", "C"))),
    ("mma_bf16_m16n8k16_gemm", None),
    ("reduce_sum_atomic", None),
    ("softmax_rows_block", None),
]


@pytest.mark.parametrize("name,override", CASES, ids=[c[0] for c in CASES])
def test_corpus_sampled_launch_figures_unchanged_by_batching(name, override):
    import json

    corpus_or_skip()
    man = json.loads((CORPUS / "manifest.json").read_text())
    e = next(x for x in man["entries"] if x["name"] == name)
    if override is not None:
        spec = _spec(override)
    else:
        ent = dict(e, launch=e["perf_launch"])
        spec = L.spec_from_entry(ent, source=str(CORPUS / "manifest.json"), base=CORPUS)
    module = isa.load(str(CORPUS / (e["ptx"].get("sm_90") or next(iter(e["ptx"].values())))))
    tpc = -(-spec.block[0] * spec.block[1] * spec.block[2] // 32) * 32
    fast, _ = _timed(module, e["entry"], spec)
    slow, _ = _timed(module, e["entry"], spec, batch_threads=tpc)
    assert fast.timing["sampled"] and fast.stats["ctas_per_batch"] > 1
    assert fast.timing["cycles"] > 0
    _same(fast.timing, slow.timing)
    assert fast.stats["warp_instructions"] == slow.stats["warp_instructions"]
