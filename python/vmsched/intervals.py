"""95 % confidence intervals of a mean over replications (runs that differ only in seed).

The interval is Student's t: mean ± t(0.975, n − 1) · s / √n with s the sample
standard deviation; one replication has no interval (its bounds are NaN). Two
runs' values count as different only when their intervals do not overlap
(`separated`), the rule the sweeps, `compare` and `alert` use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: t(0.975, df) for df = 1..30 (Student's t quantiles, to 3 decimals).
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z975 = 1.959964


def t975(df: int) -> float:
    """The 97.5 % quantile of Student's t with `df` degrees of freedom (df >= 1);
    beyond the table, the Cornish-Fisher expansion (error below 1e-4 for df > 30)."""
    if df < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def mean_ci95(values: Sequence[float]) -> tuple[float, float, float, int]:
    """(mean, low, high, n) over the finite values; low = high = NaN when n < 2, and
    everything NaN when n = 0."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(xs)
    nan = float("nan")
    if n == 0:
        return nan, nan, nan, 0
    mean = math.fsum(xs) / n
    if n < 2:
        return mean, nan, nan, 1
    var = math.fsum((x - mean) ** 2 for x in xs) / (n - 1)
    half = t975(n - 1) * math.sqrt(var / n)
    return mean, mean - half, mean + half, n


def separated(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Do two intervals (low, high) not overlap? An interval with a NaN bound (one
    replication: no interval) never separates; the caller then decides on the values."""
    lo_a, hi_a = a
    lo_b, hi_b = b
    if any(math.isnan(x) for x in (lo_a, hi_a, lo_b, hi_b)):
        return False
    return hi_a < lo_b or hi_b < lo_a
