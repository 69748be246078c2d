"""Parsing of the Task Bench report and of logs holding many runs."""

import math

import pytest

from tb_text import graph_block, one_run, report
from weft_metg.parse import ParseError, parse_report, split_runs, describe_graphs, config_signature


def test_single_report():
    r = parse_report(one_run(iters=1024, elapsed=0.5))
    assert r.total_tasks == 2000
    assert r.total_deps == 3 * 2 * 999
    assert r.total_flops == (128 * 1024 + 64) * 2000
    assert r.total_bytes == 0
    assert r.elapsed_s == pytest.approx(0.5)
    assert r.flops_per_s == pytest.approx(r.total_flops / 0.5, rel=1e-6)
    assert r.rate() == pytest.approx(r.total_flops / 0.5)
    assert r.iter == 1024
    g = r.graphs[0]
    assert g == {"graph": 1, "steps": 1000, "width": 2, "type": "stencil_1d", "radix": 3,
                 "period": 0, "fraction": 0.25, "kernel": "compute_bound", "iter": 1024,
                 "samples": 16, "imbalance": 0.0, "output": 16, "scratch": 0}


def test_report_with_nodes_estimate():
    r = parse_report(one_run(nodes=2))
    assert r.total_tasks == 2000 and r.total_deps == 5994


def test_multiple_graphs_one_report_sums_over_graphs():
    # -and: one configuration block per graph, a single report whose totals
    # cover every graph (graph 1: 100 x 2 at iter 64, graph 2: 50 x 4 at iter 64)
    t1, t2 = 100 * 2, 50 * 4
    f1, f2 = (128 * 64 + 64) * t1, (128 * 64 + 64) * t2
    text = ("Running Task Benchmark\n  Configuration:\n"
            + graph_block(1, 100, 2, "stencil_1d", "compute_bound", 64)
            + graph_block(2, 50, 4, "no_comm", "load_imbalance", 64, imbalance=1.0)
            + report(t1 + t2, 594 + 196, f1 + f2, 0.01))
    r = parse_report(text)
    assert len(r.graphs) == 2
    assert [g["type"] for g in r.graphs] == ["stencil_1d", "no_comm"]
    assert r.graphs[1]["kernel"] == "load_imbalance" and r.graphs[1]["imbalance"] == 1.0
    assert r.graph_iters == [64, 64]
    assert r.total_tasks == 400
    assert r.total_flops == f1 + f2
    assert "2 graphs" not in describe_graphs(r.graphs)
    assert " + " in describe_graphs(r.graphs)


def test_verbose_output_does_not_pollute_config():
    text = one_run(iters=8, steps=2)
    head, rest = text.split("Total Tasks", 1)
    verbose = ("      Timestep 0 (offset 0, width 2, last offset 0, last width 0):\n"
               "        Points: 0 1\n        Dependencies:\n          Point 0: \n"
               "          Point 1: \n        Reverse Dependencies:\n          Point 0: 0 1\n"
               "      Timestep 1 (offset 0, width 2, last offset 0, last width 2):\n"
               "        Points: 0 1\n        Dependencies:\n          Point 0: 0 1\n")
    r = parse_report(head + verbose + "Total Tasks" + rest)
    assert r.iter == 8 and r.total_tasks == 4
    assert set(r.graphs[0]) == {"graph", "steps", "width", "type", "radix", "period", "fraction",
                                "kernel", "iter", "samples", "imbalance", "output", "scratch"}


def test_missing_report_raises():
    text = "Running Task Benchmark\n  Configuration:\n" + graph_block(1, 4, 4, "trivial", "empty", 0)
    with pytest.raises(ParseError, match="Elapsed Time"):
        parse_report(text)
    with pytest.raises(ParseError):
        parse_report("error: Invalid flag \"-steps 0\" must be > 0\n")


def test_inf_and_nan_rates_parse():
    text = one_run().replace("Elapsed Time 5.000000e-01 seconds", "Elapsed Time 0.000000e+00 seconds")
    text = text.replace(text.split("FLOP/s ")[1].split("\n")[0], "inf")
    r = parse_report(text)
    assert r.elapsed_s == 0.0 and math.isinf(r.flops_per_s)


def test_split_runs_many_runs_with_noise_and_truncation():
    log = ("srun: job 123 started\n" + one_run(iters=4, elapsed=0.1) + "some other line\n"
           + one_run(iters=2, elapsed=0.2, nodes=4) + one_run(iters=1, elapsed=0.3)
           + "Running Task Benchmark\n  Configuration:\n" + graph_block(1, 1000, 2, "stencil_1d",
                                                                         "compute_bound", 1))
    runs = split_runs(log, "x.log")
    assert [r.iter for r in runs] == [4, 2, 1, 1]
    assert [r.complete() for r in runs] == [True, True, True, False]
    assert [r.index for r in runs] == [0, 1, 2, 3]
    assert runs[0].line == 2 and runs[0].source == "x.log"
    assert runs[3].missing() == ["total_tasks", "total_flops", "elapsed_s"]
    assert [r.elapsed_s for r in runs[:3]] == [pytest.approx(v) for v in (0.1, 0.2, 0.3)]


def test_split_runs_report_lines_only():
    # a log of report lines without the configuration block (e.g. grepped)
    log = report(10, 0, 100, 1.0) + report(20, 0, 200, 2.0)
    runs = split_runs(log)
    assert [(r.total_tasks, r.iter) for r in runs] == [(10, None), (20, None)]


def test_parse_report_takes_last_complete():
    r = parse_report(one_run(iters=4, elapsed=0.1) + one_run(iters=4, elapsed=0.2))
    assert r.elapsed_s == pytest.approx(0.2)


def test_describe_and_signature():
    g = [{"type": "stencil_1d", "steps": 1000, "width": 2, "kernel": "load_imbalance",
          "imbalance": 1.0, "iter": 4, "output": 16}]
    assert describe_graphs(g) == "stencil_1d, 1000 steps x width 2, load_imbalance, imbalance 1"
    assert describe_graphs(g + g) == "2 graphs: " + describe_graphs(g)
    g2 = [dict(g[0], iter=8)]
    assert config_signature(g) == config_signature(g2)
    assert config_signature(g) != config_signature([dict(g[0], width=4)])
