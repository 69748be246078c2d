#!/usr/bin/env python3
"""Checks a --weft:trace file written by trace_program.

Usage: check_trace.py TRACE RANKS WORKERS CALLS

RANKS ranks, each with WORKERS worker rows; every rank ran CALLS remote
calls of traced_remote_square (each one task interval named after it) and
sent CALLS calls to the next rank; the job ran forked tasks (at least one
interval of kind "forked task") and every rank ran a collective's steps as a
task (an interval of kind "collective") and, on a device of the next rank, a function
kernel and a lambda kernel (target kernel intervals named after them). Prints "trace check passed" or the
problems found (exit status 1).
"""
import collections
import json
import sys


def check(path, ranks, workers, calls):
    problems = []
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    meta = doc["otherData"]["ranks"]
    if sorted(m["rank"] for m in meta) != list(range(ranks)):
        problems.append(f"metadata ranks {[m['rank'] for m in meta]}")
    for m in meta:
        if m["dropped_events"] != 0:
            problems.append(f"rank {m['rank']} dropped {m['dropped_events']} events")

    process_names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    if process_names != {r: f"rank {r}" for r in range(ranks)}:
        problems.append(f"process names {process_names}")
    threads = collections.defaultdict(dict)
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads[e["pid"]][e["tid"]] = e["args"]["name"]
    for r in range(ranks):
        for w in range(workers):
            if threads[r].get(w) != f"worker {w}":
                problems.append(f"rank {r} has no row 'worker {w}' (rows: {threads[r]})")

    tasks = collections.Counter()
    named = collections.Counter()
    sends = collections.Counter()
    kinds = collections.Counter()
    for e in events:
        if e["ph"] in ("X", "s", "f", "i") and (e["ts"] < 0 or e.get("dur", 0) < 0):
            problems.append(f"negative time: {e}")
        if e["ph"] in ("X", "s", "f", "i") and e["tid"] not in threads[e["pid"]]:
            problems.append(f"event on an unnamed row: {e}")
        if e["ph"] == "X" and e["cat"] == "task":
            tasks[e["pid"]] += 1
            kinds[(e["pid"], e["args"]["kind"])] += 1
            if "traced_remote_square" in e["name"]:
                named[e["pid"]] += 1
                if e["args"]["kind"] != "remote call":
                    problems.append(f"remote call interval of kind {e['args']['kind']}")
        if e["ph"] == "X" and e["cat"] == "comm" and e["name"] == "send call":
            sends[(e["pid"], e["args"]["to"])] += 1
    for r in range(ranks):
        # Each call runs as its own interval; the main task is one more.
        if tasks[r] < calls + 1:
            problems.append(f"rank {r}: {tasks[r]} task intervals, expected at least {calls + 1}")
        if named[r] != calls:
            problems.append(f"rank {r}: {named[r]} intervals named traced_remote_square, expected {calls}")
        if sends[(r, (r + 1) % ranks)] < calls:
            problems.append(f"rank {r}: {sends[(r, (r + 1) % ranks)]} calls sent to the next rank, expected {calls}")

    if sum(n for (_, kind), n in kinds.items() if kind == "forked task") == 0:
        problems.append(f"no interval of kind 'forked task' (kinds: {dict(kinds)})")
    for r in range(ranks):
        if kinds[(r, "collective")] == 0:
            problems.append(f"rank {r}: no interval of kind 'collective'")
        kernels = [e["name"] for e in events
                   if e["ph"] == "X" and e["pid"] == r and e.get("args", {}).get("kind") == "target kernel"]
        if not any("traced_kernel" in k for k in kernels) or not any("lambda" in k for k in kernels):
            problems.append(f"rank {r}: kernels not named after the function and the lambda: {kernels}")

    starts = collections.Counter(e["id"] for e in events if e["ph"] == "s")
    finishes = collections.Counter(e["id"] for e in events if e["ph"] == "f")
    if not starts:
        problems.append("no messages")
    if starts != finishes:
        unpaired = (starts - finishes) + (finishes - starts)
        problems.append(f"{len(starts)} sends, {len(finishes)} receives, {sum(unpaired.values())} unpaired")
    if any(n != 1 for n in starts.values()):
        problems.append("a flow id is used by more than one send")
    return problems


def main():
    path, ranks, workers, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    problems = check(path, ranks, workers, calls)
    for p in problems[:20]:
        print("trace check:", p)
    if problems:
        return 1
    print("trace check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
