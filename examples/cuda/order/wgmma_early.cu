// The corpus's wgmma_f16 GEMM (one 64x64 tile per warpgroup) with a planted ordering bug.
// Planted bug: without -DFIXED, wgmma.wait_group comes only after the epilogue has read the
// accumulators d[] (they may not be written yet), and the next K step overwrites the shared
// tiles while the previous wgmma may still read them. -DFIXED waits in every K step.
// Hopper warpgroup MMA (wgmma.mma_async, sm_90a only) with hand-built shared
// memory matrix descriptors: fp16 inputs, fp32 accumulate.
// "NT" layout: C[M,N] (fp32) = A[M,K] (fp16, row-major) * W[N,K]^T (fp16, row-major).
// One warpgroup (128 threads) per 64x64 output tile, K-step 16:
//   1. every thread copies one 16-byte row segment of the A tile and of the
//      W tile into shared memory, in the canonical K-major, NO-swizzle layout:
//      8x8 "core matrices" of 128 contiguous bytes (8 rows x 16 B);
//      element (r, k) of a 64x16 tile lives at byte
//          (r / 8) * 256 + (k / 8) * 128 + (r % 8) * 16 + (k % 8) * 2
//      i.e. leading (K-direction) byte offset LBO = 128, stride
//      (8-row-group) byte offset SBO = 256;
//   2. fence.proxy.async + __syncthreads, wgmma.fence;
//   3. wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 with both operands
//      given by descriptors (start>>4 | LBO>>4 << 16 | SBO>>4 << 32, swizzle 0),
//      scale-d = 1, no negation, no transpose (both K-major);
//   4. wgmma.commit_group + wgmma.wait_group 0.
// Accumulator layout (per thread, 32 floats): warp w owns rows 16w..16w+15;
// d[4c+0], d[4c+1] -> row 16w + lane/4,     cols 8c + 2*(lane%4) + {0,1}
// d[4c+2], d[4c+3] -> row 16w + lane/4 + 8, same cols          (c = 0..7)
// Requirements: M % 64 == 0, N % 64 == 0, K % 16 == 0.
// Build: nvcc -ptx -arch=compute_90a (the wgmma instructions need sm_90a).
// Launch: block (128), grid (N/64, M/64).
#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ uint64_t smem_desc_kmajor_noswizzle(const void* smem)
{
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(smem);
    uint64_t d = 0;
    d |= (uint64_t)((addr & 0x3FFFF) >> 4);          // bits  0-13: start address
    d |= (uint64_t)(128 >> 4) << 16;                  // bits 16-29: leading byte offset (K dir)
    d |= (uint64_t)(256 >> 4) << 32;                  // bits 32-45: stride byte offset (8-row groups)
    return d;                                         // bits 62-63 = 0: no swizzle
}

extern "C" __global__ void __launch_bounds__(128)
wgmma_early(const __half* __restrict__ A, const __half* __restrict__ W,
                         float* __restrict__ C, int M, int N, int K)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) unsigned char As[64 * 16 * 2];
    __shared__ __align__(128) unsigned char Bs[64 * 16 * 2];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
    const int r = tid >> 1;          // tile row 0..63
    const int j = tid & 1;           // which 8-wide K half
    const int soff = (r >> 3) * 256 + j * 128 + (r & 7) * 16;

    float d[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) d[i] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += 16) {
        *reinterpret_cast<uint4*>(As + soff) =
            *reinterpret_cast<const uint4*>(A + (size_t)(m0 + r) * K + k0 + j * 8);
        *reinterpret_cast<uint4*>(Bs + soff) =
            *reinterpret_cast<const uint4*>(W + (size_t)(n0 + r) * K + k0 + j * 8);
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
        const uint64_t da = smem_desc_kmajor_noswizzle(As);
        const uint64_t db = smem_desc_kmajor_noswizzle(Bs);
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "setp.ne.b32 p, %34, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
            "%32, %33, p, 1, 1, 0, 0;\n"
            "}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
            : "l"(da), "l"(db), "r"(1)
            : "memory");
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#ifdef FIXED
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
        __syncthreads();             // shared tiles are overwritten by the next K step
    }

    const int warp = tid >> 5, lane = tid & 31;
    const int row = m0 + warp * 16 + (lane >> 2);
#pragma unroll
    for (int c = 0; c < 8; ++c) {
        const int col = n0 + c * 8 + 2 * (lane & 3);
        C[(size_t)row * N + col]           = d[4 * c + 0];
        C[(size_t)row * N + col + 1]       = d[4 * c + 1];
        C[(size_t)(row + 8) * N + col]     = d[4 * c + 2];
        C[(size_t)(row + 8) * N + col + 1] = d[4 * c + 3];
    }
#ifndef FIXED
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
#else
    __trap();   // built for an architecture without wgmma
#endif
}
