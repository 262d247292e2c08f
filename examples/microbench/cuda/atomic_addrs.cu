// Same-address atomics spread over `naddr` addresses (128 bytes apart): warp w adds to out[(w % naddr) * 32].
extern "C" __global__ void atomic_addrs(float* out, int per_thread, int naddr) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    float* p = &out[(w % naddr) * 32];
    for (int k = 0; k < per_thread; ++k) atomicAdd(p, 1.0f);
}
