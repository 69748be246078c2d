"""Tables of run_forkjoin_bench.sh's CSV (bench,config,param,metric,value):
median [min-max] over the rounds per configuration, the speedup over the
serial baseline, the ratio 2 ranks x 1 thread / 1 rank x 2 threads (times),
and every other metric (steal statistics) by configuration."""
import csv
import statistics
import sys
from collections import defaultdict

ORDER = ["serial", "1x1", "1x2", "2x1-smp", "2x1-mpi", "2x1-smp-rdma", "2x1-smp-msg", "2x1-mpi-rdma", "2x1-mpi-msg",
         "2x1-mpi-ns1", "2x1-ucx-ns1"]
rows = list(csv.reader(open(sys.argv[1])))
reps = sys.argv[2] if len(sys.argv) > 2 else "?"
data = defaultdict(list)  # (bench, param, metric, config) -> values
benches = []
for bench, config, param, metric, value in rows:
    data[(bench, param, metric, config)].append(float(value))
    if (bench, param) not in benches:
        benches.append((bench, param))


def cell(v, fmt):
    def f(x):
        return str(int(x)) if x.is_integer() else fmt.format(x)  # counts exactly
    return f"{f(statistics.median(v))} [{f(min(v))}-{f(max(v))}]"


print(f"fork-join benchmarks, {reps} rounds; median [min-max] over the rounds")
for bench, param in benches:
    metrics = []
    for (b, p, m, _c) in data:
        if (b, p) == (bench, param) and m not in metrics:
            metrics.append(m)
    configs = [c for c in ORDER if any((bench, param, m, c) in data for m in metrics)]
    print(f"\n{bench} ({param})\n")
    if "seconds" in metrics:
        med = {c: statistics.median(data[(bench, param, "seconds", c)])
               for c in configs if (bench, param, "seconds", c) in data}
        # Over 1x1 as well: weft's own scaling, apart from the cost of forks.
        print("| config | seconds | speedup over serial | over 1x1 |")
        print("|---|---|---|---|")
        for c in configs:
            if c not in med:
                continue
            sp = f"{med['serial'] / med[c]:.2f}" if "serial" in med else "-"
            sp1 = f"{med['1x1'] / med[c]:.2f}" if "1x1" in med and c != "serial" else "-"
            print(f"| {c} | {cell(data[(bench, param, 'seconds', c)], '{:.3f}')} | {sp} | {sp1} |")
        for two in ("2x1-smp", "2x1-mpi"):
            if two in med and "1x2" in med:
                print(f"\n{two} / 1x2 (time) = {med[two] / med['1x2']:.2f}", end="")
        print()
    others = [m for m in metrics if m != "seconds"]
    if others:
        print("\n| metric | " + " | ".join(configs) + " |")
        print("|---|" + "---|" * len(configs))
        for m in others:
            cells = [cell(data[(bench, param, m, c)], "{:.4g}") if (bench, param, m, c) in data else "-"
                     for c in configs]
            print(f"| {m} | " + " | ".join(cells) + " |")
