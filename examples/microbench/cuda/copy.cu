// Global-memory copy, 16 bytes per thread per step, grid-stride; `reps` passes over the same buffers
// (dst = src + rep, so no pass can be skipped). L2-resident at a few MiB, DRAM-bound at hundreds of MiB.
extern "C" __global__ void copy_f4(const float4* src, float4* dst, int n4, int reps) {
    int stride = gridDim.x * blockDim.x;
    for (int r = 0; r < reps; ++r) {
        float fr = (float)r;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
            float4 v = src[i];
            dst[i] = make_float4(v.x + fr, v.y + fr, v.z + fr, v.w + fr);
        }
    }
}

// The same copy with the loads marked .cg (cache in L2 only, __ldcg): every pass reads from L2, not L1.
extern "C" __global__ void copy_f4_cg(const float4* src, float4* dst, int n4, int reps) {
    int stride = gridDim.x * blockDim.x;
    for (int r = 0; r < reps; ++r) {
        float fr = (float)r;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
            float4 v = __ldcg(&src[i]);
            dst[i] = make_float4(v.x + fr, v.y + fr, v.z + fr, v.w + fr);
        }
    }
}
