// SGEMM ladder rung "2D register blocking": C = A * B, fp32, row-major. A CTA of 256 threads computes a
// 128 x 128 tile of C, one 8 x 8 block per thread held in 64 registers; A and B are staged through shared
// memory 8 columns / 8 rows of K at a time (scalar loads: the float4 version is the next rung, sgemm_vec4).
// Requires M and N multiples of 128 and K a multiple of 8. Launch: block (256), grid (N/128, M/128).
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256)
sgemm_regblock2d(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                 int M, int N, int K) {
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int tid = threadIdx.x;
    const int tRow = tid / (BN / TN), tCol = tid % (BN / TN);
    const float* Ab = A + (size_t)blockIdx.y * BM * K;
    const float* Bb = B + (size_t)blockIdx.x * BN;
    float* Cb = C + (size_t)blockIdx.y * BM * N + (size_t)blockIdx.x * BN;
    // loaders: A tile 128 x 8 (4 per thread), B tile 8 x 128 (4 per thread)
    const int aRow = tid / BK, aCol = tid % BK;      // rows aRow, aRow + 32, ...
    const int bRow = tid / BN, bCol = tid % BN;      // rows bRow, bRow + 2, ...
    float acc[TM][TN] = {};
    float regM[TM], regN[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int o = 0; o < BM; o += 256 / BK) As[(aRow + o) * BK + aCol] = Ab[(size_t)(aRow + o) * K + aCol];
#pragma unroll
        for (int o = 0; o < BK; o += 256 / BN) Bs[(bRow + o) * BN + bCol] = Bb[(size_t)(bRow + o) * N + bCol];
        __syncthreads();
        Ab += BK;
        Bb += (size_t)BK * N;
#pragma unroll
        for (int d = 0; d < BK; ++d) {
#pragma unroll
            for (int i = 0; i < TM; ++i) regM[i] = As[(tRow * TM + i) * BK + d];
#pragma unroll
            for (int j = 0; j < TN; ++j) regN[j] = Bs[d * BN + tCol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) Cb[(size_t)(tRow * TM + i) * N + tCol * TN + j] = acc[i][j];
}
