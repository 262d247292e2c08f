#!/usr/bin/env bash
# The FMA-pipe mixes and the atomic address/spacing sweep of examples/microbench on the GPU of this machine
# (issue #10, tpipe; run on an H200 on 2026-12-04, results in examples/h200/pipe_atomic/). Run in the root of
# a copy of the repository holding, in .dev/tpipe/bench, a copy of examples/microbench whose manifest has only
# the new entries (hfma2_ffma_mix_*w, hfma2_ffma_1to3/_3to1, cvt_f16_ffma, atomic_spacing_*); results in $OUT.
set -u
D=.dev/tpipe
source bench/device/truth_lib.sh
truth_begin 40
M="gpc__cycles_elapsed.max,sm__cycles_active.avg,sm__cycles_active.max,gpu__time_duration.sum,smsp__inst_executed.sum"
M="$M,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active"
M="$M,launch__registers_per_thread,launch__occupancy_limit_registers,launch__waves_per_multiprocessor"
M="$M,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"
M="$M,lts__t_sector_hit_rate.pct,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_srcunit_ltcfabric.sum"
M="$M,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed"
M="$M,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_alu.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
for r in barrier branch_resolving dispatch_stall drain lg_throttle long_scoreboard math_pipe_throttle membar mio_throttle \
         misc no_instruction not_selected selected short_scoreboard wait; do
  M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
truth_ncu "regex:^(hfma2|cvt_f16|atomic)" "$M" 90
truth_end fma_mix atomic_spacing mix
