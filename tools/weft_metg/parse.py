"""Parsing of the Task Bench printed report (taskbench/README.md, "What the core follows").

One run prints a configuration block ("Running Task Benchmark", then one
"Task Graph N:" section per graph given with -and) and, at the end, a single
report whose totals (tasks, dependencies, FLOPs, bytes) cover all graphs.
Both the original Task Bench binaries and weft's print the same lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

RUN_HEADER = "Running Task Benchmark"

_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf(?:inity)?|nan)"

# Report lines: (field name, regex, converter). Matched against stripped lines.
_REPORT_LINES = [
    ("total_tasks", re.compile(r"^Total Tasks\s+(-?\d+)$"), int),
    ("total_deps", re.compile(r"^Total Dependencies\s+(-?\d+)$"), int),
    ("total_flops", re.compile(r"^Total FLOPs\s+(-?\d+)$"), int),
    ("total_bytes", re.compile(r"^Total Bytes\s+(-?\d+)$"), int),
    ("elapsed_s", re.compile(r"^Elapsed Time\s+" + _NUM + r"\s+seconds$", re.I), float),
    ("flops_per_s", re.compile(r"^FLOP/s\s+" + _NUM + r"$", re.I), float),
    ("bytes_per_s", re.compile(r"^B/s\s+" + _NUM + r"$", re.I), float),
]

# Fields a report must contain to be usable for METG.
REQUIRED = ("total_tasks", "total_flops", "elapsed_s")

# Keys of a "Task Graph N:" section -> our names. "Type" is the kernel type
# (it sits under "Kernel:"); the dependence type is "Dependence Type".
_GRAPH_KEYS = {
    "Time Steps": ("steps", int),
    "Max Width": ("width", int),
    "Dependence Type": ("type", str),
    "Radix": ("radix", int),
    "Period": ("period", int),
    "Fraction Connected": ("fraction", float),
    "Type": ("kernel", str),
    "Iterations": ("iter", int),
    "Samples": ("samples", int),
    "Imbalance": ("imbalance", float),
    "Output Bytes": ("output", int),
    "Scratch Bytes": ("scratch", int),
}
_GRAPH_RE = re.compile(r"^Task Graph\s+(\d+):$")
_KV_RE = re.compile(r"^([A-Za-z][A-Za-z ]*?):\s*(.*)$")


class ParseError(ValueError):
    """The text does not hold a complete Task Bench report."""


@dataclass
class Run:
    """One Task Bench run: its configuration block and its report."""

    graphs: list[dict] = field(default_factory=list)
    total_tasks: int | None = None
    total_deps: int | None = None
    total_flops: int | None = None
    total_bytes: int | None = None
    elapsed_s: float | None = None
    flops_per_s: float | None = None
    bytes_per_s: float | None = None
    source: str = ""          # file name (logs) or impl name (sweep)
    index: int = 0            # position of the run in its file, from 0
    line: int = 0             # line number of the run's first line, from 1

    @property
    def iter(self) -> int | None:
        """Kernel iterations of the run (graph 1's; see graph_iters for all)."""
        return self.graphs[0].get("iter") if self.graphs else None

    @property
    def graph_iters(self) -> list:
        return [g.get("iter") for g in self.graphs]

    def missing(self) -> list[str]:
        return [k for k in REQUIRED if getattr(self, k) is None]

    def complete(self) -> bool:
        return not self.missing()

    def rate(self) -> float:
        """Achieved FLOP/s: Total FLOPs / Elapsed Time (the printed FLOP/s
        line is the same quantity, rounded to 7 digits)."""
        if self.elapsed_s and self.elapsed_s > 0:
            return self.total_flops / self.elapsed_s
        return float(self.flops_per_s or 0.0)


def _iter_runs(lines, source=""):
    """Streams lines into runs. A new run starts at "Running Task Benchmark",
    or at a report line that the current run already has (logs holding
    report lines without their configuration block)."""
    run = None
    graph = None
    for no, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s:
            continue
        if s == RUN_HEADER:
            if run is not None:
                yield run
            run = Run(source=source, line=no)
            graph = None
            continue
        m = _GRAPH_RE.match(s)
        if m:
            if run is None:
                run = Run(source=source, line=no)
            graph = {"graph": int(m.group(1))}
            run.graphs.append(graph)
            continue
        if s.startswith("Timestep "):
            graph = None   # -v/-vv detail: the configuration section is over
            continue
        hit = False
        for name, rx, conv in _REPORT_LINES:
            m = rx.match(s)
            if m:
                if run is None or getattr(run, name) is not None:
                    if run is not None:
                        yield run
                    run = Run(source=source, line=no)
                setattr(run, name, conv(m.group(1)))
                graph = None
                hit = True
                break
        if hit or graph is None:
            continue
        m = _KV_RE.match(s)
        if m and m.group(1) in _GRAPH_KEYS:
            key, conv = _GRAPH_KEYS[m.group(1)]
            if key not in graph:
                try:
                    graph[key] = conv(m.group(2).strip())
                except ValueError:
                    pass
    if run is not None:
        yield run


_NAMES = {"total_tasks": "Total Tasks", "total_flops": "Total FLOPs",
          "elapsed_s": "Elapsed Time"}


def split_runs(text: str, source: str = "") -> list[Run]:
    """Splits a log holding any number of runs, in order. Runs are returned
    complete or not (a run cut short has no report); check Run.complete()."""
    runs = list(_iter_runs(text.splitlines(), source))
    for i, r in enumerate(runs):
        r.index = i
    return runs


def parse_report(text: str, source: str = "") -> Run:
    """Parses the output of one run and returns its report (the last
    complete one if the output holds several). Raises ParseError if the
    lines needed for METG (Total Tasks, Total FLOPs, Elapsed Time) are
    missing."""
    runs = split_runs(text, source)
    done = [r for r in runs if r.complete()]
    if done:
        return done[-1]
    if not runs:
        raise ParseError("no Task Bench report in the output")
    missing = runs[-1].missing()
    raise ParseError("incomplete Task Bench report in the output (missing: %s)"
                     % ", ".join(_NAMES[k] for k in missing))


def describe_graphs(graphs: list[dict]) -> str:
    """A short title for a graph configuration, e.g.
    "stencil_1d, 1000 steps x width 2, compute_bound"."""
    parts = []
    for g in graphs:
        s = "%s, %s steps x width %s, %s" % (g.get("type", "?"), g.get("steps", "?"),
                                             g.get("width", "?"), g.get("kernel", "?"))
        if g.get("kernel") == "load_imbalance" or g.get("imbalance"):
            s += ", imbalance %g" % g.get("imbalance", 0.0)
        if g.get("type") in ("nearest", "spread", "random_nearest"):
            s += ", radix %s" % g.get("radix", "?")
        if g.get("type") in ("spread", "random_nearest"):
            s += ", period %s" % g.get("period", "?")
        if g.get("type") == "random_nearest":
            s += ", fraction %g" % g.get("fraction", 0.0)
        if g.get("output", 16) != 16:
            s += ", output %s B" % g["output"]
        parts.append(s)
    if not parts:
        return ""
    if len(parts) > 1 and len(set(parts)) == 1:
        return "%d graphs: %s" % (len(parts), parts[0])
    return " + ".join(parts)


def config_signature(graphs: list[dict]) -> tuple:
    """The configuration without the kernel iterations: runs of one sweep
    must agree on it."""
    return tuple(tuple(sorted((k, v) for k, v in g.items() if k != "iter")) for g in graphs)
