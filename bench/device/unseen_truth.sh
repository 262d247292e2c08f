#!/usr/bin/env bash
# Measure examples/unseen (the never-seen kernels) on the GPU of this machine; everything lands in OUTDIR.
#   bash bench/device/unseen_truth.sh [BENCHDIR] [OUTDIR]
# BENCHDIR: a copy of examples/unseen (default: the project's). Needs ncu, nvcc + cuobjdump (SASS), python3 + cupy.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
BENCH="${1:-$HERE/../../examples/unseen}"
OUTD="${2:-$OUT}"
PY="python3 $HERE/unseen_truth.py --bench $BENCH"
RX='regex:^(sgemm_coalesced|sgemm_regblock2d|histogram256|scan_block|conv1d|gelu_f16|gemv_f32|rmsnorm_bf16|igemm_dp4a_tiled|hgemm_mma_ldmatrix|stencil2d)$'
SMI="nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv"
$SMI > "$OUTD/smi.csv" 2>&1
python3 $HERE/microbench_truth.py props "$OUTD" > /dev/null
$PY time "$OUTD" 2>&1 | tee "$OUTD/log.txt"
$SMI >> "$OUTD/smi.csv" 2>&1
timeout ${NCU_TIMEOUT:-330} ncu --clock-control none --kernel-name "$RX" --metrics "$($PY metrics)" --csv $PY once > "$OUTD/ncu_raw.csv" 2>> "$OUTD/log.txt"
echo "ncu rc=$?" >> "$OUTD/log.txt"
if ! grep -q '^"ID"' "$OUTD/ncu_raw.csv"; then   # a metric this ncu does not know: the microbenchmarks' proven set
    ncu --clock-control none --kernel-name "$RX" --metrics "$(python3 $HERE/microbench_truth.py metrics)" --csv $PY once \
        > "$OUTD/ncu_raw.csv" 2>> "$OUTD/log.txt"
    echo "ncu retry (microbench metric set) rc=$?" >> "$OUTD/log.txt"
fi
$SMI >> "$OUTD/smi.csv" 2>&1
for f in "$BENCH"/cuda/*.cu; do
    nvcc -cubin -arch=sm_90 -o /tmp/unseen.cubin "$f" && cuobjdump -sass /tmp/unseen.cubin
done > "$OUTD/sass.txt" 2>&1
$PY merge "$OUTD"
tail -5 "$OUTD/log.txt"
