// Last-block reduction (CUDA's threadFenceReduction pattern): every block writes its partial
// sum, counts itself with atomicInc, and the block that counts last adds the partials.
// Planted bug: without -DFIXED the partial is published with no __threadfence(), so the last
// block may read a partial that is not yet visible to it (the PTX memory model orders nothing
// between the st.global of partial[] and the atomic). -DFIXED is the correct twin.
__device__ unsigned int blocks_done = 0;

extern "C" __global__ void last_block_sum(const float* in, float* partial, float* out, int n)
{
    __shared__ float s[128];
    __shared__ bool last;
    const int t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
#ifdef FIXED
        __threadfence();
#endif
        const unsigned int ticket = atomicInc(&blocks_done, gridDim.x);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (last && t == 0) {
        float sum = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) sum += ((volatile float*)partial)[b];
        out[0] = sum;
        blocks_done = 0;
    }
}
