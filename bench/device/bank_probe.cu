// One shared-memory load per warp, with per-lane byte offsets and an active-lane mask given by the
// host: measures how predicated-off lanes count in the H200's shared-memory wavefronts.
// probe32/64/128 issue one LDS.32/.64/.128 each (ptxas keeps the single predicated load).
extern "C" __global__ void probe32(const int* offs, unsigned mask, float* out) {
    __shared__ __align__(16) float s[8192];
    int l = threadIdx.x;
    for (int i = l; i < 8192; i += 32) s[i] = (float)i;
    __syncthreads();
    float v = -1.0f;
    if ((mask >> l) & 1u) v = s[offs[l] / 4];
    out[l] = v;
}

extern "C" __global__ void probe64(const int* offs, unsigned mask, float* out) {
    __shared__ __align__(16) float s[8192];
    int l = threadIdx.x;
    for (int i = l; i < 8192; i += 32) s[i] = (float)i;
    __syncthreads();
    float2 v = make_float2(-1.0f, -1.0f);
    if ((mask >> l) & 1u) v = reinterpret_cast<const float2*>(s)[offs[l] / 8];
    out[l] = v.x + v.y;
}

extern "C" __global__ void probe128(const int* offs, unsigned mask, float* out) {
    __shared__ __align__(16) float s[8192];
    int l = threadIdx.x;
    for (int i = l; i < 8192; i += 32) s[i] = (float)i;
    __syncthreads();
    float4 v = make_float4(-1.0f, -1.0f, -1.0f, -1.0f);
    if ((mask >> l) & 1u) v = reinterpret_cast<const float4*>(s)[offs[l] / 16];
    out[l] = v.x + v.y + v.z + v.w;
}
