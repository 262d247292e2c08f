// RMSNorm on bf16 rows: y = x * rsqrt(mean(x^2) + eps) * w, one CTA of 256 threads per row, bf16x2 loads,
// fp32 sum of squares (warp shuffle, then 8 warp partials through shared memory), the row read a second
// time for the normalisation (an L1/L2 hit), bf16 stores rounded to nearest. Requires H a multiple of 512.
// Launch: block (256), grid (rows).
#include <cuda_bf16.h>
extern "C" __global__ void __launch_bounds__(256)
rmsnorm_bf16(const __nv_bfloat162* __restrict__ x, const __nv_bfloat162* __restrict__ w,
             __nv_bfloat162* __restrict__ y, int H, float eps) {
    __shared__ float part[8];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int h2 = H / 2;
    const __nv_bfloat162* xr = x + (size_t)blockIdx.x * h2;
    __nv_bfloat162* yr = y + (size_t)blockIdx.x * h2;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < h2; i += 256) {
        const float2 v = __bfloat1622float2(xr[i]);
        ss = fmaf(v.x, v.x, ss);
        ss = fmaf(v.y, v.y, ss);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if (lane == 0) part[warp] = ss;
    __syncthreads();
    float tot = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k) tot += part[k];
    const float r = rsqrtf(tot / (float)H + eps);
    for (int i = threadIdx.x; i < h2; i += 256) {
        const float2 v = __bfloat1622float2(xr[i]);
        const float2 g = __bfloat1622float2(w[i]);
        yr[i] = __floats2bfloat162_rn(v.x * r * g.x, v.y * r * g.y);
    }
}
