#!/usr/bin/env bash
# The memory sweep of examples/microbench on the GPU of this machine (issue #10; run by tmem on an H200 on
# 2026-12-03 19:18 UTC, 20 s of command, 184 s of device time with the start; results in examples/h200/mem_sweep/):
# read_cg at 8/16/32 warps per SM (L2 read latency vs load), write_strided at strides 2/4/16 (partial sectors),
# write_f4 at 16 warps per SM, copy_cg at 32/64/128 MiB footprints and at 64 warps per SM (write-backs).
# The same steps as bench/device/l2_sweep_truth.sh (bench/device/truth_lib.sh). Run in the repository root with a
# copy of examples/microbench holding only the new entries in .dev/tmem/bench; results land in $OUT.
set -u
D=.dev/tmem
source bench/device/truth_lib.sh
truth_begin 90
truth_ncu "regex:^(read_cg|write_|copy_f4)" "$TRUTH_MEM_METRICS" 110
truth_l2_extra "regex:^(read_cg|write_|copy_f4)"
truth_end l2 copy
