"""tools/trace: loading, summary figures, plot and merge, on small traces
laid out as --weft:trace writes them (docs/TRACING.md)."""

import json
import os
import subprocess
import sys

import pytest

from weft_trace.merge import merge, parts_of
from weft_trace.model import TraceError, load, union_length, Interval
from weft_trace.summary import message_pairs, row_shares, text, top_tasks

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def meta(rank, dropped=0):
    return {"rank": rank, "world_size": 2, "backend": "smp", "clock_offset_ns": 0, "clock_sync_rtt_ns": 0,
            "events": 0, "dropped_events": dropped}


def task(pid, tid, ts, dur, name="task", kind="task"):
    return {"ph": "X", "cat": "task", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": {"kind": kind}}


def comm(pid, tid, ts, dur, to=None, frm=None, nbytes=16):
    args = {"bytes": nbytes}
    if to is not None:
        args["to"] = to
    else:
        args["from"] = frm
    return {"ph": "X", "cat": "comm", "name": ("send call" if to is not None else "receive call"), "pid": pid,
            "tid": tid, "ts": ts, "dur": dur, "args": args}


def names():
    out = []
    for r in (0, 1):
        out.append({"ph": "M", "name": "process_name", "pid": r, "args": {"name": "rank %d" % r}})
        for w in (0, 1):
            out.append({"ph": "M", "name": "thread_name", "pid": r, "tid": w, "args": {"name": "worker %d" % w}})
    return out


def sample_events():
    # Rank 0 worker 0: busy 0-40 and 60-100 (80 of 100 µs), a send at 40-50
    # outside the tasks. Rank 1 worker 0: a remote call 50-70.
    return names() + [
        task(0, 0, 0, 40, "compute(int)"),
        comm(0, 0, 40, 10, to=1, nbytes=24),
        task(0, 0, 60, 40, "compute(int)"),
        comm(1, 0, 50, 2, frm=0, nbytes=24),
        task(1, 0, 50, 20, "square(long)", "remote call"),
        {"ph": "i", "s": "t", "cat": "steal", "name": "steal", "pid": 1, "tid": 1, "ts": 80,
         "args": {"from_rank": 0, "from_worker": 1}},
    ]


def write(tmp_path, events, ranks=(0, 1), dropped=0):
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": events, "otherData": {"ranks": [meta(r, dropped) for r in ranks]}}))
    return str(p)


def test_union_counts_overlaps_once():
    assert union_length([Interval(0, 10, "", ""), Interval(5, 20, "", ""), Interval(30, 40, "", "")]) == 30


def test_shares_per_worker(tmp_path):
    t = load(write(tmp_path, sample_events()))
    assert t.span == 100
    busy, comm_share, idle = row_shares(t, t.rows[(0, 0)])
    assert (round(busy, 6), round(comm_share, 6), round(idle, 6)) == (0.8, 0.1, 0.1)
    busy, comm_share, idle = row_shares(t, t.rows[(1, 0)])
    assert (round(busy, 6), round(comm_share, 6), round(idle, 6)) == (0.2, 0.0, 0.8)
    # A worker that ran nothing still has its row, all idle.
    assert row_shares(t, t.rows[(0, 1)]) == (0.0, 0.0, 1.0)


def test_top_tasks_messages_and_steals(tmp_path):
    t = load(write(tmp_path, sample_events()))
    assert top_tasks(t) == [("compute(int)", 2, 80.0), ("square(long)", 1, 20.0)]
    assert message_pairs(t) == {(0, 1): [1, 24]}
    report = text(t)
    assert "1 <- 0: 1" in report
    assert "dropped" not in report


def test_summary_reports_dropped_events(tmp_path):
    report = text(load(write(tmp_path, sample_events(), dropped=7)))
    assert "14 events dropped" in report


def test_not_a_trace(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{}")
    with pytest.raises(TraceError):
        load(str(p))


def test_merge_joins_parts_in_rank_order(tmp_path):
    path = str(tmp_path / "job.json")
    for r in (1, 0):
        with open(path + ".rank-%d.part" % r, "w") as f:
            f.write(json.dumps(meta(r)) + "\n")
            f.write(json.dumps(task(r, 0, 10 * r, 5)) + "\n")
    parts = parts_of(path)
    assert [os.path.basename(p) for p in parts] == ["job.json.rank-0.part", "job.json.rank-1.part"]
    assert merge(path, parts, remove=True) == 2
    doc = json.load(open(path))
    assert [m["rank"] for m in doc["otherData"]["ranks"]] == [0, 1]
    assert [e["pid"] for e in doc["traceEvents"]] == [0, 1]
    assert parts_of(path) == []


def run_cli(*args):
    return subprocess.run([sys.executable, os.path.join(TOOLS, "trace")] + list(args), capture_output=True,
                          text=True, env=dict(os.environ, WEFT_TRACE_REEXEC="1"))


def test_cli_summary(tmp_path):
    r = run_cli("summary", write(tmp_path, sample_events()))
    assert r.returncode == 0, r.stderr
    assert "worker 0" in r.stdout and "compute(int)" in r.stdout


def test_cli_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "t.png"
    r = run_cli("plot", write(tmp_path, sample_events()), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_plot_many_workers(tmp_path):
    pytest.importorskip("matplotlib")
    events = []
    for r in range(4):
        events.append({"ph": "M", "name": "process_name", "pid": r, "args": {"name": "rank %d" % r}})
        for w in range(16):
            events.append({"ph": "M", "name": "thread_name", "pid": r, "tid": w, "args": {"name": "worker %d" % w}})
            events.append(task(r, w, w, 10))
    out = tmp_path / "many.png"
    r = run_cli("plot", write(tmp_path, events, ranks=range(4)), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 0


def test_cli_missing_file(tmp_path):
    r = run_cli("summary", str(tmp_path / "none.json"))
    assert r.returncode == 1
    assert "not a trace file" in r.stderr
