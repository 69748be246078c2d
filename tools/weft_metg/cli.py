"""The `metg` command line: sweep, gaps, pairs, logs, plot."""

from __future__ import annotations

import argparse
import datetime
import glob
import math
import os
import shlex
import sys
import tempfile

from . import __version__
from .analysis import (Sample, efficiency_at_multiple, metg, points_from_summary, ratio,
                       ratio_text, summarize)
from .gaps import read_records, read_traces, read_weft_trace, remove_traces, step_overheads, table as gaps_table
from .pairs import rotation, table as pairs_table
from .parse import ParseError, parse_report, split_runs, describe_graphs, config_signature
from .results import (CSV_NAME, JSON_NAME, PNG_NAME, CsvWriter, read_csv, read_json,
                      write_json, report_text)
from .plotting import PlotUnavailable
from .runner import (Progress, Sweep, build_argv, check_common_args, format_failure,
                     iter_values, parse_pow2, run_command, Schedule, tail)

EXIT_FAILED_RUNS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    pass


# ---------------------------------------------------------------- helpers

def _named(text: str, what: str):
    if "=" not in text:
        raise UsageError("%s %r must look like NAME=%s" % (what, text, "COMMAND" if what == "--impl" else "PATH"))
    name, value = text.split("=", 1)
    name = name.strip()
    if not name:
        raise UsageError("%s %r: empty NAME" % (what, text))
    if not value.strip():
        raise UsageError("%s %r: empty value after '='" % (what, text))
    return name, value


def _pow2(text):
    try:
        return parse_pow2(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def _iterations(text):
    try:
        v = 1 << int(text[2:]) if text.startswith("2^") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not an integer or 2^K" % text)
    if v < 0:
        raise argparse.ArgumentTypeError("must be >= 0, got %s" % text)
    return v


def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not an integer" % text)
    if v < 1:
        raise argparse.ArgumentTypeError("must be >= 1, got %d" % v)
    return v


def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text)
    if not v > 0:
        raise argparse.ArgumentTypeError("must be > 0, got %s" % text)
    return v


def _fraction(lo_open=True):
    def conv(text):
        try:
            v = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a number" % text)
        if not (0 < v <= 1 if lo_open else 0 <= v < 1):
            raise argparse.ArgumentTypeError("must be in %s, got %s" % ("(0, 1]" if lo_open else "[0, 1)", text))
        return v
    return conv


def _default_cores():
    return os.cpu_count() or 1


def _add_summary_options(p, plot_default=True):
    p.add_argument("--cores", type=_positive_int, default=None,
                   help="cores for granularity = elapsed x cores / tasks (default: os.cpu_count() = %d)"
                   % _default_cores())
    p.add_argument("--baseline", metavar="NAME",
                   help="implementation the METG ratios are taken against (default: the first)")
    p.add_argument("--threshold", type=_fraction(), default=0.5, metavar="EFF",
                   help="efficiency defining METG, as 0.5 or 50%% (default 0.5)")
    p.add_argument("--peak-flops", type=_positive_float, metavar="FLOPS",
                   help="use this peak FLOP/s instead of measuring it")
    p.add_argument("--eff-multiple", type=float, default=16.0, metavar="K",
                   help="also report each implementation's efficiency at K x the baseline's METG "
                        "and at K x its own (default 16, as in Task Bench's load-imbalance "
                        "figures; 0: off)")
    p.add_argument("--title", help="figure title")
    p.add_argument("--label", help="panel label, e.g. '(a) compute_bound' (kept in metg.json)")
    if plot_default:
        p.add_argument("--no-plot", action="store_true", help="do not write metg.png")


def _add_one_iter_options(parser, reps: int, at_help: str, impl_required: bool = True) -> None:
    """The options of the commands that run each implementation at one -iter (gaps, pairs)."""
    parser.add_argument("--impl", action="append", required=impl_required, metavar="NAME=COMMAND",
                        help="an implementation: NAME and a shell-style command prefix (repeat)")
    parser.add_argument("--iter", type=_iterations, metavar="N", help="the -iter to run at (N or 2^K)")
    parser.add_argument("--at", metavar="SWEEP", help=at_help)
    parser.add_argument("--reps", type=_positive_int, default=reps,
                        help="repetitions (default %d)" % reps)
    parser.add_argument("--baseline", metavar="NAME", help="ratios against NAME (default: the first)")
    parser.add_argument("--timeout", type=_positive_float, default=600.0, metavar="SECONDS",
                        help="limit per run (default 600)")
    parser.add_argument("--quiet", action="store_true",
                        help="no line per run on stderr (failed runs are still reported)")


def build_parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="metg",
        description="Minimum effective task granularity (METG) of Task Bench implementations.",
        epilog="Run 'metg COMMAND -h' for the options of each command. Exit status: 0 ok, "
               "1 some runs failed or were incomplete (results still written), 2 bad arguments, "
               "130 interrupted.")
    top.add_argument("--version", action="version", version="metg " + __version__)
    sub = top.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser(
        "sweep", help="run implementations over -iter = 2^max .. 2^min and compute METG",
        usage="metg sweep --impl NAME=COMMAND [--impl ...] [options] -- TASKBENCH_FLAGS...",
        description="Runs every implementation at -iter = iter-max, iter-max/2, ..., iter-min, "
                    "--reps times, interleaved (rep 1 of every (impl, iter), then rep 2, ...). "
                    "The Task Bench flags after -- are shared by all implementations; -iter is "
                    "appended to every graph (-and).")
    s.add_argument("--impl", action="append", required=True, metavar="NAME=COMMAND",
                   help="an implementation: NAME and a shell-style command prefix (repeat)")
    s.add_argument("--iter-max", type=_pow2, default=1 << 16, metavar="2^K",
                   help="largest -iter, a power of two (default 2^16)")
    s.add_argument("--iter-min", type=_pow2, default=1, metavar="2^K",
                   help="smallest -iter, a power of two (default 2^0)")
    s.add_argument("--reps", type=_positive_int, default=3, help="repetitions (default 3)")
    s.add_argument("--timeout", type=_positive_float, default=600.0, metavar="SECONDS",
                   help="limit per run; the run's process group is killed (default 600)")
    s.add_argument("--out", default="metg_out", metavar="DIR",
                   help="output folder: metg.csv, metg.json, metg.png, logs/ (default ./metg_out)")
    s.add_argument("--peak-cmd", metavar="COMMAND",
                   help="measure peak FLOP/s with this full command (a Task Bench run), once "
                        "per rep, best over reps (default: best run over the sweep)")
    s.add_argument("--stop-below", type=_fraction(lo_open=False), default=0.0, metavar="EFF",
                   help="stop going smaller for an implementation once its rep-1 efficiency "
                        "has been below EFF for --stop-after consecutive iters (default 0: off)")
    s.add_argument("--stop-after", type=_positive_int, default=2, metavar="K",
                   help="consecutive points below --stop-below before stopping (default 2)")
    s.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    s.add_argument("--dry-run", action="store_true", help="print the commands in run order and exit")
    _add_summary_options(s)

    l = sub.add_parser(
        "logs", help="compute METG from Task Bench logs (ours or the original binaries)",
        usage="metg logs --log NAME=PATH [--log ...] [options]",
        description="Reads logs holding any number of Task Bench runs (each a 'Running Task "
                    "Benchmark' configuration block and its report), groups the runs of each "
                    "NAME by the Iterations of its configuration, and computes the same tables "
                    "and plot as sweep. Several runs at one iteration count are repetitions.")
    l.add_argument("--log", action="append", required=True, metavar="NAME=PATH",
                   help="log file(s) of an implementation; PATH may be a glob (quote it); repeat "
                        "a NAME to add files")
    l.add_argument("--out", default="metg_out", metavar="DIR",
                   help="output folder: metg.csv, metg.json, metg.png (default ./metg_out)")
    l.add_argument("--allow-incomplete", action="store_true",
                   help="exit 0 even if some runs in the logs have no complete report")
    _add_summary_options(l)

    g = sub.add_parser(
        "gaps", help="per-step overhead of each implementation, from task traces",
        usage="metg gaps --impl NAME=COMMAND [--impl ...] (--iter N | --at SWEEP) [options] "
              "-- TASKBENCH_FLAGS...",
        description="Runs every implementation --reps times (interleaved) at one -iter with "
                    "TASKBENCH_TRACE set (this project's Task Bench binaries then record when "
                    "each task started and ended) and reports the step overhead: how much longer "
                    "each timestep took than its longest task, i.e. the cost of handing outputs "
                    "over and starting the next tasks, apart from the kernel's speed.")
    _add_one_iter_options(g, reps=5, at_help="a sweep's output folder or metg.json: run at the "
                          "baseline's -iter nearest the granularity of its efficiency-at-K x METG column",
                          impl_required=False)
    g.add_argument("--trace", choices=("taskbench", "weft"), default="taskbench",
                   help="which trace the runs write: taskbench (TASKBENCH_TRACE, default) or weft "
                        "(WEFT_TRACE, the --weft:trace timeline of a weft binary; its task intervals "
                        "are numbered into timesteps of -width points)")
    g.add_argument("--task-name", metavar="NAME",
                   help="weft traces: the name of the point tasks' intervals (default: the most "
                        "frequent task name)")
    g.add_argument("--from", dest="from_", action="append", metavar="NAME=PATH",
                   help="analyse traces already written instead of running: a weft trace file or "
                        "a TASKBENCH_TRACE prefix (the format is detected; repeat; a NAME may "
                        "repeat for repetitions); the Task Bench flags after -- give -width and -steps")

    q = sub.add_parser(
        "pairs", help="paired efficiency ratios against a baseline at one task size",
        usage="metg pairs --impl NAME=COMMAND [--impl ...] (--iter N | --at SWEEP) [options] "
              "-- TASKBENCH_FLAGS...",
        description="Runs every implementation once per repetition, back to back (the order "
                    "rotates between repetitions), at one -iter, and compares each with the "
                    "baseline pair by pair: efficiency ratio = baseline elapsed / elapsed. "
                    "Prints the median ratio with its quartiles, how many pairs are at or above "
                    "1, and an exact sign test; for differences of a percent or less on a noisy "
                    "machine, where the medians of a sweep cannot tell.")
    _add_one_iter_options(q, reps=31, at_help="a sweep's output folder or metg.json: run at the "
                          "granularity of its efficiency-at-K x METG column (the baseline's nearest "
                          "-iter, scaled)")

    p = sub.add_parser(
        "plot", help="re-plot (and re-tabulate) saved results, several panels in one figure",
        usage="metg plot [--panel [LABEL=]PATH ...] [PATH ...] --out FIGURE [options]",
        description="PATH is an output folder of sweep/logs, a metg.json or a metg.csv (from "
                    "which the summary is recomputed). Each PATH is one panel, in order.")
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--panel", action="append", default=[], metavar="[LABEL=]PATH",
                   help="a panel with an optional label, e.g. '(a) compute_bound=out/a'")
    p.add_argument("--out", required=True, metavar="FIGURE", help="figure file (.png, .pdf, .svg)")
    p.add_argument("--cores", type=_positive_int, default=None,
                   help="cores, for a metg.csv without a cores column")
    p.add_argument("--baseline", metavar="NAME", help="recompute ratios against NAME")
    p.add_argument("--threshold", type=_fraction(), default=None, metavar="EFF",
                   help="recompute METG at this efficiency")
    p.add_argument("--peak-flops", type=_positive_float, metavar="FLOPS",
                   help="peak FLOP/s when recomputing from a metg.csv")
    p.add_argument("--title", help="figure title")
    p.add_argument("--quiet", action="store_true", help="do not print the tables")
    return top


# ---------------------------------------------------------------- shared

def _finish(summary: dict, out_dir: str | None, no_plot: bool, title: str | None) -> None:
    if out_dir:
        write_json(os.path.join(out_dir, JSON_NAME), summary)
        if not no_plot:
            from .plotting import plot
            plot([(None, summary)], os.path.join(out_dir, PNG_NAME), title=title)
    print(report_text(summary))
    for w in summary.get("warnings", []):
        print("warning: %s" % w)
    if out_dir:
        names = [CSV_NAME, JSON_NAME] + ([] if no_plot else [PNG_NAME])
        print("\nwrote %s" % ", ".join(os.path.join(out_dir, n) for n in names))


def _metadata(args, argv) -> dict:
    return {"tool": "weft-metg", "version": __version__,
            "created": datetime.datetime.now().isoformat(timespec="seconds"),
            "command_line": shlex.join(["metg"] + list(argv)),
            "title": args.title, "label": args.label}


def _check_baseline(baseline, names):
    if baseline is None:
        return names[0] if names else None
    if baseline not in names:
        raise UsageError("--baseline %r is not one of: %s" % (baseline, ", ".join(names)))
    return baseline


def _parse_impls(specs) -> dict:
    impls = {}
    for spec in specs:
        name, command = _named(spec, "--impl")
        if name in impls:
            raise UsageError("--impl %s given twice" % name)
        try:
            if not shlex.split(command):
                raise ValueError("empty command")
        except ValueError as e:
            raise UsageError("--impl %s: cannot split the command: %s" % (name, e))
        impls[name] = command
    return impls


# ---------------------------------------------------------------- sweep

def cmd_sweep(args, common, argv) -> int:
    impls = _parse_impls(args.impl)
    try:
        check_common_args(common)
        iters = iter_values(args.iter_max, args.iter_min)
        if args.peak_cmd is not None and not shlex.split(args.peak_cmd):
            raise ValueError("--peak-cmd is empty")
    except ValueError as e:
        raise UsageError(str(e))
    if args.peak_cmd and args.peak_flops:
        raise UsageError("give either --peak-cmd or --peak-flops, not both")
    baseline = _check_baseline(args.baseline, list(impls))
    cores = args.cores or _default_cores()

    if args.dry_run:
        sched = Schedule(list(impls), iters, args.reps, peak=bool(args.peak_cmd))
        for job in sched:
            argv_ = (shlex.split(args.peak_cmd) if job.kind == "peak"
                     else build_argv(impls[job.impl], common, job.iter))
            print("rep %d %-12s %s" % (job.rep, job.impl if job.kind == "run" else "(peak)",
                                       shlex.join(argv_)))
        return 0

    out = args.out
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    n = len(impls) * len(iters) * args.reps + (args.reps if args.peak_cmd else 0)
    peak_how = ("given (--peak-flops %g)" % args.peak_flops if args.peak_flops else
                "best of %d runs of --peak-cmd" % args.reps if args.peak_cmd else
                "best single run over the sweep")
    print("metg sweep: %d impls x %d iters (%d..%d) x %d reps = %d runs; cores %d; peak FLOP/s: %s; out %s"
          % (len(impls), len(iters), iters[0], iters[-1], args.reps, n, cores, peak_how, out),
          file=sys.stderr)
    csvw = CsvWriter(os.path.join(out, CSV_NAME))
    sweep = Sweep(impls, common, iters, args.reps, cores, args.timeout, peak_cmd=args.peak_cmd,
                  peak_flops=args.peak_flops, stop_below=args.stop_below,
                  stop_after=args.stop_after, csv=csvw, logdir=os.path.join(out, "logs"),
                  progress=Progress(enabled=not args.no_progress))
    interrupted = False
    try:
        sweep.run()
    except KeyboardInterrupt:
        interrupted = True
        sweep.progress.finish()
        print("\ninterrupted: summarizing the runs done so far", file=sys.stderr)
    finally:
        csvw.close()
        sweep.close()

    summary = summarize(sweep.samples, list(impls), cores, args.threshold,
                        peak_flops=args.peak_flops, baseline=baseline,
                        eff_multiple=args.eff_multiple)
    summary.update(_metadata(args, argv))
    summary.update({"graph": describe_graphs(sweep.graphs or []), "graphs": sweep.graphs or [],
                    "common_args": common, "impl_commands": impls, "peak_cmd": args.peak_cmd,
                    "iters": iters, "reps": args.reps, "timeout_s": args.timeout,
                    "stop_below": args.stop_below, "stop_after": args.stop_after,
                    "stopped": sweep.schedule.stopped, "failures": sweep.failures,
                    "warnings": sweep.warnings, "interrupted": interrupted})
    if args.peak_cmd and summary["peak"]["source"] != "peak-cmd" and not interrupted:
        summary["warnings"].append("every --peak-cmd run failed; the peak is the best run "
                                   "over the sweep instead")
    _finish(summary, out, args.no_plot, args.title)
    if sweep.failures:
        print("\n%d run(s) FAILED:" % len(sweep.failures))
        for f in sweep.failures:
            print(format_failure(f))
    if interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED_RUNS if (sweep.failures or summary.get("error")) else 0


# ---------------------------------------------------------------- gaps

def _iter_at(path: str) -> tuple[int, float, float]:
    """The baseline's -iter whose granularity is nearest the sweep's
    K x METG(baseline) granularity, that granularity, and the granularity
    measured at that -iter."""
    try:
        summary = read_json(os.path.join(path, JSON_NAME) if os.path.isdir(path) else path)
    except (OSError, ValueError) as e:
        raise UsageError("--at: %s" % e)
    at = (summary.get("efficiency_at") or {}).get("granularity_us")
    base = summary.get("baseline")
    points = summary.get("results", {}).get(base, {}).get("points", [])
    points = [p for p in points if p.get("granularity_us")]
    if not at or not points:
        raise UsageError("--at %s: no K x METG granularity or no points of the baseline %r"
                         % (path, base))
    best = min(points, key=lambda p: abs(math.log(p["granularity_us"] / at)))
    return int(best["iter"]), at, float(best["granularity_us"])


def _one_iter_setup(args, common, command: str, scale: bool):
    """The implementations, the baseline and the -iter of gaps and pairs.
    With --at, the baseline's -iter nearest the sweep's K x METG
    granularity, scaled to that granularity when `scale`."""
    impls = _parse_impls(args.impl)
    try:
        check_common_args(common)
    except ValueError as e:
        raise UsageError(str(e))
    if (args.iter is None) == (args.at is None):
        raise UsageError("give exactly one of --iter and --at")
    baseline = _check_baseline(args.baseline, list(impls))
    if args.at is None:
        return impls, baseline, args.iter
    iters, granularity, measured = _iter_at(args.at)
    if scale:
        iters = max(1, round(iters * granularity / measured))
    print("metg %s: -iter %d (granularity %s%.1f us, from %s)"
          % (command, iters, "" if scale else "nearest ", granularity, args.at), file=sys.stderr)
    return impls, baseline, iters


def _graph_shape(common) -> tuple[int, int]:
    """-width and -steps of the Task Bench flags (Task Bench's defaults: 4);
    a weft trace is numbered into timesteps with them, so one graph only."""
    if "-and" in common:
        raise UsageError("weft traces: one graph only (no -and)")
    shape = {"-width": 4, "-steps": 4}
    for i, flag in enumerate(common[:-1]):
        if flag in shape:
            try:
                shape[flag] = int(common[i + 1])
            except ValueError:
                raise UsageError("%s %r is not a number" % (flag, common[i + 1]))
    return shape["-width"], shape["-steps"]


def _gaps_from_files(args, common) -> int:
    """metg gaps --from: the step overhead of traces already written."""
    if args.impl or args.iter is not None or args.at is not None:
        raise UsageError("--from analyses written traces: no --impl, --iter or --at")
    results: dict = {}
    for item in args.from_:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UsageError("--from %r: expected NAME=PATH" % item)
        width, steps = _graph_shape(common)
        try:
            records = read_records(path, width, steps, args.task_name)
        except (OSError, ValueError, KeyError) as e:
            raise UsageError("--from %s: %s" % (path, e))
        stats = step_overheads(records)
        if stats is None:
            raise UsageError("--from %s: no two consecutive timesteps traced" % path)
        results.setdefault(name, []).append(stats)
    baseline = _check_baseline(args.baseline, list(results))
    print("step overhead (%d trace%s; us; how much longer each timestep took than its longest task):"
          % (len(args.from_), "" if len(args.from_) == 1 else "s"))
    print(gaps_table(results, baseline))
    return 0


def _traced_run(argv_, args, path: str):
    """Runs argv_ with the trace of --trace written to `path` (a prefix for
    TASKBENCH_TRACE, a file for WEFT_TRACE)."""
    variable = "WEFT_TRACE" if args.trace == "weft" else "TASKBENCH_TRACE"
    saved = os.environ.get(variable)
    os.environ[variable] = path
    try:
        return run_command(argv_, args.timeout)
    finally:
        if saved is None:
            del os.environ[variable]
        else:
            os.environ[variable] = saved


def cmd_gaps(args, common, argv) -> int:
    if args.from_:
        return _gaps_from_files(args, common)
    if not args.impl:
        raise UsageError("give --impl (to run) or --from (to analyse written traces)")
    impls, baseline, iters = _one_iter_setup(args, common, "gaps", scale=False)
    shape = _graph_shape(common) if args.trace == "weft" else None
    results = {name: [] for name in impls}
    failed = 0
    with tempfile.TemporaryDirectory(prefix="metg-gaps-") as tmp:
        prefix = os.path.join(tmp, "trace")
        for rep in range(1, args.reps + 1):
            for name, command in impls.items():
                argv_ = build_argv(command, common, iters)
                remove_traces(prefix)
                out = _traced_run(argv_, args, prefix)
                stats = None
                if out.returncode == 0 and shape is None:
                    stats = step_overheads(read_traces(prefix))
                elif out.returncode == 0 and os.path.isfile(prefix):
                    stats = step_overheads(read_weft_trace(prefix, *shape, args.task_name))
                if stats is None:
                    failed += 1
                    why = out.error or ("exit %s" % out.returncode if out.returncode != 0 else
                                        "no trace written (not one of this project's binaries?)")
                    print("rep %d %s FAILED: %s\n  %s" % (rep, name, why, shlex.join(argv_)),
                          file=sys.stderr)
                    if out.stderr.strip():
                        print(tail(out.stderr), file=sys.stderr)
                    continue
                results[name].append(stats)
                if not args.quiet:
                    print("rep %d %-10s step overhead median %.3f us over %d steps"
                          % (rep, name, stats.median_us, stats.steps), file=sys.stderr)
    print("step overhead at -iter %d (%d reps; us; how much longer each timestep took than its "
          "longest task):" % (iters, args.reps))
    print(gaps_table(results, baseline))
    return EXIT_FAILED_RUNS if failed else 0


# ---------------------------------------------------------------- pairs

def cmd_pairs(args, common, argv) -> int:
    impls, baseline, iters = _one_iter_setup(args, common, "pairs", scale=True)
    names = list(impls)
    elapsed = {name: [] for name in names}
    failed = 0
    for rep in range(1, args.reps + 1):
        for name in rotation(names, rep):
            argv_ = build_argv(impls[name], common, iters)
            out = run_command(argv_, args.timeout)
            seconds = None
            why = out.error or ("exit %s" % out.returncode if out.returncode != 0 else None)
            if why is None:
                try:
                    seconds = parse_report(out.stdout, name).elapsed_s
                except ParseError as e:
                    why = "no report: %s" % e
            if seconds is None:
                failed += 1
                print("rep %d %s FAILED: %s\n  %s" % (rep, name, why, shlex.join(argv_)), file=sys.stderr)
                if out.stderr.strip():
                    print(tail(out.stderr), file=sys.stderr)
            elif not args.quiet:
                print("rep %d %-10s %.6f s" % (rep, name, seconds), file=sys.stderr)
            elapsed[name].append(seconds)
    print("paired efficiency at -iter %d (%d reps, run back to back in rotating order):"
          % (iters, args.reps))
    print(pairs_table(elapsed, baseline))
    return EXIT_FAILED_RUNS if failed else 0


# ---------------------------------------------------------------- logs

def _expand(pattern: str) -> list[str]:
    files = sorted(glob.glob(os.path.expanduser(pattern)))
    if not files and os.path.exists(pattern):
        files = [pattern]
    return [f for f in files if os.path.isfile(f)]


def cmd_logs(args, argv) -> int:
    sources: dict[str, list[str]] = {}
    for spec in args.log:
        name, pattern = _named(spec, "--log")
        files = _expand(pattern)
        if not files:
            raise UsageError("--log %s: no file matches %r" % (name, pattern))
        have = sources.setdefault(name, [])
        have += [f for f in files if f not in have]
    names = list(sources)
    baseline = _check_baseline(args.baseline, names)
    cores = args.cores or _default_cores()
    os.makedirs(args.out, exist_ok=True)
    csvw = CsvWriter(os.path.join(args.out, CSV_NAME))
    samples, problems, warnings = [], [], []
    graphs, signature = None, None
    order = 0
    for name in names:
        reps: dict[int, int] = {}
        for path in sources[name]:
            try:
                with open(path, errors="replace") as f:
                    text = f.read()
            except OSError as e:
                raise UsageError("--log %s: cannot read %s: %s" % (name, path, e))
            runs = split_runs(text, path)
            if not runs:
                warnings.append("%s: no Task Bench run in %s" % (name, path))
            for run in runs:
                where = "%s:%d" % (path, run.line)
                reason = None
                if not run.complete():
                    reason = "incomplete run (missing %s)" % ", ".join(run.missing())
                elif run.iter is None:
                    reason = "report without a configuration block: iterations unknown"
                elif not run.total_tasks:
                    reason = "Total Tasks is %s" % run.total_tasks
                order += 1
                if reason:
                    problems.append("%s: %s: %s" % (name, where, reason))
                    csvw.row(order=order, kind="run", impl=name, iter=run.iter, status="failed",
                             cores=cores, command=where, error=reason)
                    samples.append(Sample(impl=name, iter=run.iter, rep=0, ok=False))
                    continue
                if len(set(run.graph_iters)) > 1:
                    warnings.append("%s: %s: graphs have different iterations %s; grouped by "
                                    "graph 1's" % (name, where, run.graph_iters))
                sig = config_signature(run.graphs)
                if graphs is None:
                    graphs, signature = run.graphs, sig
                elif sig != signature:
                    warnings.append("%s: %s: graph configuration differs from the first run's"
                                    % (name, where))
                reps[run.iter] = reps.get(run.iter, 0) + 1
                samples.append(Sample(impl=name, iter=run.iter, rep=reps[run.iter],
                                      elapsed_s=run.elapsed_s, total_tasks=run.total_tasks,
                                      total_flops=run.total_flops))
                csvw.row(order=order, kind="run", impl=name, rep=reps[run.iter], iter=run.iter,
                         status="ok", elapsed_s=run.elapsed_s, total_tasks=run.total_tasks,
                         total_deps=run.total_deps, total_flops=run.total_flops,
                         total_bytes=run.total_bytes, flops_per_s=run.flops_per_s, cores=cores,
                         command=where)
    csvw.close()
    if len(warnings) > 30:
        warnings = warnings[:30] + ["... and %d more warnings" % (len(warnings) - 30)]
    summary = summarize(samples, names, cores, args.threshold, peak_flops=args.peak_flops,
                        eff_multiple=args.eff_multiple,
                        baseline=baseline)
    summary.update(_metadata(args, argv))
    summary.update({"graph": describe_graphs(graphs or []), "graphs": graphs or [],
                    "logs": sources, "problems": problems, "warnings": warnings})
    if not args.cores:
        summary["warnings"].append("cores = %d from this machine (os.cpu_count()); give --cores "
                                   "if the logs come from another machine" % cores)
    _finish(summary, args.out, args.no_plot, args.title)
    if problems:
        print("\n%d run(s) in the logs are unusable:" % len(problems))
        for p in problems:
            print("  " + p)
        if not args.allow_incomplete:
            return EXIT_FAILED_RUNS
    return EXIT_FAILED_RUNS if summary.get("error") else 0


# ---------------------------------------------------------------- plot

def _refresh(summary: dict, threshold=None, baseline=None) -> dict:
    """Recomputes METG (new threshold) and ratios (new baseline) from the
    saved points."""
    if threshold is not None:
        summary["threshold"] = threshold
        for r in summary["results"].values():
            r["metg"] = metg(points_from_summary(r), threshold)
    if baseline is not None:
        summary["baseline"] = baseline
    base = summary.get("baseline")
    summary["efficiency_at"] = efficiency_at_multiple(summary["results"], base,
                                                      summary.get("eff_multiple", 16.0))
    if base in summary["results"]:
        for r in summary["results"].values():
            lo, hi = ratio(r["metg"], summary["results"][base]["metg"])
            r["ratio_vs_baseline"] = {"lower": lo, "upper": hi,
                                      "text": ratio_text(r["metg"], summary["results"][base]["metg"])}
    return summary


def load_summary(path: str, cores=None, threshold=None, peak_flops=None, baseline=None) -> dict:
    if os.path.isdir(path):
        j, c = os.path.join(path, JSON_NAME), os.path.join(path, CSV_NAME)
        if os.path.exists(j):
            path = j
        elif os.path.exists(c):
            path = c
        else:
            raise UsageError("%s holds neither %s nor %s" % (path, JSON_NAME, CSV_NAME))
    if not os.path.exists(path):
        raise UsageError("%s does not exist" % path)
    if path.endswith(".csv"):
        samples, impls, csv_cores = read_csv(path)
        cores = cores or csv_cores
        if not cores:
            raise UsageError("%s has no cores column: give --cores" % path)
        if baseline is not None and baseline not in impls:
            raise UsageError("--baseline %r is not in %s (%s)" % (baseline, path, ", ".join(impls)))
        s = summarize(samples, impls, cores, threshold or 0.5, peak_flops=peak_flops,
                      baseline=baseline or (impls[0] if impls else None))
        s.update({"label": None, "graph": "", "source": path})
        return s
    try:
        s = read_json(path)
    except (ValueError, OSError) as e:
        raise UsageError("cannot read %s: %s" % (path, e))
    if baseline is not None and baseline not in s["results"]:
        raise UsageError("--baseline %r is not in %s (%s)" % (baseline, path, ", ".join(s["impls"])))
    return _refresh(s, threshold, baseline)


def _panel_spec(text: str):
    if os.path.exists(text) or "=" not in text:
        return None, text
    label, path = text.rsplit("=", 1)
    return label or None, path


def cmd_plot(args) -> int:
    specs = [_panel_spec(t) for t in args.panel] + [(None, p) for p in args.paths]
    if not specs:
        raise UsageError("nothing to plot: give PATH arguments or --panel [LABEL=]PATH")
    panels = []
    for label, path in specs:
        s = load_summary(path, cores=args.cores, threshold=args.threshold,
                         peak_flops=args.peak_flops, baseline=args.baseline)
        panels.append((label or s.get("label"), s))
    d = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(d, exist_ok=True)
    from .plotting import plot
    plot(panels, args.out, title=args.title)
    if not args.quiet:
        for label, s in panels:
            if label:
                s = dict(s, label=label)
            print(report_text(s))
            print()
    print("wrote %s (%d panel%s)" % (args.out, len(panels), "" if len(panels) == 1 else "s"))
    return 0


# ---------------------------------------------------------------- main

def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after the first "--" is Task Bench flags (they start with
    # a single dash, which argparse would take for its own options).
    if "--" in argv:
        k = argv.index("--")
        own, common = argv[:k], argv[k + 1:]
    else:
        own, common = argv, []
    parser = build_parser()
    args = parser.parse_args(own)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "sweep":
            return cmd_sweep(args, common, argv)
        if args.command == "gaps":
            return cmd_gaps(args, common, argv)
        if args.command == "pairs":
            return cmd_pairs(args, common, argv)
        if common:
            raise UsageError("'--' and Task Bench flags are only for 'metg sweep', 'gaps' and 'pairs'")
        if args.command == "logs":
            return cmd_logs(args, argv)
        return cmd_plot(args)
    except UsageError as e:
        print("metg %s: error: %s" % (args.command, e), file=sys.stderr)
        return EXIT_USAGE
    except PlotUnavailable as e:
        print("metg %s: error: %s" % (args.command, e), file=sys.stderr)
        return EXIT_USAGE
