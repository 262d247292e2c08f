#!/usr/bin/env bash
# The L2 slice of 128-byte lines and the time of atomics over hot lines at chosen distances (issue #10, tunit),
# and bf16 conversion kernels, on the GPU of this machine; results in $OUT (examples/h200/atomic_slice/).
# Run in the root of a copy of the repository. Needs nvcc, cuobjdump, ncu, python3 + numpy + cupy.
#   probe_*.csv: ncu --print-metric-instances values of lts__t_sectors_op_red (and the source-unit splits this
#                ncu knows) for each slice_probe launch; probe_*.json: the lines of each launch
#   hot_lines.json: CUDA-event times of the hot_lines sweep; bf16.json + bf16_ncu.csv: the bf16 kernels
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
D=/tmp/atomic_slice; mkdir -p "$D"
SMI="nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv"
date -u > "$OUT/log.txt"
$SMI > "$OUT/smi.csv" 2>&1
nvcc -cubin -arch=sm_90 -o "$D/as.cubin" "$HERE/atomic_slice.cu" >> "$OUT/log.txt" 2>&1
cuobjdump -sass "$D/as.cubin" > "$OUT/sass.txt" 2>&1
PY="python3 $HERE/atomic_slice_truth.py $D/as.cubin"
timeout 40 $PY time "$OUT" >> "$OUT/log.txt" 2>&1; echo "time rc=$?" >> "$OUT/log.txt"
timeout 20 $PY bf16 "$OUT" >> "$OUT/log.txt" 2>&1; echo "bf16 rc=$?" >> "$OUT/log.txt"
timeout 15 ncu --query-metrics > "$D/query.txt" 2>&1
M="lts__t_sectors_op_red.sum"
for m in lts__t_sectors_srcunit_tex_op_red lts__t_sectors_srcunit_ltcfabric lts__t_sectors_srcunit_ltcfabric_op_red \
         lts__t_sectors_srcnode_gpc lts__t_requests_op_red; do
  grep -q "^$m " "$D/query.txt" && M="$M,$m.sum"; done
echo "probe metrics: $M" >> "$OUT/log.txt"
grep -E "^(lts__t_sectors_src|lts__t_sectors_op_red|lts__t_requests_op_red)" "$D/query.txt" | cut -c1-140 > "$OUT/lts_metrics.txt"
P="--clock-control none --print-metric-instances values --print-units base --csv --kernel-name slice_probe --metrics"
probe() {   # CHUNK SMID TIMEOUT
  timeout "$3" ncu $P "$M,gpc__cycles_elapsed.max" $PY probe "$OUT" "$1" "$2" > "$OUT/probe_$1_$2.csv" 2>> "$OUT/log.txt"
  echo "probe $1 $2 rc=$? $(date -u +%T)" >> "$OUT/log.txt"
}
probe A 0 40
head -c 3000 "$OUT/probe_A_0.csv" | tail -c 1200 >> "$OUT/log.txt"; echo >> "$OUT/log.txt"
probe S 0 25
B="sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_fp16.sum,gpc__cycles_elapsed.max"
B="$B,smsp__inst_executed.sum,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
for m in sm__inst_executed_pipe_fmaheavy sm__inst_executed_pipe_fmalite; do grep -q "^$m " "$D/query.txt" && B="$B,$m.sum"; done
for r in math_pipe_throttle wait short_scoreboard not_selected selected dispatch_stall; do
  B="$B,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
timeout 20 ncu --clock-control none --csv --print-units base --kernel-name regex:^bf16 --metrics "$B" $PY bf16once "$OUT" \
  > "$OUT/bf16_ncu.csv" 2>> "$OUT/log.txt"; echo "bf16 ncu rc=$?" >> "$OUT/log.txt"
left() { echo $(( 195 - SECONDS )); }   # the whole call stays within its share of the device allowance
[ "$(left)" -gt 20 ] && probe B 0 $(( $(left) < 40 ? $(left) : 40 ))
[ "$(left)" -gt 20 ] && probe A 70 $(( $(left) < 35 ? $(left) : 35 ))
[ "$(left)" -gt 20 ] && probe C 0 $(( $(left) - 5 ))
$SMI >> "$OUT/smi.csv" 2>&1
date -u >> "$OUT/log.txt"
# the device tool returns at most 8 files: the probes, SASS and clocks go back as one archive
# (the 2026-12-04 run wrote them loose and lost probe_S/B/C, probe_A_70.json, sass.txt and smi.csv)
tar czf "$OUT/probes.tgz" -C "$OUT" $(cd "$OUT" && ls probe_* sass.txt smi.csv lts_metrics.txt 2>/dev/null) && \
  (cd "$OUT" && rm -f probe_* sass.txt smi.csv lts_metrics.txt)
tail -12 "$OUT/log.txt"
