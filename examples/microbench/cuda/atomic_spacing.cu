// Same-address atomics over `naddr` hot addresses `spacing` floats apart: warp w adds 1.0f to
// out[(w % naddr) * spacing], `per_thread` times per thread (issue #10, tpipe). Spacing 1 (4 B: the
// addresses share one 32-byte sector), 8 (32 B: sectors of one 128-byte line), 32 (128 B: neighbouring
// lines, as atomic_addrs), 1024 (4 KB apart) separate same-address serialisation, the sector or line
// an L2 atomic works on, and the L2 slice an address is homed in.
extern "C" __global__ void atomic_spacing(float* out, int per_thread, int naddr, int spacing) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    float* p = &out[(w % naddr) * spacing];
    for (int k = 0; k < per_thread; ++k) atomicAdd(p, 1.0f);
}
