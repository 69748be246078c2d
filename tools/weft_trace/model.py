"""A trace file as rows of intervals: the parts of it the summary and the
plot need (Chrome Trace Event JSON as weft writes it; docs/TRACING.md)."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field


@dataclass
class Interval:
    start: float  # µs
    end: float
    name: str
    kind: str     # a task kind ("task", "remote call", ...) or "communication"


@dataclass
class Row:
    rank: int
    tid: int
    name: str
    tasks: list = field(default_factory=list)  # Interval, in start order
    comm: list = field(default_factory=list)   # Interval, in start order


@dataclass
class Message:
    source: int
    dest: int
    bytes: int
    kind: str


@dataclass
class Trace:
    rows: dict        # (rank, tid) -> Row
    messages: list    # Message, one per send
    steals: list      # (thief rank, victim rank)
    ranks: list       # the file's per-rank metadata
    start: float = 0.0
    end: float = 0.0

    @property
    def span(self) -> float:
        return max(self.end - self.start, 0.0)


class TraceError(Exception):
    pass


def load(path: str) -> Trace:
    try:
        with open(path) as f:
            doc = json.load(f)
        events = doc["traceEvents"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise TraceError("%s: not a trace file (%s)" % (path, e))
    return from_events(events, doc.get("otherData", {}).get("ranks", []))


def from_events(events: list, ranks: list) -> Trace:
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    rows = {}
    messages, steals = [], []
    times = []

    def row(e):
        key = (e["pid"], e["tid"])
        if key not in rows:
            rows[key] = Row(key[0], key[1], names.get(key, "thread %d" % key[1]))
        return rows[key]

    for e in events:
        ph, cat = e.get("ph"), e.get("cat")
        if ph == "X":
            start, end = float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))
            times += (start, end)
            if cat == "task":
                row(e).tasks.append(Interval(start, end, e["name"], e.get("args", {}).get("kind", "task")))
            elif cat == "comm":
                row(e).comm.append(Interval(start, end, e["name"], "communication"))
                args = e.get("args", {})
                if e["name"].startswith("send ") and "to" in args:
                    messages.append(Message(e["pid"], args["to"], int(args.get("bytes", 0)), e["name"][5:]))
        elif ph == "i" and cat == "steal":
            steals.append((e["pid"], e["args"]["from_rank"]))
    for key in names:
        if key[1] < 1000 or key in rows:
            row({"pid": key[0], "tid": key[1]})
    for r in rows.values():
        r.tasks.sort(key=lambda i: i.start)
        r.comm.sort(key=lambda i: i.start)
    t = Trace(rows, messages, steals, ranks)
    if times:
        t.start, t.end = min(times), max(times)
    return t


def union_length(intervals) -> float:
    """Time covered by the intervals (overlaps counted once)."""
    total, cur_s, cur_e = 0.0, None, None
    for i in sorted(intervals, key=lambda i: i.start):
        if cur_e is None or i.start > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = i.start, i.end
        else:
            cur_e = max(cur_e, i.end)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def by_rank(rows: dict) -> dict:
    grouped = defaultdict(list)
    for key in sorted(rows):
        grouped[key[0]].append(rows[key])
    return dict(grouped)
