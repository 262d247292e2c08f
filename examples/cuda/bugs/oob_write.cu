// Planted bug: the bound check is off by one, so thread n writes out[n], one past the end.
extern "C" __global__ void oob_write(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 2.0f * x[i < n ? i : 0];
}
