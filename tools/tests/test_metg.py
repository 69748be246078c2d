"""METG arithmetic with hand-computed cases."""

import pytest

from weft_metg.analysis import (Sample, aggregate, efficiency_at, efficiency_at_multiple, find_peak,
                                metg, metg_text, ratio, ratio_text, summarize)


def test_crossing_interpolates_linearly_in_granularity():
    pts = [(100, 0.9), (50, 0.8), (20, 0.6), (10, 0.4), (5, 0.1)]
    m = metg(pts)
    # hi = (20, 0.6), lo = (10, 0.4): 10 + (0.5 - 0.4) * (20 - 10) / (0.6 - 0.4) = 15
    assert m["status"] == "interpolated"
    assert m["value_us"] == pytest.approx(15.0)
    assert metg_text(m) == "15"


def test_order_of_input_does_not_matter():
    pts = [(10, 0.4), (100, 0.9), (5, 0.1), (20, 0.6), (50, 0.8)]
    assert metg(pts)["value_us"] == pytest.approx(15.0)


def test_all_points_above_threshold():
    m = metg([(100, 0.9), (30, 0.8), (10, 0.7)])
    assert m["status"] == "below_smallest"
    assert m["value_us"] == 10 and m["upper_us"] == 10 and m["lower_us"] == 0
    assert metg_text(m) == "<= 10"


def test_all_points_below_threshold():
    m = metg([(100, 0.4), (10, 0.1)])
    assert m["status"] == "not_reached"
    assert m["value_us"] is None and m["lower_us"] == 100
    assert metg_text(m).startswith("> 100")


def test_exact_hit():
    m = metg([(100, 0.9), (40, 0.5), (10, 0.2)])
    assert m["status"] == "exact" and m["value_us"] == 40


def test_non_monotonic_takes_smallest_granularity_at_or_above():
    # dips below 50% at 50 us, recovers at 20 us: METG follows the smallest
    # granularity >= 50% (20 us) towards the next point (10 us, 30%):
    # 10 + (0.5 - 0.3) * 10 / (0.55 - 0.3) = 18
    m = metg([(100, 0.9), (50, 0.45), (20, 0.55), (10, 0.3)])
    assert m["value_us"] == pytest.approx(18.0)
    assert m["non_monotonic"] is True


def test_other_threshold_and_empty():
    assert metg([(100, 0.9), (50, 0.8), (20, 0.6)], threshold=0.8)["value_us"] == 50
    assert metg([])["status"] == "no_data"


def test_ratio_intervals():
    exact = lambda v: metg([(v * 2, 1.0), (v, 0.5), (v / 2, 0.0)])
    assert exact(15)["value_us"] == 15
    assert ratio_text(exact(15), exact(5)) == "3.00"
    below = metg([(100, 0.9), (10, 0.7)])           # METG <= 10
    unreached = metg([(100, 0.4), (10, 0.1)])       # METG > 100
    assert ratio(below, exact(5)) == (None, pytest.approx(2.0))
    assert ratio_text(below, exact(5)) == "<= 2.00"
    assert ratio_text(unreached, exact(10)) == ">= 10.00"
    assert ratio_text(exact(10), below) == ">= 1.00"
    assert ratio_text(below, below) == "n/a"


def test_aggregate_median_min_max_granularity_efficiency():
    s = [Sample("a", 8, r, elapsed_s=e, total_tasks=100, total_flops=1000) for r, e in
         enumerate([3.0, 1.0, 2.0], 1)]
    s.append(Sample("a", 8, 4, ok=False))
    (p,) = aggregate(s, cores=4, peak=500.0)
    assert (p.reps_ok, p.reps_failed) == (3, 1)
    assert p.elapsed_median_s == 2.0 and p.elapsed_min_s == 1.0 and p.elapsed_max_s == 3.0
    assert p.granularity_us == pytest.approx(2.0 * 4 / 100 * 1e6)     # 80000 us
    assert p.granularity_min_us == pytest.approx(40000)
    assert p.flops_per_s == pytest.approx(500.0)
    assert p.efficiency == pytest.approx(1.0)
    assert p.efficiency_min == pytest.approx(1000 / 3 / 500)
    assert p.efficiency_max == pytest.approx(2.0)


def test_aggregate_even_count_median_and_order():
    s = [Sample("a", 2, r, elapsed_s=e, total_tasks=10, total_flops=10) for r, e in
         enumerate([1.0, 2.0, 3.0, 4.0], 1)]
    s += [Sample("a", 4, 1, elapsed_s=1.0, total_tasks=10, total_flops=20)]
    pts = aggregate(s, cores=1, peak=10.0)
    assert [p.iter for p in pts] == [4, 2]
    assert pts[1].elapsed_median_s == 2.5


def test_peak_prefers_peak_command_runs():
    s = [Sample("a", 8, 1, elapsed_s=1.0, total_tasks=1, total_flops=100),
         Sample("(peak)", None, 1, elapsed_s=1.0, total_tasks=1, total_flops=80, kind="peak"),
         Sample("(peak)", None, 2, elapsed_s=1.0, total_tasks=1, total_flops=90, kind="peak"),
         Sample("(peak)", None, 3, elapsed_s=1.0, total_tasks=1, total_flops=900, kind="peak",
                ok=False)]
    rate, best = find_peak(s)
    assert rate == 90 and best.rep == 2
    rate, best = find_peak(s[:1])
    assert rate == 100 and best.impl == "a"


def test_summarize_end_to_end_numbers():
    # two impls, 2 cores, 100 tasks per run, flops = 1e6 * iter per run
    samples = []
    for impl, overhead in (("mpi", 0.001), ("weft", 0.004)):
        for it in (8, 4, 2, 1):
            samples.append(Sample(impl, it, 1, elapsed_s=0.01 * it + overhead, total_tasks=100,
                                  total_flops=10 ** 6 * it))
    s = summarize(samples, ["mpi", "weft"], cores=2, baseline="mpi")
    peak = 8e6 / 0.081
    assert s["peak"]["flops_per_s"] == pytest.approx(peak)
    assert s["peak"]["source"] == "sweep-best" and s["peak"]["impl"] == "mpi"
    mpi = s["results"]["mpi"]
    effs = [p["efficiency"] for p in mpi["points"]]
    assert effs == [pytest.approx(it * 1e6 / (0.01 * it + 0.001) / peak) for it in (8, 4, 2, 1)]
    # weft: eff(2) = 2e6/0.024/peak = 0.844, eff(1) = 1e6/0.014/peak = 0.723: all >= 50%
    assert s["results"]["weft"]["metg"]["status"] == "below_smallest"
    assert mpi["metg"]["status"] == "below_smallest"
    assert mpi["metg"]["value_us"] == pytest.approx(0.011 * 2 / 100 * 1e6)   # 220 us
    # at 80%: weft crosses between iter 2 (480 us, 0.844) and iter 1 (280 us, 0.723)
    s2 = summarize(samples, ["mpi", "weft"], cores=2, baseline="mpi", threshold=0.8)
    w = s2["results"]["weft"]["metg"]
    g = lambda it: (0.01 * it + 0.004) * 2 / 100 * 1e6
    e = lambda it: it * 1e6 / (0.01 * it + 0.004) / peak
    assert (g(2), g(1)) == (pytest.approx(480), pytest.approx(280))
    assert w["status"] == "interpolated" and w["between_iters"] == [2, 1]
    assert w["value_us"] == pytest.approx(g(1) + (0.8 - e(1)) * (g(2) - g(1)) / (e(2) - e(1)))
    # mpi is <= 220 us at 80% too, so the ratio is a lower bound
    assert s2["results"]["weft"]["ratio_vs_baseline"]["text"].startswith(">=")
    given = summarize(samples, ["mpi"], cores=2, peak_flops=1e9)
    assert given["peak"] == {"flops_per_s": 1e9, "source": "given"}


def test_efficiency_at_interpolates_in_log_granularity():
    pts = [(10, 0.4), (40, 0.8), (160, 0.9)]
    # 20 is halfway between 10 and 40 in log scale
    assert efficiency_at(pts, 20) == pytest.approx(0.6)
    assert efficiency_at(pts, 40) == pytest.approx(0.8)
    assert efficiency_at(pts, 80) == pytest.approx(0.85)
    assert efficiency_at(pts, 5) is None and efficiency_at(pts, 320) is None
    assert efficiency_at([], 10) is None and efficiency_at(pts, None) is None


def test_efficiency_at_multiple_of_baseline_and_own_metg():
    def res(points, value, status="interpolated"):
        return {"points": [{"granularity_us": g, "efficiency": e} for g, e in points],
                "metg": {"value_us": value, "status": status}}
    results = {"mpi": res([(1, 0.2), (4, 0.6), (64, 0.96), (256, 0.99)], 2.0),
               "df": res([(2, 0.3), (8, 0.7), (32, 0.9), (128, 0.98)], 4.0)}
    ea = efficiency_at_multiple(results, "mpi", 16)
    assert ea["granularity_us"] == pytest.approx(32)
    # mpi at 32 us: between 4 (0.6) and 64 (0.96), 3/4 of the way in log2
    assert ea["per_impl"]["mpi"]["at_baseline"] == pytest.approx(0.6 + 0.75 * 0.36)
    assert ea["per_impl"]["df"]["at_baseline"] == pytest.approx(0.9)
    assert ea["per_impl"]["df"]["own_granularity_us"] == pytest.approx(64)
    assert ea["per_impl"]["df"]["at_own"] == pytest.approx(0.94)
    assert efficiency_at_multiple(results, "mpi", 0) is None
    results["mpi"]["metg"] = {"value_us": None, "status": "not_reached"}
    assert efficiency_at_multiple(results, "mpi", 16) is None
