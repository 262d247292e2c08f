// L2 / DRAM bandwidth sweep: read-only (.cg loads: L2 only), write-only (full 128-byte lines) and
// strided 4-byte stores (one partial sector per lane), grid-stride, `reps` passes over the same buffer.
// The stores are inline PTX (asm volatile) so that no pass can be removed as a dead store.
extern "C" __global__ void read_cg(const float4* __restrict__ src, float* out, int n4, int reps) {
    int stride = gridDim.x * blockDim.x;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.f;
    for (int r = 0; r < reps; ++r) {
        for (int i = t; i < n4; i += stride) {
            float4 v = __ldcg(&src[i]);
            acc += (v.x + v.y) + (v.z + v.w);
        }
    }
    out[t] = acc;
}

extern "C" __global__ void write_f4(float4* dst, int n4, int reps) {
    int stride = gridDim.x * blockDim.x;
    for (int r = 0; r < reps; ++r) {
        float fr = (float)r;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride)
            asm volatile("st.global.v4.f32 [%0], {%1, %1, %1, %1};" :: "l"(dst + i), "f"(fr) : "memory");
    }
}

// thread t stores to dst[(t + k*T) * stride] for k < per_thread (T threads in the grid), `reps` times
extern "C" __global__ void write_strided(float* dst, int stride, int per_thread, int reps) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int T = gridDim.x * blockDim.x;
    for (int r = 0; r < reps; ++r) {
        float fr = (float)r;
        for (int k = 0; k < per_thread; ++k)
            asm volatile("st.global.f32 [%0], %1;" :: "l"(dst + (size_t)(t + k * T) * stride), "f"(fr) : "memory");
    }
}
