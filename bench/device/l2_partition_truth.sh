#!/usr/bin/env bash
# The L2 partition of every 4 KiB run of a 4 MiB span (two 2 MiB pages) seen from SM 0, and the side of every SM
# (20 of those runs probed from each SM 0-131), with slice_probe under Nsight Compute (issue #10; the copies'
# slowest SMs, examples/h200/l2_sweep/README.md). Needs nvcc, ncu, python3 + numpy + cupy. About 2 minutes.
#   bash bench/device/l2_partition_truth.sh  -> $OUT/probe_P_0.{csv,json}, $OUT/probe_Q_all.{csv,json}, $OUT/log.txt
# Then here: python3 bench/l2_partition.py examples/h200/l2_partition
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
D=/tmp/l2_partition; mkdir -p "$D"
date -u > "$OUT/log.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader >> "$OUT/log.txt" 2>&1
nvcc -cubin -arch=sm_90 -o "$D/as.cubin" "$HERE/atomic_slice.cu" >> "$OUT/log.txt" 2>&1
PY="python3 $HERE/atomic_slice_truth.py $D/as.cubin"
M="lts__t_sectors_op_red.sum,lts__t_sectors_srcunit_tex_op_red.sum,gpc__cycles_elapsed.max"
P="--clock-control none --print-units base --csv --kernel-name slice_probe --metrics $M"
for spec in "P 0 150" "Q all 240"; do
  set -- $spec
  timeout "$3" ncu $P $PY probe "$OUT" "$1" "$2" > "$OUT/probe_$1_$2.csv" 2>> "$OUT/log.txt"
  echo "probe $1 $2 rc=$? $(date -u +%T)" >> "$OUT/log.txt"
done
tail -4 "$OUT/log.txt"
