#!/usr/bin/env bash
# The README's main job: installs what is missing, builds the Release preset,
# then runs the Task Bench METG comparison on this machine (smp backend for
# weft, one MPI rank per core for the reference) and prints the tables and
# writes out/metg.png.
#
#   scripts/main.sh            # the comparison (a few minutes on 2 cores)
#   scripts/main.sh --quick    # a coarse sweep (smoke run, well under a minute)
#
# It ends by tracing one small run of each weft implementation
# (out/trace_<impl>.json and .png, docs/TRACING.md) and printing summaries.
#
# Panels: (a) stencil_1d with the compute_bound kernel, (b) the same graph
# with load_imbalance at imbalance 1.0; then each implementation's step
# overhead in (b) at 16 x METG(mpi), from task traces, and the paired
# efficiency of each against mpi there, at imbalance 1.0 and 2.0 (metg
# pairs: differences of a percent, which the sweep's medians cannot tell);
# (c) an overdecomposed stencil_1d (width 32) with load_imbalance 2.0 on 2
# ranks, where load balancing pays: its sweep and the paired efficiency at
# 16 x METG(mpi).
# Implementations:
#   mpi       taskbench_mpi under mpiexec, one rank per core (the baseline):
#             Task Bench's MPI nonblock structure, one message per dependency
#             edge and one MPI_Waitall per timestep (its METG against the
#             original's: taskbench/README.md)
#             (-warmup: an untimed run first, as taskbench_weft always does)
#   mpi-agg   the same with -mpi-aggregate: one message per (producer, rank)
#             and each point runs as soon as its inputs are in
#   spmd      taskbench_weft -impl spmd, one smp rank per core
#   dataflow  taskbench_weft -impl dataflow, one rank with a worker per core
#   forkjoin  taskbench_weft -impl forkjoin, one smp rank per core: rank 0's
#             root task forks each timestep's points, all ranks steal them
#   futures   taskbench_weft -impl futures, one smp rank per core: a spawned
#             task per point and timestep, awaiting its producers' futures
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1

bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"

b=build/release/taskbench
cores=$(nproc)
steps=1000
reps=7
pair_reps=21
iter_min=2^0
if [ "$quick" = 1 ]; then steps=200; reps=2; pair_reps=3; iter_min=2^4; fi
graph=(-type stencil_1d -steps "$steps" -width "$cores")
export OPENBLAS_NUM_THREADS=1

impls=(
  --impl "mpi=/usr/bin/mpiexec.mpich -n $cores -bind-to core $b/taskbench_mpi -warmup"
  --impl "mpi-agg=/usr/bin/mpiexec.mpich -n $cores -bind-to core $b/taskbench_mpi -warmup -mpi-aggregate"
  --impl "spmd=$b/weft/taskbench_weft -impl spmd --weft:ranks=$cores --weft:threads=1"
  --impl "dataflow=$b/weft/taskbench_weft -impl dataflow --weft:ranks=1 --weft:threads=$cores"
  --impl "forkjoin=$b/weft/taskbench_weft -impl forkjoin --weft:ranks=$cores --weft:threads=1"
  --impl "futures=$b/weft/taskbench_weft -impl futures --weft:ranks=$cores --weft:threads=1"
)
# Panel (c) on 2 ranks (dataflow: one rank with 2 workers).
impls2=(
  --impl "mpi=/usr/bin/mpiexec.mpich -n 2 -bind-to core $b/taskbench_mpi -warmup"
  --impl "mpi-agg=/usr/bin/mpiexec.mpich -n 2 -bind-to core $b/taskbench_mpi -warmup -mpi-aggregate"
  --impl "spmd=$b/weft/taskbench_weft -impl spmd --weft:ranks=2 --weft:threads=1"
  --impl "dataflow=$b/weft/taskbench_weft -impl dataflow --weft:ranks=1 --weft:threads=2"
  --impl "forkjoin=$b/weft/taskbench_weft -impl forkjoin --weft:ranks=2 --weft:threads=1"
  --impl "futures=$b/weft/taskbench_weft -impl futures --weft:ranks=2 --weft:threads=1"
)
wide=(-type stencil_1d -steps "$steps" -width 32 -kernel load_imbalance -imbalance 2.0)
sweep() {  # sweep OUT LABEL KERNEL_FLAGS...
  local out=$1 label=$2
  shift 2
  tools/metg sweep "${impls[@]}" --baseline mpi --cores "$cores" --reps "$reps" \
    --iter-max 2^16 --iter-min "$iter_min" --stop-below 0.1 --no-plot \
    --out "$out" --label "$label" -- "${graph[@]}" "$@"
}

mkdir -p out
echo "== METG (a): stencil_1d, width $cores, compute_bound"
sweep out/metg_compute "(a) compute_bound" -kernel compute_bound
echo
echo "== METG (b): stencil_1d, width $cores, load_imbalance (imbalance 1.0)"
sweep out/metg_imbalance "(b) load_imbalance 1.0" -kernel load_imbalance -imbalance 1.0
echo
echo "== step overhead, (b) at 16 x METG(mpi): how much longer each timestep took than its longest task"
tools/metg gaps "${impls[@]}" --baseline mpi --reps "$reps" --at out/metg_imbalance -- \
  "${graph[@]}" -kernel load_imbalance -imbalance 1.0 | tee out/gaps_imbalance.txt
echo
echo "== paired efficiency at 16 x METG(mpi), load_imbalance 1.0 and 2.0: each rep runs all back to back"
for imbalance in 1.0 2.0; do
  tools/metg pairs "${impls[@]}" --baseline mpi --reps "$pair_reps" --quiet --at out/metg_imbalance -- \
    "${graph[@]}" -kernel load_imbalance -imbalance "$imbalance" | tee "out/pairs_imbalance_$imbalance.txt"
done
echo
echo "== METG (c): stencil_1d, width 32, load_imbalance (imbalance 2.0), 2 ranks"
tools/metg sweep "${impls2[@]}" --baseline mpi --cores 2 --reps "$reps" \
  --iter-max 2^14 --iter-min "$iter_min" --stop-below 0.1 --no-plot \
  --out out/metg_wide_imbalance --label "(c) width 32, load_imbalance 2.0" -- "${wide[@]}"
echo
echo "== paired efficiency at 16 x METG(mpi), (c)"
tools/metg pairs "${impls2[@]}" --baseline mpi --reps "$pair_reps" --quiet --at out/metg_wide_imbalance -- \
  "${wide[@]}" | tee out/pairs_wide_imbalance.txt
echo
tools/metg plot --panel out/metg_compute --panel out/metg_imbalance --panel out/metg_wide_imbalance \
  --title "Task Bench METG(50%) on $cores cores: weft vs MPI" --out out/metg.png
echo "plot: out/metg.png   data: out/metg_compute/, out/metg_imbalance/, out/metg_wide_imbalance/"
echo "      (metg.csv, metg.json, logs/), out/gaps_imbalance.txt, out/pairs_*.txt"
echo
echo "== timelines: one small run of each weft implementation with --weft:trace (docs/TRACING.md)"
for impl in spmd dataflow forkjoin futures; do
  if [ "$impl" = dataflow ]; then layout=(--weft:ranks=1 --weft:threads="$cores"); else layout=(--weft:ranks="$cores" --weft:threads=1); fi
  "$b/weft/taskbench_weft" -impl "$impl" "${layout[@]}" --weft:trace="out/trace_$impl.json" \
    -type stencil_1d -steps 50 -width "$cores" -kernel load_imbalance -imbalance 1.0 -iter 1024 >/dev/null
  echo "-- $impl: out/trace_$impl.json, out/trace_$impl.png"
  tools/trace summary "out/trace_$impl.json" --top 5
  tools/trace plot "out/trace_$impl.json" -o "out/trace_$impl.png" --title "taskbench_weft -impl $impl" >/dev/null
done
