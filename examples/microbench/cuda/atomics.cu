// Global atomics at L2: every thread adds 1.0f `per_thread` times, either all to out[0] (same address,
// serialised) or each to its own out[t] (spread over the buffer, coalesced 128 B per warp).
extern "C" __global__ void atomic_same(float* out, int per_thread) {
    for (int k = 0; k < per_thread; ++k) atomicAdd(&out[0], 1.0f);
}

extern "C" __global__ void atomic_spread(float* out, int per_thread) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < per_thread; ++k) atomicAdd(&out[t], 1.0f);
}
