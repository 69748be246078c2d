"""Per-step overhead from task traces (`metg gaps`).

A Task Bench binary of this project run with TASKBENCH_TRACE=PREFIX writes
PREFIX.PID per process: one line "graph timestep point start_ns end_ns cpu"
per task (cpu is not used here). For each timestep t the *step overhead* is how much longer the step
took than its longest task:

    (last end at t) - (last end at t-1) - (longest task at t)

The same records come from a weft timeline trace (--weft:trace=FILE, the
Chrome trace JSON of docs/TRACING.md), which names task intervals but not
their timestep: read_weft_trace takes the task intervals of one name (by
default the most frequent one: Task Bench's point tasks), orders them by
start and numbers them into timesteps of `width` points. That is exact for
graphs whose steps do not overlap (a step's tasks all start after the step
before began) and an approximation for those that do.

It is the time spent handing outputs over and starting the next tasks (and,
under load imbalance, nothing of the waiting for the slowest task, which is
part of "longest task"). Unlike efficiency it does not move with the kernel's
speed, which drifts between runs on a shared machine by more than the
overheads being compared.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import statistics
from dataclasses import dataclass


@dataclass
class StepStats:
    steps: int               # timesteps measured
    median_us: float         # step overhead, median over the steps
    mean_us: float
    p90_us: float
    longest_task_us: float   # mean over the steps of the longest task


def read_traces(prefix: str) -> list[tuple[int, int, int, int, int]]:
    """The task records of the files PREFIX.* (one per process). A binary
    that runs the graphs more than once (a warm-up run first) records a
    task once per run, in the order the tasks ended: its last record is
    the timed run's."""
    records = []
    for path in sorted(glob.glob(glob.escape(prefix) + ".*")):
        last = {}
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                g, t, x, start, end = (int(v) for v in line.split()[:5])
                last[(g, t, x)] = (g, t, x, start, end)
        records += last.values()
    return records


def is_weft_trace(path: str) -> bool:
    """Whether `path` is a weft timeline trace (a JSON object) rather than a
    TASKBENCH_TRACE file or prefix (text lines)."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(64).lstrip()[:1] == b"{"


def read_weft_trace(path: str, width: int, steps: int | None = None,
                    name: str | None = None) -> list[tuple[int, int, int, int, int]]:
    """The task records (graph 0, timestep, point, start_ns, end_ns) of a weft
    trace: its task intervals named `name` (default: the most frequent task
    name) ordered by start, `width` to a timestep. With `steps`, only the
    last steps x width intervals (the timed run, after any warm-up run)."""
    if width < 1:
        raise ValueError("width must be at least 1")
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    tasks = [e for e in events if e.get("ph") == "X" and e.get("cat") == "task"]
    if name is None:
        counts = collections.Counter(e["name"] for e in tasks)
        if not counts:
            return []
        name = counts.most_common(1)[0][0]
    # Chrome trace times are microseconds; the records are nanoseconds.
    spans = sorted((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000))
                   for e in tasks if e["name"] == name)
    if steps is not None:
        spans = spans[-steps * width:]
    return [(0, i // width, i % width, start, end) for i, (start, end) in enumerate(spans)]


def read_records(path: str, width: int | None = None, steps: int | None = None,
                 name: str | None = None) -> list[tuple[int, int, int, int, int]]:
    """The task records of a weft trace file (needs `width`) or of the
    TASKBENCH_TRACE files PATH.*, whichever `path` is."""
    if is_weft_trace(path):
        if width is None:
            raise ValueError("%s is a weft trace: the graph's width (-width) is needed" % path)
        return read_weft_trace(path, width, steps, name)
    return read_traces(path)


def step_overheads(records, skip_fraction: float = 0.1) -> StepStats | None:
    """Step overhead statistics over every graph's timesteps, leaving out the
    first `skip_fraction` of each graph's steps (warm-up). None when fewer
    than two consecutive timesteps were traced."""
    steps: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for g, t, _x, start, end in records:
        steps.setdefault((g, t), []).append((start, end))
    by_graph: dict[int, list[int]] = {}
    for g, t in steps:
        by_graph.setdefault(g, []).append(t)
    over, longest = [], []
    for g, ts in by_graph.items():
        ts.sort()
        for t in ts[int(len(ts) * skip_fraction):]:
            if t == 0 or (g, t - 1) not in steps:
                continue
            before = max(e for _s, e in steps[(g, t - 1)])
            now = steps[(g, t)]
            task = max(e - s for s, e in now)
            over.append((max(e for _s, e in now) - before - task) / 1000.0)
            longest.append(task / 1000.0)
    if not over:
        return None
    ordered = sorted(over)
    return StepStats(steps=len(over), median_us=statistics.median(over),
                     mean_us=statistics.fmean(over),
                     p90_us=ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
                     longest_task_us=statistics.fmean(longest))


def remove_traces(prefix: str) -> None:
    """Removes the TASKBENCH_TRACE files PREFIX.* and a weft trace PREFIX."""
    for path in glob.glob(glob.escape(prefix) + ".*") + glob.glob(glob.escape(prefix)):
        os.remove(path)


def table(results: dict[str, list[StepStats]], baseline: str | None) -> str:
    """The gaps table: per implementation, the median over repetitions of
    each statistic, with min-max of the median step overhead."""
    def med(values):
        return statistics.median(values)

    base = med([s.median_us for s in results[baseline]]) if results.get(baseline) else None
    head = "%-12s %-24s %9s %9s %14s" % ("impl", "step overhead us (med)", "mean", "p90",
                                         "longest task")
    if base is not None:
        head += "  vs %s" % baseline
    lines = [head]
    for name, runs in results.items():
        if not runs:
            lines.append("%-12s %s" % (name, "no trace (did every run fail?)"))
            continue
        m = [s.median_us for s in runs]
        cell = "%.3f [%.3f-%.3f]" % (med(m), min(m), max(m))
        line = "%-12s %-24s %9.3f %9.3f %11.2f us" % (
            name, cell, med([s.mean_us for s in runs]), med([s.p90_us for s in runs]),
            med([s.longest_task_us for s in runs]))
        if base is not None:
            line += "  %.2fx" % (med(m) / base if base > 0 else float("nan"))
        lines.append(line)
    return "\n".join(lines)
