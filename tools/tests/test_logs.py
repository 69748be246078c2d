"""metg logs: multi-run logs from Task Bench binaries (ours or the original)."""

import json
import os

import pytest

from tb_text import graph_block, one_run
from weft_metg.cli import main

# elapsed seconds per (iter, rep) for two implementations; steps 1000 x width 2
MPI = {64: (0.020, 0.022), 32: (0.012, 0.011), 16: (0.0080, 0.0090)}
WEFT = {64: (0.030, 0.031), 32: (0.025, 0.026), 16: (0.021, 0.020)}


def write_logs(tmp_path):
    mpi = ["srun: job 1 started\n"]
    for rep in range(2):
        for it, el in MPI.items():
            mpi.append(one_run(iters=it, elapsed=el[rep]))
            mpi.append("mpiexec: some noise\n")
    # a run cut short (job killed): a configuration block and no report
    mpi.append("Running Task Benchmark\n  Configuration:\n"
               + graph_block(1, 1000, 2, "stencil_1d", "compute_bound", 8))
    (tmp_path / "mpi.log").write_text("".join(mpi))
    for rep in range(2):   # weft: one file per repetition, read through a glob
        (tmp_path / ("weft_%d.log" % rep)).write_text(
            "".join(one_run(iters=it, elapsed=el[rep]) for it, el in WEFT.items()))


def expected(elapsed_by_iter, peak):
    out = {}
    for it, el in elapsed_by_iter.items():
        med = sorted(el)[0] / 2 + sorted(el)[1] / 2
        flops = (128 * it + 64) * 2000
        out[it] = (med * 2 / 2000 * 1e6, flops / med / peak)
    return out


def best_rate():
    rates = [(128 * it + 64) * 2000 / e for d in (MPI, WEFT) for it, el in d.items() for e in el]
    return max(rates)


def test_logs_groups_by_iter_and_computes_metg(tmp_path, capsys):
    write_logs(tmp_path)
    out = tmp_path / "out"
    rc = main(["logs", "--log", "mpi=%s" % (tmp_path / "mpi.log"),
               "--log", "weft=%s" % (tmp_path / "weft_*.log"),
               "--cores", "2", "--out", str(out), "--baseline", "mpi", "--label", "(a) test"])
    text = capsys.readouterr().out
    assert rc == 1                        # the truncated run is reported
    assert "mpi.log:" in text and "incomplete run" in text
    s = json.loads((out / "metg.json").read_text())
    assert s["graph"] == "stencil_1d, 1000 steps x width 2, compute_bound"
    assert s["label"] == "(a) test"
    peak = best_rate()
    assert s["peak"]["flops_per_s"] == pytest.approx(peak, rel=1e-6)
    for name, data in (("mpi", MPI), ("weft", WEFT)):
        pts = s["results"][name]["points"]
        assert [p["iter"] for p in pts] == [64, 32, 16]
        assert all(p["reps_ok"] == 2 for p in pts)
        exp = expected(data, peak)
        for p in pts:
            g, e = exp[p["iter"]]
            assert p["granularity_us"] == pytest.approx(g, rel=1e-6)
            assert p["efficiency"] == pytest.approx(e, rel=1e-6)
    # METG by hand from the expected points
    exp = sorted(expected(WEFT, peak).values(), reverse=True)
    assert [e >= 0.5 for _, e in exp] == [True, False, False]
    (g1, e1), (g2, e2) = exp[0], exp[1]
    m = s["results"]["weft"]["metg"]
    assert m["status"] == "interpolated"
    assert m["value_us"] == pytest.approx(g2 + (0.5 - e2) * (g1 - g2) / (e1 - e2), rel=1e-6)
    assert s["results"]["mpi"]["metg"]["status"] == "below_smallest"
    assert s["results"]["weft"]["ratio_vs_baseline"]["text"].startswith(">=")
    assert s["results"]["mpi"]["runs_failed"] == 1
    assert os.path.getsize(out / "metg.png") > 1000
    rows = (out / "metg.csv").read_text().splitlines()
    assert len(rows) == 1 + 7 + 6


def test_logs_allow_incomplete_and_errors(tmp_path, capsys):
    write_logs(tmp_path)
    rc = main(["logs", "--log", "mpi=%s" % (tmp_path / "mpi.log"), "--no-plot",
               "--out", str(tmp_path / "o"), "--allow-incomplete"])
    assert rc == 0
    assert "cores = " in capsys.readouterr().out     # warns about assumed cores
    assert main(["logs", "--log", "mpi=%s" % (tmp_path / "nothing*.log")]) == 2
    assert "no file matches" in capsys.readouterr().err
    assert main(["logs", "--log", "mpi"]) == 2
    assert main(["logs", "--log", "mpi=%s" % (tmp_path / "mpi.log"), "--baseline", "x",
                 "--out", str(tmp_path / "o")]) == 2
