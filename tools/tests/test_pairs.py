"""metg pairs: paired efficiency ratios against a baseline at one -iter."""

import shlex

from weft_metg.pairs import rotation, sign_test, table
from metg_cli import COMMON, FAKE, iter_run_at_sweep, metg


def rows(stdout):
    return {ln.split()[0]: ln for ln in stdout.splitlines() if ln.split() and ln.split()[0] in
            ("mpi", "fast", "slow", "broken")}


def test_rotation_starts_each_repetition_with_the_next_implementation():
    names = ["a", "b", "c"]
    assert [rotation(names, r) for r in (1, 2, 3, 4)] == [
        ["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]


def test_sign_test_is_the_exact_two_sided_binomial_tail():
    assert sign_test(5, 5) == 2 / 32
    assert sign_test(0, 5) == 2 / 32
    assert sign_test(3, 6) == 1.0
    assert abs(sign_test(8, 31) - 0.0107) < 1e-3
    assert sign_test(0, 0) == 1.0


def test_table_pairs_only_repetitions_where_both_ran():
    t = table({"mpi": [1.0, 2.0, None, 4.0], "x": [0.5, None, 1.0, 4.0]}, "mpi")
    line = [ln for ln in t.splitlines() if ln.startswith("x ")][0]
    # pairs: rep 1 (ratio 2.0) and rep 4 (1.0); rep 2 and 3 lack a time
    assert line.split()[1] == "2"
    assert "1.5000" in line and "2/2" in line


def test_cli_ratio_is_baseline_elapsed_over_elapsed():
    # The fake's elapsed time grows with its per-task overhead: 8 us is
    # faster than 10 us (ratio above 1), 12 us slower.
    r = metg("pairs", "--impl", "mpi=%s -fake-overhead-us 10" % FAKE,
             "--impl", "fast=%s -fake-overhead-us 8" % FAKE,
             "--impl", "slow=%s -fake-overhead-us 12" % FAKE, "--iter", "2^4", "--reps", "5", *COMMON)
    assert r.returncode == 0, r.stderr
    lines = rows(r.stdout)
    fast, slow = lines["fast"].split(), lines["slow"].split()
    assert float(fast[2]) > 1 and "5/5" in lines["fast"]
    assert float(slow[2]) < 1 and "0/5" in lines["slow"]
    assert "(the baseline)" in lines["mpi"]
    assert "-iter 16" in r.stdout


def test_cli_runs_in_rotating_order(tmp_path):
    calls = tmp_path / "calls.txt"
    log = shlex.quote(str(calls))
    r = metg("pairs", "--impl", "mpi=%s -fake-calls %s -fake-tag m" % (FAKE, log),
             "--impl", "fast=%s -fake-calls %s -fake-tag f" % (FAKE, log), "--iter", "4", "--reps", "3",
             *COMMON)
    assert r.returncode == 0, r.stderr
    tags = calls.read_text().split()[0::2]
    assert tags == ["m", "f", "f", "m", "m", "f"]


def test_cli_reports_failed_runs_and_exits_1():
    r = metg("pairs", "--impl", "mpi=%s" % FAKE, "--impl", "broken=%s -fake-fail-iter 4" % FAKE,
             "--iter", "4", "--reps", "2", *COMMON)
    assert r.returncode == 1
    assert "broken FAILED" in r.stderr
    assert "no pair" in rows(r.stdout)["broken"]


def test_cli_at_scales_the_nearest_iter_to_the_sweeps_granularity(tmp_path):
    assert iter_run_at_sweep(tmp_path, "pairs", 16.0) == 2560   # 2048 x 20 / 16


def test_cli_wants_exactly_one_of_iter_and_at(tmp_path):
    for extra in ([], ["--iter", "4", "--at", str(tmp_path)]):
        r = metg("pairs", "--impl", "a=%s" % FAKE, *extra, *COMMON)
        assert r.returncode == 2 and "exactly one of --iter and --at" in r.stderr


def test_cli_quiet_drops_the_line_per_run_but_not_failures():
    r = metg("pairs", "--impl", "mpi=%s" % FAKE, "--impl", "broken=%s -fake-fail-iter 4" % FAKE,
             "--iter", "4", "--reps", "2", "--quiet", *COMMON)
    assert r.returncode == 1
    assert "broken FAILED" in r.stderr and "rep 1 mpi" not in r.stderr
