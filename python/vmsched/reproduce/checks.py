"""Helpers for writing claims: orderings, effect sizes and evidence text.

A simulation is judged on direction, ordering and approximate ratios, not on
absolute values (docs/reproduce.md). Two rules recur and are
defined once here, so every claim applies them the same way:

- **ordering**: values must be in the stated order, each step larger than a
  tie: two values within `TIE_REL` (0.5 %) of each other, or two percentages
  of change (a degradation, a drop) within `TIE_POINTS` (0.5 points), are a tie,
  not an ordering;
- **approximate ratio** (`EFFECT_FACTOR`): where the paper gives the size of an
  effect as a ratio r (C = 50 ms gives 1.83x the throughput of C = 1 ms; a 75 %
  drop is 0.25x), the simulated ratio must go the same way and its logarithm
  must be within a factor of two of the paper's: between r^(1/2) and r^2
  (1.83 -> 1.35 to 3.35; 0.25 -> 0.0625 to 0.5).

Replications (`vmsched.reproduce.stats`): the values a claim reads from the
table are means over seeds that carry their 95 % intervals (`Estimate`). A
difference between two of them counts only when the intervals separate, on
top of the tie rule; an effect ratio counts only when its interval excludes 1
(no effect). With one replication the rules are exactly the tie rules.

What a claim compared is recorded while it is judged (`recording`), so that
the scorecard (`claims.csv`) can give the simulated and published effect of
every claim with its interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from vmsched.reproduce.stats import Estimate

#: How far a simulated effect (the logarithm of a ratio) may be from the paper's and still
#: count as "approximately" the same: within this factor either way.
EFFECT_FACTOR = 2.0
#: Two values closer than this, relative to the larger, are a tie.
TIE_REL = 0.005
#: Two percentages of change closer than this many points are a tie.
TIE_POINTS = 0.5


def num(x: float) -> str:
    """A measured number for evidence text: 934, 61.3, 0.87."""
    if x is None or not math.isfinite(x):
        return "n/a"
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def pct(x: float) -> str:
    """A signed percentage change for evidence text: +83 %, -31.9 %."""
    return "n/a" if not math.isfinite(x) else f"{x:+.1f} %"


def chain(labels: Sequence[str], values: Sequence[float]) -> str:
    """`C = 1 ms 510, C = 5 ms 817, C = 50 ms 934`: labelled values in order (the order
    required is said by the claim's evidence, not implied by the separator)."""
    return ", ".join(f"{lab} {num(v)}" for lab, v in zip(labels, values, strict=True))


#: What the claim being judged compared: ("effect", measured, published) and
#: ("order", values) entries, or None outside `recording`.
_record: list[tuple] | None = None


@contextmanager
def recording() -> Iterator[list[tuple]]:
    """Record what the checks compare while a claim is judged."""
    global _record
    saved, _record = _record, []
    try:
        yield _record
    finally:
        _record = saved


def _note(entry: tuple) -> None:
    if _record is not None:
        _record.append(entry)


def separated(a: float, b: float) -> bool:
    """b's 95 % interval lies above a's (always true for plain numbers or one replication,
    where the tie rule alone decides)."""
    if isinstance(a, Estimate):
        return a.separated_below(b)
    if isinstance(b, Estimate):
        return (-b).separated_below(-a)
    return True


def _step_up(a: float, b: float, points: bool) -> bool:
    if points:
        step = b - a > TIE_POINTS
    else:
        step = b - a > TIE_REL * max(abs(a), abs(b))
    return step and separated(a, b)


def increasing(values: Sequence[float], *, points: bool = False) -> bool:
    """Every step up by more than a tie (`points`: the values are percentages of change)."""
    _note(("order", tuple(values)))
    return all(_step_up(a, b, points) for a, b in zip(values, values[1:], strict=False))


def decreasing(values: Sequence[float], *, points: bool = False) -> bool:
    """Every step down by more than a tie."""
    _note(("order", tuple(values)))
    return all(_step_up(b, a, points) for a, b in zip(values, values[1:], strict=False))


def above(a: float, b: float, *, points: bool = False) -> bool:
    """a is greater than b by more than a tie."""
    _note(("order", (b, a)))
    return _step_up(b, a, points)


def ratio(a: float, b: float) -> float:
    """a / b, NaN when b is 0."""
    return a / b if b else float("nan")


def effect_close(measured: float, published: float, factor: float = EFFECT_FACTOR) -> bool:
    """The measured ratio goes the published ratio's way, with a logarithm within `factor`
    of the published one's; with replications its interval must exclude 1 (no effect)."""
    _note(("effect", measured, published))
    ok = math.isfinite(measured) and math.isfinite(published) and measured > 0 and published > 0
    if not ok or published == 1:
        return False
    m, p = math.log(measured), math.log(published)
    if m * p <= 0:
        return False
    if isinstance(measured, Estimate) and measured.n > 1 and not measured.excludes(1.0):
        return False
    return 1 / factor <= m / p <= factor


def effect_text(measured: float, published: float) -> str:
    """`ratio 1.52 (paper 1.83; accepted 1.35-3.35)`."""
    lo, hi = sorted((published ** (1 / EFFECT_FACTOR), published**EFFECT_FACTOR))
    ci = ""
    if isinstance(measured, Estimate) and measured.n > 1 and math.isfinite(measured.lo):
        ci = f" [95 % {measured.lo:.2f}-{measured.hi:.2f}]"
    return f"ratio {measured:.2f}{ci} (paper {published:.2f}; accepted {lo:.3g}-{hi:.3g})"


def spread(values: Sequence[float]) -> float:
    """max / min of positive values (NaN if any is not positive)."""
    if not values or min(values) <= 0:
        return float("nan")
    return max(values) / min(values)


def span(lo: float, hi: float, fmt: str) -> str:
    """`lo-hi` in `fmt`, or one number where the two print the same."""
    a, b = format(lo, fmt), format(hi, fmt)
    return a if a == b else f"{a}-{b}"
