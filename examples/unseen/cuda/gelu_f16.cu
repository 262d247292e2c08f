// GELU (erf form) on fp16, two elements per thread through half2: x * 0.5 * (1 + erf(x / sqrt 2)), computed
// in fp32 (erff is a polynomial of FMAs, no approximate transcendental), rounded back with __floats2half2_rn.
// Grid-stride over n/2 half2 pairs; requires n even. Launch: block (256), any grid.
#include <cuda_fp16.h>
extern "C" __global__ void __launch_bounds__(256)
gelu_f16(const __half2* __restrict__ x, __half2* __restrict__ y, int n) {
    const int n2 = n / 2;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += gridDim.x * blockDim.x) {
        const float2 v = __half22float2(x[i]);
        const float a = 0.5f * v.x * (1.0f + erff(v.x * 0.70710678118654752f));
        const float b = 0.5f * v.y * (1.0f + erff(v.y * 0.70710678118654752f));
        y[i] = __floats2half2_rn(a, b);
    }
}
