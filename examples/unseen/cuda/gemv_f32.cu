// fp32 GEMV y = A x, A row-major M x K: one warp per row, float4 loads of A and x (a warp reads 512
// contiguous bytes of its row per step), a shuffle-xor reduction, lane 0 stores. Requires K a multiple
// of 128. Launch: block (256) = 8 rows per CTA, grid (ceil(M/8)).
extern "C" __global__ void __launch_bounds__(256)
gemv_f32(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y, int M, int K) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * 8 + (threadIdx.x >> 5);
    if (row >= M) return;
    const float4* a4 = reinterpret_cast<const float4*>(A + (size_t)row * K);
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float acc = 0.0f;
    for (int k = lane; k < K / 4; k += 32) {
        const float4 a = a4[k], b = x4[k];
        acc = fmaf(a.x, b.x, acc);
        acc = fmaf(a.y, b.y, acc);
        acc = fmaf(a.z, b.z, acc);
        acc = fmaf(a.w, b.w, acc);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) y[row] = acc;
}
