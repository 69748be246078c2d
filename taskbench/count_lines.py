#!/usr/bin/env python3
"""Size of each Task Bench implementation: non-blank, non-comment lines and
the distinct library names it uses (weft::NAME, NAME including nested
parts such as checkout_mode::read, and MPI_NAME).

    taskbench/count_lines.py            # the table (markdown)
    taskbench/count_lines.py --names    # and the names of each

Run from the repository root. Each row counts an implementation's own files
and the helpers only it (or only weft implementations) use; the drivers
(flag parsing, warm-up, timing) are rows of their own.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
ROWS = [
    ("dataflow", ["weft/dataflow.cpp", "weft/remote_outputs.hpp", "weft/remote_outputs.cpp",
                  "weft/output_slots.hpp", "weft/output_slots.cpp"]),
    ("spmd", ["weft/spmd.cpp", "weft/remote_outputs.hpp", "weft/remote_outputs.cpp"]),
    ("forkjoin", ["weft/forkjoin.cpp"]),
    ("futures", ["weft/futures.cpp"]),
    ("offload", ["weft/offload.cpp"]),
    ("offload's GPU kernel", ["weft/offload_cuda.hpp", "weft/offload_cuda.cu"]),
    ("weft driver (all five)", ["weft/main.cpp", "weft/impl.hpp", "weft/scratch.cpp"]),
    ("taskbench_mpi (nonblock)", ["mpi/nonblock.hpp", "mpi/nonblock.cpp"]),
    ("taskbench_mpi driver", ["mpi/main.cpp", "mpi/runner.hpp", "mpi/runner.cpp"]),
]
NAME = re.compile(r"\bweft::((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)|\b(MPI_\w+)")
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def code_lines(text):
    """Lines left once comments are removed, blank ones dropped."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    lines = (re.sub(r"//.*", "", line).strip() for line in text.splitlines())
    return [line for line in lines if line]


def names(lines):
    found = set()
    for line in lines:
        for m in NAME.finditer(STRING.sub('""', line)):
            found.add(m.group(1) or m.group(2))
    return found


def main():
    print("| implementation | files | lines | library names |")
    print("|---|---|---|---|")
    for label, files in ROWS:
        lines = [l for f in files for l in code_lines((ROOT / f).read_text())]
        used = names(lines)
        print(f"| {label} | {', '.join(files)} | {len(lines)} | {len(used)} |")
        if "--names" in sys.argv[1:]:
            print(f"|  | {' '.join(sorted(used))} | | |")


if __name__ == "__main__":
    main()
