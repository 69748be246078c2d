"""The `trace` command line: summary, plot, merge."""

from __future__ import annotations

import argparse
import sys

from .merge import merge, parts_of
from .model import TraceError, load
from .plot import PlotUnavailable, plot
from .summary import text


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="trace", description="Read the timelines weft's --weft:trace writes.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("summary", help="busy, idle and communication per worker; top tasks; steals; messages")
    s.add_argument("file")
    s.add_argument("--top", type=int, default=10, help="task names to list (default 10)")
    g = sub.add_parser("plot", help="per-worker utilisation timeline as a picture")
    g.add_argument("file")
    g.add_argument("-o", "--output", required=True, help="picture to write (.png, .svg, .pdf)")
    g.add_argument("--title", default="")
    m = sub.add_parser("merge", help="join the per-rank parts a failed job left (PATH.rank-R.part) into PATH")
    m.add_argument("file")
    m.add_argument("--keep", action="store_true", help="keep the parts")
    a = p.parse_args(argv)
    try:
        if a.command == "merge":
            parts = parts_of(a.file)
            if not parts:
                print("trace: no parts %s.rank-*.part" % a.file, file=sys.stderr)
                return 1
            n = merge(a.file, parts, remove=not a.keep)
            print("trace: %d events from %d parts in %s" % (n, len(parts), a.file))
            return 0
        trace = load(a.file)
        if a.command == "summary":
            sys.stdout.write(text(trace, a.top))
        else:
            plot(trace, a.output, a.title)
            print("trace: wrote %s" % a.output)
        return 0
    except (TraceError, PlotUnavailable, OSError) as e:
        print("trace: %s" % e, file=sys.stderr)
        return 1
