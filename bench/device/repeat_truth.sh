#!/usr/bin/env bash
# Every microbenchmark of examples/microbench launched again and again under Nsight Compute, to say how much
# one launch varies (bench/timing_microbench.py compares the model with the median of the repeats where there
# are repeats). Runs passes of `microbench_truth.py once` (every manifest entry once, in manifest order) until
# the next pass would outlast BUDGET_S; each pass lands in $OUT/ncu_repN.csv, so a call cut short keeps the
# passes it finished; at the end they are packed into $OUT/reps.tgz (the device tool brings back few files).
#   bash bench/device/repeat_truth.sh [BUDGET_S] [KERNEL_REGEX]
# Then here: python3 bench/device/microbench_truth.py repeats DIR   (DIR/ncu_rep*.csv -> DIR/cycles.json)
# Needs .whl (the wheels of model_benches.sh) carried with the tree, ncu, python3 + cupy.
set -u
BUDGET=${1:-540}
REGEX=${2:-.}
METRICS=gpc__cycles_elapsed.max,sm__cycles_active.max
start=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-cache-dir .whl/*.whl > "$OUT/pip.log" 2>&1
export PYTHONPATH=$PWD
SMI="nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader"
echo "$METRICS kernel-name regex:$REGEX" > "$OUT/log.txt"
$SMI >> "$OUT/log.txt" 2>&1
i=0; last=0
while :; do
  now=$(date +%s); used=$((now - start))
  [ $i -gt 0 ] && [ $((used + last * 12 / 10)) -gt "$BUDGET" ] && break
  i=$((i + 1))
  t0=$(date +%s)
  timeout $((BUDGET - used + 30)) ncu --clock-control none --kernel-name "regex:$REGEX" --metrics "$METRICS" --csv \
    python3 bench/device/microbench_truth.py once 2>> "$OUT/log.txt" | grep -v '^==PROF==' | grep '^"' > "$OUT/ncu_rep$i.csv"
  rc=${PIPESTATUS[0]}
  last=$(( $(date +%s) - t0 ))
  echo "pass $i: ${last}s rc=$rc" >> "$OUT/log.txt"
done
$SMI >> "$OUT/log.txt" 2>&1
(cd "$OUT" && tar czf reps.tgz ncu_rep*.csv && rm -f ncu_rep*.csv)
tail -3 "$OUT/log.txt"
