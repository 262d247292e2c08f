// fp16 tensor-core GEMM with ldmatrix and mma.sync.m16n8k16 (fp32 accumulate), "NT" layout:
// C[M,N] (f32) = A[M,K] * Bt[N,K]^T, A and Bt row-major fp16. A CTA of 4 warps computes a 64 x 64 tile
// (each warp a 32 x 32 quarter: 2 x 4 MMAs per k16 step); K is staged 32 at a time through shared memory
// with 16-byte loads, each tile row padded by 8 halves (80 bytes apart) so that ldmatrix's eight
// row addresses fall in distinct banks; fragments come from ldmatrix.x4 (A: one 16 x 16 block,
// B: two n8 x k16 blocks). No cp.async and no double buffering (single-stage; a baseline).
// Requires M, N multiples of 64 and K a multiple of 32. Launch: block (128), grid (N/64, M/64).
#include <cuda_fp16.h>
#define LDS 40
extern "C" __global__ void __launch_bounds__(128)
hgemm_mma_ldmatrix(const __half* __restrict__ A, const __half* __restrict__ Bt, float* __restrict__ C,
                   int M, int N, int K) {
    __shared__ __align__(16) __half As[64 * LDS];
    __shared__ __align__(16) __half Bs[64 * LDS];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    const __half* Ab = A + (size_t)blockIdx.y * 64 * K;
    const __half* Bb = Bt + (size_t)blockIdx.x * 64 * K;
    float acc[2][4][4] = {};
    const unsigned as = (unsigned)__cvta_generic_to_shared(As), bs = (unsigned)__cvta_generic_to_shared(Bs);
    for (int k0 = 0; k0 < K; k0 += 32) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {             // 64 rows x 4 chunks of 8 halves, per matrix
            const int idx = tid + c * 128, r = idx >> 2, q = (idx & 3) * 8;
            *reinterpret_cast<uint4*>(&As[r * LDS + q]) = *reinterpret_cast<const uint4*>(Ab + (size_t)r * K + k0 + q);
            *reinterpret_cast<uint4*>(&Bs[r * LDS + q]) = *reinterpret_cast<const uint4*>(Bb + (size_t)r * K + k0 + q);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 32; kk += 16) {
            unsigned a[2][4], b[4][2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const unsigned addr = as + 2 * ((wm + i * 16 + (lane & 15)) * LDS + kk + (lane >> 4) * 8);
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                             : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3]) : "r"(addr));
            }
#pragma unroll
            for (int j = 0; j < 4; j += 2) {
                const int m = lane >> 3;
                const unsigned addr = bs + 2 * ((wn + j * 8 + (lane & 7) + (m >> 1) * 8) * LDS + kk + (m & 1) * 8);
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                             : "=r"(b[j][0]), "=r"(b[j][1]), "=r"(b[j + 1][0]), "=r"(b[j + 1][1]) : "r"(addr));
            }
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                                 : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                                 : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]), "r"(b[j][1]));
        }
        __syncthreads();
    }
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int r = blockIdx.y * 64 + wm + i * 16 + g, c = blockIdx.x * 64 + wn + j * 8 + 2 * t;
            *reinterpret_cast<float2*>(&C[(size_t)r * N + c]) = make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2*>(&C[(size_t)(r + 8) * N + c]) = make_float2(acc[i][j][2], acc[i][j][3]);
        }
}
