#!/usr/bin/env bash
# The memory sweep of examples/microbench on the GPU of this machine (issue #10; run by tmem on an H200 on
# 2026-12-03 19:18 UTC, 20 s of command, 184 s of device time with the start; results in examples/h200/mem_sweep/):
# read_cg at 8/16/32 warps per SM (L2 read latency vs load), write_strided at strides 2/4/16 (partial sectors),
# write_f4 at 16 warps per SM, copy_cg at 32/64/128 MiB footprints and at 64 warps per SM (write-backs).
# The same steps as bench/device/l2_sweep_truth.sh. Run in the repository root with a copy of examples/microbench
# holding only the new entries in .dev/tmem/bench; results land in $OUT.
set -u
D=.dev/tmem
B=$D/bench
PY="python3 bench/device/microbench_truth.py --bench $B"
SMI="nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv"
date -u > "$OUT/log.txt"
$SMI > "$OUT/smi.csv" 2>&1
timeout 20 $PY props "$OUT" >> "$OUT/log.txt" 2>&1
timeout 90 $PY time "$OUT" >> "$OUT/log.txt" 2>&1
echo "time rc=$?" >> "$OUT/log.txt"
$SMI >> "$OUT/smi.csv" 2>&1
M="gpc__cycles_elapsed.max,sm__cycles_active.avg,gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
M="$M,launch__registers_per_thread,launch__occupancy_limit_registers,launch__waves_per_multiprocessor"
M="$M,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
M="$M,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"
M="$M,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum"
M="$M,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,dram__bytes_read.sum,dram__bytes_write.sum"
M="$M,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed"
M="$M,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_alu.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
for r in long_scoreboard lg_throttle drain math_pipe_throttle wait not_selected selected membar mio_throttle short_scoreboard; do
  M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
KN="regex:^(read_cg|write_|copy_f4)"
timeout 110 ncu --clock-control none --kernel-name "$KN" --metrics "$M" --csv $PY once > "$OUT/ncu_raw.csv" 2>> "$OUT/log.txt"
echo "ncu rc=$?" >> "$OUT/log.txt"
# L2 partition / lookup metrics, where this ncu knows them (one unknown name would fail the call)
timeout 15 ncu --query-metrics > "$D/query.txt" 2>&1
X=""
for m in lts__t_sectors_srcunit_ltcfabric lts__t_sectors_srcunit_tex lts__t_sectors_srcunit_tex_op_read_lookup_hit \
         lts__t_sectors_srcunit_tex_op_read_lookup_miss lts__t_sectors_srcunit_tex_op_write_lookup_hit \
         lts__t_sectors_srcunit_tex_op_write_lookup_miss lts__t_sectors_lookup_hit lts__t_sectors_lookup_miss \
         lts__t_requests_srcunit_tex_op_write lts__t_requests_srcunit_tex_op_read lts__d_sectors_fill_device \
         lts__t_sectors_srcnode_gpc lts__t_sectors_srcunit_ltcfabric_op_read lts__t_sectors_srcunit_ltcfabric_op_write; do
  grep -q "^$m " "$D/query.txt" && X="$X,$m.sum"; done
X="gpc__cycles_elapsed.max$X"
echo "extra metrics: $X" >> "$OUT/log.txt"
grep -E "^lts__t_(sectors|requests)_src" "$D/query.txt" | cut -c1-120 > "$OUT/lts_src_metrics.txt"
timeout 45 ncu --clock-control none --kernel-name "$KN" --metrics "$X" --csv $PY once > "$OUT/ncu_extra.csv" 2>> "$OUT/log.txt"
echo "ncu extra rc=$?" >> "$OUT/log.txt"
for f in l2 copy; do
  nvcc -cubin -arch=sm_90 -o /tmp/mb.cubin "$B/cuda/$f.cu" && cuobjdump -sass /tmp/mb.cubin
done > "$OUT/sass.txt" 2>&1
$PY merge "$OUT" >> "$OUT/log.txt" 2>&1
date -u >> "$OUT/log.txt"
tail -5 "$OUT/log.txt"
