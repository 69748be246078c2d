"""metg pairs: paired efficiency comparisons at one task size.

Each repetition runs every implementation once, back to back (the order
rotates from one repetition to the next), so the runs of one repetition
share the state of a noisy machine. The same graph does the same work in
every implementation, so the ratio of efficiencies is the inverse ratio
of elapsed times: baseline elapsed / implementation elapsed (above 1: the
implementation is more efficient). Over the repetitions the table reports
the median ratio, its quartiles, how many pairs favour the implementation,
and an exact two-sided sign test of "neither is more efficient" (p small:
one of them is).
"""

from __future__ import annotations

import math
import statistics


def rotation(names: list[str], rep: int) -> list[str]:
    """The run order of repetition `rep` (1-based): the list rotated by rep - 1."""
    k = (rep - 1) % len(names) if names else 0
    return names[k:] + names[:k]


def sign_test(wins: int, n: int) -> float:
    """Two-sided exact sign test: the probability, if each pair were a fair
    coin, of a split at least as uneven as wins : n - wins."""
    if n == 0:
        return 1.0
    k = min(wins, n - wins)
    tail = sum(math.comb(n, j) for j in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def quartiles(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def table(elapsed: dict[str, list[float | None]], baseline: str) -> str:
    """elapsed[name][i]: seconds of repetition i (None: that run failed).
    Pairs are the repetitions where both the baseline and the
    implementation have a time."""
    head = "%-12s %5s %-28s %12s %8s" % ("impl", "pairs", "eff / %s: median [q1-q3]" % baseline,
                                         ">= %s" % baseline, "sign p")
    lines = [head]
    base = elapsed.get(baseline, [])
    for name, times in elapsed.items():
        if name == baseline:
            ok = [t for t in times if t is not None]
            med = "%.4g s median" % statistics.median(ok) if ok else "no run succeeded"
            lines.append("%-12s %5d %s (the baseline)" % (name, len(ok), med))
            continue
        ratios = [b / t for b, t in zip(base, times) if b is not None and t is not None and t > 0]
        if not ratios:
            lines.append("%-12s %5d no pair (did every run fail?)" % (name, 0))
            continue
        q1, q3 = quartiles(ratios)
        wins = sum(r >= 1.0 for r in ratios)
        cell = "%.4f [%.4f-%.4f]" % (statistics.median(ratios), q1, q3)
        lines.append("%-12s %5d %-28s %7d/%-4d %8.2g" % (name, len(ratios), cell, wins, len(ratios),
                                                     sign_test(wins, len(ratios))))
    return "\n".join(lines)
