"""What the command-line tests share: the metg script, the fake Task Bench
binary as a command prefix, and a way to run metg."""

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
