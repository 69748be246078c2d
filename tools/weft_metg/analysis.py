"""METG arithmetic: aggregation over repetitions, peak FLOP/s, efficiency,
and the 50% crossing.

Definitions (Task Bench's, as taskbench/README.md "What the core follows" states them):
  granularity  = elapsed * cores / total_tasks   (reported in microseconds)
  efficiency   = achieved FLOP/s / peak FLOP/s
  METG(50%)    = the smallest granularity whose efficiency is >= 50%,
                 interpolated linearly (in granularity) towards the next
                 smaller-granularity point, which is below 50%.

Per (implementation, iter) point, repetitions are reduced to the median
elapsed time (statistics.median: the mean of the two middle values for an
even count); granularity and efficiency are computed from that median, and
their ranges from the fastest and slowest repetition.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, asdict, field

US = 1e6


@dataclass
class Sample:
    """One run's measurement. kind is "run" for a sweep/log run and "peak"
    for a run of --peak-cmd (used only for the peak)."""

    impl: str
    iter: int | None
    rep: int
    elapsed_s: float | None = None
    total_tasks: int | None = None
    total_flops: int | None = None
    ok: bool = True
    kind: str = "run"

    def rate(self) -> float:
        if self.ok and self.elapsed_s and self.elapsed_s > 0 and self.total_flops:
            return self.total_flops / self.elapsed_s
        return 0.0


@dataclass
class Point:
    iter: int
    reps_ok: int
    reps_failed: int
    total_tasks: int
    total_flops: int
    elapsed_median_s: float
    elapsed_min_s: float
    elapsed_max_s: float
    granularity_us: float
    granularity_min_us: float
    granularity_max_us: float
    flops_per_s: float
    efficiency: float
    efficiency_min: float
    efficiency_max: float
    notes: list = field(default_factory=list)


def granularity_us(elapsed_s: float, cores: int, tasks: int) -> float:
    return elapsed_s * cores / tasks * US


def aggregate(samples: list[Sample], cores: int, peak: float) -> list[Point]:
    """Reduces one implementation's samples to points, largest iter first.
    Failed samples count in reps_failed only."""
    by_iter: dict[int, list[Sample]] = {}
    for s in samples:
        if s.kind != "run" or s.iter is None:
            continue
        by_iter.setdefault(s.iter, []).append(s)
    points = []
    for it in sorted(by_iter, reverse=True):
        group = by_iter[it]
        ok = [s for s in group if s.ok and s.elapsed_s is not None and s.total_tasks]
        if not ok:
            continue
        notes = []
        tasks = ok[0].total_tasks
        flops = ok[0].total_flops or 0
        if any(s.total_tasks != tasks for s in ok) or any((s.total_flops or 0) != flops for s in ok):
            notes.append("repetitions report different task or FLOP totals; using the median")
            tasks = int(statistics.median(s.total_tasks for s in ok))
            flops = int(statistics.median(s.total_flops or 0 for s in ok))
        el = [s.elapsed_s for s in ok]
        med, lo, hi = statistics.median(el), min(el), max(el)

        def eff(e):
            if e <= 0 or peak <= 0:
                return math.inf if flops > 0 else 0.0
            return flops / e / peak

        points.append(Point(
            iter=it, reps_ok=len(ok), reps_failed=len(group) - len(ok),
            total_tasks=tasks, total_flops=flops,
            elapsed_median_s=med, elapsed_min_s=lo, elapsed_max_s=hi,
            granularity_us=granularity_us(med, cores, tasks),
            granularity_min_us=granularity_us(lo, cores, tasks),
            granularity_max_us=granularity_us(hi, cores, tasks),
            flops_per_s=flops / med if med > 0 else math.inf,
            efficiency=eff(med), efficiency_min=eff(hi), efficiency_max=eff(lo),
            notes=notes))
    return points


def find_peak(samples: list[Sample]):
    """The best single-run FLOP/s. Peak-command samples, when present, are
    used instead of the sweep's runs. Returns (rate, sample or None)."""
    pool = [s for s in samples if s.kind == "peak" and s.rate() > 0]
    if not pool:
        pool = [s for s in samples if s.kind == "run" and s.rate() > 0]
    if not pool:
        return 0.0, None
    best = max(pool, key=lambda s: s.rate())
    return best.rate(), best


def metg(points, threshold: float = 0.5) -> dict:
    """METG from (granularity, efficiency) pairs (Points or 2-tuples).

    Sorted by granularity, largest first; k = the smallest-granularity point
    with efficiency >= threshold.
      - no point >= threshold: status "not_reached", value None,
        interval (largest granularity, inf): METG is above what was measured.
      - k is the smallest measured point: status "below_smallest", value =
        its granularity, interval (0, that]: METG is at most that.
      - otherwise, with hi = point k and lo = the next smaller point (which
        is below threshold by the choice of k):
            METG = lo.g + (threshold - lo.e) * (hi.g - lo.g) / (hi.e - lo.e)
        status "interpolated" (or "exact" when hi.e == threshold).
    non_monotonic is True when some point with larger granularity than k is
    below threshold (the curve dips and recovers; METG still follows the
    definition: the smallest granularity at or above threshold)."""
    pts = []
    for p in points:
        if isinstance(p, Point):
            pts.append((p.granularity_us, p.efficiency, p.iter))
        else:
            pts.append((float(p[0]), float(p[1]), p[2] if len(p) > 2 else None))
    pts.sort(key=lambda t: -t[0])
    res = {"value_us": None, "status": "no_data", "lower_us": None, "upper_us": None,
           "between_iters": None, "non_monotonic": False, "threshold": threshold}
    if not pts:
        return res
    ok = [i for i, p in enumerate(pts) if p[1] >= threshold]
    if not ok:
        res.update(status="not_reached", lower_us=pts[0][0])
        return res
    k = ok[-1]
    res["non_monotonic"] = any(p[1] < threshold for p in pts[:k])
    g_hi, e_hi, it_hi = pts[k]
    if k == len(pts) - 1:
        res.update(status="below_smallest", value_us=g_hi, lower_us=0.0, upper_us=g_hi)
        return res
    g_lo, e_lo, it_lo = pts[k + 1]
    if e_hi == threshold or e_hi == e_lo or math.isinf(e_hi):
        value = g_hi
    else:
        value = g_lo + (threshold - e_lo) * (g_hi - g_lo) / (e_hi - e_lo)
    res.update(status="exact" if e_hi == threshold else "interpolated", value_us=value,
               lower_us=value, upper_us=value, between_iters=[it_hi, it_lo])
    return res


def efficiency_at(points, granularity: float):
    """Efficiency at a given granularity (us), interpolated linearly in
    log(granularity) between the two measured points around it; None when it
    lies outside the measured range. With several points at the same side,
    the nearest ones are used (the curve need not be monotonic)."""
    pts = []
    for p in points:
        if isinstance(p, Point):
            pts.append((p.granularity_us, p.efficiency))
        else:
            pts.append((float(p[0]), float(p[1])))
    pts = sorted(q for q in pts if q[0] > 0 and math.isfinite(q[1]))
    if not pts or granularity is None or granularity <= 0:
        return None
    for (g0, e0), (g1, e1) in zip(pts, pts[1:]):
        if g0 <= granularity <= g1:
            if g1 == g0:
                return e0
            w = (math.log(granularity) - math.log(g0)) / (math.log(g1) - math.log(g0))
            return e0 + w * (e1 - e0)
    if len(pts) == 1 and pts[0][0] == granularity:
        return pts[0][1]
    return None


def efficiency_at_multiple(results: dict, baseline: str | None, multiple: float) -> dict | None:
    """Every implementation's efficiency at multiple x METG(baseline), the
    same granularity for all (a fair comparison: Task Bench's "efficiency at
    16x METG" figures), and at multiple x its own METG. Returned as
    {"multiple", "granularity_us", "per_impl": {name: {"at_baseline",
    "own_granularity_us", "at_own"}}}; None without a baseline METG value."""
    if not baseline or baseline not in results or not multiple:
        return None
    bm = results[baseline]["metg"]
    if bm.get("value_us") is None or bm["status"] not in ("interpolated", "exact"):
        return None  # no METG value (only a bound): nothing to multiply
    g = multiple * bm["value_us"]
    per = {}
    for name, r in results.items():
        pts = [(p["granularity_us"], p["efficiency"]) for p in r["points"]]
        own = r["metg"].get("value_us")
        og = multiple * own if own is not None and r["metg"]["status"] in ("interpolated", "exact") else None
        per[name] = {"at_baseline": efficiency_at(pts, g), "own_granularity_us": og,
                     "at_own": efficiency_at(pts, og) if og else None}
    return {"multiple": multiple, "granularity_us": g, "per_impl": per}


def metg_text(m: dict, fmt: str = "%.3g") -> str:
    st = m["status"]
    if st in ("interpolated", "exact"):
        return fmt % m["value_us"]
    if st == "below_smallest":
        return "<= " + fmt % m["value_us"]
    if st == "not_reached":
        return "> " + fmt % m["lower_us"] + " (not reached)"
    return "no data"


def ratio(m: dict, base: dict):
    """METG ratio impl/base as an interval (lo, hi); None where unbounded.
    Each METG is an interval: exact -> [v, v], below_smallest -> (0, g],
    not_reached -> (g, inf)."""
    def interval(x):
        if x["status"] in ("interpolated", "exact"):
            return x["value_us"], x["value_us"]
        if x["status"] == "below_smallest":
            return 0.0, x["upper_us"]
        if x["status"] == "not_reached":
            return x["lower_us"], math.inf
        return None
    a, b = interval(m), interval(base)
    if a is None or b is None:
        return None, None
    lo = a[0] / b[1] if a[0] > 0 and 0 < b[1] < math.inf else None
    hi = a[1] / b[0] if b[0] > 0 and a[1] < math.inf else None
    return lo, hi


def ratio_text(m: dict, base: dict) -> str:
    lo, hi = ratio(m, base)
    if lo is not None and hi is not None:
        return "%.2f" % lo if abs(hi - lo) <= 1e-12 * max(1.0, hi) else "%.2f..%.2f" % (lo, hi)
    if lo is not None:
        return ">= %.2f" % lo
    if hi is not None:
        return "<= %.2f" % hi
    return "n/a"


def summarize(samples: list[Sample], impls: list[str], cores: int, threshold: float = 0.5,
              peak_flops: float | None = None, baseline: str | None = None,
              eff_multiple: float = 16.0) -> dict:
    """Everything the tables, plot and metg.json need. peak_flops given
    overrides the measured peak. eff_multiple: also report every
    implementation's efficiency at that multiple of the baseline's METG (0:
    off)."""
    if peak_flops:
        peak, src, best = float(peak_flops), "given", None
    else:
        peak, best = find_peak(samples)
        src = "peak-cmd" if best is not None and best.kind == "peak" else "sweep-best"
    peak_info = {"flops_per_s": peak, "source": src}
    if best is not None:
        peak_info.update(impl=best.impl, iter=best.iter, rep=best.rep)
    results = {}
    for name in impls:
        pts = aggregate([s for s in samples if s.impl == name], cores, peak) if peak > 0 else []
        failed = sum(1 for s in samples if s.impl == name and s.kind == "run" and not s.ok)
        results[name] = {"points": [asdict(p) for p in pts],
                         "metg": metg(pts, threshold),
                         "runs_failed": failed}
    if baseline is not None and baseline in results:
        for name, r in results.items():
            lo, hi = ratio(r["metg"], results[baseline]["metg"])
            r["ratio_vs_baseline"] = {"lower": lo, "upper": hi,
                                      "text": ratio_text(r["metg"], results[baseline]["metg"])}
    out = {"cores": cores, "threshold": threshold, "peak": peak_info,
           "baseline": baseline, "impls": list(impls), "results": results,
           "eff_multiple": eff_multiple,
           "efficiency_at": efficiency_at_multiple(results, baseline, eff_multiple)}
    if peak <= 0:
        ok = [s for s in samples if s.ok and s.kind == "run"]
        out["error"] = ("no successful run" if not ok else
                        "the runs report 0 FLOPs, so efficiency is undefined: METG needs a "
                        "FLOP-counting kernel (compute_bound, compute_bound2, compute_dgemm, "
                        "load_imbalance)")
    return out


def points_from_summary(res: dict) -> list[Point]:
    return [Point(**p) for p in res["points"]]
