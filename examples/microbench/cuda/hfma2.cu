// Packed FP16 FMA (fma.rn.f16x2 / HFMA2): a dependent chain and eight independent chains per thread.
#include <cuda_fp16.h>
extern "C" __global__ void hfma2_dep(const __half2* x, __half2* y, float a, float b, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 a2 = __float2half2_rn(a), b2 = __float2half2_rn(b), v = x[i];
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < 16; ++k) v = __hfma2(v, a2, b2);
    }
    y[i] = v;
}

extern "C" __global__ void hfma2_indep(const __half2* x, __half2* y, float a, float b, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 a2 = __float2half2_rn(a), b2 = __float2half2_rn(b);
    __half2 v0 = x[i], v1 = __hadd2(v0, a2), v2 = __hadd2(v1, a2), v3 = __hadd2(v2, a2);
    __half2 v4 = __hadd2(v3, a2), v5 = __hadd2(v4, a2), v6 = __hadd2(v5, a2), v7 = __hadd2(v6, a2);
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            v0 = __hfma2(v0, a2, b2); v1 = __hfma2(v1, a2, b2); v2 = __hfma2(v2, a2, b2); v3 = __hfma2(v3, a2, b2);
            v4 = __hfma2(v4, a2, b2); v5 = __hfma2(v5, a2, b2); v6 = __hfma2(v6, a2, b2); v7 = __hfma2(v7, a2, b2);
        }
    }
    y[i] = __hadd2(__hadd2(__hadd2(v0, v1), __hadd2(v2, v3)), __hadd2(__hadd2(v4, v5), __hadd2(v6, v7)));
}
