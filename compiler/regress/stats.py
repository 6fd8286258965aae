"""The Mann-Whitney U test, for the one figure of a run that is not deterministic: compile time.

As LLVM's LNT does, several samples of each side are compared with a rank test: exact distribution of U
(no ties, both sides small), otherwise the normal approximation with the tie correction and a continuity
correction (Mann & Whitney 1947; the formulas of scipy.stats.mannwhitneyu).
"""

from __future__ import annotations

import math
from functools import cache


def _ranks(values: list[float]) -> list[float]:
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@cache
def _counts(n1: int, n2: int) -> tuple[int, ...]:
    """How many of the C(n1+n2, n1) orderings give each U = 0..n1*n2 (the recurrence of Mann & Whitney)."""
    if n1 == 0 or n2 == 0:
        return (1,)
    a, b = _counts(n1 - 1, n2), _counts(n1, n2 - 1)
    out = [0] * (n1 * n2 + 1)
    for u, c in enumerate(a):  # the largest value is from sample 1: it beats all n2 values of sample 2
        out[u + n2] += c
    for u, c in enumerate(b):
        out[u] += c
    return tuple(out)


def mann_whitney_greater(x: list[float], y: list[float]) -> float:
    """One-sided p-value that ``x`` tends to be greater than ``y`` (U of ``x``); 1.0 when a side is empty."""
    n1, n2 = len(x), len(y)
    if not n1 or not n2:
        return 1.0
    ranks = _ranks(list(x) + list(y))
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    ties = len(set(x) | set(y)) < n1 + n2
    if not ties and n1 * n2 <= 400:
        counts = _counts(n1, n2)
        return sum(counts[math.ceil(u):]) / sum(counts)
    mu = n1 * n2 / 2
    n = n1 + n2
    tie_sum = 0.0
    for v in set(x) | set(y):
        t = (list(x) + list(y)).count(v)
        tie_sum += t ** 3 - t
    var = n1 * n2 / 12 * ((n + 1) - tie_sum / (n * (n - 1)))
    if var <= 0:
        return 1.0
    z = (u - mu - 0.5) / math.sqrt(var)
    return 0.5 * math.erfc(z / math.sqrt(2))


def median(values: list[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2
