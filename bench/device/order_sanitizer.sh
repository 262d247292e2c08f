#!/bin/sh
# compute-sanitizer (racecheck, synccheck, memcheck) on examples/cuda/order, bug and fixed twins.
# Run on the H200 from the repo root with the sources in .dev/memorder/order; writes $OUT/order_sanitizer.txt
set -u
S=.dev/memorder/order
R=$OUT/order_sanitizer.txt
cat > /tmp/host.cu <<'HOST'
#include <cstdio>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
extern "C" __global__ void KERNEL_DECL;
int main(){
  void *a,*b,*c,*d; cudaMalloc(&a,1<<20); cudaMalloc(&b,1<<20); cudaMalloc(&c,1<<20); cudaMalloc(&d,1<<20);
  cudaMemset(a,0,1<<20); cudaMemset(b,0,1<<20); cudaMemset(c,0,1<<20);
  LAUNCH;
  cudaError_t e = cudaDeviceSynchronize(); printf("launch: %s\n", cudaGetErrorString(e)); return 0; }
HOST
run() { k=$1; arch=$2; decl=$3; launch=$4
  for v in bug fixed; do D=""; [ $v = fixed ] && D=-DFIXED
    sed -e "s|KERNEL_DECL|$decl|" -e "s|LAUNCH|$launch|" /tmp/host.cu > /tmp/h_$k.cu
    nvcc -arch=$arch -lineinfo $D -o /tmp/$k.$v $S/$k.cu /tmp/h_$k.cu >>$R 2>&1 || echo "build failed $k $v" >>$R
    for tool in racecheck synccheck memcheck; do
      echo "=== $k $v $tool" >>$R
      timeout 40 compute-sanitizer --tool $tool /tmp/$k.$v >>$R 2>&1
    done
  done
}
run last_block sm_90 "last_block_sum(const float*, float*, float*, int)" "last_block_sum<<<8,128>>>((float*)a,(float*)b,(float*)c,1000)"
run publish_flag sm_90 "publish_flag(float*, volatile int*, float*, int)" "publish_flag<<<2,64>>>((float*)a,(volatile int*)b,(float*)c,64)"
run cp_async_early sm_90 "cp_async_early(const float4*, float4*)" "cp_async_early<<<2,128>>>((const float4*)a,(float4*)b)"
run wgmma_early sm_90a "wgmma_early(const __half*, const __half*, float*, int, int, int)" "wgmma_early<<<1,128>>>((const __half*)a,(const __half*)b,(float*)c,64,64,32)"
