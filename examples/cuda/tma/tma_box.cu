// TMA box copies through a CUtensorMap (cp.async.bulk.tensor, tile mode), for the simulator's tensor
// maps (sim/ptx/tensormap.py) against the H200. One CTA per box: thread 0 loads the box at
// (blockIdx.x * BW + ox, blockIdx.y * BH + oy) of `src` into shared memory (mbarrier complete_tx),
// every thread dumps the box's shared bytes as they landed (swizzle, out-of-bound fill) into
// `raw`, then thread 0 stores the box to `dst` at the same coordinates (a bulk group; only the
// in-bound elements are written). The host (-DTMA_HOST) encodes the maps with
// cuTensorMapEncodeTiled and runs the variants of bench/device/tma_truth.sh.
//
//   nvcc -ptx -arch=sm_90a -lineinfo tma_box.cu -o ../../ptx/tma/tma_box.sm_90a.ptx
#include <cuda.h>
#include <cuda_fp16.h>
#include <cstdint>

template <typename T, int BW, int BH>
__global__ void tma_box(const __grid_constant__ CUtensorMap src, const __grid_constant__ CUtensorMap dst,
                        uint32_t* raw, int ox, int oy, int box_bytes)
{
    __shared__ alignas(1024) unsigned char box[BW * BH * sizeof(T)];
    __shared__ alignas(8) uint64_t bar;
    const int cx = blockIdx.x * BW + ox, cy = blockIdx.y * BH + oy;
    const uint32_t sbox = (uint32_t)__cvta_generic_to_shared(box);
    const uint32_t sbar = (uint32_t)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar));
        asm volatile("fence.proxy.async.shared::cta;");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(box_bytes));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(sbox), "l"(&src), "r"(cx), "r"(cy), "r"(sbar) : "memory");
    }
    uint32_t done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(sbar) : "memory");
    const int words = box_bytes / 4;
    const int cta = blockIdx.y * gridDim.x + blockIdx.x;
    for (int i = threadIdx.x; i < words; i += blockDim.x)
        raw[cta * words + i] = reinterpret_cast<const uint32_t*>(box)[i];
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                     ::"l"(&dst), "r"(cx), "r"(cy), "r"(sbox) : "memory");
        asm volatile("cp.async.bulk.commit_group;");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}

template __global__ void tma_box<float, 32, 8>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, uint32_t*, int, int, int);
template __global__ void tma_box<float, 16, 8>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, uint32_t*, int, int, int);
template __global__ void tma_box<float, 8, 8>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, uint32_t*, int, int, int);
template __global__ void tma_box<__half, 64, 8>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, uint32_t*, int, int, int);


// The same through libcu++ (the CUDA C++ Programming Guide's TMA example): cuda::barrier and
// cuda::device::experimental::cp_async_bulk_tensor_*.
#include <cuda/barrier>
namespace cde = cuda::device::experimental;

template <typename T, int BW, int BH>
__global__ void tma_box_cg(const __grid_constant__ CUtensorMap src, const __grid_constant__ CUtensorMap dst,
                           uint32_t* raw, int ox, int oy, int box_bytes)
{
    __shared__ alignas(1024) unsigned char box[BW * BH * sizeof(T)];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    const int cx = blockIdx.x * BW + ox, cy = blockIdx.y * BH + oy;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        cde::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    cuda::barrier<cuda::thread_scope_block>::arrival_token token;
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_global_to_shared(box, &src, cx, cy, bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, box_bytes);
    } else {
        token = bar.arrive();
    }
    bar.wait(std::move(token));
    const int words = box_bytes / 4;
    const int cta = blockIdx.y * gridDim.x + blockIdx.x;
    for (int i = threadIdx.x; i < words; i += blockDim.x)
        raw[cta * words + i] = reinterpret_cast<const uint32_t*>(box)[i];
    cde::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cde::cp_async_bulk_tensor_2d_shared_to_global(&dst, cx, cy, box);
        cde::cp_async_bulk_commit_group();
        cde::cp_async_bulk_wait_group_read<0>();
    }
}

template __global__ void tma_box_cg<float, 32, 8>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, uint32_t*, int, int, int);
template __global__ void tma_box_cg<float, 16, 8>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, uint32_t*, int, int, int);
template __global__ void tma_box_cg<float, 8, 8>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, uint32_t*, int, int, int);
template __global__ void tma_box_cg<__half, 64, 8>(const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, uint32_t*, int, int, int);

#ifdef TMA_HOST
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

static EncodeTiled encode;

// variant: name, element bytes, W, H (tensor), box w, h, element strides, swizzle, fill, offsets, grid
struct Variant { const char* name; int es, W, H, bw, bh, e0, e1; CUtensorMapSwizzle sw; CUtensorMapFloatOOBfill fill; int ox, oy, gx, gy; };

template <typename T, int BW, int BH>
static void run(const Variant& v, FILE* log, int which)
{
    const size_t n = (size_t)v.W * v.H;
    std::vector<unsigned char> host(n * v.es);
    for (size_t i = 0; i < n; ++i) {
        if (v.es == 4) { float f = (float)i + 0.5f; memcpy(&host[i * 4], &f, 4); }
        else { __half h = __float2half((float)(i % 1200) * 0.25f); memcpy(&host[i * 2], &h, 2); }
    }
    void *dsrc, *ddst; uint32_t* draw;
    CK(cudaMalloc(&dsrc, n * v.es)); CK(cudaMalloc(&ddst, n * v.es));
    CK(cudaMemcpy(dsrc, host.data(), n * v.es, cudaMemcpyHostToDevice));
    CK(cudaMemset(ddst, 0xEE, n * v.es));
    const int cw = (v.bw + v.e0 - 1) / v.e0, ch = (v.bh + v.e1 - 1) / v.e1;
    const int box_bytes = cw * ch * v.es;
    const int ctas = v.gx * v.gy;
    CK(cudaMalloc(&draw, (size_t)ctas * box_bytes));
    CK(cudaMemset(draw, 0xEE, (size_t)ctas * box_bytes));
    CUtensorMapDataType dt = v.es == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    cuuint64_t dims[2] = {(cuuint64_t)v.W, (cuuint64_t)v.H}, strides[1] = {(cuuint64_t)v.W * v.es};
    cuuint32_t box[2] = {(cuuint32_t)v.bw, (cuuint32_t)v.bh}, est[2] = {(cuuint32_t)v.e0, (cuuint32_t)v.e1};
    cuuint32_t dbox[2] = {(cuuint32_t)cw, (cuuint32_t)ch}, one[2] = {1, 1};
    CUtensorMap ms, md;
    CUresult r1 = encode(&ms, dt, 2, dsrc, dims, strides, box, est, CU_TENSOR_MAP_INTERLEAVE_NONE, v.sw,
                         CU_TENSOR_MAP_L2_PROMOTION_NONE, v.fill);
    CUresult r2 = encode(&md, dt, 2, ddst, dims, strides, dbox, one, CU_TENSOR_MAP_INTERLEAVE_NONE, v.sw,
                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    fprintf(log, "%s k%d encode %d %d\n", v.name, which, (int)r1, (int)r2);
    if (r1 || r2) return;
    if (which == 0) tma_box<T, BW, BH><<<dim3(v.gx, v.gy), 128>>>(ms, md, draw, v.ox, v.oy, box_bytes);
    else tma_box_cg<T, BW, BH><<<dim3(v.gx, v.gy), 128>>>(ms, md, draw, v.ox, v.oy, box_bytes);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    std::vector<unsigned char> out(n * v.es), rawh((size_t)ctas * box_bytes);
    CK(cudaMemcpy(out.data(), ddst, n * v.es, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(rawh.data(), draw, rawh.size(), cudaMemcpyDeviceToHost));
    char path[256];
    snprintf(path, sizeof path, "%s/%s.k%d.raw.bin", getenv("OUT") ? getenv("OUT") : ".", v.name, which);
    FILE* f = fopen(path, "wb"); fwrite(rawh.data(), 1, rawh.size(), f); fclose(f);
    snprintf(path, sizeof path, "%s/%s.k%d.dst.bin", getenv("OUT") ? getenv("OUT") : ".", v.name, which);
    f = fopen(path, "wb"); fwrite(out.data(), 1, out.size(), f); fclose(f);
    fprintf(log, "%s k%d ok box_bytes %d ctas %d\n", v.name, which, box_bytes, ctas);
    cudaFree(dsrc); cudaFree(ddst); cudaFree(draw);
}

int main(int argc, char** argv)
{
    const int sel = argc > 1 ? atoi(argv[1]) : -1, which = argc > 2 ? atoi(argv[2]) : 0;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void**)&encode, cudaEnableDefault, &q));
    FILE* log = stdout;
    const Variant vs[] = {
        {"sw128_zero", 4, 72, 20, 32, 8, 1, 1, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, -8, -3, 3, 3},
        {"sw64_nan", 4, 72, 20, 16, 8, 1, 1, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, -5, -2, 5, 3},
        {"sw32_zero", 4, 72, 20, 8, 8, 1, 1, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, 3, -1, 9, 3},
        {"estride_nan", 4, 72, 20, 16, 8, 1, 2, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, -4, -6, 5, 4},
        {"sw128_inner64", 4, 72, 20, 16, 8, 1, 1, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, 0, 0, 5, 3},
        {"f16_sw128_nan", 2, 104, 12, 64, 8, 1, 1, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, -10, -3, 2, 3},
    };
    if (sel < 0 || sel == 0) run<float, 32, 8>(vs[0], log, which);
    if (sel < 0 || sel == 1) run<float, 16, 8>(vs[1], log, which);
    if (sel < 0 || sel == 2) run<float, 8, 8>(vs[2], log, which);
    if (sel < 0 || sel == 3) run<float, 16, 8>(vs[3], log, which);
    if (sel < 0 || sel == 4) run<float, 16, 8>(vs[4], log, which);
    if (sel < 0 || sel == 5) run<__half, 64, 8>(vs[5], log, which);
    return 0;
}
#endif
