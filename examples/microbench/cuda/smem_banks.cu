// Shared-memory loads with an n-way bank conflict: lane l of every warp reads word (l*stride + j) mod 1024,
// so `stride` 1, 2, 4, 8, 32 gives 1-, 2-, 4-, 8- and 32-way conflicts (distinct words in one bank).
// Eight loads per iteration into four accumulators; out[i] receives the sum.
extern "C" __global__ void smem_conflict(float* out, int stride, int iters) {
    __shared__ float s[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = (float)(i & 63);
    __syncthreads();
    unsigned base = (threadIdx.x & 31) * stride;
    float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
    for (int it = 0; it < iters; ++it) {
        unsigned o = base + it * 8;
        a0 += s[(o + 0) & 1023]; a1 += s[(o + 1) & 1023]; a2 += s[(o + 2) & 1023]; a3 += s[(o + 3) & 1023];
        a0 += s[(o + 4) & 1023]; a1 += s[(o + 5) & 1023]; a2 += s[(o + 6) & 1023]; a3 += s[(o + 7) & 1023];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = (a0 + a1) + (a2 + a3);
}
