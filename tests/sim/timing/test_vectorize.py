"""ptxas's merging of adjacent scalar shared loads into LDS.64/LDS.128 (sim.timing.vectorize)."""

from types import SimpleNamespace

import numpy as np
import pytest

import isa
import sim
from sim.timing.vectorize import merged_loads

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
    .reg .f32 %f<40>; .reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .pred %p<4>;
    .shared .align 16 .b8 sbuf[16384];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    mov.u32 %r5, sbuf;
    mul.lo.s32 %r6, %r1, STRIDE;
    add.s32 %r6, %r6, %r5;
    add.s32 %r7, %r5, 8192;
    st.shared.f32 [%r6], %f1;
    bar.sync 0;
"""
TAIL = """    add.f32 %f1, %f2, %f3;
    add.f32 %f1, %f1, %f4;
    add.f32 %f1, %f1, %f5;
    st.global.f32 [%rd4], %f1;
    ret;
}
"""


def _src(body: str, stride: int = 128) -> str:
    return HEAD.replace("STRIDE", str(stride)) + body + TAIL


COLUMN = """    ld.shared.f32 %f2, [%r6];
    ld.shared.f32 %f10, [%r7];
    ld.shared.f32 %f3, [%r6+4];
    ld.shared.f32 %f11, [%r7+128];
    ld.shared.f32 %f4, [%r6+8];
    ld.shared.f32 %f5, [%r6+12];
"""


def _groups(src: str):
    fn = isa.loads(src).functions[0]
    m = merged_loads(SimpleNamespace(funcs=[SimpleNamespace(fn=fn, base=0)]))
    pcs = {i for i, ins in enumerate(fn.instructions) if ins.opcode == "ld" and "shared" in ins.modifiers}
    return m, pcs, fn


def test_four_adjacent_words_from_one_base_become_one_128_bit_load():
    m, pcs, fn = _groups(_src(COLUMN))
    merged = sorted(m)
    assert len(merged) == 4                                   # the four [%r6+0..12] loads
    assert {m[p].width for p in merged} == {16}
    lead = min(merged)
    assert all(m[p].leader == lead for p in merged)
    # the [%r7] / [%r7+128] loads are not adjacent: they stay scalar
    assert len(pcs - set(merged)) == 2


def test_a_write_to_the_base_or_a_barrier_ends_the_group():
    body = COLUMN.replace("    ld.shared.f32 %f4, [%r6+8];\n",
                          "    add.s32 %r6, %r6, 0;\n    ld.shared.f32 %f4, [%r6+8];\n")
    m, _, _ = _groups(_src(body))
    assert {x.width for x in m.values()} == {8}               # [%r6], [%r6+4] pair; 8 and 12 pair
    assert len(m) == 4 and len({x.leader for x in m.values()}) == 2
    body = COLUMN.replace("    ld.shared.f32 %f4, [%r6+8];\n", "    bar.sync 0;\n    ld.shared.f32 %f4, [%r6+8];\n")
    m, _, _ = _groups(_src(body))
    assert len(m) == 4 and {x.width for x in m.values()} == {8}
    # offsets 4, 8, 12 only: 4 is not 8-byte aligned, so only the (8, 12) pair merges
    body = "    ld.shared.f32 %f2, [%r6+4];\n    ld.shared.f32 %f3, [%r6+8];\n    ld.shared.f32 %f4, [%r6+12];\n" \
           "    mov.f32 %f5, 0f00000000;\n"
    m, _, _ = _groups(_src(body))
    assert len(m) == 2 and {x.width for x in m.values()} == {8}


def _wavefronts(stride: int) -> float:
    out = np.zeros(32, np.float32)
    r = sim.run_kernel(isa.loads(_src(COLUMN, stride)), "k", 1, 32, [out, np.uint32(0)], timing="h200")
    return r.timing["memory"]["shared_wavefronts"]


def test_column_read_costs_the_vector_load_wavefronts_when_aligned():
    # lane l reads row l of a 32-word-wide tile: 4 scalar LDS.32 = 4 x 32 wavefronts (32-way
    # conflicts); one LDS.128 = 4 quarter-warps x 8 rows in the same banks = 32 wavefronts.
    # Plus 1 for the st.shared (32-way too: 32) and 2 for the [%r7] broadcasts.
    assert _wavefronts(128) == pytest.approx(32 + 32 + 2)
    # rows of 33 words (padded): not 16-byte aligned for odd lanes, ptxas keeps LDS.32:
    # conflict-free, 1 wavefront each (4) + store 1 + broadcasts 2
    assert _wavefronts(132) == pytest.approx(4 + 1 + 2)


def _state(src: str):
    fn = isa.loads(src).functions[0]
    return isa.loads(src), SimpleNamespace(funcs=[SimpleNamespace(fn=fn, base=0)])


def test_one_interface_takes_ptxas_merges_where_sass_is_at_hand_and_the_model_elsewhere(monkeypatch):
    import isa.sass
    from sim.timing.vectorize import shared_merges

    module, state = _state(_src(COLUMN))
    modelled = shared_merges(module, state, use_sass=False)
    assert modelled.source == "modelled" and len(modelled.by_pc) == 4
    if isa.sass.available():
        got = shared_merges(module, state)
        # ptxas merges the four [%r6+0..12] loads into one LDS.128, as the model says
        assert got.source == "sass" and got.by_pc == modelled.by_pc
        assert got.summary() == {"source": "sass", "basis": got.summary()["basis"], "vector_loads": 1,
                                 "merged_loads": 4}
        assert got.summary()["basis"].startswith("measured from the compiler")
        # rows of 33 words: ptxas cannot prove 16-byte alignment and emits LDS.32
        m132, s132 = _state(_src(COLUMN, 132))
        assert shared_merges(m132, s132).by_pc == {} and len(merged_loads(s132)) == 4
    monkeypatch.setattr(isa.sass, "note", lambda: "ptxas is not installed")
    none = shared_merges(module, state)
    assert none.source == "modelled" and none.by_pc == modelled.by_pc
    assert none.summary()["why_not_sass"] == "ptxas is not installed"


def test_timing_says_which_merges_it_used(monkeypatch):
    import isa.sass

    out = np.zeros(32, np.float32)
    r = sim.run_kernel(isa.loads(_src(COLUMN)), "k", 1, 32, [out, np.uint32(0)], timing="h200")
    assert r.timing["shared_merges"]["source"] == ("sass" if isa.sass.available() else "modelled")
    assert r.timing["shared_merges"]["vector_loads"] == 1
    monkeypatch.setattr(isa.sass, "note", lambda: "ptxas is not installed")
    r = sim.run_kernel(isa.loads(_src(COLUMN)), "k", 1, 32, [out, np.uint32(0)], timing="h200")
    assert r.timing["shared_merges"]["source"] == "modelled"
    assert r.timing["memory"]["shared_wavefronts"] == pytest.approx(32 + 32 + 2)


def test_the_text_report_says_where_the_merges_come_from():
    import isa.sass
    from sim.timing.report import render

    out = np.zeros(32, np.float32)
    r = sim.run_kernel(isa.loads(_src(COLUMN)), "k", 1, 32, [out, np.uint32(0)], timing="h200")
    text = render(r.timing)
    where = "exact: from the SASS ptxas emitted" if isa.sass.available() else "modelled: no SASS here"
    assert f"merged shared loads     4 PTX loads in 1 vector loads ({where})" in text
