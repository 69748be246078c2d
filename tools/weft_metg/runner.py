"""The sweep: runs every (implementation, iter) pair `reps` times,
interleaved, with a timeout per run and a progress bar on stderr."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from .analysis import Sample
from .parse import ParseError, parse_report, config_signature

PEAK = "(peak)"


# ---------------------------------------------------------------- arguments

def parse_pow2(text: str) -> int:
    """"2^10", "2**10" or "1024" -> 1024; must be a power of two >= 1."""
    s = str(text).strip()
    m = re.fullmatch(r"2\s*(?:\^|\*\*)\s*(\d+)", s)
    if m:
        v = 1 << int(m.group(1))
    else:
        try:
            v = int(s, 0)
        except ValueError:
            raise ValueError("%r is not a power of two (write 1024 or 2^10)" % text) from None
    if v < 1 or v & (v - 1):
        raise ValueError("%r is not a power of two >= 1 (write 1024 or 2^10)" % text)
    return v


def iter_values(iter_max: int, iter_min: int) -> list[int]:
    """Powers of two from iter_max down to iter_min, inclusive."""
    if iter_min > iter_max:
        raise ValueError("--iter-min (%d) is larger than --iter-max (%d)" % (iter_min, iter_max))
    out, v = [], iter_max
    while v >= iter_min:
        out.append(v)
        v //= 2
    return out


def check_common_args(common: list[str]) -> None:
    for a in common:
        if a == "-iter" or a.startswith("-iter="):
            raise ValueError("the Task Bench flags after -- must not contain -iter: "
                             "the sweep sets it (use --iter-max/--iter-min)")


def build_argv(prefix: str, common: list[str], iters: int) -> list[str]:
    """prefix (a shell-style command) + the common Task Bench flags with
    `-iter N` appended to every graph: -and starts a new graph whose flags
    are reset to their defaults, so each graph needs its own -iter."""
    argv = shlex.split(prefix)
    graph: list[str] = []
    for a in common:
        if a == "-and":
            argv += graph + ["-iter", str(iters), "-and"]
            graph = []
        else:
            graph.append(a)
    argv += graph + ["-iter", str(iters)]
    return argv


# ---------------------------------------------------------------- schedule

@dataclass(frozen=True)
class Job:
    rep: int          # from 1
    iter: int | None  # None for a peak job
    impl: str
    kind: str = "run"  # "run" or "peak"


class Schedule:
    """The run order. Repetition-major: all of rep 1 (iter from largest to
    smallest; for each iter every implementation in the order given), then
    all of rep 2, ... A peak command, if any, runs first in every rep.

    Early stop (stop_below > 0): once an implementation's rep-1 efficiency
    has been below stop_below for stop_after consecutive iters, its smaller
    iters are dropped from every rep; later reps repeat exactly the pairs
    rep 1 ran."""

    def __init__(self, impls, iters, reps, peak=False, stop_below=0.0, stop_after=2):
        self.iters = sorted(iters, reverse=True)
        self.queue: list[Job] = []
        for rep in range(1, reps + 1):
            if peak:
                self.queue.append(Job(rep, None, PEAK, "peak"))
            for it in self.iters:
                for name in impls:
                    self.queue.append(Job(rep, it, name))
        self.pos = 0
        self.stop_below = stop_below
        self.stop_after = max(1, stop_after)
        self.below = {name: 0 for name in impls}
        self.stopped: dict[str, int] = {}   # impl -> last iter run

    def __iter__(self):
        return self

    def __next__(self) -> Job:
        if self.pos >= len(self.queue):
            raise StopIteration
        self.pos += 1
        return self.queue[self.pos - 1]

    def done(self) -> int:
        return self.pos

    def total(self) -> int:
        return len(self.queue)

    def remaining(self) -> list[Job]:
        return self.queue[self.pos:]

    def record(self, job: Job, efficiency: float | None) -> bool:
        """Feeds a rep-1 efficiency (None for a failed run) to the early
        stop rule. Returns True if the implementation was stopped."""
        if job.kind != "run" or job.rep != 1 or self.stop_below <= 0 or efficiency is None:
            return False
        if job.impl in self.stopped:
            return False
        if efficiency < self.stop_below:
            self.below[job.impl] += 1
        else:
            self.below[job.impl] = 0
        if self.below[job.impl] >= self.stop_after:
            self.stopped[job.impl] = job.iter
            keep = self.queue[:self.pos]
            keep += [j for j in self.queue[self.pos:]
                     if not (j.kind == "run" and j.impl == job.impl and j.iter < job.iter)]
            self.queue = keep
            return True
        return False


# ---------------------------------------------------------------- progress

def fmt_duration(s: float | None) -> str:
    if s is None:
        return "?"
    s = int(round(s))
    if s >= 3600:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


class Progress:
    """A plain-text progress bar. On a TTY one line redrawn with \\r; else a
    line at every 10% step or every 30 s, whichever comes first."""

    def __init__(self, stream=None, enabled=True, width=24, tty=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.width = width
        self.tty = self.stream.isatty() if tty is None else tty
        self.last_len = 0
        self.last_line_t = 0.0
        self.last_decile = -1
        self.t0 = time.monotonic()

    def line(self, done, total, eta, text) -> str:
        frac = done / total if total else 1.0
        fill = int(round(frac * self.width))
        return "[%s%s] %d/%d %3d%% elapsed %s eta %s  %s" % (
            "#" * fill, "." * (self.width - fill), done, total, int(frac * 100),
            fmt_duration(time.monotonic() - self.t0), fmt_duration(eta), text)

    def update(self, done, total, eta, text):
        if not self.enabled:
            return
        s = self.line(done, total, eta, text)
        if self.tty:
            cols = shutil.get_terminal_size((100, 24)).columns
            s = s[:max(20, cols - 1)]
            pad = max(0, self.last_len - len(s))
            self.stream.write("\r" + s + " " * pad)
            self.last_len = len(s)
            self.stream.flush()
        else:
            decile = int(10 * done / total) if total else 10
            now = time.monotonic()
            if decile != self.last_decile or now - self.last_line_t >= 30 or done == total:
                self.last_decile = decile
                self.last_line_t = now
                self.stream.write(s + "\n")
                self.stream.flush()

    def message(self, text):
        """Prints a line without garbling the bar."""
        if self.tty and self.enabled and self.last_len:
            self.stream.write("\r" + " " * self.last_len + "\r")
            self.last_len = 0
        self.stream.write(text.rstrip("\n") + "\n")
        self.stream.flush()

    def finish(self):
        if self.tty and self.enabled and self.last_len:
            self.stream.write("\n")
            self.stream.flush()
            self.last_len = 0


class Estimator:
    """Remaining time: a pair's rep-1 duration once known; before that half
    the duration of the same implementation at twice the iterations, else
    the mean of what ran so far."""

    def __init__(self):
        self.known: dict = {}

    def add(self, job: Job, wall: float):
        self.known.setdefault((job.impl, job.iter), wall)

    def guess(self, job: Job):
        k = (job.impl, job.iter)
        if k in self.known:
            return self.known[k]
        if job.iter is not None and (job.impl, job.iter * 2) in self.known:
            return self.known[(job.impl, job.iter * 2)] / 2
        if self.known:
            return sum(self.known.values()) / len(self.known)
        return None

    def eta(self, jobs) -> float | None:
        total = 0.0
        for j in jobs:
            g = self.guess(j)
            if g is None:
                return None
            total += g
        return total


# ---------------------------------------------------------------- running

@dataclass
class Outcome:
    returncode: int | None
    stdout: str
    stderr: str
    wall_s: float
    timed_out: bool = False
    error: str = ""


def _kill_group(p: subprocess.Popen, sig) -> None:
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_command(argv: list[str], timeout: float | None) -> Outcome:
    """Runs argv in its own process group (so mpiexec's children die with
    it on a timeout), capturing stdout and stderr."""
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, errors="replace",
                             start_new_session=True)
    except OSError as e:
        return Outcome(None, "", "", time.monotonic() - t0, error="cannot start: %s" % e)
    try:
        out, err = p.communicate(timeout=timeout)
        return Outcome(p.returncode, out, err, time.monotonic() - t0)
    except subprocess.TimeoutExpired:
        _kill_group(p, signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=3)
        except subprocess.TimeoutExpired:
            _kill_group(p, signal.SIGKILL)
            try:
                out, err = p.communicate(timeout=5)
            except subprocess.TimeoutExpired:   # a grandchild holds the pipes
                p.kill()
                out, err = "", ""
        return Outcome(p.returncode, out or "", err or "", time.monotonic() - t0, timed_out=True,
                       error="timed out after %g s" % timeout)
    except BaseException:
        _kill_group(p, signal.SIGKILL)
        p.wait()
        raise


def tail(text: str, n: int = 15) -> str:
    lines = (text or "").rstrip("\n").splitlines()
    return "\n".join(lines[-n:])


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


class Sweep:
    """Runs a schedule. Collects samples, failures, the graph configuration
    (from the reports) and warnings; writes CSV rows and per-implementation
    logs of the raw output as it goes (when csv/logdir are given)."""

    def __init__(self, impls: dict, common: list[str], iters: list[int], reps: int, cores: int,
                 timeout: float, peak_cmd: str | None = None, peak_flops: float | None = None,
                 stop_below: float = 0.0, stop_after: int = 2, csv=None, logdir: str | None = None,
                 progress: Progress | None = None):
        self.impls = impls
        self.common = common
        self.cores = cores
        self.timeout = timeout
        self.peak_cmd = peak_cmd
        self.peak_flops = peak_flops
        self.schedule = Schedule(list(impls), iters, reps, peak=bool(peak_cmd),
                                 stop_below=stop_below, stop_after=stop_after)
        self.reps = reps
        self.csv = csv
        self.logdir = logdir
        self.progress = progress or Progress(enabled=False)
        self.samples: list[Sample] = []
        self.failures: list[dict] = []
        self.warnings: list[str] = []
        self.graphs: list[dict] | None = None
        self.signature = None
        self.estimator = Estimator()
        self.best_run = 0.0
        self.best_peak = 0.0
        self._logs = {}

    def argv(self, job: Job) -> list[str]:
        if job.kind == "peak":
            return shlex.split(self.peak_cmd)
        return build_argv(self.impls[job.impl], self.common, job.iter)

    def _log(self, job, argv, out: Outcome):
        if not self.logdir:
            return
        name = "peak" if job.kind == "peak" else safe_name(job.impl)
        f = self._logs.get(name)
        if f is None:
            f = self._logs[name] = open(os.path.join(self.logdir, name + ".log"), "w")
        f.write("# metg: impl=%s iter=%s rep=%d rc=%s command: %s\n"
                % (job.impl, job.iter, job.rep, out.returncode, shlex.join(argv)))
        f.write(out.stdout)
        if out.stdout and not out.stdout.endswith("\n"):
            f.write("\n")
        for l in out.stderr.splitlines():
            f.write("# stderr: %s\n" % l)
        f.flush()

    def close(self):
        for f in self._logs.values():
            f.close()
        self._logs = {}

    def _running_peak(self) -> float:
        if self.peak_flops:
            return self.peak_flops
        if self.best_peak > 0:
            return self.best_peak
        return self.best_run

    def run_job(self, job: Job) -> Sample:
        argv = self.argv(job)
        cmd = shlex.join(argv)
        out = run_command(argv, self.timeout)
        self._log(job, argv, out)
        self.estimator.add(job, out.wall_s)
        sample = Sample(impl=job.impl, iter=job.iter, rep=job.rep, ok=False, kind=job.kind)
        run = None
        reason = out.error
        if not reason and out.returncode != 0:
            reason = "exit status %s" % out.returncode
            if out.returncode is not None and out.returncode < 0:
                try:
                    reason += " (%s)" % signal.Signals(-out.returncode).name
                except ValueError:
                    pass
        if not reason:
            try:
                run = parse_report(out.stdout, job.impl)
            except ParseError as e:
                reason = str(e)
        if run is not None and job.kind == "run" and run.graphs:
            bad = [g.get("iter") for g in run.graphs if g.get("iter") != job.iter]
            if bad:
                reason = "the report says Iterations %s but -iter %d was passed" % (bad[0], job.iter)
        if run is not None and not reason and not run.total_tasks:
            reason = "the report says Total Tasks %s" % run.total_tasks
        if run is not None and not reason:
            sample.ok = True
            sample.elapsed_s = run.elapsed_s
            sample.total_tasks = run.total_tasks
            sample.total_flops = run.total_flops
            if job.kind == "run" and run.graphs:
                sig = config_signature(run.graphs)
                if self.graphs is None:
                    self.graphs, self.signature = run.graphs, sig
                elif sig != self.signature and len(self.warnings) < 20:
                    self.warnings.append("%s iter=%s rep %d reports a different graph configuration "
                                         "than the first run" % (job.impl, job.iter, job.rep))
            if job.kind == "peak":
                self.best_peak = max(self.best_peak, sample.rate())
            else:
                self.best_run = max(self.best_run, sample.rate())
        else:
            fail = {"impl": job.impl, "iter": job.iter, "rep": job.rep, "kind": job.kind,
                    "command": cmd, "returncode": out.returncode, "reason": reason,
                    "stderr_tail": tail(out.stderr),
                    "stdout_tail": tail(out.stdout, 8)}
            self.failures.append(fail)
            self.progress.message(format_failure(fail))
        if self.csv is not None:
            self.csv.row(order=len(self.samples) + 1, kind=job.kind, impl=job.impl, rep=job.rep,
                         iter=job.iter, status="ok" if sample.ok else "failed",
                         returncode=out.returncode,
                         elapsed_s=run.elapsed_s if run else None,
                         total_tasks=run.total_tasks if run else None,
                         total_deps=run.total_deps if run else None,
                         total_flops=run.total_flops if run else None,
                         total_bytes=run.total_bytes if run else None,
                         flops_per_s=run.flops_per_s if run else None,
                         cores=self.cores, wall_s="%.3f" % out.wall_s, command=cmd,
                         error=reason or None)
        self.samples.append(sample)
        return sample

    def run(self):
        sched = self.schedule
        for job in sched:
            what = ("rep %d/%d %s" % (job.rep, self.reps, "peak command") if job.kind == "peak"
                    else "rep %d/%d %s iter=%d" % (job.rep, self.reps, job.impl, job.iter))
            self.progress.update(sched.done() - 1, sched.total(),
                                 self.estimator.eta([job] + sched.remaining()), what)
            s = self.run_job(job)
            if job.kind == "run" and job.rep == 1:
                peak = self._running_peak()
                eff = s.rate() / peak if (s.ok and peak > 0) else None
                if sched.record(job, eff):
                    self.progress.message("%s: efficiency below %g%% for %d iters in a row; "
                                          "skipping iter < %d (--stop-below)"
                                          % (job.impl, 100 * sched.stop_below, sched.stop_after,
                                             job.iter))
        self.progress.update(sched.done(), sched.total(), 0, "done")
        self.progress.finish()


def format_failure(f: dict) -> str:
    what = "peak command" if f.get("kind") == "peak" else "%s iter=%s" % (f["impl"], f["iter"])
    s = "FAILED %s rep %s: %s\n  command: %s" % (what, f["rep"], f["reason"], f["command"])
    if f.get("stderr_tail"):
        s += "\n  stderr (last lines):\n" + "\n".join("    " + l for l in f["stderr_tail"].splitlines())
    elif f.get("stdout_tail"):
        s += "\n  stdout (last lines):\n" + "\n".join("    " + l for l in f["stdout_tail"].splitlines())
    return s
