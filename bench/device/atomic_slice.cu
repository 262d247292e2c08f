// Kernels of bench/device/atomic_slice_truth.py (issue #10, tunit): which L2 slice a 128-byte line is homed in,
// how the time of same-address atomics over a few hot lines depends on their distance, and bf16 conversions.

// One CTA (the first to land on SM `target_smid`) does the work; warp j adds 1.0f to buf[offs[j]] 2^j times with
// all 32 lanes (2^j x 32 L2 red operations), so the per-slice lts__t_sectors_op_red counts decode as a set of lines.
extern "C" __global__ void slice_probe(float* buf, const long long* offs, int nlines, int target_smid, int* flag) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    __shared__ int ok;
    if (threadIdx.x == 0) ok = (smid == (unsigned)target_smid) && atomicCAS(flag, 0, 1 + (int)smid) == 0;
    __syncthreads();
    if (!ok) return;
    int w = threadIdx.x >> 5;
    if (w >= nlines) return;
    float* p = buf + offs[w];
    int it = 1 << w;
    for (int k = 0; k < it; ++k) atomicAdd(p, 1.0f);
}

// As examples/microbench atomic_spacing, with arbitrary hot words: warp w adds 1.0f to buf[offs[w % n]], per_thread times.
extern "C" __global__ void hot_lines(float* buf, const long long* offs, int n, int per_thread) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    float* p = buf + offs[w % n];
    for (int k = 0; k < per_thread; ++k) atomicAdd(p, 1.0f);
}

__device__ __forceinline__ float bf_up(unsigned short h) {
    float f; asm volatile("cvt.f32.bf16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short bf_dn(float f) {
    unsigned short h; asm volatile("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }

// one dependent chain of f32 -> bf16 -> f32 round trips per thread (latency of the pair)
extern "C" __global__ void bf16_rt_dep(const float* x, float* y, int iters) {
    float f = x[threadIdx.x];
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 8; ++u) f = bf_up(bf_dn(f));
    }
    y[threadIdx.x] = f;
}

// 8 independent round-trip chains per thread (throughput of cvt.rn.bf16.f32 + cvt.f32.bf16)
extern "C" __global__ void bf16_rt_indep(const float* x, float* y, int iters) {
    float f[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) f[c] = x[threadIdx.x] + c;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < 8; ++c) f[c] = bf_up(bf_dn(f[c]));
    }
    float s = 0.f;
#pragma unroll
    for (int c = 0; c < 8; ++c) s += f[c];
    y[threadIdx.x] = s;
}

// 8 chains of acc = fma(cvt.f32.bf16(cvt.rn.bf16.f32(acc)), a, b): the conversions beside an FFMA
extern "C" __global__ void bf16_rt_ffma(const float* x, float* y, float a, float b, int iters) {
    float f[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) f[c] = x[threadIdx.x] + c;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < 8; ++c) f[c] = fmaf(bf_up(bf_dn(f[c])), a, b);
    }
    float s = 0.f;
#pragma unroll
    for (int c = 0; c < 8; ++c) s += f[c];
    y[threadIdx.x] = s;
}

// the GEMM epilogue/prologue shape: two f32 packed by cvt.rn.bf16x2.f32, unpacked by mov.b32 {lo, hi} and
// cvt.f32.bf16 of each half, then an FFMA each (4 pairs per thread)
extern "C" __global__ void bf16x2_unpack_ffma(const float* x, float* y, float a, float b, int iters) {
    float f[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) f[c] = x[threadIdx.x] + c;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < 8; c += 2) {
            unsigned p; unsigned short lo, hi; float u, v;
            asm volatile("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(p) : "f"(f[c + 1]), "f"(f[c]));
            asm volatile("mov.b32 {%0, %1}, %2;" : "=h"(lo), "=h"(hi) : "r"(p));
            asm volatile("cvt.f32.bf16 %0, %1;" : "=f"(u) : "h"(lo));
            asm volatile("cvt.f32.bf16 %0, %1;" : "=f"(v) : "h"(hi));
            f[c] = fmaf(u, a, b);
            f[c + 1] = fmaf(v, a, b);
        }
    }
    float s = 0.f;
#pragma unroll
    for (int c = 0; c < 8; ++c) s += f[c];
    y[threadIdx.x] = s;
}
