"""metg gaps: step overhead from task traces (fake_taskbench writes them)."""

import shlex
import sys

import pytest

import json

from weft_metg.gaps import is_weft_trace, read_records, read_traces, read_weft_trace, step_overheads
from metg_cli import COMMON, FAKE, iter_run_at_sweep, metg


def test_overhead_is_step_time_minus_longest_task(tmp_path):
    # Step 0: tasks end at 10 and 12; step 1 starts 3 after, longest task 5
    # (ends 20); step 2 starts 1 after, tasks of 2 and 4 (ends 25). In ns.
    rows = [(0, 0, 0, 0, 10), (0, 0, 1, 0, 12),
            (0, 1, 0, 15, 20), (0, 1, 1, 16, 19),
            (0, 2, 0, 21, 23), (0, 2, 1, 21, 25)]
    s = step_overheads([(g, t, x, a * 1000, b * 1000) for g, t, x, a, b in rows], skip_fraction=0)
    assert s.steps == 2
    assert [round(v, 6) for v in (s.median_us, s.mean_us)] == [2.0, 2.0]   # (20-12-5), (25-20-4)
    assert s.longest_task_us == 4.5


def test_last_record_of_a_task_is_the_timed_run(tmp_path):
    prefix = str(tmp_path / "tr")
    with open(prefix + ".1", "w") as f:
        f.write("# a comment\n0 0 0 0 100\n0 1 0 100 200\n")        # warm-up
        f.write("0 0 0 1000 2000\n0 1 0 5000 6000\n")              # timed
    with open(prefix + ".2", "w") as f:
        f.write("0 0 1 1000 3000\n0 1 1 5000 5500\n")               # another rank
    recs = sorted(read_traces(prefix))
    assert recs == [(0, 0, 0, 1000, 2000), (0, 0, 1, 1000, 3000),
                    (0, 1, 0, 5000, 6000), (0, 1, 1, 5000, 5500)]
    assert step_overheads(recs, skip_fraction=0).median_us == 2.0     # 6000 - 3000 - 1000


def test_graphs_are_measured_apart():
    recs = [(0, 0, 0, 0, 1000), (0, 1, 0, 1500, 2500),
            (1, 0, 0, 9000, 9500), (1, 1, 0, 10500, 11000)]
    s = step_overheads(recs, skip_fraction=0)
    assert s.steps == 2 and sorted([s.median_us]) == [0.75]   # 0.5 and 1.0


def test_no_consecutive_steps_gives_none():
    assert step_overheads([(0, 3, 0, 0, 10)], skip_fraction=0) is None


def test_cli_reports_each_implementation_and_the_ratio():
    r = metg("gaps", "--impl", "mpi=%s -fake-gap-us 2" % FAKE, "--impl", "weft=%s -fake-gap-us 0.5" % FAKE,
             "--baseline", "mpi", "--iter", "2^4", "--reps", "2", *COMMON)
    assert r.returncode == 0, r.stderr
    lines = {ln.split()[0]: ln for ln in r.stdout.splitlines() if ln[:4] in ("mpi ", "weft")}
    assert "2.000 [2.000-2.000]" in lines["mpi"] and lines["mpi"].endswith("1.00x")
    assert "0.500 [0.500-0.500]" in lines["weft"] and lines["weft"].endswith("0.25x")
    assert "12.00 us" in lines["weft"]      # longest task: 10 + (width - 1)
    assert "-iter 16" in r.stdout


def test_cli_fails_a_binary_that_writes_no_trace():
    r = metg("gaps", "--impl", "quiet=%s -c pass" % shlex.quote(sys.executable), "--iter", "1",
             "--reps", "1", *COMMON)
    assert r.returncode == 1
    assert "no trace written" in r.stderr
    assert "quiet" in r.stdout and "no trace" in r.stdout


def test_cli_at_picks_the_baselines_iter_nearest_the_sweeps_granularity(tmp_path):
    assert iter_run_at_sweep(tmp_path, "gaps", 21.0) == 2048


def test_cli_wants_exactly_one_of_iter_and_at(tmp_path):
    for extra in ([], ["--iter", "4", "--at", str(tmp_path)]):
        r = metg("gaps", "--impl", "a=%s" % FAKE, *extra, *COMMON)
        assert r.returncode == 2 and "exactly one of --iter and --at" in r.stderr


def _weft_trace(path, intervals):
    """A small --weft:trace file: (name, worker, ts_us, dur_us) task intervals
    of rank 0, plus a flow event that is no task."""
    events = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "rank 0"}},
              {"ph": "s", "cat": "msg", "name": "call", "pid": 0, "tid": 0, "ts": 0, "id": 1}]
    events += [{"ph": "X", "cat": "task", "name": n, "pid": 0, "tid": w, "ts": ts, "dur": d,
                "args": {"kind": "task"}} for n, w, ts, d in intervals]
    path.write_text(json.dumps({"traceEvents": events, "otherData": {}}))
    return str(path)


def test_weft_trace_gives_the_same_records_as_taskbench_trace(tmp_path):
    # The rows of test_overhead_is_step_time_minus_longest_task, in us, as
    # intervals of two workers, with "main" intervals that are not point tasks.
    path = _weft_trace(tmp_path / "t.json", [
        ("point", 0, 0, 10), ("point", 1, 0, 12), ("main", 0, 13, 1),
        ("point", 0, 15, 5), ("point", 1, 16, 3),
        ("point", 1, 21, 2), ("point", 0, 21, 4)])
    assert is_weft_trace(path)
    recs = read_weft_trace(path, width=2)
    assert [r[:3] for r in recs] == [(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1), (0, 2, 0), (0, 2, 1)]
    assert sorted((s, e) for *_k, s, e in recs) == sorted(
        [(0, 10000), (0, 12000), (15000, 20000), (16000, 19000), (21000, 23000), (21000, 25000)])
    s = step_overheads(recs, skip_fraction=0)
    assert s.steps == 2 and round(s.median_us, 6) == 2.0 and s.longest_task_us == 4.5


def test_weft_trace_name_and_last_steps(tmp_path):
    # A warm-up step then two timed steps of one point; "main" is the most
    # frequent name unless a name is given.
    path = _weft_trace(tmp_path / "t.json", [
        ("main", 0, 0, 1), ("main", 0, 2, 1), ("main", 0, 3, 1), ("main", 0, 4, 1),
        ("p", 1, 0, 5), ("p", 1, 100, 5), ("p", 1, 110, 5)])
    assert len(read_weft_trace(path, width=1)) == 4
    recs = read_weft_trace(path, width=1, steps=2, name="p")
    assert recs == [(0, 0, 0, 100000, 105000), (0, 1, 0, 110000, 115000)]
    assert step_overheads(recs, skip_fraction=0).median_us == 5.0   # 115 - 105 - 5


def test_read_records_detects_the_format(tmp_path):
    prefix = str(tmp_path / "tr")
    with open(prefix + ".1", "w") as f:
        f.write("0 0 0 1000 2000\n0 1 0 5000 6000\n")
    assert not is_weft_trace(prefix)
    assert read_records(prefix) == read_traces(prefix)
    path = _weft_trace(tmp_path / "w.json", [("p", 0, 1, 1), ("p", 0, 5, 1)])
    assert read_records(path, width=1) == [(0, 0, 0, 1000, 2000), (0, 1, 0, 5000, 6000)]
    with pytest.raises(ValueError):
        read_records(path)


def test_cli_runs_with_weft_traces():
    r = metg("gaps", "--trace", "weft", "--impl", "weft=%s -fake-gap-us 0.5" % FAKE,
             "--iter", "2^4", "--reps", "2", *COMMON)
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("weft "))
    assert "0.500 [0.500-0.500]" in line and "12.00 us" in line


def test_cli_from_written_traces_of_both_formats(tmp_path):
    weft = _weft_trace(tmp_path / "w.json", [("p", 0, 0, 3), ("p", 0, 5, 3), ("p", 0, 10, 3)])
    prefix = str(tmp_path / "tb")
    with open(prefix + ".7", "w") as f:
        f.write("0 0 0 0 3000\n0 1 0 4000 7000\n0 2 0 8000 11000\n")
    r = metg("gaps", "--from", "weft=" + weft, "--from", "tb=" + prefix, "--baseline", "tb",
             "--", "-width", "1", "-steps", "3")
    assert r.returncode == 0, r.stderr
    lines = {ln.split()[0]: ln for ln in r.stdout.splitlines() if ln[:3] in ("wef", "tb ")}
    assert "2.000 [2.000-2.000]" in lines["weft"] and lines["weft"].endswith("2.00x")
    assert "1.000 [1.000-1.000]" in lines["tb"]
    bad = metg("gaps", "--from", "weft=" + weft, "--iter", "4", "--", "-width", "1")
    assert bad.returncode == 2
