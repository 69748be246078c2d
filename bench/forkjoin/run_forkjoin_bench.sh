#!/usr/bin/env bash
# Runs the fork-join benchmarks (bench/forkjoin, built beforehand) in every
# configuration, interleaved over REPS rounds (a round runs each
# benchmark's configurations one after the other), pinned, and prints per
# benchmark: median [min-max] over the rounds, speedup over the serial
# baseline and the ratio of 2 ranks x 1 thread over 1 rank x 2 threads.
#
#   bench/forkjoin/run_forkjoin_bench.sh
#
# Configurations: serial (--serial: the same recursion without weft, on
# core 0), 1x1 (weft, 1 rank x 1 thread), 1x2 (1 rank x 2 threads), 2x1-smp
# (2 ranks x 1 thread, threads of one process), 2x1-mpi (mpiexec -n 2
# -bind-to core, WEFT_THREADS=1). The steal benchmark runs on 2x1-smp and
# 2x1-mpi only. Steals across nodes, simulated in one process by making
# the other rank a remote victim (--weft:node-size=1): 2x1-smp-rdma
# (by one-sided operations) and 2x1-smp-msg (by message, WEFT_STEAL_RDMA=0,
# with a progress thread per rank so that a busy victim answers); they run
# for fib and steal. With MPI one-sided operations, 2x1-mpi-rdma and
# 2x1-mpi-msg do the same under mpiexec (not in the defaults: add them to
# CONFIGS_steal / CONFIGS_fib). 2x1-mpi-ns1 and 2x1-ucx-ns1 (UCX_TLS=sm,self)
# run every rank as its own node with the default options, so each
# backend's own choice of paths and progress for the paths between nodes
# (bench/forkjoin/run_node_size_bench.sh runs them).
#
# Environment: REPS (5), BENCHES ("fib cilksort uts steal"), CONFIGS_<bench>
# (its configurations, e.g. CONFIGS_steal="2x1-smp-rdma 2x1-smp-msg"), FIB_N (35),
# SORT_N (10000000), UTS_DEPTH (10) and UTS_SEED (19): UTS's T1 tree,
# 4,130,071 nodes; UTS_DEPTH=13 UTS_SEED=29 is T1L (102,181,082 nodes),
# STEAL_ITERS (20000), STEAL_BUSY_US (50), SEGMENT (weft heap per rank, 2G:
# cilksort needs 8 * SORT_N bytes), BIN_DIR (build/release/bench/forkjoin),
# MPIEXEC (mpiexec.mpich), TIMEOUT (seconds per invocation, 900), OUT_DIR
# (CSV; default a fresh temporary directory), PYTHON.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BIN_DIR=${BIN_DIR:-$here/../../build/release/bench/forkjoin}
REPS=${REPS:-5}
BENCHES=${BENCHES:-fib cilksort uts steal}
FIB_N=${FIB_N:-35}
SORT_N=${SORT_N:-10000000}
UTS_DEPTH=${UTS_DEPTH:-10}
UTS_SEED=${UTS_SEED:-19}
STEAL_ITERS=${STEAL_ITERS:-20000}
STEAL_BUSY_US=${STEAL_BUSY_US:-50}
SEGMENT=${SEGMENT:-2G}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
TIMEOUT=${TIMEOUT:-900}
PYTHON=${PYTHON:-python3}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/weft-forkjoin-bench.XXXXXX)}
mkdir -p "$OUT_DIR"
csv=$OUT_DIR/forkjoin.csv
rm -f "$csv"

declare -A args=(
  [fib]="--n=$FIB_N"
  [cilksort]="--n=$SORT_N"
  [uts]="--depth=$UTS_DEPTH --seed=$UTS_SEED"
  [steal]="--iters=$STEAL_ITERS --busy-us=$STEAL_BUSY_US"
)
declare -A configs=(
  [fib]=${CONFIGS_fib:-"serial 1x1 1x2 2x1-smp 2x1-mpi 2x1-smp-rdma 2x1-smp-msg"}
  [cilksort]=${CONFIGS_cilksort:-"serial 1x1 1x2 2x1-smp 2x1-mpi"}
  [uts]=${CONFIGS_uts:-"serial 1x1 1x2 2x1-smp 2x1-mpi"}
  [steal]=${CONFIGS_steal:-"2x1-smp 2x1-mpi 2x1-smp-rdma 2x1-smp-msg"}
)
for b in $BENCHES; do
  [[ -x $BIN_DIR/bench_fj_$b ]] || { echo "missing $BIN_DIR/bench_fj_$b (cmake --build --preset release --target bench_fj_$b)" >&2; exit 1; }
done

# One invocation; a failure (status 124: timeout) is named at the end.
failed=()
invoke() {
  local b=$1 c=$2 bin=$BIN_DIR/bench_fj_$1
  local common=(--label="$c" --csv="$csv" ${args[$b]})
  local weft=(--weft:segment="$SEGMENT")
  case $c in
    serial) cmd=(taskset -c 0 "$bin" --serial "${common[@]}") ;;
    1x1) cmd=(taskset -c 0 "$bin" "${common[@]}" "${weft[@]}" --weft:ranks=1 --weft:threads=1) ;;
    1x2) cmd=(taskset -c 0,1 "$bin" "${common[@]}" "${weft[@]}" --weft:ranks=1 --weft:threads=2) ;;
    2x1-smp) cmd=(taskset -c 0,1 "$bin" "${common[@]}" "${weft[@]}" --weft:ranks=2 --weft:threads=1) ;;
    2x1-mpi) cmd=(env WEFT_THREADS=1 "$MPIEXEC" -n 2 -bind-to core "$bin" "${common[@]}" "${weft[@]}") ;;
    2x1-smp-rdma) cmd=(env WEFT_STEAL_RDMA=1 taskset -c 0,1 "$bin" "${common[@]}" "${weft[@]}" --weft:ranks=2
                       --weft:threads=1 --weft:node-size=1) ;;
    2x1-smp-msg) cmd=(env WEFT_STEAL_RDMA=0 taskset -c 0,1 "$bin" "${common[@]}" "${weft[@]}" --weft:ranks=2
                      --weft:threads=1 --weft:node-size=1 --weft:progress=thread) ;;
    2x1-mpi-rdma) cmd=(env WEFT_THREADS=1 WEFT_NODE_SIZE=1 WEFT_STEAL_RDMA=1 "$MPIEXEC" -n 2 -bind-to core
                       "$bin" "${common[@]}" "${weft[@]}") ;;
    2x1-mpi-msg) cmd=(env WEFT_THREADS=1 WEFT_NODE_SIZE=1 WEFT_STEAL_RDMA=0 WEFT_PROGRESS=thread "$MPIEXEC" -n 2
                      -bind-to core "$bin" "${common[@]}" "${weft[@]}") ;;
    2x1-mpi-ns1) cmd=(env WEFT_THREADS=1 WEFT_NODE_SIZE=1 "$MPIEXEC" -n 2 -bind-to core "$bin" "${common[@]}"
                      "${weft[@]}") ;;
    2x1-ucx-ns1) cmd=(env WEFT_THREADS=1 WEFT_NODE_SIZE=1 WEFT_BACKEND=ucx UCX_TLS=sm,self "$MPIEXEC" -n 2
                      -bind-to core "$bin" "${common[@]}" "${weft[@]}") ;;
  esac
  echo "${cmd[*]}" >> "$OUT_DIR/commands.txt"
  timeout "$TIMEOUT" "${cmd[@]}" >> "$OUT_DIR/$b.txt" 2>&1 || failed+=("$b $c: status $?")
}

echo "start: $(date -u '+%F %T UTC'); $(uptime)" | tee "$OUT_DIR/load.txt"
for ((r = 1; r <= REPS; ++r)); do
  echo "round $r/$REPS: $(uptime)" | tee -a "$OUT_DIR/load.txt" >&2
  for b in $BENCHES; do
    for c in ${configs[$b]}; do invoke "$b" "$c"; done
  done
done
echo "end: $(date -u '+%F %T UTC'); $(uptime)" | tee -a "$OUT_DIR/load.txt"

"$PYTHON" "$here/summarize_forkjoin.py" "$csv" "$REPS"
echo "CSV, outputs, commands and load: $OUT_DIR" >&2
if ((${#failed[@]})); then
  printf 'failed (status 124: timed out): %s\n' "${failed[@]}"
  exit 1
fi
