#!/usr/bin/env bash
# Repeats the back-to-back root_exec tests (ctest entries forkjoin_roots_*:
# smp with 2 and 4 ranks, steals by message, mpiexec -n 2 and -n 3) and
# prints how many runs of each passed. Exits non-zero if any run failed;
# the output of each failed run is kept in BUILD_DIR/stress_forkjoin_roots/.
#   Usage: scripts/stress_forkjoin_roots.sh [RUNS (default 30)] [BUILD_DIR (default build/release)]
# Needs the forkjoin_roots_test target built in BUILD_DIR; each run is the
# ctest entry as it is (1000 roots).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-30}
build=${2:-build/release}
logs="$build/stress_forkjoin_roots"
rm -rf "$logs" && mkdir -p "$logs"

mapfile -t tests < <(ctest --test-dir "$build" -N -R '^forkjoin_roots_' | sed -n 's/^ *Test *#[0-9]*: //p')
if [[ ${#tests[@]} -eq 0 ]]; then
  echo "no forkjoin_roots_* tests in $build (configure and build forkjoin_roots_test first)" >&2
  exit 2
fi

declare -A passed
failed_any=0
for t in "${tests[@]}"; do passed[$t]=0; done
for ((i = 1; i <= runs; ++i)); do
  for t in "${tests[@]}"; do
    if ctest --test-dir "$build" -R "^${t}\$" --output-on-failure >"$logs/$t.last" 2>&1; then
      passed[$t]=$((passed[$t] + 1))
    else
      failed_any=1
      mv "$logs/$t.last" "$logs/$t.failed.$i"
    fi
  done
done

for t in "${tests[@]}"; do
  printf '%-40s %3d/%d passed\n' "$t" "${passed[$t]}" "$runs"
done
[[ $failed_any -eq 0 ]] || echo "output of failed runs: $logs/*.failed.*"
exit $failed_any
