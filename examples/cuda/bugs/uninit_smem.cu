// Planted bug: the second half of the tile is never written, yet every thread reads it.
extern "C" __global__ void uninit_smem(const float* x, float* y, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (t < 128) s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = s[t] + s[255 - t];
}
