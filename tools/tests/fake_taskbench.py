#!/usr/bin/env python3
"""A stand-in for a Task Bench binary, for the metg tests: takes the Task
Bench flags, prints the same report, and makes up an elapsed time

    elapsed = tasks * (overhead_us * 1e-6 + flops_per_task * ns_per_flop * 1e-9) / cores

without computing anything (it returns at once). Test-only flags:
  -fake-overhead-us X   per-task overhead (default 10)
  -fake-ns-per-flop X   time per FLOP on one core (default 0.1, i.e. 10 GFLOP/s)
  -fake-cores N         cores the tasks are spread over (default 2)
  -fake-fail-iter N     exit 3 with a message on stderr when -iter is N
  -fake-garbage-iter N  print no report when -iter is N (exit 0)
  -fake-hang-iter N     sleep 60 s when -iter is N
  -fake-wrong-iter N    report Iterations off by one when -iter is N
  -fake-calls FILE      append "TAG ITER" to FILE on every call
  -fake-tag TAG         the TAG written by -fake-calls (default fake)
  -fake-gap-us X        with TASKBENCH_TRACE=PREFIX set, write PREFIX.PID as this
                        project's binaries do: every timestep's tasks start X us
                        after the step before ended (default 1); the task times
                        vary with the point, and a warm-up run is recorded first;
                        with WEFT_TRACE=FILE set, the same tasks as a weft timeline
                        trace (the first graph only, one worker row per point,
                        between intervals of a main task)
"""

import json
import os
import sys
import time


def main(argv):
    fake = {"overhead_us": 10.0, "ns_per_flop": 0.1, "cores": 2, "fail_iter": None,
            "garbage_iter": None, "hang_iter": None, "wrong_iter": None, "calls": None,
            "tag": "fake", "gap_us": 1.0}
    conv = {"gap_us": float, "overhead_us": float, "ns_per_flop": float, "cores": int, "fail_iter": int,
            "garbage_iter": int, "hang_iter": int, "wrong_iter": int, "calls": str, "tag": str}
    defaults = {"steps": 4, "width": 4, "type": "trivial", "radix": 3, "period": 0,
                "fraction": 0.25, "kernel": "empty", "iter": 0, "samples": 16,
                "imbalance": 0.0, "output": 16, "scratch": 0}
    graphs = [dict(defaults)]
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-and":
            graphs.append(dict(defaults))
            i += 1
            continue
        if a.startswith("-fake-"):
            key = a[len("-fake-"):].replace("-", "_")
            fake[key] = conv[key](argv[i + 1])
            i += 2
            continue
        key = a.lstrip("-")
        if key == "sample":
            key = "samples"
        if key in defaults and i + 1 < len(argv):
            graphs[-1][key] = type(defaults[key])(argv[i + 1]) if key not in ("fraction", "imbalance") \
                else float(argv[i + 1])
            i += 2
            continue
        if key in ("v", "vv", "skip-graph-validation"):
            i += 1
            continue
        print("error: unknown flag %s" % a, file=sys.stderr)
        return 2

    it = graphs[0]["iter"]
    if fake["calls"]:
        with open(fake["calls"], "a") as f:
            f.write("%s %d\n" % (fake["tag"], it))
    if fake["fail_iter"] == it:
        print("fake_taskbench: simulated crash at iter %d" % it, file=sys.stderr)
        return 3
    if fake["hang_iter"] == it:
        time.sleep(60)
    for g in graphs:
        if g["type"] in ("spread", "random_nearest") and not g["period"]:
            g["period"] = 3

    print("Running Task Benchmark")
    print("  Configuration:")
    for n, g in enumerate(graphs, 1):
        shown = g["iter"] + (1 if fake["wrong_iter"] == it else 0)
        print("    Task Graph %d:" % n)
        print("      Time Steps: %d" % g["steps"])
        print("      Max Width: %d" % g["width"])
        print("      Dependence Type: %s" % g["type"])
        print("      Radix: %d" % g["radix"])
        print("      Period: %d" % g["period"])
        print("      Fraction Connected: %f" % g["fraction"])
        print("      Kernel:")
        print("        Type: %s" % g["kernel"])
        print("        Iterations: %d" % shown)
        print("        Samples: %d" % g["samples"])
        print("        Imbalance: %f" % g["imbalance"])
        print("      Output Bytes: %d" % g["output"])
        print("      Scratch Bytes: %d" % g["scratch"])
    if fake["garbage_iter"] == it:
        print("Segmentation fault? no: just no report")
        return 0

    tasks = deps = flops = 0
    seconds = 0.0
    for g in graphs:
        T, W = g["steps"], g["width"]
        n_tasks = T * W
        per_task = 128 * g["iter"] + 64 if g["kernel"] in ("compute_bound", "load_imbalance") else 0
        if g["type"] == "stencil_1d":
            per_step = sum(min(W - 1, x + 1) - max(0, x - 1) + 1 for x in range(W))
        elif g["type"] == "no_comm":
            per_step = W
        else:
            per_step = 0
        tasks += n_tasks
        deps += per_step * (T - 1)
        flops += per_task * n_tasks
        seconds += n_tasks * (fake["overhead_us"] * 1e-6 + per_task * fake["ns_per_flop"] * 1e-9)
    elapsed = seconds / fake["cores"]
    if os.environ.get("TASKBENCH_TRACE"):
        write_trace(os.environ["TASKBENCH_TRACE"], graphs, fake["gap_us"])
    if os.environ.get("WEFT_TRACE"):
        write_weft_trace(os.environ["WEFT_TRACE"], graphs[0], fake["gap_us"])
    print("Total Tasks %d" % tasks)
    print("Total Dependencies %d" % deps)
    print("  Unable to estimate local/nonlocal dependencies")
    print("Total FLOPs %d" % flops)
    print("Total Bytes %d" % 0)
    print("Elapsed Time %e seconds" % elapsed)
    print("FLOP/s %e" % (flops / elapsed))
    print("B/s %e" % 0.0)
    print("Transfer (estimated):")
    print("  Unable to estimate local/nonlocal transfer")
    return 0


def write_trace(prefix, graphs, gap_us):
    """Two runs (warm-up, then timed) of every graph; in each step, point x
    runs for 10 + x us, starting gap_us after the step before ended."""
    now = 10 ** 9
    with open("%s.%d" % (prefix, os.getpid()), "w") as f:
        for _run in range(2):
            for n, g in enumerate(graphs):
                for t in range(g["steps"]):
                    start = now + int(gap_us * 1000)
                    for x in range(g["width"]):
                        f.write("%d %d %d %d %d\n" % (n, t, x, start, start + (10 + x) * 1000))
                    now = start + (10 + g["width"] - 1) * 1000


def write_weft_trace(path, g, gap_us):
    """write_trace's tasks of graph `g` as a --weft:trace file: point x's
    intervals on worker x of rank 0, named "point_task"; a shorter interval
    named "main" on worker 0 before every step (not a point task)."""
    events = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "rank 0"}}]
    now = 10 ** 6
    for _run in range(2):
        for _t in range(g["steps"]):
            start = now + gap_us
            events.append({"ph": "X", "cat": "task", "name": "main", "pid": 0, "tid": 0,
                           "ts": now, "dur": gap_us / 2, "args": {"kind": "task"}})
            for x in range(g["width"]):
                events.append({"ph": "X", "cat": "task", "name": "point_task", "pid": 0, "tid": x,
                               "ts": start, "dur": 10 + x, "args": {"kind": "task"}})
            now = start + 10 + g["width"] - 1
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "otherData": {}}, f)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
