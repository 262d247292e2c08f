#!/usr/bin/env bash
# The project's own CPU benchmarks (issues #10 and #15) on the device machine, used as a quiet 16-core
# CPU box: each bench pinned to a core of its own (taskset), one process per core, OpenBLAS on one
# thread, logs in $RUNDIR. The GPU is not used. Two verbs, because the whole set outlasts one call of
# the device tool (10 minutes) while the machine is given back after 30 s idle:
#
#   bash bench/device/model_benches.sh start [NAME...]  # installs, starts every bench (or the NAMEd ones) detached
#   (setsid); KERNLENS_COMMIT=$(git rev-parse --short HEAD) before it records which code ran (the device's
#   copy of the tree has no trustworthy .git)
#   bash bench/device/model_benches.sh collect [WAIT_S] # waits up to WAIT_S s (default 540), copies logs to $OUT
#
# Needs, carried with the working tree: .whl (lark, lark-cython, platformdirs wheels for CPython 3.12,
# the packages the device image lacks; see /work/.library/device/README.md) and .corpus (a copy of
# ../shared/corpus, which does not travel). The inspector rows of bench/big_file.py are left out (no
# Textual there). Each log's first line is the command; a finished bench leaves NAME.rc. $OUT/bench.tgz
# holds them all.
set -u
RUNDIR=/tmp/kernlens-bench
verb=${1:-start}
shift || true
only=" $* "

if [ "$verb" = start ]; then
  rm -rf "$RUNDIR" && mkdir -p "$RUNDIR"
  # into the device's own Python (the benches' child processes set PYTHONPATH to the checkout alone)
  python3 -m pip install -q --no-index --no-deps --no-cache-dir .whl/*.whl > "$RUNDIR/pip.log" 2>&1 \
    || { cat "$RUNDIR/pip.log"; exit 1; }
  mkdir -p ../shared && { [ -e ../shared/corpus ] || cp -r .corpus ../shared/corpus; }
  export PYTHONPATH=$PWD OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
  python3 -m compileall -q isa sim analyzer kernlens bench > /dev/null 2>&1
  { date -u; nproc; python3 --version; lscpu | grep -E 'Model name|MHz'; echo "commit ${KERNLENS_COMMIT:-unknown}"; } \
    > "$RUNDIR/machine.txt"
  core=0
  bench() {   # bench NAME COMMAND...: pinned to the next core, detached from this call
    local name=$1; shift
    [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || return 0
    echo "$*" > "$RUNDIR/$name.log"
    setsid bash -c "taskset -c $core $* >> '$RUNDIR/$name.log' 2>&1; echo \$? > '$RUNDIR/$name.rc'" < /dev/null &
    core=$((core + 1))
  }
  bench timing_h200 python3 bench/timing_h200.py --mix --json "$RUNDIR/timing_h200.json"
  bench timing_unseen python3 bench/timing_unseen.py --json "$RUNDIR/timing_unseen.json"
  bench timing_microbench python3 bench/timing_microbench.py --json "$RUNDIR/timing_microbench.json"
  bench speed_hgemm_cp_async python3 bench/timing_speed.py hgemm_cp_async_double_buffer --perf
  bench speed_small python3 bench/timing_speed.py --small
  bench startup python3 bench/startup.py
  bench ascend_gemm python3 bench/ascend_gemm.py
  # big_file runs its own worker processes: give it two cores
  [ "$only" = "  " ] || [[ "$only" == *" big_file "* ]] || { sleep 2; echo "started: $(ls "$RUNDIR"/*.log | xargs -n1 basename | tr '\n' ' ')"; exit 0; }
  echo "bench/big_file.py --only validate,run,fmt" > "$RUNDIR/big_file.log"
  setsid bash -c "taskset -c $core,$((core + 1)) python3 bench/big_file.py --only validate,run,fmt >> '$RUNDIR/big_file.log' 2>&1; echo \$? > '$RUNDIR/big_file.rc'" < /dev/null &
  sleep 2
  echo "started: $(ls "$RUNDIR"/*.log | xargs -n1 basename | tr '\n' ' ')"
  exit 0
fi

if [ "$verb" = collect ]; then
  wait_s=${1:-540}
  n=$(ls "$RUNDIR"/*.log | grep -vc pip.log)
  for ((t = 0; t < wait_s; t += 10)); do
    [ "$(ls "$RUNDIR"/*.rc 2>/dev/null | wc -l)" -ge "$n" ] && break
    sleep 10
  done
  tar -czf "$OUT/bench.tgz" -C "$RUNDIR" .   # one file: the tool brings back only a few
  for f in "$RUNDIR"/*.log; do
    b=$(basename "$f" .log); [ "$b" = pip ] && continue
    echo "== $b: $( [ -e "$RUNDIR/$b.rc" ] && echo "exit $(cat "$RUNDIR/$b.rc")" || echo running)"
    tail -n 6 "$f"
  done
  exit 0
fi
echo "usage: $0 start | collect [WAIT_S]" >&2
exit 2
