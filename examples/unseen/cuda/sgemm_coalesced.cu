// SGEMM ladder rung "coalesced" (rung 2 of the classic ladder): C = A * B, fp32, row-major, one output per
// thread, the output column on threadIdx.x so that a warp's B loads and C stores are coalesced (128 bytes per
// warp) and its A load is one broadcast address. Same arguments and launch shape as the corpus's
// sgemm_naive (which puts the row on threadIdx.x). Launch: block (32, 8), grid (ceil(N/32), ceil(M/8)).
extern "C" __global__ void sgemm_coalesced(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int M, int N, int K) {
    const int col = blockIdx.x * 32 + threadIdx.x;
    const int row = blockIdx.y * 8 + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        C[(size_t)row * N + col] = acc;
    }
}
