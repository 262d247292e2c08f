// Tensor-core HGEMM with WMMA: fp16 inputs, fp32 accumulation. One warp per 16x16 tile of C.
// A is M x K row-major, B is K x N column-major, C is M x N row-major; M, N, K multiples of 16.
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void hgemm_wmma(const half* A, const half* B, float* C, int M, int N, int K) {
    int tile_m = blockIdx.y, tile_n = blockIdx.x;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + tile_m * 16 * K + k, K);
        wmma::load_matrix_sync(b, B + tile_n * 16 * K + k, K);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(C + tile_m * 16 * N + tile_n * 16, acc, N, wmma::mem_row_major);
}
