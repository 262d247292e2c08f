#!/usr/bin/env bash
# Measure examples/microbench on the GPU of this machine; everything lands in OUTDIR (default $OUT).
#   bash bench/device/microbench_truth.sh [BENCHDIR] [OUTDIR]
# BENCHDIR: a copy of examples/microbench (default: the project's). Needs nvcc, ncu, cuobjdump, python3 + cupy.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
BENCH="${1:-$HERE/../../examples/microbench}"
OUTD="${2:-$OUT}"
PY="python3 $HERE/microbench_truth.py --bench $BENCH"
SMI="nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv"
$SMI > "$OUTD/smi.csv" 2>&1
$PY props "$OUTD"
$PY time "$OUTD" 2>&1 | tee "$OUTD/log.txt"
$SMI >> "$OUTD/smi.csv" 2>&1
ncu --clock-control none --kernel-name regex:'^(ffma|hfma2|smem|copy|strided|transpose|atomic)' \
    --metrics "$($PY metrics)" --csv $PY once > "$OUTD/ncu_raw.csv" 2>> "$OUTD/log.txt"
rc=$?; echo "ncu rc=$rc" >> "$OUTD/log.txt"
if ! grep -q '^"ID"' "$OUTD/ncu_raw.csv"; then   # a metric this ncu does not know: retry with the corpus's proven set
    ncu --clock-control none --kernel-name regex:'^(ffma|hfma2|smem|copy|strided|transpose|atomic)' \
        --metrics "$($PY metrics | tr ',' '\n' | grep -v -e fp16 -e op_red -e op_atom -e config_size -e '\.max$' | paste -sd,),gpc__cycles_elapsed.max" \
        --csv $PY once > "$OUTD/ncu_raw.csv" 2>> "$OUTD/log.txt"
    echo "ncu retry rc=$?" >> "$OUTD/log.txt"
fi
ncu --clock-control none --kernel-name occ_probe --metrics "$($PY probe-metrics)" --csv $PY probe \
    > "$OUTD/probe_raw.csv" 2>> "$OUTD/log.txt"
echo "probe rc=$?" >> "$OUTD/log.txt"
$SMI >> "$OUTD/smi.csv" 2>&1
for f in "$BENCH"/cuda/*.cu; do
    nvcc -cubin -arch=sm_90 -o /tmp/mb.cubin "$f" && cuobjdump -sass /tmp/mb.cubin
done > "$OUTD/sass.txt" 2>&1
$PY merge "$OUTD"
tail -5 "$OUTD/log.txt"
