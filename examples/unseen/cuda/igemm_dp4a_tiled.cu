// int8 GEMM with dp4a, shared-memory tiled and register blocked: C[M,N] (s32) = A[M,K] (s8, row-major) *
// Bt[N,K]^T (s8, row-major, "NT"). A CTA of 16 x 16 threads computes a 64 x 64 tile, 4 x 4 outputs per
// thread (rows ty + 16 i, columns tx + 16 j); K is staged 32 bytes (8 packed words) at a time, each tile row
// padded to 9 words so that the column reads of the inner loop do not conflict.
// Requires M, N multiples of 64 and K a multiple of 32. Launch: block (16, 16), grid (N/64, M/64).
extern "C" __global__ void __launch_bounds__(256)
igemm_dp4a_tiled(const int* __restrict__ A, const int* __restrict__ Bt, int* __restrict__ C, int M, int N, int K) {
    __shared__ int As[64][9];
    __shared__ int Bs[64][9];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const int kw = K / 4;                        // packed words per row
    const int* Ab = A + (size_t)blockIdx.y * 64 * kw;
    const int* Bb = Bt + (size_t)blockIdx.x * 64 * kw;
    const int lr = tid / 8, lc = tid % 8;        // loader: rows lr and lr + 32, word lc
    int acc[4][4] = {};
    for (int k0 = 0; k0 < kw; k0 += 8) {
        As[lr][lc] = Ab[(size_t)lr * kw + k0 + lc];
        As[lr + 32][lc] = Ab[(size_t)(lr + 32) * kw + k0 + lc];
        Bs[lr][lc] = Bb[(size_t)lr * kw + k0 + lc];
        Bs[lr + 32][lc] = Bb[(size_t)(lr + 32) * kw + k0 + lc];
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 8; ++kk) {
            int a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[ty + 16 * i][kk];
#pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = Bs[tx + 16 * j][kk];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = __dp4a(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    const int r0 = blockIdx.y * 64 + ty, c0 = blockIdx.x * 64 + tx;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) C[(size_t)(r0 + 16 * i) * N + c0 + 16 * j] = acc[i][j];
}
