"""metg sweep / plot end to end, against fake_taskbench.py (no compiled binary)."""

import csv
import io
import json
import shlex
import time

import pytest

from weft_metg.runner import Progress
from metg_cli import FAKE, metg

COMMON = ["--", "-type", "stencil_1d", "-steps", "100", "-width", "2", "-kernel", "compute_bound"]
OVERHEAD = {"mpi": 2.0, "weft": 8.0}   # fake per-task overhead, us


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    calls = d / "calls.txt"
    impls = []
    for name, o in OVERHEAD.items():
        impls += ["--impl", "%s=%s -fake-overhead-us %g -fake-calls %s -fake-tag %s"
                  % (name, FAKE, o, shlex.quote(str(calls)), name)]
    r = metg("sweep", *impls, "--iter-max", "2^10", "--iter-min", "2^4", "--reps", "2",
             "--cores", "2", "--out", str(d / "out"), "--label", "(a) compute_bound",
             "--baseline", "mpi", *COMMON)
    return d, r


def model(o, it):
    """fake_taskbench's per-task time in us (= granularity with 2 cores)."""
    return o + (128 * it + 64) * 0.1e-3


def test_sweep_outputs_and_numbers(swept):
    d, r = swept
    assert r.returncode == 0, r.stdout + r.stderr
    out = d / "out"
    for f in ("metg.csv", "metg.json", "metg.png", "logs/mpi.log", "logs/weft.log"):
        assert (out / f).exists(), f
    s = json.loads((out / "metg.json").read_text())
    iters = [1024, 512, 256, 128, 64, 32, 16]
    # 2 fake cores run tasks of model() us each: FLOP/s = 2 * FLOPs per task / task time
    peak = 2 * (128 * 1024 + 64) / model(OVERHEAD["mpi"], 1024) * 1e6
    assert s["peak"]["source"] == "sweep-best" and s["peak"]["impl"] == "mpi"
    assert s["peak"]["flops_per_s"] == pytest.approx(peak, rel=1e-5)
    assert s["graph"] == "stencil_1d, 100 steps x width 2, compute_bound"
    assert s["cores"] == 2 and s["iters"] == iters and s["reps"] == 2
    for name, o in OVERHEAD.items():
        pts = s["results"][name]["points"]
        assert [p["iter"] for p in pts] == iters
        for p in pts:
            assert p["reps_ok"] == 2 and p["total_tasks"] == 200
            assert p["granularity_us"] == pytest.approx(model(o, p["iter"]), rel=1e-5)
            eff = 2 * (128 * p["iter"] + 64) / model(o, p["iter"]) * 1e6 / peak
            assert p["efficiency"] == pytest.approx(eff, rel=1e-5)
        # the crossing, from the model
        g = [model(o, it) for it in iters]
        e = [2 * (128 * it + 64) / model(o, it) * 1e6 / peak for it in iters]
        k = max(i for i in range(len(e)) if e[i] >= 0.5)
        want = g[k + 1] + (0.5 - e[k + 1]) * (g[k] - g[k + 1]) / (e[k] - e[k + 1])
        assert s["results"][name]["metg"]["value_us"] == pytest.approx(want, rel=1e-4)
    ratio = s["results"]["weft"]["metg"]["value_us"] / s["results"]["mpi"]["metg"]["value_us"]
    assert s["results"]["weft"]["ratio_vs_baseline"]["text"] == "%.2f" % ratio
    assert "METG(50%) us" in r.stdout and "vs mpi" in r.stdout
    assert "best single run measured: mpi iter=1024" in r.stdout
    assert "100%" in r.stderr          # progress bar (plain lines: not a TTY)


def test_sweep_runs_are_interleaved(swept):
    d, _ = swept
    calls = (d / "calls.txt").read_text().split("\n")[:-1]
    one_rep = ["%s %d" % (n, it) for it in (1024, 512, 256, 128, 64, 32, 16) for n in ("mpi", "weft")]
    assert calls == one_rep + one_rep
    with open(d / "out" / "metg.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(int(r["rep"]), r["impl"], int(r["iter"])) for r in rows] == \
        [(rep, c.split()[0], int(c.split()[1])) for rep in (1, 2) for c in one_rep]
    assert all(r["status"] == "ok" and r["cores"] == "2" for r in rows)
    assert rows[0]["command"].endswith("-kernel compute_bound -iter 1024")


def test_plot_panels_from_json_and_csv(swept, tmp_path):
    d, _ = swept
    fig = tmp_path / "fig.png"
    r = metg("plot", "--panel", "(a) compute_bound=%s" % (d / "out"),
             "--panel", "(b) load_imbalance, imbalance=1.0=%s" % (d / "out" / "metg.csv"),
             "--out", str(fig), "--title", "METG", "--baseline", "weft")
    assert r.returncode == 0, r.stderr
    assert fig.stat().st_size > 10000
    assert "(2 panels)" in r.stdout
    assert "== (b) load_imbalance, imbalance=1.0" in r.stdout and "vs weft" in r.stdout
    r = metg("plot", str(d / "out" / "metg.json"), "--out", str(tmp_path / "f.svg"), "--quiet",
             "--threshold", "0.8")
    assert r.returncode == 0 and (tmp_path / "f.svg").exists()
    r = metg("plot", str(tmp_path / "missing"), "--out", str(tmp_path / "x.png"))
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_failures_are_reported_and_exit_nonzero(tmp_path):
    r = metg("sweep", "--impl", "ok=%s" % FAKE,
             "--impl", "bad=%s -fake-fail-iter 4 -fake-garbage-iter 2 -fake-wrong-iter 1" % FAKE,
             "--impl", "missing=/nonexistent/taskbench",
             "--iter-max", "8", "--iter-min", "1", "--reps", "1", "--out", str(tmp_path),
             "--no-plot", "--no-progress", *COMMON)
    assert r.returncode == 1
    assert "simulated crash at iter 4" in r.stdout           # stderr tail of the run
    assert "-fake-fail-iter 4" in r.stdout and "-iter 4" in r.stdout   # its command
    assert "no Task Bench report" in r.stdout or "incomplete Task Bench report" in r.stdout
    assert "Iterations 2 but -iter 1" in r.stdout
    assert "cannot start" in r.stdout
    assert "FAILED bad iter=4 rep 1" in r.stderr              # reported as it happened
    s = json.loads((tmp_path / "metg.json").read_text())
    assert len(s["failures"]) == 3 + 4
    assert s["results"]["bad"]["runs_failed"] == 3
    assert [p["iter"] for p in s["results"]["bad"]["points"]] == [8]
    assert s["results"]["missing"]["metg"]["status"] == "no_data"
    rows = list(csv.DictReader(open(tmp_path / "metg.csv")))
    assert sum(r["status"] == "failed" for r in rows) == 7


def test_timeout_kills_the_run(tmp_path):
    t0 = time.monotonic()
    r = metg("sweep", "--impl", "slow=%s -fake-hang-iter 2" % FAKE, "--iter-max", "4",
             "--iter-min", "2", "--reps", "1", "--timeout", "1", "--out", str(tmp_path),
             "--no-plot", *COMMON)
    assert time.monotonic() - t0 < 20
    assert r.returncode == 1 and "timed out after 1 s" in r.stdout


def test_peak_command_and_early_stop(tmp_path):
    peak_cmd = "%s -fake-ns-per-flop 0.05 -type stencil_1d -steps 100 -width 2 " \
               "-kernel compute_bound -iter 1024" % FAKE
    r = metg("sweep", "--impl", "a=%s -fake-overhead-us 50" % FAKE, "--iter-max", "2^10",
             "--iter-min", "1", "--reps", "2", "--peak-cmd", peak_cmd, "--stop-below", "20%",
             "--stop-after", "1", "--out", str(tmp_path), "--no-plot", *COMMON)
    assert r.returncode == 0, r.stdout + r.stderr
    s = json.loads((tmp_path / "metg.json").read_text())
    flops = 128 * 1024 + 64     # per task; 10 us default overhead, 0.05 ns per FLOP, 2 cores
    peak = 2 * flops / (10 + flops * 0.05e-3) * 1e6
    assert s["peak"]["source"] == "peak-cmd"
    assert s["peak"]["flops_per_s"] == pytest.approx(peak, rel=1e-5)
    assert "best run of --peak-cmd" in r.stdout
    pts = s["results"]["a"]["points"]
    effs = [p["efficiency"] for p in pts]
    assert effs[-1] < 0.2 and all(e >= 0.2 for e in effs[:-1])   # stopped at the first below
    assert s["stopped"] == {"a": pts[-1]["iter"]}
    assert all(p["reps_ok"] == 2 for p in pts)
    rows = list(csv.DictReader(open(tmp_path / "metg.csv")))
    assert [r["kind"] for r in rows].count("peak") == 2 and rows[0]["kind"] == "peak"
    assert "skipping iter <" in r.stderr


def test_dry_run_prints_commands_in_order():
    r = metg("sweep", "--impl", "a=./tb -impl x", "--impl", "b=./tb2", "--iter-max", "4",
             "--iter-min", "2", "--reps", "2", "--dry-run", "--", "-steps", "3", "-and", "-width", "1")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 8
    assert lines[0].split() == ["rep", "1", "a", "./tb", "-impl", "x", "-steps", "3", "-iter", "4",
                                "-and", "-width", "1", "-iter", "4"]
    assert [l.split()[2] for l in lines] == ["a", "b"] * 4
    assert [l.split()[-1] for l in lines] == ["4", "4", "2", "2"] * 2


@pytest.mark.parametrize("args, message", [
    (["sweep", "--", "-steps", "3"], "--impl"),
    (["sweep", "--impl", "noequals"], "NAME=COMMAND"),
    (["sweep", "--impl", "a=./tb", "--baseline", "mpi"], "--baseline 'mpi'"),
    (["sweep", "--impl", "a=./tb", "--", "-iter", "5"], "must not contain -iter"),
    (["sweep", "--impl", "a=./tb", "--iter-max", "4", "--iter-min", "8"], "larger than"),
    (["sweep", "--impl", "a=./tb", "--iter-max", "1000"], "power of two"),
    (["sweep", "--impl", "a=./tb", "--reps", "0"], "must be >= 1"),
    (["sweep", "--impl", "a=./tb", "--impl", "a=./tc"], "given twice"),
    (["sweep", "--impl", "a=./tb", "--peak-cmd", "x", "--peak-flops", "1e9"], "not both"),
    (["plot", "--out", "x.png"], "nothing to plot"),
    (["logs", "--log", "a=x", "--", "-steps", "2"], "only for 'metg sweep'"),
    ([], "usage"),
])
def test_bad_arguments(args, message):
    r = metg(*args)
    assert r.returncode == 2
    assert message in r.stderr


def test_progress_bar_tty_and_plain():
    buf = io.StringIO()
    p = Progress(stream=buf, tty=True)
    p.update(1, 4, 10, "rep 1/1 a iter=4")
    p.message("FAILED x")
    p.update(4, 4, 0, "done")
    p.finish()
    v = buf.getvalue()
    assert v.startswith("\r[######") and "1/4  25%" in v and "FAILED x\n" in v and v.endswith("\n")
    buf = io.StringIO()
    p = Progress(stream=buf, tty=False)
    for i in range(101):
        p.update(i, 100, None, "x")
    lines = buf.getvalue().splitlines()
    assert "\r" not in buf.getvalue() and 10 <= len(lines) <= 12 and "100/100 100%" in lines[-1]
