// Strided global loads: thread t reads src[(t + k*T) * stride] for k < per_thread (T threads in the grid)
// and writes the sum; stride 1 uses 4 of a sector's 32 bytes per lane group, stride >= 8 one sector per lane.
extern "C" __global__ void strided_load(const float* src, float* out, int stride, int per_thread) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int T = gridDim.x * blockDim.x;
    float acc0 = 0.f, acc1 = 0.f;
    for (int k = 0; k < per_thread; k += 2) {
        acc0 += src[(size_t)(t + k * T) * stride];
        acc1 += src[(size_t)(t + (k + 1) * T) * stride];
    }
    out[t] = acc0 + acc1;
}
