# The steps the sweep truth scripts share (bench/device/{l2_sweep,mem_sweep,pipe_atomic}_truth.sh), sourced by
# them: clocks and properties, timed runs, one ncu pass over the sweep's kernels, SASS of its sources, and
# microbench_truth.py's merge of it all into $OUT/microbench.json. Each step appends to $OUT/log.txt.
# Set D (the scratch directory holding the sweep's copy of examples/microbench in $D/bench) before sourcing.
B=$D/bench
PY="python3 bench/device/microbench_truth.py --bench $B"
SMI="nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv"

# truth_begin TIME_S: clocks before and after the timed runs (cupy events), the device's properties
truth_begin() {
  date -u > "$OUT/log.txt"
  $SMI > "$OUT/smi.csv" 2>&1
  timeout 20 $PY props "$OUT" >> "$OUT/log.txt" 2>&1
  timeout "$1" $PY time "$OUT" >> "$OUT/log.txt" 2>&1
  echo "time rc=$?" >> "$OUT/log.txt"
  $SMI >> "$OUT/smi.csv" 2>&1
}

# The memory metrics of the L2/DRAM sweeps (l2_sweep, mem_sweep), one ncu name each
TRUTH_MEM_METRICS="gpc__cycles_elapsed.max,sm__cycles_active.avg,gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
TRUTH_MEM_METRICS="$TRUTH_MEM_METRICS,launch__registers_per_thread,launch__occupancy_limit_registers,launch__waves_per_multiprocessor"
TRUTH_MEM_METRICS="$TRUTH_MEM_METRICS,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
TRUTH_MEM_METRICS="$TRUTH_MEM_METRICS,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"
TRUTH_MEM_METRICS="$TRUTH_MEM_METRICS,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum"
TRUTH_MEM_METRICS="$TRUTH_MEM_METRICS,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,dram__bytes_read.sum,dram__bytes_write.sum"
TRUTH_MEM_METRICS="$TRUTH_MEM_METRICS,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed"
TRUTH_MEM_METRICS="$TRUTH_MEM_METRICS,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_alu.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
for r in long_scoreboard lg_throttle drain math_pipe_throttle wait not_selected selected membar mio_throttle short_scoreboard; do
  TRUTH_MEM_METRICS="$TRUTH_MEM_METRICS,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done

# truth_ncu KERNEL_REGEX METRICS TIMEOUT_S: one ncu pass (clocks as they are) into $OUT/ncu_raw.csv
truth_ncu() {
  timeout "$3" ncu --clock-control none --kernel-name "$1" --metrics "$2" --csv $PY once > "$OUT/ncu_raw.csv" 2>> "$OUT/log.txt"
  echo "ncu rc=$?" >> "$OUT/log.txt"
}

# truth_l2_extra KERNEL_REGEX: L2 partition / lookup metrics, where this ncu knows them (one unknown name would
# fail the call), into $OUT/ncu_extra.csv; the names this ncu has for source units in $OUT/lts_src_metrics.txt
truth_l2_extra() {
  timeout 15 ncu --query-metrics > "$D/query.txt" 2>&1
  local X="" m
  for m in lts__t_sectors_srcunit_ltcfabric lts__t_sectors_srcunit_tex lts__t_sectors_srcunit_tex_op_read_lookup_hit \
           lts__t_sectors_srcunit_tex_op_read_lookup_miss lts__t_sectors_srcunit_tex_op_write_lookup_hit \
           lts__t_sectors_srcunit_tex_op_write_lookup_miss lts__t_sectors_lookup_hit lts__t_sectors_lookup_miss \
           lts__t_requests_srcunit_tex_op_write lts__t_requests_srcunit_tex_op_read lts__d_sectors_fill_device \
           lts__t_sectors_srcnode_gpc lts__t_sectors_srcunit_ltcfabric_op_read lts__t_sectors_srcunit_ltcfabric_op_write; do
    grep -q "^$m " "$D/query.txt" && X="$X,$m.sum"; done
  X="gpc__cycles_elapsed.max$X"
  echo "extra metrics: $X" >> "$OUT/log.txt"
  grep -E "^lts__t_(sectors|requests)_src" "$D/query.txt" | cut -c1-120 > "$OUT/lts_src_metrics.txt"
  timeout 45 ncu --clock-control none --kernel-name "$1" --metrics "$X" --csv $PY once > "$OUT/ncu_extra.csv" 2>> "$OUT/log.txt"
  echo "ncu extra rc=$?" >> "$OUT/log.txt"
}

# truth_end SOURCE...: SASS of $B/cuda/SOURCE.cu for each, the merge into $OUT/microbench.json, the log's tail
truth_end() {
  local f
  for f in "$@"; do
    nvcc -cubin -arch=sm_90 -o /tmp/mb.cubin "$B/cuda/$f.cu" && cuobjdump -sass /tmp/mb.cubin
  done > "$OUT/sass.txt" 2>&1
  $PY merge "$OUT" >> "$OUT/log.txt" 2>&1
  date -u >> "$OUT/log.txt"
  tail -5 "$OUT/log.txt"
}
