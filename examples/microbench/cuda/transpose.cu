// Matrix transpose out = in^T of an n x n fp32 matrix (n a multiple of 32), 32 x 8 threads per CTA.
// naive: coalesced reads, writes 4 KiB apart (one sector per lane); tiled: a 32 x 33 shared tile
// (padded: no bank conflicts) so that reads and writes are both coalesced.
extern "C" __global__ void transpose_naive(const float* in, float* out, int n) {
    int x = blockIdx.x * 32 + threadIdx.x;
    int y0 = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) out[(size_t)x * n + (y0 + j)] = in[(size_t)(y0 + j) * n + x];
}

extern "C" __global__ void transpose_tiled(const float* in, float* out, int n) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) out[(size_t)(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
