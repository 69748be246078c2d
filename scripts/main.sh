#!/usr/bin/env bash
# The README's main job: installs what is missing, builds the Release preset,
# runs the examples and the scheduler benchmark.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
b=build/release
echo "== examples"
for e in fib parallel_loops futures; do "$b/examples/example_$e"; done
echo "== task spawn benchmark (weft vs OpenMP tasks vs oneTBB)"
mkdir -p out
"$b/bench/sched/bench_spawn" --reps 5 --csv out/spawn.csv
