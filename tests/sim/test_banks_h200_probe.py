"""The bank model against an H200 probe of predicated-off lanes (16 cases, one LDS per warp each).

Data: ``tests/sim/data/bank_probe_h200.json``, measured with ``bench/device/bank_probe.cu`` under
Nsight Compute. These are the corners ``../shared/facts`` left unmeasured.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sim.memory.banks import shared_access, shared_wavefronts

DATA = json.loads((Path(__file__).parent / "data" / "bank_probe_h200.json").read_text())["cases"]


@pytest.mark.parametrize("case", DATA, ids=[c["case"].split()[0] for c in DATA])
def test_wavefronts_and_conflicts_match_the_h200(case):
    active = ((case["active_mask"] >> np.arange(32)) & 1).astype(bool)
    r = shared_access(case["offsets"], case["width_bytes"], True, active)
    assert (r.wavefronts, r.conflicts) == (case["wavefronts"], case["bank_conflicts"]), case["case"]


def test_probe_covers_every_width_and_partial_masks():
    assert {c["width_bytes"] for c in DATA} == {4, 8, 16}
    assert sum(c["active_mask"] != 0xFFFFFFFF for c in DATA) >= 12


def test_pair_rule_merges_groups_rather_than_halving():
    # lanes 0, 8, 16, 24 reading 16*l: a vacuous pair rule merges quarters into half-warps whose
    # two lanes both use banks 0-3: 2 + 2 wavefronts (halving the 4 quarters would say 2)
    active = np.zeros(32, dtype=bool)
    active[[0, 8, 16, 24]] = True
    assert shared_wavefronts([16 * l for l in range(32)], 16, True, active) == 4
    # (model consequence, not in the probe) the same lanes reading one address: one wavefront per
    # merged half that has an active lane
    assert shared_wavefronts([0] * 32, 16, True, active) == 2
