#!/usr/bin/env bash
# Runs the communication benchmarks in both weft backends and prints one
# table per benchmark with the ratios to raw MPI:
#   1. mpiexec -n 2 -bind-to core bench_X --mode=mpi --mpi-path
#                                  raw MPI, then weft (mpi backend), then weft's mpi
#                                  backend without node rings (weft-mpi-only: the MPI
#                                  path messages take between nodes); with the ucx
#                                  backend built (WITH_UCX), also --ucx: weft's ucx
#                                  backend (weft-ucx) and, in bench_latency, a raw-UCP
#                                  ping-pong (ucp), all with UCX_TLS=sm,self
#   2. bench_X --mode=smp --weft:ranks=2                weft (smp backend, in-process ranks)
# Each run appends to a CSV file per benchmark; the merge reads them back.
#
#   bench/comm/run_comm_bench.sh [--quick] [--reps N] [other bench options]
#
# Environment: BIN_DIR (default build/release/bench/comm), MPIEXEC (default
# mpiexec.mpich), OUT_DIR (CSV files; default a fresh temporary directory),
# WEFT_THREADS (workers per rank, default 1: one core per rank on 2 cores),
# TIMEOUT (seconds per run, default 600), PYTHON (default python3), WITH_UCX
# (1 or 0; default: 1 when the binaries hold weft's ucx transport).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BIN_DIR=${BIN_DIR:-$here/../../build/release/bench/comm}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/weft-comm-bench.XXXXXX)}
WEFT_THREADS=${WEFT_THREADS:-1}
TIMEOUT=${TIMEOUT:-600}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT_DIR"

for name in msg_rate latency; do
  bin=$BIN_DIR/bench_$name
  csv=$OUT_DIR/$name.csv
  [[ -x $bin ]] || { echo "missing $bin (cmake --build --preset release --target bench_$name)" >&2; exit 1; }
  rm -f "$csv"
  ucx=()
  with_ucx=${WITH_UCX:-}
  if [[ -z $with_ucx ]]; then
    held=$(nm -C "$bin" 2>/dev/null | grep -c 'ucx_transport::' || true)
    with_ucx=$([[ ${held:-0} -gt 0 ]] && echo 1 || echo 0)
  fi
  if [[ $with_ucx == 1 ]]; then
    # Shared memory between the two ranks for raw MPI (MPICH's ch4:ucx), raw
    # UCP and weft alike.
    ucx=(--ucx)
    export UCX_TLS=${UCX_TLS:-sm,self}
  fi
  # timeout: a hang shows up as a failure instead of a stuck job.
  timeout "$TIMEOUT" "$MPIEXEC" -n 2 -bind-to core "$bin" --mode=mpi --mpi-path "${ucx[@]}" --csv "$csv" "$@" \
    --weft:threads="$WEFT_THREADS" > "$OUT_DIR/$name.mpi.txt"
  timeout "$TIMEOUT" "$bin" --mode=smp --csv "$csv" "$@" \
    --weft:ranks=2 --weft:threads="$WEFT_THREADS" > "$OUT_DIR/$name.smp.txt"
done

# Merge: one row per configuration, columns per system, ratios to raw MPI
# (rates: weft/MPI, higher is better; latency: weft/MPI, lower is better).
"$PYTHON" - "$OUT_DIR" <<'EOF'
import csv, sys, os

out = sys.argv[1]
systems = ["mpi", "ucp", "weft-mpi", "weft-mpi-only", "weft-ucx", "weft-smp", "weft-mpi-chain", "weft-ucx-chain",
           "weft-smp-chain", "weft-mpi-echo", "weft-ucx-echo", "weft-smp-echo"]

def size(b):
    b = int(b)
    return f"{b // 1024} KiB" if b >= 1024 and b % 1024 == 0 else f"{b} B"

def si(v):
    v = float(v)
    for d, s in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if v >= d:
            return f"{v / d:.2f}{s}"
    return f"{v:.0f}"

def table(path, param, value, lo, hi, fmt, title, param_name, param_fmt, extra=None):
    rows = list(csv.DictReader(open(path)))
    data = {}
    order = []
    for r in rows:
        k = (int(r["size_bytes"]), int(r[param]))
        if k not in data:
            data[k] = {}
            order.append(k)
        data[k][r["system"]] = r
    present = [s for s in systems if any(s in d for d in data.values())]
    print(f"\n{title}\n")
    over_ucp = [s for s in present if s.startswith("weft-ucx")] if "ucp" in present else []
    head = ["size", param_name] + present + [f"{s}/mpi" for s in present if s != "mpi" and "mpi" in present]
    head += [f"{s}/ucp" for s in over_ucp]
    if extra:
        head += [f"{s} {extra[1]}" for s in present]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for k in order:
        d = data[k]
        cells = [size(k[0]), param_fmt(k[1])]
        for s in present:
            r = d.get(s)
            cells.append(f"{fmt(r[value])} [{fmt(r[lo])}-{fmt(r[hi])}]" if r else "-")
        if "mpi" in present:
            base = float(d["mpi"][value]) if "mpi" in d else None
            for s in present:
                if s == "mpi":
                    continue
                cells.append(f"{float(d[s][value]) / base:.2f}" if base and s in d else "-")
        for s in over_ucp:
            ok = s in d and "ucp" in d
            cells.append(f"{float(d[s][value]) / float(d['ucp'][value]):.2f}" if ok else "-")
        if extra:
            cells += [si(d[s][extra[0]]) if s in d else "-" for s in present]
        print("| " + " | ".join(cells) + " |")

table(os.path.join(out, "msg_rate.csv"), "target_rate", "median_rate", "min_rate", "max_rate", si,
      "message rate, messages/s received: median [min-max]; ratio = weft/MPI (higher is better)",
      "attempted", lambda r: si(r) if r else "unlimited")
table(os.path.join(out, "latency.csv"), "window", "median_us", "min_us", "max_us", lambda v: f"{float(v):.2f}",
      "one-way latency, us: median [min-max]; ratio = weft/MPI and weft-ucx/UCP (lower is better)",
      "window", str, extra=("median_msgs_per_s", "msg/s"))
print(f"\nCSV and per-mode tables: {out}")
EOF
