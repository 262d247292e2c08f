// examples/microbench's copy_f4 / copy_f4_cg / read_cg / write_f4 with a per-CTA record (issue #10: which SMs are
// the slow ones in an L2-bound copy where every SM has the same work). Thread 0 of each CTA writes
// rec[4 * cta + 0..3] = smid, clock64 at entry, clock64 after the CTA's last store (a __syncthreads first),
// %globaltimer at entry (ns). The loops are those of examples/microbench/cuda/copy.cu and l2.cu. With a non-null
// `pass`, thread 0 also writes pass[reps * cta + r] = clock64 after its own share of pass r (no barrier: thread 0's
// progress, one store per pass): when in a multi-pass copy the passes speed up (L2 hits after the first) or not.
__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
__device__ __forceinline__ unsigned long long gtime() {
    unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }

#define PROBE_BEGIN long long c0 = clock64(); unsigned long long g0 = gtime();
#define PROBE_END __syncthreads(); if (threadIdx.x == 0) { long long c1 = clock64(); \
    rec[4 * blockIdx.x] = smid(); rec[4 * blockIdx.x + 1] = c0; rec[4 * blockIdx.x + 2] = c1; \
    rec[4 * blockIdx.x + 3] = (long long)g0; }

// copy.cu's copy_f4 (CG false) and copy_f4_cg (CG true: loads marked .cg, __ldcg), one loop for both
template <bool CG>
__device__ __forceinline__ void copy_loop(const float4* src, float4* dst, int n4, int reps, long long* pass) {
    int stride = gridDim.x * blockDim.x;
    for (int r = 0; r < reps; ++r) {
        float fr = (float)r;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
            float4 v = CG ? __ldcg(&src[i]) : src[i];
            dst[i] = make_float4(v.x + fr, v.y + fr, v.z + fr, v.w + fr);
        }
        if (pass && threadIdx.x == 0) pass[reps * blockIdx.x + r] = clock64();
    }
}

extern "C" __global__ void copy_f4_p(const float4* src, float4* dst, int n4, int reps, long long* rec,
                                  long long* pass) {
    PROBE_BEGIN
    copy_loop<false>(src, dst, n4, reps, pass);
    PROBE_END
}

extern "C" __global__ void copy_f4_cg_p(const float4* src, float4* dst, int n4, int reps, long long* rec,
                                  long long* pass) {
    PROBE_BEGIN
    copy_loop<true>(src, dst, n4, reps, pass);
    PROBE_END
}

extern "C" __global__ void read_cg_p(const float4* __restrict__ src, float* out, int n4, int reps, long long* rec) {
    PROBE_BEGIN
    int stride = gridDim.x * blockDim.x;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.f;
    for (int r = 0; r < reps; ++r)
        for (int i = t; i < n4; i += stride) {
            float4 v = __ldcg(&src[i]);
            acc += (v.x + v.y) + (v.z + v.w);
        }
    out[t] = acc;
    PROBE_END
}

extern "C" __global__ void write_f4_p(float4* dst, int n4, int reps, long long* rec) {
    PROBE_BEGIN
    int stride = gridDim.x * blockDim.x;
    for (int r = 0; r < reps; ++r) {
        float fr = (float)r;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride)
            asm volatile("st.global.v4.f32 [%0], {%1, %1, %1, %1};" :: "l"(dst + i), "f"(fr) : "memory");
    }
    PROBE_END
}
