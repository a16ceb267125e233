"""Replications and 95 % confidence intervals for the reproductions.

Every configuration of an experiment runs with several seeds (`Timing.seeds`).
A metric's value is the mean over the seeds, and its 95 % confidence interval
is Student's t interval, mean ± t(0.975, n - 1) · s / √n, with s the sample
standard deviation of the seeds' values. With one seed the interval is the
value itself.

`Estimate` is that mean as a float that also carries the per-seed values and
the interval. Arithmetic between two estimates of the same replications is done
seed by seed (a ratio of two throughputs gets the interval of the per-seed
ratios), so an effect computed in a claim carries its own interval; the
ordering rules of `vmsched.reproduce.checks` count a difference between two
estimates only when their intervals separate.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence

from vmsched.intervals import t975


def finite(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def mean(values: Sequence[float]) -> float:
    """The mean of the finite values (NaN if there are none)."""
    xs = finite(values)
    return sum(xs) / len(xs) if xs else float("nan")


def interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95 % Student-t interval of the mean of the finite values: (low, high); the value
    itself with one value; (NaN, NaN) with none."""
    xs = finite(values)
    n = len(xs)
    if n == 0:
        return float("nan"), float("nan")
    m = sum(xs) / n
    if n == 1:
        return m, m
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    half = t975(n - 1) * math.sqrt(var) / math.sqrt(n)
    return m - half, m + half


class Estimate(float):
    """A mean over replications that remembers the per-seed values and their interval."""

    values: tuple[float, ...]
    lo: float
    hi: float

    def __new__(cls, value: float, values: Sequence[float] = ()) -> Estimate:
        self = super().__new__(cls, value)
        self.values = tuple(float(v) for v in values) if values else (float(value),)
        self.lo, self.hi = interval(self.values)
        return self

    @classmethod
    def of(cls, values: Sequence[float]) -> Estimate:
        """The mean of `values` with their interval."""
        return cls(mean(values), values)

    @property
    def n(self) -> int:
        return len(finite(self.values))

    def separated_below(self, other: float) -> bool:
        """This interval lies wholly below `other`'s (a plain number is its own interval)."""
        hi = self.hi if math.isfinite(self.hi) else float(self)
        other_lo = other.lo if isinstance(other, Estimate) else float(other)
        if not math.isfinite(other_lo):
            other_lo = float(other)
        return hi < other_lo

    def excludes(self, x: float) -> bool:
        """The interval does not contain `x`."""
        return not (self.lo <= x <= self.hi)

    def _binary(self, other: object, op: Callable[[float, float], float], swap: bool = False):
        if isinstance(other, Estimate):
            if len(other.values) != len(self.values):
                return NotImplemented if swap else op(float(self), float(other))
            pairs = zip(self.values, other.values, strict=True)
        elif isinstance(other, int | float):
            pairs = ((v, float(other)) for v in self.values)
        else:
            return NotImplemented
        a, b = float(self), float(other)
        if swap:
            pairs = ((y, x) for x, y in pairs)
            a, b = b, a
        per_seed = [_safe(op, x, y) for x, y in pairs]
        return Estimate(_safe(op, a, b), per_seed)

    def __add__(self, other):
        return self._binary(other, operator.add)

    def __radd__(self, other):
        return self._binary(other, operator.add, swap=True)

    def __sub__(self, other):
        return self._binary(other, operator.sub)

    def __rsub__(self, other):
        return self._binary(other, operator.sub, swap=True)

    def __mul__(self, other):
        return self._binary(other, operator.mul)

    def __rmul__(self, other):
        return self._binary(other, operator.mul, swap=True)

    def __truediv__(self, other):
        return self._binary(other, operator.truediv)

    def __rtruediv__(self, other):
        return self._binary(other, operator.truediv, swap=True)

    def __neg__(self):
        return Estimate(-float(self), [-v for v in self.values])

    def __abs__(self):
        return Estimate(abs(float(self)), [abs(v) for v in self.values])

    def __reduce__(self):
        return (Estimate, (float(self), self.values))


def _safe(op: Callable[[float, float], float], a: float, b: float) -> float:
    try:
        return op(a, b)
    except ZeroDivisionError:
        return float("nan")


def half_width(x: float) -> float:
    """Half the interval's width (0 for a plain number or a single replication)."""
    if isinstance(x, Estimate) and math.isfinite(x.lo) and math.isfinite(x.hi):
        return (x.hi - x.lo) / 2
    return 0.0


def with_interval(x: float, fmt: Callable[[float], str]) -> str:
    """`934 ± 12` (or just `934` without an interval)."""
    h = half_width(x)
    return f"{fmt(x)} ± {fmt(h)}" if h > 0 else fmt(x)
