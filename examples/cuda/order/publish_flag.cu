// A value published through a flag: block 0 writes data[] and raises flag; block 1 reads the
// flag once and, if it is up, copies data[] to out[] (out stays 0 when it is not).
// Planted bug: without -DFIXED there is no fence between writing data and raising the flag, nor
// between seeing the flag and reading data, so block 1 may see the flag and stale data.
extern "C" __global__ void publish_flag(float* data, volatile int* flag, float* out, int n)
{
    const int t = threadIdx.x;
    if (blockIdx.x == 0) {
        if (t < n) data[t] = 1.0f + t;
        __syncthreads();
        if (t == 0) {
#ifdef FIXED
            __threadfence();
#endif
            *flag = 1;
        }
    } else {
        __shared__ int seen;
        if (t == 0) seen = *flag;
        __syncthreads();
        if (seen) {
#ifdef FIXED
            __threadfence();
#endif
            if (t < n) out[t] = data[t];
        }
    }
}
