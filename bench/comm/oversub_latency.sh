#!/usr/bin/env bash
# Remote-call latency when a node's ranks outnumber its cores: runs
# bench_offload under `mpiexec -n 2`, `-n 3` and `-n 4` in turn, ROUNDS
# times (interleaved, so background load hits every rank count alike), and
# prints one table: median [min-max] over the rounds of each run's own
# median, and the ratio of the medians to -n 2. Rank 0 measures against
# rank 1; the other ranks sit idle, as finished ranks of a real job do.
#
#   bench/comm/oversub_latency.sh [ROUNDS] [extra bench_offload or --weft: options]
#
# Environment: BIN (default build/release/bench/offload/bench_offload),
# MPIEXEC (default mpiexec.mpich), RANKS (default "2 3 4"), TIMEOUT (seconds
# per run, default 300), PYTHON (default python3).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BIN=${BIN:-$here/../../build/release/bench/offload/bench_offload}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
RANKS=${RANKS:-2 3 4}
TIMEOUT=${TIMEOUT:-300}
PYTHON=${PYTHON:-python3}
rounds=${1:-5}
[[ $# -gt 0 ]] && shift
[[ -x $BIN ]] || { echo "missing $BIN (cmake --build --preset release --target bench_offload)" >&2; exit 1; }

out=$(mktemp -d /tmp/weft-oversub.XXXXXX)
echo "cores: $(nproc); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; ++r)); do
  for n in $RANKS; do
    timeout "$TIMEOUT" "$MPIEXEC" -n "$n" "$BIN" --reps 3 --iters 300 --mib 1 "$@" > "$out/n$n.r$r.txt"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PYTHON" - "$out" "$rounds" $RANKS <<'EOF'
import re, sys, os, statistics

out, rounds, ranks = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
cases = [("async_at round trip", "async_at round trip"), ("target, remote device, 1 in flight", "remote target task")]
data = {}  # (case, n) -> per-run medians
for n in ranks:
    for r in range(1, rounds + 1):
        for line in open(os.path.join(out, f"n{n}.r{r}.txt")):
            for key, label in cases:
                if line.startswith(key):
                    median = float(re.split(r"\s{2,}", line.strip())[1].split()[0])
                    data.setdefault((label, n), []).append(median)
print(f"\nus per call, median [min-max] of {rounds} runs (each run's median of 3 x 300 calls); ratio = median / -n 2's\n")
print("| case | " + " | ".join(f"-n {n}" for n in ranks) + " | " + " | ".join(f"-n {n} / -n {ranks[0]}" for n in ranks[1:]) + " |")
print("|---|" + "---|" * (2 * len(ranks) - 1))
for _, label in cases:
    med = {n: statistics.median(data[(label, n)]) for n in ranks}
    cells = [f"{med[n]:.2f} [{min(data[(label, n)]):.2f}-{max(data[(label, n)]):.2f}]" for n in ranks]
    cells += [f"{med[n] / med[ranks[0]]:.1f}" for n in ranks[1:]]
    print(f"| {label} | " + " | ".join(cells) + " |")
print(f"\nruns: {out}")
EOF
