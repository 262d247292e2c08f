"""Issue 13's checks on the whole corpus: skip without ptxas + nvdisasm/cuobjdump or ../shared.

* ``registers_allocated`` equals Nsight Compute's ``launch__registers_per_thread`` for every
  corpus kernel (sm_90 / sm_90a files, the ones ncu profiled on the H200);
* the SASS has TENSOR_CORE instructions exactly where the PTX has tensor instructions, on every
  target.
"""

from __future__ import annotations

import json
from functools import lru_cache

from tests.conftest import CORPUS, corpus_ptx_files


@lru_cache(maxsize=None)
def _listings():
    import isa
    import isa.sass

    mods = [isa.load(p) for p in corpus_ptx_files()]
    return list(zip(mods, isa.sass.listings(mods)))


def _ncu_registers() -> dict[str, int]:
    data = json.loads((CORPUS / "h200" / "ncu_metrics.json").read_text())
    out: dict[str, set] = {}
    for launch in data["launches"]:
        out.setdefault(launch["entry"], set()).add(launch["metrics"]["launch__registers_per_thread"])
    assert all(len(v) == 1 for v in out.values())
    return {k: v.pop() for k, v in out.items()}


def test_registers_allocated_equal_nsight_compute_for_every_corpus_kernel(corpus, sass_tools):
    ncu = _ncu_registers()
    seen = {}
    for m, lst in _listings():
        if not m.target.startswith("sm_90"):
            continue
        for name, k in lst.kernels.items():
            seen[name] = (k.resources.registers, k.resources.registers_allocated, ncu.get(name))
    assert set(seen) == set(ncu) and len(seen) == 30
    wrong = {n: v for n, v in seen.items() if v[1] != v[2]}
    assert not wrong, wrong
    assert any(v[0] < v[1] for v in seen.values())      # the 16-register floor is exercised


def test_tensor_core_instructions_exactly_where_the_ptx_has_them(corpus, sass_tools):
    from isa.ptx.semantics import describe

    checked = 0
    for m, lst in _listings():
        for name, k in lst.kernels.items():
            ptx = sum("TENSOR_CORE" in describe(i).classes for i in m.function(name).instructions)
            sass = k.classes.get("TENSOR_CORE", 0)
            assert (ptx > 0) == (sass > 0), (m.path, name, ptx, sass)
            checked += 1
    assert checked >= 55


def test_every_corpus_opcode_is_in_the_tables(corpus, sass_tools):
    unknown = {(m.path.rsplit("/", 1)[-1], i.full_opcode) for m, lst in _listings() for k in lst.kernels.values()
               for i, info in zip(k.instructions, k.infos) if not info.known}
    assert not unknown


def test_occupancy_register_limit_from_ptxas_equals_nsight_compute(corpus, sass_tools):
    """sim.timing.occupancy.kernel_occupancy reads registers_allocated from the SASS compile: the
    register limit of every profiled launch (59) is ncu's launch__occupancy_limit_registers."""
    import isa
    from sim.timing.occupancy import kernel_occupancy

    manifest = {e["entry"]: e for e in json.loads((CORPUS / "manifest.json").read_text())["entries"]}
    deep = json.loads((CORPUS / "h200" / "ncu_deep.json").read_text())["launches"]
    mods = {}
    wrong = []
    for launch in deep:
        path = CORPUS / manifest[launch["entry"]]["ptx"]["sm_90"]
        m = mods.setdefault(path, isa.load(path))
        met = launch["metrics"]
        threads = launch["block"][0] * launch["block"][1] * launch["block"][2]
        occ = kernel_occupancy(m, launch["entry"], threads, met["launch__shared_mem_per_block_dynamic"])
        if occ.limits["registers"] != met["launch__occupancy_limit_registers"]:
            wrong.append((launch["entry"], launch["which"], occ.limits["registers"],
                          met["launch__occupancy_limit_registers"]))
    assert len(deep) == 59 and not wrong, wrong
