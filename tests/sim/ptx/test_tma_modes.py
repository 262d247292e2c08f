"""TMA beyond plain tile mode: interleaved tensor maps (CU_TENSOR_MAP_INTERLEAVE_16B/32B) and
``.multicast::cluster``.

The expected values are written out here from the documented rules, not from the simulator:

* PTX ISA 5.5.6 "Interleave layout": NC/8HWC8 (a C8 slice of 2-byte channels in 16 bytes) and
  NC/16HWC16 (32 bytes); the tensor map's dimension 0 is the slice, and the box lands in shared
  memory densely, dimension 0 fastest.
* PTX ISA 5.5.7 "Swizzling Modes", 32-byte swizzle table: within each 128-byte shared line L the
  16-byte cell c lands at position c ^ (L % 2) (the box starts 1024-byte aligned, base offset 0).
* cuTensorMapEncodeTiled: interleave needs rank >= 3, interleave 32B needs swizzle 32B and strides
  that are multiples of 32 bytes.
* Tile stores write the box's in-bound elements only.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import isa
import sim
from isa.errors import InputError, SimulationError
from sim import launch as L
from sim.ptx.tensormap import TensorMap, TensorMapArg

# both kernels below, after the load: wait for the box at the mbarrier (phase 0), then thread t
# copies shared word t to out[t]
WAIT_AND_COPY_OUT = """LOOP:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
    @!%p2 bra LOOP;
    shl.b32 %r5, %r1, 2;
    add.s32 %r6, %r2, %r5;
    ld.shared.u32 %r7, [%r6];
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r7;
"""

# load a 512-byte 3-d box at {0, x, y} into shared memory, wait on the mbarrier, copy it word by word
# to `out` (thread t copies word t), then store the shared box back through `dst` at the same coordinates
KERNEL = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 64 .b8 k_src[128], .param .align 64 .b8 k_dst[128], .param .u64 k_out,
                  .param .u32 k_x, .param .u32 k_y)
{
    .reg .pred %p<4>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 box[512];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, k_src;
    cvta.param.u64 %rd1, %rd1;
    mov.b64 %rd5, k_dst;
    cvta.param.u64 %rd5, %rd5;
    ld.param.u64 %rd2, [k_out];
    cvta.to.global.u64 %rd2, %rd2;
    ld.param.u32 %r8, [k_x];
    ld.param.u32 %r9, [k_y];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, box;
    mov.u32 %r3, bar;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
    fence.proxy.async.shared::cta;
    bar.sync 0;
    mov.u32 %r4, 0;
    mov.b16 %rs1, MASK;
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], BYTES;
    @%p1 LOADOP
""" + WAIT_AND_COPY_OUT + """    bar.sync 0;
    @%p1 cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd5, {%r4, %r8, %r9}], [%r2];
    @%p1 cp.async.bulk.commit_group;
    @%p1 cp.async.bulk.wait_group 0;
    ret;
}
"""
TILE_LOAD = ("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes "
             "[%r2], [%rd1, {%r4, %r8, %r9}], [%r3];")


def _swizzle32(lin: np.ndarray) -> np.ndarray:
    """The ISA's 32-byte swizzle table applied to the dense box bytes ``lin``."""
    out = np.empty_like(lin)
    for L in range(lin.size // 128):
        for c in range(8):
            p = c ^ (L % 2)
            out[L * 128 + p * 16: L * 128 + p * 16 + 16] = lin[L * 128 + c * 16: L * 128 + c * 16 + 16]
    return out


# name: interleave, swizzle, slice channels (f16), W, CS (slices), box W, box CS, x, y
CASES = {
    "il16_none": ("16B", "none", 8, 6, 5, 4, 8, -1, -2),
    "il16_sw32": ("16B", "32B", 8, 6, 5, 4, 8, 3, 1),
    "il32_sw32": ("32B", "32B", 16, 5, 3, 4, 4, 2, -1),
}


def _run(name, load=TILE_LOAD, mask=None):
    il, sw, C, W, CS, bw, bcs, x, y = CASES[name]
    # NC/xHWCx with N = H = 1 folded away: array [CS][W][C], C the slice (dimension 0)
    src = ((np.arange(CS * W * C) % 1500) * 0.5 + 1).astype(np.float16).reshape(CS, W, C)
    dst = np.full_like(src, np.float16(-7.0))
    out = np.full(128, 0xEEEEEEEE, np.uint32)
    ms = TensorMapArg(src, TensorMap.tiled("f16", [C, W, CS], [C, bw, bcs], interleave=il, swizzle=sw), "src")
    md = TensorMapArg(dst, TensorMap.tiled("f16", [C, W, CS], [C, bw, bcs], interleave=il, swizzle=sw), "dst")
    nb = C * 2 * bw * bcs
    assert nb == 512
    mod = isa.loads(KERNEL.replace("LOADOP", load).replace("BYTES", str(nb)).replace("MASK", str(1 if mask is None else mask)))
    r = sim.run_kernel(mod, "k", 1, 128, [ms, md, out, np.uint32(x & 0xFFFFFFFF), np.uint32(y & 0xFFFFFFFF)])
    return r, src, dst, out


def _want(name):
    il, sw, C, W, CS, bw, bcs, x, y = CASES[name]
    src = ((np.arange(CS * W * C) % 1500) * 0.5 + 1).astype(np.float16).reshape(CS, W, C).view(np.uint16)
    box = np.zeros((bcs, bw, C), np.uint16)
    dst = np.full((CS, W, C), np.float16(-7.0)).view(np.uint16)
    for j2 in range(bcs):
        for j1 in range(bw):
            w, cs = x + j1, y + j2
            if 0 <= w < W and 0 <= cs < CS:
                box[j2, j1] = src[cs, w]
                dst[cs, w] = src[cs, w]
    lin = box.reshape(-1).view(np.uint8)
    shared = _swizzle32(lin) if sw == "32B" else lin
    return shared.view(np.uint32), dst


@pytest.mark.parametrize("name", sorted(CASES))
def test_interleaved_tensor_maps_load_and_store_whole_slices(name):
    r, src, dst, out = _run(name)
    assert r.problems == []
    want_out, want_dst = _want(name)
    assert (out == want_out).all(), f"{(out != want_out).sum()} shared words differ"
    assert (dst.view(np.uint16) == want_dst).all()
    assert (want_out != 0).sum() > 16 and (want_out == 0).sum() > 0     # both in-bound and zero-filled words


def test_interleave_rules_are_checked_with_a_clear_launch_spec_error():
    tiled = TensorMap.tiled
    with pytest.raises(InputError, match="interleave 32B needs swizzle 32B"):
        tiled("f16", [16, 4, 4], [16, 4, 4], interleave="32B", swizzle="none")
    with pytest.raises(InputError, match="rank 3 to 5"):
        tiled("f16", [8, 4], [8, 4], interleave="16B")
    with pytest.raises(InputError, match="multiples of 32"):
        tiled("f16", [16, 3, 4], [16, 3, 4], strides=[48, 144], interleave="32B", swizzle="32B")
    with pytest.raises(InputError, match="32-byte aligned"):
        tiled("f16", [16, 4, 4], [16, 4, 4], interleave="32B", swizzle="32B", address=0x1010)
    with pytest.raises(InputError, match="one 16-byte channel slice"):
        tiled("f16", [16, 4, 4], [16, 4, 4], interleave="16B")
    with pytest.raises(InputError, match="partial slices are not simulated"):
        tiled("f16", [8, 4, 4], [4, 4, 4], interleave="16B")
    # without interleave the inner box must still be a multiple of 16 bytes
    with pytest.raises(InputError, match="multiple of 16 bytes"):
        tiled("f16", [8, 4, 4], [4, 4, 4])
    # the same rules in a launch spec, with the parameter named
    base = {"grid": 1, "block": 32, "buffers": [{"buffer": "A", "dtype": "f16", "shape": [4, 4, 16]}]}
    with pytest.raises(InputError, match="a_desc.*needs swizzle 32B"):
        L.parse_launch(dict(base, args=[{"tensor_map": "a_desc", "of": "A", "box": [16, 4, 4], "interleave": "32B"}]))
    spec = L.parse_launch(dict(base, args=[{"tensor_map": "a_desc", "of": "A", "box": [16, 2, 2], "interleave": "32B",
                                            "swizzle": "32B"}]))
    t = spec.args[0].tensor_map(spec.buffers[0])
    assert t.interleave == 2 and TensorMap.decode(t.encode()) == t


# ------------------------------------------------------------------ .multicast::cluster
MULTICAST_LOAD = ("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                  "[%r2], [%rd1, {%r4, %r8, %r9}], [%r3], %rs1;")


def test_multicast_to_this_cta_lands_the_box_and_completes_its_mbarrier():
    # ctaMask 0x1 names cluster rank 0, the only CTA of a cluster of one: the box lands at dstMem of this
    # CTA and complete_tx reaches its mbarrier (else the try_wait loop would never end)
    r, src, dst, out = _run("il16_sw32", load=MULTICAST_LOAD, mask=1)
    assert r.problems == []
    want_out, want_dst = _want("il16_sw32")
    assert (out == want_out).all() and (dst.view(np.uint16) == want_dst).all()


@pytest.mark.parametrize("mask, says", [(3, r"ctaMask 0x3 names the CTAs of cluster rank \[0, 1\]"),
                                        (0, "ctaMask 0x0 names no CTA")])
def test_multicast_to_other_ctas_is_refused_with_the_reason(mask, says):
    with pytest.raises(SimulationError, match=says + r".*cluster of one") as e:
        _run("il16_none", load=MULTICAST_LOAD, mask=mask)
    assert "not simulated" in str(e.value)
    assert e.value.span.line == KERNEL.splitlines().index("    @%p1 LOADOP") + 1    # the copy's PTX line


# ------------------------------------------------------------------ im2col
IM2COL_KERNEL = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .align 64 .b8 k_src[128], .param .u64 k_out)
{
    .reg .pred %p<4>;
    .reg .b16 %rs<4>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<8>;
    .shared .align 1024 .b8 box[512];
    .shared .align 8 .b64 bar;
    mov.b64 %rd1, k_src;
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
SETUP
    @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 512;
    @%p1 LOADOP
""" + WAIT_AND_COPY_OUT + """    ret;
}
"""

# name: dtype, dims (C, W[, H], N), lower, upper, traversal strides (spatial), cpp, ppc, coords, offsets, swizzle
IM2COL = {
    "nhwc_f32_pad1": ("f32", (8, 5, 4, 2), (-1, -1), (-1, -1), (1, 1), 4, 32, (6, 3, 2, 0), (2, 1), "none"),
    "nwc_f16_stride2": ("f16", (8, 10, 3), (-2,), (0,), (2,), 8, 32, (0, 4, 1), (1,), "32B"),
}


def _im2col_want(dt, dims, lower, upper, ts, cpp, ppc, coords, offs, sw):
    """The column by enumeration: every filter-base position of the bounding box, image by image
    (N outermost, then D, H, W innermost), from lower corner to dims-1+upper corner in traversal
    strides; the column is the ppc positions from the instruction's coordinates on, each read at
    base + im2col offsets, channels coords[0].. coords[0]+cpp-1, out of bounds reading as zero."""
    es = 4 if dt == "f32" else 2
    r = len(dims)
    src = _im2col_src(dt, dims).view(np.uint32 if es == 4 else np.uint16)      # [N][..H][W][C]
    axes = [range(lower[i], dims[1 + i] - 1 + upper[i] + 1, ts[i]) for i in range(r - 2)]
    grid = []
    for n in range(dims[-1] + ppc):                    # positions past the last image too
        for sp in itertools.product(*reversed(axes)):  # D, H, W with W fastest
            grid.append((n,) + tuple(reversed(sp)))    # (n, w, h, d)
    start = grid.index((coords[-1],) + tuple(coords[1:r - 1]))
    col = np.zeros((ppc, cpp), src.dtype)
    for p in range(ppc):
        n, *base = grid[start + p]
        px = [b + o for b, o in zip(base, offs)]
        for j in range(cpp):
            c = coords[0] + j
            inb = 0 <= c < dims[0] and 0 <= n < dims[-1] and all(0 <= x < dims[1 + i] for i, x in enumerate(px))
            if inb:
                col[p, j] = src[(n,) + tuple(reversed(px)) + (c,)]
    lin = col.reshape(-1).view(np.uint8)
    return (_swizzle32(lin) if sw == "32B" else lin).view(np.uint32)


def _im2col_src(dt, dims):
    n = int(np.prod(dims))
    v = (np.arange(n) % 1900) * 0.5 + 1
    return v.astype(np.float32 if dt == "f32" else np.float16).reshape(tuple(reversed(dims)))


@pytest.mark.parametrize("name", sorted(IM2COL))
def test_im2col_loads_the_column_the_bounding_box_walk_gives(name):
    dt, dims, lower, upper, ts, cpp, ppc, coords, offs, sw = IM2COL[name]
    r = len(dims)
    src = _im2col_src(dt, dims)
    t = TensorMap.im2col(dt, dims, lower=lower, upper=upper, channels_per_pixel=cpp, pixels_per_column=ppc,
                         element_strides=(1,) + ts + (1,), swizzle=sw)
    assert t.box_bytes == 512 and TensorMap.decode(t.encode()) == t
    setup = "\n".join(f"    mov.u32 %r{10 + i}, {c};" for i, c in enumerate(coords)) + "\n" + \
        "\n".join(f"    mov.b16 %rs{1 + i}, {o};" for i, o in enumerate(offs))
    cvec = ", ".join(f"%r{10 + i}" for i in range(r))
    ovec = ", ".join(f"%rs{1 + i}" for i in range(r - 2))
    load = (f"cp.async.bulk.tensor.{r}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
            f"[%r2], [%rd1, {{{cvec}}}], [%r3], {{{ovec}}};")
    mod = isa.loads(IM2COL_KERNEL.replace("SETUP", setup).replace("LOADOP", load))
    out = np.full(128, 0xEEEEEEEE, np.uint32)
    res = sim.run_kernel(mod, "k", 1, 128, [TensorMapArg(src, t, "src"), out])
    assert res.problems == []
    want = _im2col_want(dt, dims, lower, upper, ts, cpp, ppc, coords, offs, sw)
    assert (out == want).all(), f"{(out != want).sum()} of 128 shared words differ"
    assert (want == 0).sum() > 8 and (want != 0).sum() > 16     # in-bound pixels and zero-filled ones


def test_im2col_rules_and_mode_mismatch_are_refused():
    with pytest.raises(InputError, match=r"corners lie in \[-128, 127\]"):
        TensorMap.im2col("f32", (8, 5, 4, 2), lower=(-200, 0), upper=(0, 0), channels_per_pixel=4,
                         pixels_per_column=8)
    with pytest.raises(InputError, match="3D .NWC., 4D .NHWC. or 5D"):
        TensorMap.im2col("f32", (8, 5), lower=(), upper=(), channels_per_pixel=4, pixels_per_column=8)
    with pytest.raises(InputError, match="multiple of 16 bytes"):
        TensorMap.im2col("f32", (8, 5, 2), lower=(0,), upper=(0,), channels_per_pixel=3, pixels_per_column=8)
    # a tile-mode copy of an im2col map is refused at the copy
    t = TensorMap.im2col("f32", (8, 5, 4, 2), lower=(0, 0), upper=(0, 0), channels_per_pixel=4, pixels_per_column=32)
    src = np.zeros((2, 4, 5, 8), np.float32)
    setup = "\n".join(f"    mov.u32 %r{10 + i}, 0;" for i in range(4))
    load = ("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[%r2], [%rd1, {%r10, %r11, %r12, %r13}], [%r3];")
    mod = isa.loads(IM2COL_KERNEL.replace("SETUP", setup).replace("LOADOP", load))
    with pytest.raises(SimulationError, match="encoded for im2col mode, the copy is in tile mode"):
        sim.run_kernel(mod, "k", 1, 128, [TensorMapArg(src, t, "src"), np.zeros(128, np.uint32)])


def test_an_im2col_map_in_a_launch_spec():
    base = {"grid": 1, "block": 32, "buffers": [{"buffer": "X", "dtype": "f32", "shape": [2, 4, 5, 8]}]}
    g = {"lower": [-1, -1], "upper": [-1, -1], "channels_per_pixel": 4, "pixels_per_column": 32}
    spec = L.parse_launch(dict(base, args=[{"tensor_map": "x_desc", "of": "X", "im2col": g}]))
    t = spec.args[0].tensor_map(spec.buffers[0])
    assert (t.dims, t.lower, t.upper, t.counts, t.box_bytes) == ((8, 5, 4, 2), (-1, -1), (-1, -1), (4, 32), 512)
    with pytest.raises(InputError, match="x_desc: 'im2col' takes exactly"):
        L.parse_launch(dict(base, args=[{"tensor_map": "x_desc", "of": "X", "im2col": dict(g, box=[1])}]))
    with pytest.raises(InputError, match=r"x_desc: lower corner \[-300, -1\]"):
        L.parse_launch(dict(base, args=[{"tensor_map": "x_desc", "of": "X", "im2col": dict(g, lower=[-300, -1])}]))


def test_the_element_stride_of_dimension_zero_is_ignored():
    # cuTensorMapEncodeTiled: with interleave NONE "the first element of this array is ignored since TMA
    # doesn't support the stride for dimension zero": [4, 2] walks as [1, 2]
    a = TensorMap.tiled("f32", [16, 8], [8, 4], element_strides=[4, 2])
    b = TensorMap.tiled("f32", [16, 8], [8, 4], element_strides=[1, 2])
    assert a.counts == b.counts == (8, 2) and a.box_bytes == 64
    c = np.array([[3, 1]])
    assert all((x == y).all() for x, y in zip(a.box_elements(c), b.box_elements(c)))
    off, inb = a.box_elements(c)
    assert off[0, :8].tolist() == [(3 + j) * 4 + 1 * 64 for j in range(8)] and off[0, 8] == 3 * 4 + 3 * 64
