// FP32 FMA pipe: a dependent chain (latency) and eight independent chains per thread (throughput).
// Each thread starts from x[i] and runs `iters` x 16 FFMAs; y[i] receives the result.
extern "C" __global__ void ffma_dep(const float* x, float* y, float a, float b, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < 16; ++k) v = fmaf(v, a, b);
    }
    y[i] = v;
}

extern "C" __global__ void ffma_indep(const float* x, float* y, float a, float b, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v0 = x[i], v1 = v0 + 1.0f, v2 = v0 + 2.0f, v3 = v0 + 3.0f;
    float v4 = v0 + 4.0f, v5 = v0 + 5.0f, v6 = v0 + 6.0f, v7 = v0 + 7.0f;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            v0 = fmaf(v0, a, b); v1 = fmaf(v1, a, b); v2 = fmaf(v2, a, b); v3 = fmaf(v3, a, b);
            v4 = fmaf(v4, a, b); v5 = fmaf(v5, a, b); v6 = fmaf(v6, a, b); v7 = fmaf(v7, a, b);
        }
    }
    y[i] = ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7));
}
