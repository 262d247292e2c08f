// Packed fp16 axpy: y = a * x + y on half2 pairs (fma.rn.f16x2); a is rounded to fp16 once.
#include <cuda_fp16.h>
extern "C" __global__ void hfma2_axpy(const __half2* x, __half2* y, float a, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 a2 = __float2half2_rn(a);
    if (i < n2) y[i] = __hfma2(a2, x[i], y[i]);
}
