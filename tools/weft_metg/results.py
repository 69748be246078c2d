"""metg.csv (one row per run), metg.json (the summary) and text tables."""

from __future__ import annotations

import csv
import json
import math
import os

from .analysis import Sample, metg_text

CSV_FIELDS = ["order", "kind", "impl", "rep", "iter", "status", "returncode",
              "elapsed_s", "total_tasks", "total_deps", "total_flops", "total_bytes",
              "flops_per_s", "cores", "wall_s", "command", "error"]

JSON_NAME = "metg.json"
CSV_NAME = "metg.csv"
PNG_NAME = "metg.png"


class CsvWriter:
    """Appends rows as runs finish (flushed, so an interrupted sweep keeps
    what it measured)."""

    def __init__(self, path: str):
        self.f = open(path, "w", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        self.w.writeheader()
        self.f.flush()

    def row(self, **kw):
        self.w.writerow({k: ("" if kw.get(k) is None else kw.get(k)) for k in CSV_FIELDS})
        self.f.flush()

    def close(self):
        self.f.close()


def read_csv(path: str):
    """Returns (samples, impl names in order of appearance, cores or None)."""
    samples, impls, cores = [], [], None

    def num(v, conv):
        return conv(v) if v not in ("", None) else None

    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            kind = r.get("kind") or "run"
            impl = r["impl"]
            if kind == "run" and impl not in impls:
                impls.append(impl)
            if r.get("cores"):
                cores = int(r["cores"])
            samples.append(Sample(impl=impl, iter=num(r.get("iter"), int),
                                  rep=num(r.get("rep"), int) or 0,
                                  elapsed_s=num(r.get("elapsed_s"), float),
                                  total_tasks=num(r.get("total_tasks"), int),
                                  total_flops=num(r.get("total_flops"), int),
                                  ok=r.get("status") == "ok", kind=kind))
    return samples, impls, cores


def _clean(o):
    """JSON has no inf/nan: write them as strings."""
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def write_json(path: str, summary: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(_clean(summary), f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def read_json(path: str) -> dict:
    with open(path) as f:
        s = json.load(f)
    if "results" not in s or "impls" not in s:
        raise ValueError("%s is not a metg.json summary" % path)
    for r in s["results"].values():
        for p in r["points"]:
            for k, v in list(p.items()):
                if isinstance(v, str) and v in ("inf", "-inf", "nan"):
                    p[k] = float(v)
    return s


def _table(rows, align):
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, r in enumerate(rows):
        cells = []
        for i, c in enumerate(r):
            c = str(c)
            cells.append(c.ljust(widths[i]) if align[i] == "l" else c.rjust(widths[i]))
        out.append("  ".join(cells).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def peak_text(peak: dict) -> str:
    src = peak.get("source")
    v = "%.4g FLOP/s" % peak["flops_per_s"]
    if src == "given":
        return v + " (given with --peak-flops)"
    if src == "peak-cmd":
        return v + " (best run of --peak-cmd, rep %s)" % peak.get("rep")
    where = ""
    if peak.get("impl") is not None:
        where = ": %s iter=%s rep %s" % (peak["impl"], peak.get("iter"), peak.get("rep"))
    return v + " (best single run measured%s)" % where


def metg_table(summary: dict) -> str:
    thr = summary["threshold"]
    base = summary.get("baseline")
    head = ["impl", "METG(%g%%) us" % (thr * 100)]
    if base:
        head.append("vs " + base)
    head += ["points", "runs failed", "note"]
    rows = [head]
    for name in summary["impls"]:
        r = summary["results"][name]
        m = r["metg"]
        note = ""
        if m["status"] in ("interpolated", "exact") and m.get("between_iters"):
            a, b = m["between_iters"]
            note = "between iter %s and %s" % (a, b)
        elif m["status"] == "below_smallest":
            note = "efficient down to the smallest measured granularity"
        elif m["status"] == "not_reached":
            note = "no point reached %g%%" % (thr * 100)
        if m.get("non_monotonic"):
            note += "; non-monotonic curve"
        row = [name, metg_text(m)]
        if base:
            row.append(r.get("ratio_vs_baseline", {}).get("text", "n/a"))
        row += [len(r["points"]), r.get("runs_failed", 0), note]
        rows.append(row)
    return _table(rows, ["l", "r"] + (["r"] if base else []) + ["r", "r", "l"])


def detail_table(summary: dict) -> str:
    rows = [["impl", "iter", "reps", "elapsed s median [min..max]",
             "granularity us [min..max]", "FLOP/s", "efficiency [min..max]"]]
    for name in summary["impls"]:
        for p in summary["results"][name]["points"]:
            reps = str(p["reps_ok"]) + ("" if not p["reps_failed"] else " (+%d failed)" % p["reps_failed"])
            rows.append([name, p["iter"], reps,
                         "%.4g [%.4g..%.4g]" % (p["elapsed_median_s"], p["elapsed_min_s"], p["elapsed_max_s"]),
                         "%.4g [%.4g..%.4g]" % (p["granularity_us"], p["granularity_min_us"],
                                                p["granularity_max_us"]),
                         "%.4g" % p["flops_per_s"],
                         "%5.1f%% [%.1f..%.1f]" % (100 * p["efficiency"], 100 * p["efficiency_min"],
                                                   100 * p["efficiency_max"])])
    if len(rows) == 1:
        return "(no points: no successful run with FLOPs)"
    return _table(rows, ["l", "r", "r", "r", "r", "r", "r"])


def efficiency_table(summary: dict) -> str | None:
    """Each implementation's efficiency at K x METG(baseline), the same
    granularity for all, and at K x its own METG; None when not computed."""
    ea = summary.get("efficiency_at")
    if not ea:
        return None
    k, base = ea["multiple"], summary.get("baseline")

    def pct(e):
        return "n/a (outside the sweep)" if e is None else "%.1f%%" % (100 * e)
    rows = [["impl", "eff at %g x METG(%s) = %.3g us" % (k, base, ea["granularity_us"]),
             "eff at %g x own METG" % k]]
    for name in summary["impls"]:
        r = ea["per_impl"].get(name)
        if r is None:
            continue
        own = ("n/a" if r["own_granularity_us"] is None else
               "%s at %.3g us" % (pct(r["at_own"]), r["own_granularity_us"]))
        rows.append([name, pct(r["at_baseline"]), own])
    return _table(rows, ["l", "r", "r"])


def report_text(summary: dict) -> str:
    lines = []
    if summary.get("label"):
        lines.append("== %s" % summary["label"])
    if summary.get("graph"):
        lines.append("graph: %s" % summary["graph"])
    if summary.get("error"):
        lines.append("error: %s" % summary["error"])
    lines.append("peak: %s" % peak_text(summary["peak"]))
    lines.append("cores: %d (granularity = elapsed x cores / tasks)" % summary["cores"])
    lines.append("")
    lines.append(metg_table(summary))
    lines.append("")
    eff = efficiency_table(summary)
    if eff:
        lines.append(eff)
        lines.append("")
    lines.append(detail_table(summary))
    return "\n".join(lines)
