#!/usr/bin/env bash
# Repeats the mpiexec smoke run of bench_pgas (2 ranks, node rings on,
# one worker each: the ctest entry bench_pgas_smoke_mpi_2ranks) with two
# CPU-burning processes beside it, so the ranks' workers are descheduled
# while their messages are in flight, and prints how many runs passed.
# A run passes when it exits 0 within TIMEOUT seconds and prints its tables
# (the 64 KiB bandwidth row included).
# Exits non-zero if any run failed or hung; the output of each failed run
# is kept in BUILD_DIR/stress_pgas_contention/.
#   Usage: scripts/stress_pgas_contention.sh [RUNS (default 50)] [BUILD_DIR (default build/release)]
#   TIMEOUT=SECONDS (default 60) bounds each run.
# Needs the bench_pgas target built in BUILD_DIR and mpiexec.mpich.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-50}
build=${2:-build/release}
per_run=${TIMEOUT:-60}
bench="$build/bench/pgas/bench_pgas"
logs="$build/stress_pgas_contention"
if [[ ! -x $bench ]]; then
  echo "no $bench (configure and build the bench_pgas target first)" >&2
  exit 2
fi
rm -rf "$logs" && mkdir -p "$logs"

burners=()
stop_burners() {
  for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null; done
  wait "${burners[@]}" 2>/dev/null
}
trap stop_burners EXIT
trap 'exit 130' INT TERM
for _ in 1 2; do
  sh -c 'while :; do :; done' &
  burners+=($!)
done

passed=0
hung=0
for ((i = 1; i <= runs; ++i)); do
  log="$logs/run.$i"
  # -k: a job that ignores SIGTERM (stuck inside MPI) is killed 10 s later.
  timeout -k 10 "$per_run" mpiexec.mpich -n 2 "$bench" --quick --iters 20 --max-size 65536 \
    --weft:threads=1 --trace 1 >"$log" 2>&1
  rc=$?
  if [[ $rc -eq 0 ]] && grep -qF '| mpi | weft-mpi | weft-mpi-msg |' "$log" && grep -qF '| 64 KiB |' "$log"; then
    passed=$((passed + 1))
    rm -f "$log"
  else
    [[ $rc -eq 124 || $rc -eq 137 ]] && hung=$((hung + 1))
    echo "run $i: exit status $rc; last measurement: $(grep -a 'bench_pgas' "$log" | tail -n 1)" >&2
    mv "$log" "$log.failed"
  fi
done

echo "bench_pgas under mpiexec -n 2 with 2 CPU burners: $passed/$runs passed ($hung hung past ${per_run} s)"
[[ $passed -eq $runs ]] || { echo "output of failed runs: $logs/*.failed"; exit 1; }
