#!/usr/bin/env bash
# Fork-join with every rank its own node (--weft:node-size=1), against the
# same programs on one rank and on one node, in one run (docs/FORKJOIN.md,
# "Across nodes"):
#  1. fib, cilksort, UTS and the steal probe (run_forkjoin_bench.sh): 1 rank
#     x 1 thread, 2 ranks of one node, and 2 ranks as two nodes on smp
#     (one-sided steals), mpi and ucx (UCX_TLS=sm,self), each backend with
#     its default paths and progress for the paths between nodes;
#  2. Task Bench -impl forkjoin and -impl futures METG on 2 smp ranks, with
#     and without node-size=1 (tools/metg sweep, interleaved), and the ratio
#     of each METG with node-size=1 over the same one without.
#
#   bench/forkjoin/run_node_size_bench.sh            # REPS (5) rounds, METG_REPS (3)
#
# Environment: REPS, METG_REPS, STEPS (1000), OUT_DIR (a fresh temporary
# directory), and run_forkjoin_bench.sh's own (FIB_N, SORT_N, ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
B=${BUILD_DIR:-$root/build/release}
REPS=${REPS:-5}
METG_REPS=${METG_REPS:-3}
STEPS=${STEPS:-1000}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/weft-node-size-bench.XXXXXX)}
mkdir -p "$OUT_DIR"

status=0
echo "== fork-join programs, every rank its own node ($REPS rounds)"
CONFIGS_fib="1x1 2x1-smp 2x1-smp-rdma 2x1-mpi-ns1 2x1-ucx-ns1" \
CONFIGS_cilksort="1x1 2x1-smp 2x1-smp-rdma 2x1-mpi-ns1 2x1-ucx-ns1" \
CONFIGS_uts="1x1 2x1-smp 2x1-smp-rdma 2x1-mpi-ns1 2x1-ucx-ns1" \
CONFIGS_steal="2x1-smp 2x1-smp-rdma 2x1-mpi-ns1 2x1-ucx-ns1" \
REPS=$REPS OUT_DIR=$OUT_DIR/forkjoin "$here/run_forkjoin_bench.sh" || status=1

echo "== Task Bench METG, 2 smp ranks, with and without node-size=1"
tb="$B/taskbench/weft/taskbench_weft --weft:ranks=2 --weft:threads=1"
"$root/tools/metg" sweep --no-progress --no-plot \
  --impl "forkjoin=$tb -impl forkjoin" --impl "forkjoin-ns1=$tb -impl forkjoin --weft:node-size=1" \
  --impl "futures=$tb -impl futures" --impl "futures-ns1=$tb -impl futures --weft:node-size=1" \
  --baseline forkjoin --cores 2 --reps "$METG_REPS" --iter-max 2^12 --iter-min 2^3 --stop-below 0.1 \
  --out "$OUT_DIR/metg" -- -type stencil_1d -width 2 -steps "$STEPS" -kernel compute_bound || status=1
python3 - "$OUT_DIR/metg/metg.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
for impl in ("forkjoin", "futures"):
    a, b = (results[n]["metg"].get("value_us") for n in (impl, impl + "-ns1"))
    if a and b:
        print(f"{impl}: METG {a:.3g} us, with node-size=1 {b:.3g} us: ratio {b / a:.2f} (goal <= 1.3)")
    else:
        print(f"{impl}: METG not reached: {a} us, with node-size=1 {b} us")
PY
echo "outputs: $OUT_DIR"
exit $status
