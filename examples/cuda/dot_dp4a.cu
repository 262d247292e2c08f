// int8 dot products with __dp4a: out[i] = sum_k a[i,k] * b[k] for int8 rows packed 4 per int.
extern "C" __global__ void dot_dp4a(const int* a, const int* b, int* out, int rows, int k4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    int acc = 0;
    for (int k = 0; k < k4; ++k) acc = __dp4a(a[i * k4 + k], b[k], acc);
    out[i] = acc;
}
