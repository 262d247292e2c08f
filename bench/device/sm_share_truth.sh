#!/usr/bin/env bash
# Per-CTA records (SM, clock64 at entry and exit) of the L2/DRAM copies, to see which SMs are the slow ones in an
# L2-bound copy where every SM has the same work (issue #10; bench/device/sm_share.cu, sm_share_truth.py).
#   bash bench/device/sm_share_truth.sh [REPEATS]      -> $OUT/sm_share.json, $OUT/log.txt
# Needs python3 + cupy (NVRTC). Then here: python3 bench/sm_share.py examples/h200/sm_share/sm_share.json
set -u
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader > "$OUT/log.txt" 2>&1
timeout 200 python3 bench/device/sm_share_truth.py "$OUT" "${1:-5}" >> "$OUT/log.txt" 2>&1
echo "rc=$?" >> "$OUT/log.txt"
tail -3 "$OUT/log.txt"
