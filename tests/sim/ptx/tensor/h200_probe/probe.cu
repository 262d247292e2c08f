// Tensor-core probe for sim/ptx/tensor: wgmma (layouts, swizzles, numerics) and mma.sync numerics.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

struct WCase { int variant; int scale_d; unsigned long long da, db; };

#define R8(i) "+r"(d[i]), "+r"(d[i+1]), "+r"(d[i+2]), "+r"(d[i+3]), "+r"(d[i+4]), "+r"(d[i+5]), "+r"(d[i+6]), "+r"(d[i+7])
#define L32 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}"
#define L16 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}"
#define W32(INSTR, TAIL) asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" INSTR " " L32 ", %32, %33, p" TAIL ";\n}\n" \
      : R8(0), R8(8), R8(16), R8(24) : "l"(da), "l"(db), "r"(sd) : "memory")
#define W16(INSTR, TAIL) asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" INSTR " " L16 ", %16, %17, p" TAIL ";\n}\n" \
      : R8(0), R8(8) : "l"(da), "l"(db), "r"(sd) : "memory")

extern "C" __global__ void __launch_bounds__(128) wg(const WCase* cases, const uint4* images, const unsigned* din, unsigned* dout)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    unsigned char* smem = (unsigned char*)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    const WCase c = cases[blockIdx.x];
    const uint4* img = images + (size_t)blockIdx.x * (32768 / 16);
    for (int i = threadIdx.x; i < 32768 / 16; i += 128) ((uint4*)smem)[i] = img[i];
    unsigned d[32];
    for (int i = 0; i < 32; ++i) d[i] = din[((size_t)blockIdx.x * 128 + threadIdx.x) * 32 + i];
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    const unsigned long long da = c.da + (base >> 4), db = c.db + (base >> 4);
    const int sd = c.scale_d;
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    switch (c.variant) {
    case 0: W32("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ", 1, 1, 0, 0"); break;
    case 1: W32("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ", 1, 1, 0, 1"); break;
    case 2: W32("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ", 1, 1, 1, 0"); break;
    case 3: W32("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", ", 1, 1, 0, 1"); break;
    case 4: W32("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3", ", 1, 1"); break;
    case 5: W16("wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16", ", 1, 1, 0, 0"); break;
    case 6: W32("wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2", ", 1, 1"); break;
    case 7: W32("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", ", -1, 1, 0, 0"); break;
    case 8: W32("wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8", ""); break;
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    for (int i = 0; i < 32; ++i) dout[((size_t)blockIdx.x * 128 + threadIdx.x) * 32 + i] = d[i];
}

extern "C" __global__ void mm(const int* variants, const unsigned* in, unsigned* out)
{
    const int w = blockIdx.x, t = threadIdx.x;
    const unsigned* r = in + ((size_t)w * 32 + t) * 10;   // a0..a3 b0 b1 c0..c3
    unsigned a0 = r[0], a1 = r[1], a2 = r[2], a3 = r[3], b0 = r[4], b1 = r[5];
    unsigned d0 = r[6], d1 = r[7], d2 = r[8], d3 = r[9];
    switch (variants[w]) {
    case 0: asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1)); break;
    case 1: asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1)); break;
    case 2: asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                         : "+r"(d0), "+r"(d1) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1)); break;
    case 3: asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1)); break;
    case 4: asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1)); break;
    }
    unsigned* o = out + ((size_t)w * 32 + t) * 4;
    o[0] = d0; o[1] = d1; o[2] = d2; o[3] = d3;
}

static std::vector<char> slurp(const char* p) {
    FILE* f = fopen(p, "rb"); if (!f) { printf("no %s\n", p); exit(1); }
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    std::vector<char> v(n); if (fread(v.data(), 1, n, f) != (size_t)n) exit(1); fclose(f); return v;
}
static void dump(const char* p, const void* d, size_t n) { FILE* f = fopen(p, "wb"); fwrite(d, 1, n, f); fclose(f); }
template <class T> static T* up(const std::vector<char>& v) { T* d; CK(cudaMalloc(&d, v.size())); CK(cudaMemcpy(d, v.data(), v.size(), cudaMemcpyHostToDevice)); return d; }

int main(int argc, char** argv) {
    const char* dir = argv[1]; const char* out = argv[2];
    char p[512];
    snprintf(p, sizeof p, "%s/wg_cases.bin", dir); auto cases = slurp(p);
    snprintf(p, sizeof p, "%s/wg_images.bin", dir); auto images = slurp(p);
    snprintf(p, sizeof p, "%s/wg_din.bin", dir); auto din = slurp(p);
    int n = cases.size() / sizeof(WCase);
    unsigned* dout; CK(cudaMalloc(&dout, din.size()));
    CK(cudaFuncSetAttribute(wg, cudaFuncAttributeMaxDynamicSharedMemorySize, 32768 + 1024));
    wg<<<n, 128, 32768 + 1024>>>(up<WCase>(cases), up<uint4>(images), up<unsigned>(din), dout);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    std::vector<char> h(din.size()); CK(cudaMemcpy(h.data(), dout, h.size(), cudaMemcpyDeviceToHost));
    snprintf(p, sizeof p, "%s/wg_dout.bin", out); dump(p, h.data(), h.size());
    snprintf(p, sizeof p, "%s/mm_variants.bin", dir); auto mv = slurp(p);
    snprintf(p, sizeof p, "%s/mm_in.bin", dir); auto mi = slurp(p);
    int nm = mv.size() / 4;
    unsigned* mo; CK(cudaMalloc(&mo, (size_t)nm * 32 * 4 * 4));
    mm<<<nm, 32>>>(up<int>(mv), up<unsigned>(mi), mo);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    std::vector<char> hm((size_t)nm * 32 * 16); CK(cudaMemcpy(hm.data(), mo, hm.size(), cudaMemcpyDeviceToHost));
    snprintf(p, sizeof p, "%s/mm_out.bin", out); dump(p, hm.data(), hm.size());
    printf("ok %d wgmma cases, %d mma cases\n", n, nm);
    return 0;
}
