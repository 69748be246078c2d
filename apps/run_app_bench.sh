#!/usr/bin/env bash
# Measures the applications' MPI and weft versions against each other:
# Cannon weak scaling (tile per rank fixed) on 1 and 4 ranks, Minimod
# strong scaling (grid fixed) on 1, 2 and 4 ranks. Systems: `mpi` (the
# plain-MPI version under mpiexec), `weft-smp` (the weft version, all ranks
# in one process, one worker each) and `weft-mpi` (the weft version under
# mpiexec, its mpi backend; one rank is one process either way, so 1-rank
# runs are weft-smp only). Repetitions interleave every configuration and
# system, so a drift of the host shows in all alike. Prints per
# configuration the median [min-max] of each system and the ratio of each
# weft median to the MPI median (Cannon: GFLOP/s, higher is better;
# Minimod: ms per step, lower is better). Each Cannon run multiplies 5
# times and reports its median (the first multiply also pays for warm-up;
# one multiply at tile 512 on 1 rank takes about 15 ms).
#
#   apps/run_app_bench.sh [REPS]        (default 5)
#
# Environment: BIN_DIR (default build/release/apps), MPIEXEC (default
# mpiexec.mpich), CANNON_N (tile per rank, default 512), MINIMOD_N (grid
# side, default 128), MINIMOD_STEPS (default 30). OpenBLAS runs one thread
# per rank (OPENBLAS_NUM_THREADS=1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN_DIR=${BIN_DIR:-$here/../build/release/apps}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
CANNON_N=${CANNON_N:-512}
MINIMOD_N=${MINIMOD_N:-128}
MINIMOD_STEPS=${MINIMOD_STEPS:-30}
export OPENBLAS_NUM_THREADS=1
reps=${1:-5}
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# run CONFIG SYSTEM NP FIELD PROGRAM ARGS...: appends "CONFIG|SYSTEM|value"
# (FIELD: the text before the number, "GFLOP/s: median" or "time per step
# ms:"). SYSTEM mpi runs PROGRAM_mpi, weft-* PROGRAM_weft.
run() {
  local config=$1 system=$2 np=$3 pattern=$4 program=$5
  shift 5
  local out
  case $system in
    mpi) out=$("$MPIEXEC" -n "$np" -bind-to core "$BIN_DIR/${program}_mpi" "$@") ;;
    weft-mpi) out=$("$MPIEXEC" -n "$np" -bind-to core "$BIN_DIR/${program}_weft" --weft:threads=1 "$@") ;;
    weft-smp) out=$("$BIN_DIR/${program}_weft" --weft:ranks="$np" --weft:threads=1 "$@" 2>/dev/null) ;;
  esac
  awk -v c="$config" -v s="$system" -v p="$pattern" \
    'index($0, p) == 1 { rest = substr($0, length(p) + 1); split(rest, f, " "); print c "|" s "|" f[1] }' \
    <<<"$out" >>"$results"
}

# systems NP: the systems measured on NP ranks.
systems() { if [ "$1" -eq 1 ]; then echo "mpi weft-smp"; else echo "mpi weft-smp weft-mpi"; fi; }

for ((r = 1; r <= reps; r++)); do
  echo "repetition $r/$reps, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  for np in 1 4; do
    for sys in $(systems "$np"); do
      run "cannon GFLOP/s, $np ranks, tile $CANNON_N" "$sys" "$np" "GFLOP/s: median" cannon -n "$CANNON_N" -reps 5
    done
  done
  for np in 1 2 4; do
    for sys in $(systems "$np"); do
      run "minimod ms/step, $np ranks, ${MINIMOD_N}^3" "$sys" "$np" "time per step ms:" minimod \
        -nx "$MINIMOD_N" -ny "$MINIMOD_N" -nz "$MINIMOD_N" -steps "$MINIMOD_STEPS"
    done
  done
done

echo "$reps repetitions, $(date -u +%Y-%m-%d), $(nproc) cores, load average at the end $(cut -d' ' -f1-3 /proc/loadavg); median [min-max]"
echo "| run | mpi | weft-smp | weft-mpi | weft-smp / mpi | weft-mpi / mpi |"
echo "|---|---|---|---|---|---|"
awk -F'|' '{ key = $1 SUBSEP $2; if (!($1 in seen)) { seen[$1] = 1; order[k++] = $1 } vals[key, n[key]++] = $3 }
     function stats(key,   m, a, b, t, x) {
       m = n[key]; if (m == 0) { med = ""; return "-" }
       for (a = 0; a < m; a++) x[a] = vals[key, a] + 0
       for (a = 0; a < m; a++) for (b = a + 1; b < m; b++) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
       med = m % 2 ? x[int(m / 2)] : (x[m / 2 - 1] + x[m / 2]) / 2
       return sprintf("%.2f [%.2f-%.2f]", med, x[0], x[m - 1])
     }
     END {
       for (i = 0; i < k; i++) {
         c = order[i]
         s_mpi = stats(c SUBSEP "mpi"); m_mpi = med
         s_smp = stats(c SUBSEP "weft-smp"); m_smp = med
         s_wmp = stats(c SUBSEP "weft-mpi"); m_wmp = med
         r_smp = (m_smp != "" && m_mpi > 0) ? sprintf("%.2f", m_smp / m_mpi) : "-"
         r_wmp = (m_wmp != "" && m_mpi > 0) ? sprintf("%.2f", m_wmp / m_mpi) : "-"
         printf "| %s | %s | %s | %s | %s | %s |\n", c, s_mpi, s_smp, s_wmp, r_smp, r_wmp
       }
     }' "$results"
