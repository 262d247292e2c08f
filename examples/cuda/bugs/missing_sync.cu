// Planted bug: each thread reads its neighbour's shared-memory slot with no __syncthreads()
// between the writes and the reads, so warps race (compute-sanitizer racecheck reports it).
extern "C" __global__ void missing_sync(const float* x, float* y, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    // __syncthreads();  <- missing
    float v = s[(t + 32) % blockDim.x];
    if (i < n) y[i] = v;
}
