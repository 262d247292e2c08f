// Device-function calls for tests/sim/ptx/test_calls.py (compiled there with nvcc -O3 and -G):
// scalar and struct parameters and results, loops and divergent early returns in callees, a local
// array in a callee, recursion (a real one under -G), calls through a function-pointer table, a switch.
struct Pair { float a; int b; double c; };
__device__ __noinline__ float scale(float x, int k) { return x * k + 0.5f; }
__device__ __noinline__ Pair make_pair(float x, int i) { Pair p; p.a = x * 2.0f; p.b = i * 3; p.c = (double)x / 3.0; return p; }
__device__ __noinline__ float use_pair(Pair p) { return p.a + (float)p.b + (float)p.c; }
__device__ __noinline__ int collatz(int n) { int s = 0; while (n != 1) { n = (n & 1) ? 3 * n + 1 : n / 2; s++; } return s; }
__device__ __noinline__ void write_out(float* out, int i, float v) { if (i % 3 == 0) return; out[i] = v; }
__device__ __noinline__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
__device__ __noinline__ float arr_sum(const float* p, int n) { float l[8]; for (int i = 0; i < 8; i++) l[i] = p[i % n] * i; float s = 0; for (int i = 0; i < n; i++) s += l[i]; return s; }

extern "C" __global__ void calls(const float* x, float* out, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = scale(x[i], i & 7);
    Pair p = make_pair(v, i);
    v = use_pair(p);
    steps[i] = collatz(i + 1) + (i < 40 ? 0 : 0);
    v += arr_sum(x, (i & 7) + 1);
    write_out(out, i, v);
}
extern "C" __global__ void recurse(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = fact(i % 10);
}
typedef float (*fp)(float, int);
__device__ __noinline__ float f_a(float x, int k) { return x + k; }
__device__ __noinline__ float f_b(float x, int k) { return x * k; }
__device__ fp table[2] = { f_a, f_b };
extern "C" __global__ void indirect(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[i & 1](x[i], i);
}
extern "C" __global__ void sw(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int r;
    switch (x[i] & 15) {
      case 0: r = 11; break; case 1: r = 23; break; case 2: r = x[i] * 5; break; case 3: r = 7 - x[i]; break;
      case 4: r = 99; break; case 5: r = x[i] << 2; break; case 6: r = 1234; break; case 7: r = -5; break;
      case 8: r = x[i] ^ 0x55; break; case 9: r = 42; break; default: r = 0;
    }
    out[i] = r;
}
