// Packed FP16 and FP32 FMAs interleaved: 4 independent HFMA2 chains and 4 independent FFMA chains per
// thread. Says whether HFMA2 (half the FFMA rate, on the FMA pipe per ncu) and FFMA share one pipe.
#include <cuda_fp16.h>
extern "C" __global__ void hfma2_ffma_mix(const __half2* x, const float* xf, __half2* y, float* yf, float a, float b,
                                          int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 a2 = __float2half2_rn(a), b2 = __float2half2_rn(b);
    __half2 h0 = x[i], h1 = __hadd2(h0, a2), h2 = __hadd2(h1, a2), h3 = __hadd2(h2, a2);
    float f0 = xf[i], f1 = f0 + a, f2 = f1 + a, f3 = f2 + a;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            h0 = __hfma2(h0, a2, b2); f0 = fmaf(f0, a, b); h1 = __hfma2(h1, a2, b2); f1 = fmaf(f1, a, b);
            h2 = __hfma2(h2, a2, b2); f2 = fmaf(f2, a, b); h3 = __hfma2(h3, a2, b2); f3 = fmaf(f3, a, b);
        }
    }
    y[i] = __hadd2(__hadd2(h0, h1), __hadd2(h2, h3));
    yf[i] = (f0 + f1) + (f2 + f3);
}
