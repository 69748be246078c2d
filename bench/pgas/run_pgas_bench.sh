#!/usr/bin/env bash
# Runs bench_pgas in rounds, alternating its two invocations, and prints one
# table per operation with every column and its ratio to MPI RMA:
#   1. mpiexec -n 2 -bind-to core bench_pgas --reps 1
#        columns mpi, weft-mpi, weft-mpi-msg, weft-mpi-1s (one process per rank);
#        given --ucx also weft-ucx-msg, weft-ucx-1s (set UCX_TLS, e.g. sm,self)
#   2. bench_pgas --mode=smp --reps 1 --weft:ranks=2
#        columns weft-smp, weft-smp-msg, weft-smp-1s (2 ranks as threads of
#        one process)
# (-msg: unmapped heaps through messages; -1s: through the transport's
# one-sided operations, where it has them; pgas_bench.cpp says more.)
# A cell is the median [min-max] over the rounds; X/mpi is X's median over
# the mpi column's median, whose rounds ran alternately with X's (in the
# same mpiexec job for weft-mpi*, in the job just before for weft-smp*).
#
#   bench/pgas/run_pgas_bench.sh [--rounds R] [other bench_pgas options]
#
# Environment: BIN (default build/release/bench/pgas/bench_pgas), MPIEXEC
# (default mpiexec.mpich), OUT_DIR (CSV; default a fresh temporary
# directory), WEFT_THREADS (workers per rank, default 1: one core per rank
# on 2 cores), TIMEOUT (seconds per invocation, default 600), PYTHON.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BIN=${BIN:-$here/../../build/release/bench/pgas/bench_pgas}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/weft-pgas-bench.XXXXXX)}
WEFT_THREADS=${WEFT_THREADS:-1}
TIMEOUT=${TIMEOUT:-600}
PYTHON=${PYTHON:-python3}
rounds=5
if [[ ${1:-} == --rounds ]]; then rounds=$2; shift 2; fi
[[ -x $BIN ]] || { echo "missing $BIN (cmake --build --preset release --target bench_pgas)" >&2; exit 1; }
mkdir -p "$OUT_DIR"
csv=$OUT_DIR/pgas.csv
rm -f "$csv"

# A failed or hung invocation (timeout) is counted and named, and its
# round's rows are left out (a run writes its CSV rows only at the end);
# the script then exits with status 1 after printing the tables.
failed=()
for ((r = 1; r <= rounds; ++r)); do
  echo "round $r/$rounds" >&2
  timeout "$TIMEOUT" "$MPIEXEC" -n 2 -bind-to core "$BIN" --reps 1 --csv "$csv" "$@" \
    --weft:threads="$WEFT_THREADS" >> "$OUT_DIR/mpi.txt" || failed+=("round $r mpiexec: status $?")
  timeout "$TIMEOUT" "$BIN" --mode=smp --reps 1 --csv "$csv" "$@" \
    --weft:ranks=2 --weft:threads="$WEFT_THREADS" >> "$OUT_DIR/smp.txt" || failed+=("round $r smp: status $?")
done

"$PYTHON" - "$csv" "$rounds" <<'EOF'
import csv, statistics, sys

rows = list(csv.DictReader(open(sys.argv[1])))
order = ["mpi", "weft-mpi", "weft-mpi-msg", "weft-mpi-1s", "weft-ucx-msg", "weft-ucx-1s", "weft-smp", "weft-smp-msg",
         "weft-smp-1s"]
ops, data = [], {}
for r in rows:
    op = r["operation"]
    if op not in ops:
        ops.append(op)
    data.setdefault(op, {}).setdefault(int(r["size_bytes"]), {}).setdefault(r["system"], []).append(float(r["median"]))

def size(b):
    return f"{b // 1024} KiB" if b >= 1024 and b % 1024 == 0 else f"{b} B"

unit = {r["operation"]: r["unit"] for r in rows}
print(f"bench_pgas, {sys.argv[2]} rounds; median [min-max] over the rounds that completed; X/mpi = median of X / median of mpi")
for op in ops:
    systems = [s for s in order if any(s in d for d in data[op].values())]
    fmt = "{:.3f}" if unit[op] == "us" else "{:.2f}"
    sized = len(data[op]) > 1 or unit[op] == "GB/s" or op.startswith(("put", "get"))
    head = (["size"] if sized else []) + systems + [f"{s}/mpi" for s in systems if s != "mpi"]
    print(f"\n{op}, {unit[op]}\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for sz in sorted(data[op]):
        d = data[op][sz]
        cells = [size(sz)] if sized else []
        med = {s: statistics.median(v) for s, v in d.items()}
        for s in systems:
            v = d.get(s)
            cells.append(f"{fmt.format(med[s])} [{fmt.format(min(v))}-{fmt.format(max(v))}]" if v else "-")
        for s in systems:
            if s != "mpi":
                cells.append(f"{med[s] / med['mpi']:.2f}" if s in med and med.get("mpi") else "-")
        print("| " + " | ".join(cells) + " |")
EOF
echo "CSV and per-invocation tables: $OUT_DIR" >&2
if ((${#failed[@]})); then
  printf 'failed (status 124: timed out): %s\n' "${failed[@]}"
  exit 1
fi
