"""Run order (interleaving), early stop, argument helpers."""

import pytest

from weft_metg.runner import Job, Schedule, build_argv, iter_values, parse_pow2, check_common_args


def order(s):
    return [(j.rep, j.iter, j.impl) for j in s]


def test_interleaved_rep_major_order():
    s = Schedule(["a", "b"], [1, 4, 2], reps=2)
    assert order(s) == [(1, 4, "a"), (1, 4, "b"), (1, 2, "a"), (1, 2, "b"), (1, 1, "a"), (1, 1, "b"),
                        (2, 4, "a"), (2, 4, "b"), (2, 2, "a"), (2, 2, "b"), (2, 1, "a"), (2, 1, "b")]


def test_peak_command_first_in_every_rep():
    s = Schedule(["a"], [2, 1], reps=2, peak=True)
    jobs = list(s)
    assert [(j.kind, j.rep, j.iter) for j in jobs] == [
        ("peak", 1, None), ("run", 1, 2), ("run", 1, 1),
        ("peak", 2, None), ("run", 2, 2), ("run", 2, 1)]


def test_stop_below_drops_smaller_iters_in_every_rep():
    eff = {("a", 8): 0.9, ("a", 4): 0.1, ("a", 2): 0.15, ("a", 1): 0.9,
           ("b", 8): 0.9, ("b", 4): 0.1, ("b", 2): 0.6, ("b", 1): 0.1}
    s = Schedule(["a", "b"], [8, 4, 2, 1], reps=2, stop_below=0.2, stop_after=2)
    assert s.total() == 16
    seen = []
    for job in s:
        seen.append((job.rep, job.iter, job.impl))
        if job.rep == 1:
            s.record(job, eff[(job.impl, job.iter)])
    # a: below at 4 and 2 -> stopped after 2; b: never 2 in a row
    assert s.stopped == {"a": 2}
    assert seen == [(1, 8, "a"), (1, 8, "b"), (1, 4, "a"), (1, 4, "b"), (1, 2, "a"), (1, 2, "b"),
                    (1, 1, "b"),
                    (2, 8, "a"), (2, 8, "b"), (2, 4, "a"), (2, 4, "b"), (2, 2, "a"), (2, 2, "b"),
                    (2, 1, "b")]
    assert s.total() == 14


def test_stop_ignores_failures_and_later_reps():
    s = Schedule(["a"], [4, 2, 1], reps=2, stop_below=0.5, stop_after=1)
    assert not s.record(Job(1, 4, "a"), None)
    assert not s.record(Job(2, 4, "a"), 0.0)
    assert s.stopped == {}
    assert next(s) == Job(1, 4, "a")
    assert s.record(Job(1, 4, "a"), 0.1)
    assert [(j.rep, j.iter) for j in s] == [(2, 4)]


def test_build_argv_appends_iter_to_every_graph():
    argv = build_argv("mpiexec -n 2 ./tb_mpi", ["-type", "stencil_1d", "-steps", "10"], 64)
    assert argv == ["mpiexec", "-n", "2", "./tb_mpi", "-type", "stencil_1d", "-steps", "10",
                    "-iter", "64"]
    argv = build_argv("./tb -impl 'data flow'", ["-kernel", "compute_bound", "-and", "-type",
                                                 "no_comm"], 2)
    assert argv == ["./tb", "-impl", "data flow", "-kernel", "compute_bound", "-iter", "2", "-and",
                    "-type", "no_comm", "-iter", "2"]
    assert build_argv("./tb", [], 1) == ["./tb", "-iter", "1"]


def test_pow2_and_iters():
    assert parse_pow2("2^10") == 1024 and parse_pow2("2**3") == 8 and parse_pow2("64") == 64
    assert parse_pow2("1") == 1 and parse_pow2("2^0") == 1
    for bad in ("3", "0", "-4", "x", "2^"):
        with pytest.raises(ValueError):
            parse_pow2(bad)
    assert iter_values(16, 2) == [16, 8, 4, 2]
    assert iter_values(4, 4) == [4]
    with pytest.raises(ValueError):
        iter_values(2, 4)
    with pytest.raises(ValueError):
        check_common_args(["-steps", "3", "-iter", "4"])
    check_common_args(["-steps", "3", "-iterations-of-nothing"])
