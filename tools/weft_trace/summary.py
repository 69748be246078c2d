"""`trace summary`: where each worker's time went, what ran longest, who
stole from whom, and what travelled between ranks."""

from __future__ import annotations

from collections import Counter, defaultdict

from .model import Trace, by_rank, union_length


def row_shares(trace: Trace, row) -> tuple:
    """(busy, communication, idle) as fractions of the trace's span: busy is
    time in task intervals, communication time in sends and receives outside
    them, idle the rest."""
    span = trace.span
    if span <= 0:
        return 0.0, 0.0, 1.0
    busy = union_length(row.tasks)
    active = union_length(row.tasks + row.comm)
    comm = active - busy
    return busy / span, comm / span, max(0.0, 1.0 - active / span)


def top_tasks(trace: Trace, n: int = 10) -> list:
    """[(name, count, total µs)] by total time, longest first."""
    total, count = defaultdict(float), Counter()
    for row in trace.rows.values():
        for i in row.tasks:
            total[i.name] += i.end - i.start
            count[i.name] += 1
    return sorted(((k, count[k], total[k]) for k in total), key=lambda x: -x[2])[:n]


def message_pairs(trace: Trace) -> dict:
    """(source, dest) -> [messages, bytes]."""
    pairs = defaultdict(lambda: [0, 0])
    for m in trace.messages:
        pairs[(m.source, m.dest)][0] += 1
        pairs[(m.source, m.dest)][1] += m.bytes
    return dict(pairs)


def text(trace: Trace, top: int = 10) -> str:
    out = []
    dropped = sum(int(r.get("dropped_events", 0)) for r in trace.ranks)
    out.append("span %.3f ms, %d ranks, %d rows%s" % (
        trace.span / 1000, len(by_rank(trace.rows)), len(trace.rows),
        ", %d events dropped (--weft:trace-limit)" % dropped if dropped else ""))
    out.append("")
    out.append("%-6s %-18s %7s %7s %7s %8s" % ("rank", "row", "busy%", "comm%", "idle%", "tasks"))
    for rank, rows in by_rank(trace.rows).items():
        for row in rows:
            b, c, i = row_shares(trace, row)
            out.append("%-6d %-18s %7.1f %7.1f %7.1f %8d" % (rank, row.name, 100 * b, 100 * c, 100 * i,
                                                          len(row.tasks)))
    out.append("")
    out.append("top tasks by total time:")
    out.append("  %10s %8s %10s  %s" % ("total ms", "count", "mean us", "name"))
    for name, count, total in top_tasks(trace, top):
        out.append("  %10.3f %8d %10.2f  %s" % (total / 1000, count, total / count, name))
    out.append("")
    steals = Counter(trace.steals)
    out.append("steals between ranks (thief <- victim): %s" % (
        ", ".join("%d <- %d: %d" % (t, v, n) for (t, v), n in sorted(steals.items())) or "none"))
    out.append("")
    out.append("messages per rank pair:")
    out.append("  %6s %6s %10s %12s" % ("from", "to", "messages", "bytes"))
    for (s, d), (n, b) in sorted(message_pairs(trace).items()):
        out.append("  %6d %6d %10d %12d" % (s, d, n, b))
    return "\n".join(out) + "\n"
