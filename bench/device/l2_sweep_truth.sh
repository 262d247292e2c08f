#!/usr/bin/env bash
# The L2/DRAM sweep and the independent HFMA2/atomic checks of examples/microbench on the GPU of this machine
# (issue #10; run by tmicro on an H200 on 2026-12-03, results in examples/h200/l2_sweep/). Run in the repository
# root with a copy of examples/microbench holding only the new entries in .dev/tmicro/bench; results land in $OUT.
set -u
D=.dev/tmicro
source bench/device/truth_lib.sh
truth_begin 90
truth_ncu "regex:^(read_cg|write_|copy_f4|strided|hfma2|atomic)" "$TRUTH_MEM_METRICS" 110
truth_l2_extra "regex:^(read_cg|write_|copy_f4|strided|hfma2|atomic)"
truth_end l2 mix atomic_addrs
