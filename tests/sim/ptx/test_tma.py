"""TMA: ``cp.async.bulk.tensor`` with CUtensorMap kernel parameters described in the launch spec
(:mod:`sim.ptx.tensormap`, ``sim.launch.TensorMapArg``).

* Triton 3.6.0's sm_90a TMA-descriptor GEMM (``[%rd11, {%r72, %r37}]`` operands, 64B and 128B
  swizzle, out-of-bound zero fill in K and in the M/N residues, wgmma reading the swizzled boxes,
  a clipped TMA store) against the H200's output bit for bit (examples/h200/tma_gemm.npz, measured by
  bench/device/tma_gemm_truth.py).
* examples/cuda/tma/tma_box.cu (nvcc's and libcu++'s forms) against the box rules written out here
  independently of the simulator: coordinates + box index x element stride, out-of-bound fill, dense
  box with address bits 4.. XOR bits 7.., store of the in-bound elements only. On the H200 these
  kernels' TMA loads completed but their TMA store trapped (examples/h200/tma_box_log.txt,
  cause not found), so this part is checked against the rules, not against the device.
* A TMA destination read before the mbarrier wait is an ``async_race``; with the wait it is clean.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import isa
import sim
from isa.errors import InputError
from sim import launch as L
from sim.ptx.tensormap import NAN_BITS, TensorMap, TensorMapArg

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def _tma_gemm_execution():
    spec = L.load_launch(f"{EXAMPLES / 'manifest.json'}#tma_gemm")
    z = np.load(EXAMPLES / "h200" / "tma_gemm.npz")
    mod = isa.load(EXAMPLES / "ptx" / "tma" / "tma_gemm.sm_90a.ptx")
    inputs = L.build_inputs(spec)
    inputs.update(A=z["A"], B=z["B"], C=np.zeros_like(z["C"]))
    return L.execute(mod, spec, inputs=inputs), z


def test_triton_tma_gemm_matches_the_h200_bit_for_bit():
    ex, z = _tma_gemm_execution()
    assert ex.problems == ()
    got = ex.device["C"].view(np.uint16)
    want = z["C"].view(np.uint16)
    assert got.shape == (96, 80)
    assert (got == want).all(), f"{(got != want).sum()} of {got.size} fp16 values differ from the H200"
    # the residues are real: K = 72 is not a multiple of BK = 32, M = 96 and N = 80 not of 64
    ref = z["A"].astype(np.float64) @ z["B"].astype(np.float64)
    assert np.abs(ex.outputs["C"] - ref).max() < 0.02


def test_triton_tma_gemm_spec_describes_its_tensor_maps():
    spec = L.load_launch(f"{EXAMPLES / 'manifest.json'}#tma_gemm")
    maps = [a for a in spec.args if isinstance(a, L.TensorMapArg)]
    assert [(m.name, m.of, m.box, m.swizzle) for m in maps] == [
        ("a_desc", "A", (32, 64), "64B"), ("b_desc", "B", (64, 32), "128B"), ("c_desc", "C", (64, 64), "128B")]
    bufs = {b.name: b for b in spec.buffers}
    a = maps[0].tensor_map(bufs["A"])
    assert a.dims == (72, 96) and a.strides == (144,) and a.esize == 2 and a.box_bytes == 4096
    assert [b.name for b in spec.outputs] == ["C"]


def test_tensor_map_fields_are_checked_with_the_parameter_named():
    base = {"grid": 1, "block": 32, "buffers": [{"buffer": "A", "dtype": "f16", "shape": [12, 100]}]}
    with pytest.raises(InputError, match="a_desc.*multiples of 16"):
        L.parse_launch(dict(base, args=[{"tensor_map": "a_desc", "of": "A", "box": [64, 8]}]))
    with pytest.raises(InputError, match="no buffer 'Q'"):
        L.parse_launch(dict(base, args=[{"tensor_map": "a_desc", "of": "Q", "box": [8, 8]}]))
    with pytest.raises(InputError, match="unknown field"):
        L.parse_launch(dict(base, args=[{"tensor_map": "a_desc", "of": "A", "box": [8, 8], "swizle": "64B"}]))
    with pytest.raises(InputError, match="swizzle span"):
        TensorMap.tiled("f32", [64, 8], [64, 8], swizzle="128B")


def test_tensor_map_encoding_round_trips():
    t = TensorMap.tiled("bf16", [40, 7, 3], [8, 4, 2], element_strides=[1, 2, 1], swizzle="32B", oob_fill="nan",
                        address=0x7F00_0000_1000)
    raw = t.encode()
    assert len(raw) == 128 and TensorMap.decode(raw) == t
    assert TensorMap.decode(bytes(128)) is None


# ------------------------------------------------------------------ the box rules, written out independently
def _inputs(es, W, H):
    i = np.arange(W * H)
    return (i + 0.5).astype(np.float32).reshape(H, W) if es == 4 else ((i % 1200) * 0.25).astype(np.float16).reshape(H, W)


VARIANTS = {   # es, W, H, box w, h, element strides, swizzle bytes, fill, ox, oy, grid, kernel
    "sw128_zero": (4, 72, 20, 32, 8, 1, 1, 128, "zero", -8, -3, 3, 3, "IfLi32ELi8E"),
    "sw64_nan": (4, 72, 20, 16, 8, 1, 1, 64, "nan", -5, -2, 5, 3, "IfLi16ELi8E"),
    "sw32_zero": (4, 72, 20, 8, 8, 1, 1, 32, "zero", 3, -1, 9, 3, "IfLi8ELi8E"),
    "estride_nan": (4, 72, 20, 16, 8, 1, 2, 0, "nan", -4, -6, 5, 4, "IfLi16ELi8E"),
    "f16_sw128_nan": (2, 104, 12, 64, 8, 1, 1, 128, "nan", -10, -3, 2, 3, "I6__halfLi64ELi8E"),
}


def _expected(es, W, H, bw, bh, e0, e1, sw, fill, ox, oy, gx, gy):
    src = _inputs(es, W, H).view(np.uint32 if es == 4 else np.uint16)
    cw, ch = -(-bw // e0), -(-bh // e1)
    fillv = NAN_BITS[es] if fill == "nan" else 0
    raws, dst = [], np.full((H, W), 0xEEEEEEEE if es == 4 else 0xEEEE, src.dtype)
    for by in range(gy):
        for bx in range(gx):
            cx, cy = bx * bw + ox, by * bh + oy
            box = np.zeros((ch, cw), src.dtype)
            for j1 in range(ch):
                for j0 in range(cw):
                    x, y = cx + j0 * e0, cy + j1 * e1
                    box[j1, j0] = src[y, x] if 0 <= x < W and 0 <= y < H else fillv
                    if 0 <= cx + j0 < W and 0 <= cy + j1 < H:      # the store box is dense (strides 1)
                        dst[cy + j1, cx + j0] = box[j1, j0]
            lin = box.reshape(-1).view(np.uint8)
            out = np.empty_like(lin)
            a = np.arange(lin.size)                 # the box starts 1024-byte aligned
            mask = {128: 7, 64: 3, 32: 1, 0: 0}[sw]
            out[a ^ (((a >> 7) & mask) << 4)] = lin
            raws.append(out.view(np.uint32))
    return np.concatenate(raws), dst


@pytest.fixture(scope="module")
def box_module():
    return isa.load(EXAMPLES / "ptx" / "tma" / "tma_box.sm_90a.ptx")


@pytest.mark.parametrize("form", ["_Z7tma_box", "_Z10tma_box_cg"])
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_tma_box_follows_the_box_rules(box_module, name, form):
    es, W, H, bw, bh, e0, e1, sw, fill, ox, oy, gx, gy, tag = VARIANTS[name]
    kernel = next(k.name for k in box_module.kernels if k.name.startswith(form + tag))
    src = _inputs(es, W, H)
    dst = np.full(H * W * es, 0xEE, np.uint8).view(src.dtype).reshape(H, W)
    cw, ch = -(-bw // e0), -(-bh // e1)
    nb = cw * ch * es
    raw = np.full(gx * gy * nb // 4, 0xEEEEEEEE, np.uint32)
    dt = "f32" if es == 4 else "f16"
    swn = {0: "none", 32: "32B", 64: "64B", 128: "128B"}[sw]
    ms = TensorMapArg(src, TensorMap.tiled(dt, [W, H], [bw, bh], element_strides=[e0, e1], swizzle=swn,
                                           oob_fill=fill), "src")
    md = TensorMapArg(dst, TensorMap.tiled(dt, [W, H], [cw, ch], swizzle=swn), "dst")
    r = sim.run_kernel(box_module, kernel, (gx, gy), 128, [ms, md, raw, np.int32(ox), np.int32(oy), np.int32(nb)])
    assert r.problems == []
    want_raw, want_dst = _expected(es, W, H, bw, bh, e0, e1, sw, fill, ox, oy, gx, gy)
    assert (raw == want_raw).all(), f"{(raw != want_raw).sum()} shared words differ"
    assert (dst.view(want_dst.dtype) == want_dst).all()


# ------------------------------------------------------------------ ordering
TMA_READ = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 64 .b8 k_map[128], .param .u64 k_out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 box[512];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, k_map;
    cvta.param.u64 %rd1, %rd1;
    ld.param.u64 %rd2, [k_out];
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, box;
    mov.u32 %r3, bar;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    mov.u32 %r4, 0;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 512;
    @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd1, {%r4, %r4}], [%r3];
WAIT
    shl.b32 %r5, %r1, 2;
    add.s32 %r6, %r2, %r5;
    ld.shared.u32 %r7, [%r6];
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r7;
    ret;
}
"""
WAIT_LOOP = """LOOP:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
    @!%p2 bra LOOP;"""


@pytest.mark.parametrize("fixed", [False, True])
def test_reading_a_tma_destination_before_the_mbarrier_wait_is_an_async_race(fixed):
    mod = isa.loads(TMA_READ.replace("WAIT", WAIT_LOOP if fixed else ""))
    src = (np.arange(128, dtype=np.float32) + 1).reshape(8, 16)
    out = np.zeros(32, np.uint32)
    m = TensorMapArg(src, TensorMap.tiled("f32", [16, 8], [16, 8]), "src")
    r = sim.run_kernel(mod, "k", 1, 32, [m, out])
    races = [p for p in r.problems if p.kind == "async_race"]
    if fixed:
        assert r.problems == [] and (out.view(np.float32) == src.reshape(-1)[:32]).all()
    else:
        assert races and races[0].ptx_line == TMA_READ.replace("WAIT", "").splitlines().index(
            "    ld.shared.u32 %r7, [%r6];") + 1
        assert "cp.async.bulk.tensor" in races[0].message
        assert (out == 0).all()       # the box has not landed when it is read
