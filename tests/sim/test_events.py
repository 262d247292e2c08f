"""One event per executed warp-instruction, numbered in each warp's stream."""

import json
from pathlib import Path

import numpy as np

import isa
from sim import launch as L

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(name, listeners):
    entry = next(e for e in json.loads((EXAMPLES / "manifest.json").read_text())["entries"] if e["name"] == name)
    spec = L.spec_from_entry(entry, source=str(EXAMPLES / "manifest.json"), base=EXAMPLES)
    module = isa.load(str(EXAMPLES / entry["ptx"]["sm_90"]))
    return L.execute(module, spec, entry["entry"], listeners=listeners)


def test_sgemm_tiled_one_event_per_warp_instruction():
    seen = []
    ex = _run("sgemm_tiled", [seen.append])
    n = sum(len(e.warps) for e in seen)
    assert ex.stats["warp_instructions"] == 24447
    assert n == 24447                      # before: 34,764 (memory instructions emitted twice)
    # every warp's stream is numbered 0, 1, 2, ... in the order its events arrive
    streams = {}
    for e in seen:
        for c, w, s in zip(e.ctas.tolist(), e.warps.tolist(), e.seq.tolist()):
            streams.setdefault((c, w), []).append(s)
    assert all(s == list(range(len(s))) for s in streams.values())
    assert len(streams) == 9 * 8
    # memory instructions carry their accesses; shared loads have addresses per lane
    lds = [e for e in seen if e.opcode.startswith("ld.shared")]
    assert lds and all(e.kind == "load" and e.space == "shared" and e.accesses for e in lds)
    assert all(e.addresses.shape == (len(e.warps), 32) for e in lds)


def test_memory_only_listeners_still_get_accesses():
    from sim.memory.heat import MemoryHeat

    heat = MemoryHeat()
    seen = []
    ex = _run("sgemm_tiled", [heat, seen.append])
    ex2 = _run("sgemm_tiled", [])
    assert ex.stats["shared_load_wavefronts"] == ex2.stats["shared_load_wavefronts"] > 0
    assert ex.stats["global_sectors"] == ex2.stats["global_sectors"] > 0


def test_wmma_event_merges_accesses():
    seen = []
    ex = _run("hgemm_wmma", [seen.append])
    assert sum(len(e.warps) for e in seen) == ex.stats["warp_instructions"]
    loads = [e for e in seen if e.opcode.startswith("wmma.load")]
    assert loads and all(len(e.accesses) >= 1 and e.active.shape == (len(e.warps), 32) for e in loads)
    assert all(np.all(e.seq >= 0) for e in seen)
