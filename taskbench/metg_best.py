#!/usr/bin/env python3
"""METG and efficiency at K x METG(baseline) of a `tools/metg sweep` from each
point's best repetition (its shortest run), for a shared host, where load
only ever adds time and a sweep's medians drift with it.

    taskbench/metg_best.py OUT/metg.json [--multiple 16]

Prints, per implementation: METG(50%) in us from the best runs, its ratio to
the baseline's, and the best-run efficiency at K x the baseline's METG.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from weft_metg.analysis import efficiency_at, metg  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("summary", help="a sweep's metg.json (or its folder)")
    ap.add_argument("--multiple", type=float, default=16.0)
    a = ap.parse_args()
    path = Path(a.summary)
    d = json.loads((path / "metg.json" if path.is_dir() else path).read_text())
    best = {name: [(p["granularity_min_us"], p["efficiency_max"], p["iter"]) for p in r["points"]]
            for name, r in d["results"].items()}
    base = d["baseline"]
    base_metg = metg(best[base])["value_us"]
    at = a.multiple * base_metg if base_metg else None
    print(f"{'impl':10} {'METG us (best runs)':>20} {'/ ' + base:>10} {'eff at %g x METG(%s)' % (a.multiple, base):>24}")
    for name, pts in best.items():
        m = metg(pts)
        value = m["value_us"]
        eff = efficiency_at(pts, at) if at else None
        print(f"{name:10} {'%.3g' % value if value else m['status']:>20} "
              f"{'%.2f' % (value / base_metg) if value and base_metg else '-':>10} "
              f"{'%.1f%%' % (100 * eff) if eff is not None else '-':>24}")


if __name__ == "__main__":
    main()
