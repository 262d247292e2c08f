// Block-level inclusive scan (the first pass of a device-wide scan): each CTA of 256 threads scans its own
// 1024-element segment of x (4 consecutive floats per thread through one float4 load, a serial scan in
// registers, a warp scan of the thread totals with shfl.up, the 8 warp totals scanned by warp 0 through
// shared memory) and writes the segment's total to sums[blockIdx.x]. Requires n = 1024 * gridDim.x.
extern "C" __global__ void __launch_bounds__(256)
scan_block(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ sums, int n) {
    __shared__ float warp_tot[8];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t base = (size_t)blockIdx.x * 1024 + threadIdx.x * 4;
    float4 v = reinterpret_cast<const float4*>(x + base)[0];
    v.y += v.x;
    v.z += v.y;
    v.w += v.z;
    float t = v.w;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const float u = __shfl_up_sync(0xffffffffu, t, o);
        if (lane >= o) t += u;
    }
    if (lane == 31) warp_tot[warp] = t;
    __syncthreads();
    if (warp == 0) {
        float w = lane < 8 ? warp_tot[lane] : 0.0f;
#pragma unroll
        for (int o = 1; o < 8; o <<= 1) {
            const float u = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o) w += u;
        }
        if (lane < 8) warp_tot[lane] = w;
    }
    __syncthreads();
    const float off = (t - v.w) + (warp ? warp_tot[warp - 1] : 0.0f);
    v.x += off;
    v.y += off;
    v.z += off;
    v.w += off;
    reinterpret_cast<float4*>(y + base)[0] = v;
    if (threadIdx.x == 255) sums[blockIdx.x] = v.w;
}
