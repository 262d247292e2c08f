// cp.async into shared memory, then every thread reads its neighbour's element.
// Planted bug: without -DFIXED the element is read before cp.async.wait_group (and before the
// barrier), while the copy may still be in flight. -DFIXED waits, then syncs, then reads.
#include <cuda_pipeline.h>

extern "C" __global__ void cp_async_early(const float4* in, float4* out)
{
    __shared__ float4 s[128];
    const int t = threadIdx.x;
    const int g = blockIdx.x * blockDim.x;
    __pipeline_memcpy_async(&s[t], &in[g + t], sizeof(float4));
    __pipeline_commit();
#ifdef FIXED
    __pipeline_wait_prior(0);
    __syncthreads();
    const float4 v = s[t];
#else
    const float4 v = s[t];
    __pipeline_wait_prior(0);
#endif
    out[g + t] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
}
