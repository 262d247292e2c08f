// 256-bin byte histogram: each CTA counts into a private shared-memory histogram with shared atomics
// (uchar4 loads, grid-stride), then adds its non-zero bins to the global histogram with global atomics.
// Requires n a multiple of 4. Launch: block (256), any grid; bins zeroed before the launch.
extern "C" __global__ void __launch_bounds__(256)
histogram256(const unsigned char* __restrict__ data, unsigned int* __restrict__ bins, int n) {
    __shared__ unsigned int h[256];
    h[threadIdx.x] = 0;
    __syncthreads();
    const uchar4* d4 = reinterpret_cast<const uchar4*>(data);
    const int n4 = n / 4;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        const uchar4 v = d4[i];
        atomicAdd(&h[v.x], 1u);
        atomicAdd(&h[v.y], 1u);
        atomicAdd(&h[v.z], 1u);
        atomicAdd(&h[v.w], 1u);
    }
    __syncthreads();
    const unsigned int c = h[threadIdx.x];
    if (c) atomicAdd(&bins[threadIdx.x], c);
}
