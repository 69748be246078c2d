#!/usr/bin/env bash
# Measures the MPI versions of the applications: Cannon weak scaling
# (tile per rank fixed) on 1 and 4 ranks, Minimod strong scaling (grid
# fixed) on 1, 2 and 4 ranks. Repetitions interleave the configurations,
# so a drift of the host shows in all alike; prints the median [min-max]
# of GFLOP/s and of the time per step. Each Cannon run multiplies 3 times
# and reports its median (the first multiply also pays for warm-up).
#
#   apps/run_app_bench.sh [REPS]        (default 5)
#
# Environment: BIN_DIR (default build/release/apps), MPIEXEC (default
# mpiexec.mpich), CANNON_N (tile per rank, default 512), MINIMOD_N (grid
# side, default 128), MINIMOD_STEPS (default 30).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN_DIR=${BIN_DIR:-$here/../build/release/apps}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
CANNON_N=${CANNON_N:-512}
MINIMOD_N=${MINIMOD_N:-128}
MINIMOD_STEPS=${MINIMOD_STEPS:-30}
reps=${1:-5}
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# run LABEL NP FIELD CMD...: appends "LABEL value" (FIELD: the number after
# "GFLOP/s: median" or "time per step ms:").
run() {
  local label=$1 np=$2 pattern=$3
  shift 3
  local out
  out=$("$MPIEXEC" -n "$np" -bind-to core "$@")
  awk -v l="$label" -v p="$pattern" 'index($0, p) == 1 { rest = substr($0, length(p) + 1); split(rest, f, " "); print l, f[1] }' \
    <<<"$out" >>"$results"
}

for ((r = 1; r <= reps; r++)); do
  echo "repetition $r/$reps" >&2
  for np in 1 4; do
    run "cannon_mpi GFLOP/s, $np ranks, tile $CANNON_N" "$np" "GFLOP/s: median" \
      "$BIN_DIR/cannon_mpi" -n "$CANNON_N" -reps 3
  done
  for np in 1 2 4; do
    run "minimod_mpi ms/step, $np ranks, ${MINIMOD_N}^3" "$np" "time per step ms:" \
      "$BIN_DIR/minimod_mpi" -nx "$MINIMOD_N" -ny "$MINIMOD_N" -nz "$MINIMOD_N" -steps "$MINIMOD_STEPS"
  done
done

echo "$reps repetitions, $(date -u +%Y-%m-%d), $(nproc) cores; median [min-max]"
awk '{ v = $NF; $NF = ""; sub(/ $/, ""); if (!($0 in n)) order[k++] = $0; vals[$0, n[$0]++] = v }
     END {
       for (i = 0; i < k; i++) {
         l = order[i]; m = n[l]
         for (a = 0; a < m; a++) x[a] = vals[l, a] + 0
         for (a = 0; a < m; a++) for (b = a + 1; b < m; b++) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
         med = m % 2 ? x[int(m / 2)] : (x[m / 2 - 1] + x[m / 2]) / 2
         printf "| %s | %.3f [%.3f-%.3f] |\n", l, med, x[0], x[m - 1]
       }
     }' "$results"
