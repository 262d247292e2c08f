// 5-point Jacobi step on an nx x ny fp32 grid (row-major, x fastest): interior points get
// c0 * u + c1 * (north + south + east + west), the boundary is copied. Each 32 x 8 CTA stages its tile
// plus a one-point halo (34 x 10) in shared memory. Launch: block (32, 8), grid (ceil(nx/32), ceil(ny/8)).
extern "C" __global__ void __launch_bounds__(256)
stencil2d(const float* __restrict__ u, float* __restrict__ v, int nx, int ny, float c0, float c1) {
    __shared__ float t[10][34];
    const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    const int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
    const bool in = x < nx && y < ny;
    t[ly][lx] = in ? u[(size_t)y * nx + x] : 0.0f;
    if (threadIdx.y == 0) {
        t[0][lx] = (y > 0 && x < nx) ? u[(size_t)(y - 1) * nx + x] : 0.0f;
        const int yb = blockIdx.y * 8 + 8;
        t[9][lx] = (yb < ny && x < nx) ? u[(size_t)yb * nx + x] : 0.0f;
    }
    if (threadIdx.x == 0) {
        t[ly][0] = (x > 0 && y < ny) ? u[(size_t)y * nx + x - 1] : 0.0f;
        const int xr = blockIdx.x * 32 + 32;
        t[ly][33] = (xr < nx && y < ny) ? u[(size_t)y * nx + xr] : 0.0f;
    }
    __syncthreads();
    if (!in) return;
    float r = t[ly][lx];
    if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1)
        r = c0 * r + c1 * (t[ly - 1][lx] + t[ly + 1][lx] + t[ly][lx - 1] + t[ly][lx + 1]);
    v[(size_t)y * nx + x] = r;
}
