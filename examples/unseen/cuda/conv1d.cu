// 1D convolution (correlation) with a 17-tap filter, zero padding: y[i] = sum_j w[j] * x[i + j - 8].
// Each CTA of 256 threads stages its 256 + 16 inputs (halo included) and the filter in shared memory.
// Launch: block (256), grid (ceil(n/256)).
#define R 8
extern "C" __global__ void __launch_bounds__(256)
conv1d(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int n) {
    __shared__ float tile[256 + 2 * R];
    __shared__ float ws[2 * R + 1];
    const int i = blockIdx.x * 256 + threadIdx.x;
    if (threadIdx.x < 2 * R + 1) ws[threadIdx.x] = w[threadIdx.x];
    tile[threadIdx.x + R] = i < n ? x[i] : 0.0f;
    if (threadIdx.x < R) {
        const int l = i - R, r = i + 256;
        tile[threadIdx.x] = l >= 0 ? x[l] : 0.0f;
        tile[threadIdx.x + 256 + R] = r < n ? x[r] : 0.0f;
    }
    __syncthreads();
    if (i < n) {
        float acc = 0.0f;
#pragma unroll
        for (int j = 0; j < 2 * R + 1; ++j) acc = fmaf(ws[j], tile[threadIdx.x + j], acc);
        y[i] = acc;
    }
}
