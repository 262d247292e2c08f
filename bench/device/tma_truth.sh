#!/bin/bash
# H200 truth for the TMA examples (issue #11): examples/cuda/tma/tma_box.cu (cuTensorMapEncodeTiled +
# cp.async.bulk.tensor; raw shared boxes and stored tensors; kernel 0 = inline PTX, 1 = libcu++) and,
# with an argument 'triton', the Triton TMA GEMM (bench/device/tma_gemm_truth.py).
# Run from a directory holding tma_box.cu (and tma_gemm.py, tma_gemm_truth.py); writes under $OUT.
set -x
nvidia-smi -L
nvcc -arch=sm_90a -DTMA_HOST tma_box.cu -o tma_box 2>&1 | grep error
for v in 0 1 2 3 4 5; do for k in 0 1; do
  timeout 20 ./tma_box $v $k >> "$OUT/tma_box.log" 2>&1; echo "variant $v kernel $k rc $?" >> "$OUT/tma_box.log"
done; done
cat "$OUT/tma_box.log"
if grep -q "illegal" "$OUT/tma_box.log"; then
  mkdir -p /tmp/san && OUT=/tmp/san timeout 60 compute-sanitizer --tool memcheck ./tma_box 0 0 > "$OUT/tma_sanitizer_memcheck.txt" 2>&1
  head -30 "$OUT/tma_sanitizer_memcheck.txt"
fi
mkdir -p /tmp/san && OUT=/tmp/san timeout 60 compute-sanitizer --tool racecheck ./tma_box 0 1 > "$OUT/tma_sanitizer_racecheck.txt" 2>&1
tail -2 "$OUT/tma_sanitizer_racecheck.txt"
[ "$1" = triton ] && timeout 300 python3 tma_gemm_truth.py 2>&1 | tail -5
ls "$OUT" | head -40
