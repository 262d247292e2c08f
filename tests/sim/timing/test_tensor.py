"""Mechanisms of the H200 timing model's tensor-core and asynchronous-copy paths on small cases
(issue #10's tensor-core timing, issue #14's sweep): cache operators, wgmma, mma.sync, ldmatrix."""

import numpy as np

import isa
import sim


def _run(src, grid=1, block=32, args=None, **kw):
    out = np.zeros(4096, np.float32) if args is None else None
    return sim.run_kernel(isa.loads(src), "k", grid, block, [out] if args is None else args, timing="h200", **kw)


def _loads_kernel(cop: str, n: int = 8) -> str:
    """One warp reads the same 128-byte line ``n`` times with ``ld.global.{cop}``, one after the other
    (a bar.sync after each use keeps the scheduler from hoisting the loads together)."""
    body = "\n".join(f"    ld.global.{cop}.f32 %f{2 + i}, [%rd4];\n    add.f32 %f1, %f1, %f{2 + i};\n    bar.sync 0;"
                      for i in range(n))
    return f""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
    .reg .f32 %f<40>; .reg .b32 %r<8>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    mov.f32 %f1, 0f00000000;
{body}
    st.global.f32 [%rd4+512], %f1;
    ret;
}}
"""


def test_cg_loads_bypass_l1():
    """``.ca`` loads of one line hit L1 after the first miss; ``.cg`` loads are cached in L2 only
    (PTX ISA, cache operators): every one goes to L2 and pays its latency."""
    ca = _run(_loads_kernel("ca")).timing
    cg = _run(_loads_kernel("cg")).timing
    assert ca["memory"]["l1_hit_rate"] == 7 / 8
    assert cg["memory"]["l1_hit_rate"] == 0.0
    # L2 sectors: the loads that miss L1 (4 sectors each) + the 4 of the final store
    assert cg["memory"]["l2_sectors"] == 8 * 4 + 4 and ca["memory"]["l2_sectors"] == 4 + 4
    # the 7 dependent re-reads cost an L2 round trip each instead of an L1 hit
    from sim.timing.sm import load_params
    L = load_params().lat
    assert cg["sm_cycles"] - ca["sm_cycles"] > 7 * (L["global_l2"] - L["global_l1"]) * 0.9


def test_wgmma_operands_take_shared_memory_wavefronts():
    """A warpgroup's wgmma.mma_async m64nNk16 (both operands in shared memory) reads 64 x 32 B of A
    and N x 32 B of B through the shared-memory data path: (2048 + 32 N) / 128 wavefronts, beside
    the wavefronts of the copies that filled the tiles (ncu_deep: 32.1 per m64n64k16)."""
    from isa.generate import ptx_gemm as G
    from sim import launch as L

    cfg = G.PtxGemmConfig(arch="sm_90a", dtype="f16", engine="wgmma", m=64, n=128, k=64, tile=(64, 128, 32),
                          warps=(1, 1), stages=2)
    spec = L.spec_from_entry(G.launch_spec(cfg))
    ex = L.execute(isa.load(G.gemm_ptx(cfg)), spec, timing="h200")
    tm = ex.timing
    n_wgmma = (64 // 32) * (32 // 16)                      # 2 k-tiles x 2 k-steps of 16
    copies = tm["memory"]["shared_wavefronts"]
    assert copies > 0 and not tm["sampled"]
    assert tm["pipes"]["shared"]["busy_cycles"] - copies == n_wgmma * (64 * 32 + 128 * 32) / 128
