#!/usr/bin/env bash
# The network layer between two nodes, measured on one machine: every weft
# rank its own node (--weft:node-size=1), weft's ucx and mpi backends
# against raw MPI and raw UCP, with the rows and goals of docs/BENCHMARKS.md
# "Between nodes on one machine: ucx and mpi". Each round runs, one after
# the other (so a drift of the host shows in every column alike):
#   bench_latency  --ucx --size 8 --window 1   8 B remote call, one-way:
#                  mpi, ucp (raw UCP active messages), weft-mpi, weft-ucx
#   bench_msg_rate --ucx --size 8 --rate 0     8 B message rate: mpi, weft-mpi, weft-ucx
#   ucx_perftest   ucp_am_lat, tag_lat (50th percentile, µs) and ucp_am_bw,
#                  tag_bw (messages/s), 8 B, server and client on cores 1 and 0
#   bench_pgas --ucx                           put/get latency, bandwidth, fetch-add,
#                  locks: MPI RMA, weft-mpi-1s/-msg, weft-ucx-1s/-msg (those set
#                  node-size 1 themselves; weft-mpi, the same-node loads and
#                  stores, comes along)
# (each --reps 1, so a round is one sample of every column), then once
# bench_one_sided_lat on the ucx backend with --weft:ucx-rma=on (the
# transport's put+flush, get+flush, fetch-add: ucp_*_nbx on weft's
# registered memory, against raw MPI RMA; its own repetitions interleave).
# Tables: median [min-max] over the rounds, and X/base as the median over
# rounds of each round's ratio, [min-max].
#
#   bench/comm/run_network_bench.sh [--rounds R] [--tls "sm,self tcp,self"] [--remote-calls-only]
#
# --tls: one pass per UCX_TLS value (default sm,self); --remote-calls-only:
# the latency, message-rate and ucx_perftest rows only (for a second TLS).
# Environment: BUILD (default build/release), MPIEXEC (default
# mpiexec.mpich), OUT_DIR (default a fresh temporary directory), TIMEOUT
# (seconds per invocation, default 300), PERFTEST (default ucx_perftest).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$here/../../build/release}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/weft-network-bench.XXXXXX)}
TIMEOUT=${TIMEOUT:-300}
PERFTEST=${PERFTEST:-ucx_perftest}
rounds=7 tls_list="sm,self" calls_only=0
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --tls) tls_list=$2; shift 2 ;;
    --remote-calls-only) calls_only=1; shift ;;
    *) echo "usage: $0 [--rounds R] [--tls \"sm,self tcp,self\"] [--remote-calls-only]" >&2; exit 2 ;;
  esac
done
for b in comm/bench_latency comm/bench_msg_rate pgas/bench_pgas one_sided/bench_one_sided_lat; do
  [[ -x $BUILD/bench/$b ]] || { echo "missing $BUILD/bench/$b" >&2; exit 1; }
done
mkdir -p "$OUT_DIR"
# A failed or hung run (timeout) is named at the end and leaves its row out
# of that round; the others go on.
failed=()
run2() { timeout "$TIMEOUT" "$MPIEXEC" -n 2 -bind-to core "$@" || failed+=("${1##*/} status $? (124: timed out)"); }
weft=(--weft:threads=1 --weft:node-size=1)
port=$((20000 + RANDOM % 20000))

# One ucx_perftest pair; appends "tls,test,p50_us,msgs_per_s" to perftest.csv.
perftest() {
  local tls=$1 test=$2
  timeout "$TIMEOUT" "$PERFTEST" -p "$port" -c 1 > /dev/null 2>&1 &
  local server=$!
  sleep 0.3
  local line
  line=$(timeout "$TIMEOUT" "$PERFTEST" localhost -p "$port" -c 0 -t "$test" -s 8 -n 200000 -w 20000 -f 2>&1 | tail -1)
  wait "$server" || true
  # Final: iterations, p50, average, overall (us); MB/s average, overall; msg/s average, overall
  echo "$line" | awk -v t="$tls" -v n="$test" '{print t "," n "," $(NF-6) "," $NF}' >> "$OUT_DIR/perftest.csv"
}

for tls in $tls_list; do
  export UCX_TLS=$tls
  tag=${tls//,/-}
  for ((r = 1; r <= rounds; ++r)); do
    echo "UCX_TLS=$tls round $r/$rounds" >&2
    run2 "$BUILD/bench/comm/bench_latency" --mode=mpi --ucx --reps 1 --size 8 --window 1 \
      --csv "$OUT_DIR/latency.$tag.csv" "${weft[@]}" >> "$OUT_DIR/latency.$tag.txt" 2>&1
    run2 "$BUILD/bench/comm/bench_msg_rate" --mode=mpi --ucx --reps 1 --size 8 --rate 0 \
      --csv "$OUT_DIR/msg_rate.$tag.csv" "${weft[@]}" >> "$OUT_DIR/msg_rate.$tag.txt" 2>&1
    for t in ucp_am_lat tag_lat ucp_am_bw tag_bw; do perftest "$tag" "$t"; done
    if ((!calls_only)); then
      run2 "$BUILD/bench/pgas/bench_pgas" --ucx --reps 1 --csv "$OUT_DIR/pgas.$tag.csv" --weft:threads=1 \
        >> "$OUT_DIR/pgas.$tag.txt" 2>&1
    fi
  done
  if ((!calls_only)); then
    run2 "$BUILD/bench/one_sided/bench_one_sided_lat" --reps "$rounds" --weft:backend=ucx --weft:ucx-rma=on \
      "${weft[@]}" > "$OUT_DIR/one_sided.$tag.txt" 2>&1
  fi
done

python3 - "$OUT_DIR" "$rounds" <<'EOF'
import csv, glob, os, statistics as st, sys

out, rounds = sys.argv[1], sys.argv[2]

def cell(v, fmt):
    return f"{fmt(st.median(v))} [{fmt(min(v))}-{fmt(max(v))}]" if v else "-"

def si(v):
    for d, s in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if v >= d:
            return f"{v / d:.2f}{s}"
    return f"{v:.0f}"

def table(title, rows, systems, ratios, fmt):
    """rows: [(label, {system: [value per round]})]; ratios: [(x, base)], per round."""
    head = ["row"] + systems + [f"{x}/{b}" for x, b in ratios]
    print(f"\n{title}\n\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for label, d in rows:
        cells = [label] + [cell(d.get(s, []), fmt) for s in systems]
        for x, b in ratios:
            xs, bs = d.get(x, []), d.get(b, [])
            n = min(len(xs), len(bs))
            cells.append(cell([xs[i] / bs[i] for i in range(n)], lambda v: f"{v:.2f}") if n else "-")
        print("| " + " | ".join(cells) + " |")

us = lambda v: f"{v:.3f}"
for path in sorted(glob.glob(os.path.join(out, "latency.*.csv"))):
    tag = path.split(".")[-2]
    lat = {}
    for r in csv.DictReader(open(path)):
        lat.setdefault(r["system"], []).append(float(r["median_us"]))
    perf = {}
    pf = os.path.join(out, "perftest.csv")
    for line in open(pf) if os.path.exists(pf) else []:
        t, test, p50, rate = line.strip().split(",")
        if t == tag:
            perf.setdefault(test, []).append((float(p50), float(rate)))
    lat.update({f"perftest {k}": [p for p, _ in v] for k, v in perf.items() if k.endswith("lat")})
    table(f"UCX_TLS={tag}: 8 B remote call, one-way latency, us ({rounds} rounds)", [("8 B", lat)],
          ["mpi", "ucp", "weft-mpi", "weft-ucx", "perftest ucp_am_lat", "perftest tag_lat"],
          [("weft-ucx", "mpi"), ("weft-ucx", "ucp"), ("weft-mpi", "mpi"), ("ucp", "mpi")], us)
    rate = {}
    for r in csv.DictReader(open(os.path.join(out, f"msg_rate.{tag}.csv"))):
        rate.setdefault(r["system"], []).append(float(r["median_rate"]))
    rate.update({f"perftest {k}": [m for _, m in v] for k, v in perf.items() if k.endswith("bw")})
    table(f"UCX_TLS={tag}: 8 B message rate, messages/s ({rounds} rounds)", [("8 B", rate)],
          ["mpi", "weft-mpi", "weft-ucx", "perftest ucp_am_bw", "perftest tag_bw"],
          [("weft-ucx", "mpi"), ("weft-mpi", "mpi"), ("weft-ucx", "perftest ucp_am_bw")], si)
    pg = os.path.join(out, f"pgas.{tag}.csv")
    if not os.path.exists(pg):
        continue
    ops = {}
    for r in csv.DictReader(open(pg)):
        ops.setdefault(r["operation"], {}).setdefault(int(r["size_bytes"]), {}).setdefault(r["system"], []).append(
            float(r["median"]))
    cols = ["mpi", "weft-mpi-1s", "weft-mpi-msg", "weft-ucx-1s", "weft-ucx-msg"]
    ratios = [(c, "mpi") for c in cols[1:]]
    size = lambda b: f"{b >> 10} KiB" if b >= 1024 else f"{b} B"
    for op, by_size in ops.items():
        if op.startswith("contended lock:"):
            continue
        keep = [b for b in sorted(by_size) if not op.startswith(("put +", "get +")) or b == 8]
        gbs = "bandwidth" in op
        table(f"UCX_TLS={tag}: {op} ({rounds} rounds)", [(size(b), by_size[b]) for b in keep], cols, ratios,
              (lambda v: f"{v:.2f}") if gbs else us)
for path in sorted(glob.glob(os.path.join(out, "one_sided.*.txt"))):
    print(f"\nbench_one_sided_lat, ucx backend, UCX_TLS={path.split('.')[-2]}\n")
    print("".join(l for l in open(path) if l.startswith(("|", "8-byte"))))
print(f"raw outputs: {out}")
EOF
if ((${#failed[@]})); then
  printf 'failed: %s\n' "${failed[@]}"
  exit 1
fi
