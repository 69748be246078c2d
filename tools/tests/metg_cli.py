"""What the command-line tests share: the metg script, the fake Task Bench
binary as a command prefix, and a way to run metg."""

import json
import os
import shlex
import subprocess
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
METG = os.path.join(os.path.dirname(TESTS), "metg")
FAKE = "%s %s" % (shlex.quote(sys.executable), shlex.quote(os.path.join(TESTS, "fake_taskbench.py")))
# A small graph for the one -iter commands (gaps, pairs).
COMMON = ["--", "-type", "stencil_1d", "-steps", "50", "-width", "3", "-kernel", "compute_bound"]


def metg(*args, timeout=60):
    return subprocess.run([sys.executable, METG] + list(args), capture_output=True, text=True,
                          timeout=timeout, cwd="/")


def iter_run_at_sweep(tmp_path, command, granularity_at_2048):
    """Runs `metg COMMAND --at` a sweep whose 16 x METG granularity is 20 us
    and whose baseline measured 10, `granularity_at_2048` and 42 us at -iter
    1024, 2048 and 4096; returns the -iter the binary was called with."""
    summary = {"baseline": "mpi", "impls": ["mpi"], "efficiency_at": {"granularity_us": 20.0},
               "results": {"mpi": {"points": [{"iter": 1024, "granularity_us": 10.0},
                                              {"iter": 2048, "granularity_us": granularity_at_2048},
                                              {"iter": 4096, "granularity_us": 42.0}]}}}
    (tmp_path / "metg.json").write_text(json.dumps(summary))
    calls = tmp_path / "calls.txt"
    r = metg(command, "--impl", "mpi=%s -fake-calls %s" % (FAKE, shlex.quote(str(calls))),
             "--at", str(tmp_path), "--reps", "1", *COMMON)
    assert r.returncode == 0, r.stderr
    tag, iters = calls.read_text().split()
    return int(iters)
