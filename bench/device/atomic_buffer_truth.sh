#!/usr/bin/env bash
# The atomic spacing patterns on one buffer, both kernels, with CUDA events and under ncu (issue #10; see
# bench/device/atomic_buffer_truth.py). Needs python3 + cupy, ncu. About 2 minutes.
#   bash bench/device/atomic_buffer_truth.sh   -> $OUT/atomic_buffer.json, $OUT/ncu_all.csv, $OUT/ncu_none.csv, $OUT/log.txt
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
PY="python3 $HERE/atomic_buffer_truth.py"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader > "$OUT/log.txt" 2>&1
timeout 120 $PY time "$OUT" >> "$OUT/log.txt" 2>&1; echo "time rc=$?" >> "$OUT/log.txt"
M="gpc__cycles_elapsed.max,sm__cycles_active.max,sm__cycles_active.avg,lts__t_sectors_op_red.sum,gpu__time_duration.sum"
for cc in all none; do    # ncu's default flushes the caches before each launch (all); events never do
  timeout 200 ncu --clock-control none --cache-control $cc --csv --print-units base \
      --kernel-name regex:'^(atomic_spacing|hot_lines)$' --metrics "$M" $PY once > "$OUT/ncu_$cc.csv" 2>> "$OUT/log.txt"
  echo "ncu $cc rc=$?" >> "$OUT/log.txt"
done
tail -4 "$OUT/log.txt"
