// The FMA pipe under other mixes of packed FP16 and FP32 work (issue #10, tpipe): independent chains per
// thread, 8192 FMAs per thread in all, in the proportions the names say; and a conversion chain.
//   hfma2_ffma_1to3: 2 HFMA2 chains and 6 FFMA chains, interleaved (one HFMA2 per three FFMAs)
//   hfma2_ffma_3to1: 6 HFMA2 chains and 2 FFMA chains, interleaved (three HFMA2s per FFMA)
//   cvt_f16_ffma:    8 chains of f = fmaf(float(half(f)), a, b): F2FP (f32 -> f16), HADD2.F32 (f16 -> f32), FFMA
#include <cuda_fp16.h>
extern "C" __global__ void hfma2_ffma_1to3(const __half2* x, const float* xf, __half2* y, float* yf, float a, float b,
                                           int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 a2 = __float2half2_rn(a), b2 = __float2half2_rn(b);
    __half2 h0 = x[i], h1 = __hadd2(h0, a2);
    float f0 = xf[i], f1 = f0 + a, f2 = f1 + a, f3 = f2 + a, f4 = f3 + a, f5 = f4 + a;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            h0 = __hfma2(h0, a2, b2); f0 = fmaf(f0, a, b); f1 = fmaf(f1, a, b); f2 = fmaf(f2, a, b);
            h1 = __hfma2(h1, a2, b2); f3 = fmaf(f3, a, b); f4 = fmaf(f4, a, b); f5 = fmaf(f5, a, b);
        }
    }
    y[i] = __hadd2(h0, h1);
    yf[i] = ((f0 + f1) + (f2 + f3)) + (f4 + f5);
}

extern "C" __global__ void hfma2_ffma_3to1(const __half2* x, const float* xf, __half2* y, float* yf, float a, float b,
                                           int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 a2 = __float2half2_rn(a), b2 = __float2half2_rn(b);
    __half2 h0 = x[i], h1 = __hadd2(h0, a2), h2 = __hadd2(h1, a2), h3 = __hadd2(h2, a2), h4 = __hadd2(h3, a2),
            h5 = __hadd2(h4, a2);
    float f0 = xf[i], f1 = f0 + a;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            h0 = __hfma2(h0, a2, b2); h1 = __hfma2(h1, a2, b2); h2 = __hfma2(h2, a2, b2); f0 = fmaf(f0, a, b);
            h3 = __hfma2(h3, a2, b2); h4 = __hfma2(h4, a2, b2); h5 = __hfma2(h5, a2, b2); f1 = fmaf(f1, a, b);
        }
    }
    y[i] = __hadd2(__hadd2(h0, h1), __hadd2(__hadd2(h2, h3), __hadd2(h4, h5)));
    yf[i] = f0 + f1;
}

extern "C" __global__ void cvt_f16_ffma(const float* xf, float* yf, float a, float b, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float f[8];
    f[0] = xf[i];
#pragma unroll
    for (int k = 1; k < 8; ++k) f[k] = f[k - 1] + a;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < 8; ++k) f[k] = fmaf(__half2float(__float2half_rn(f[k])), a, b);
    }
    yf[i] = ((f[0] + f[1]) + (f[2] + f[3])) + ((f[4] + f[5]) + (f[6] + f[7]));
}
