"""The metrics a comparison reports (from summary.json), their units and which way is
better, and the verdict sentences that say whether two runs differ."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vmsched.intervals import separated

#: Values within this fraction of each other count as the same in verdicts.
SAME_REL = 0.01
#: Percentages within this many points count as the same in verdicts.
SAME_PCT_POINTS = 0.5
#: Latencies within this many µs count as the same in verdicts (below 1.024 µs the
#: latency histogram's buckets are 0.128 µs wide: docs/metrics.md).
SAME_LATENCY_US = 1.0

#: Workload metrics whose better direction is known: -1 lower is better, +1 higher.
#: Metrics not listed get a neutral verdict (highest / lowest), unless their name
#: says it (LOWER_IS_BETTER_WORDS, HIGHER_IS_BETTER_WORDS).
METRIC_DIRECTION = {
    "missed_periods": -1,
    "outstanding_items": -1,
    "completion_s": -1,
    "mean_completion_s": -1,
    "runs_completed": +1,
    "threads_done": +1,
    "completed": +1,
    "errors": -1,
    "timeouts": -1,
    "response_ms": -1,
    "transactions_s": +1,
    "txn_ms": -1,
}
LOWER_IS_BETTER_WORDS = ("latency", "missed", "response", "dropped", "lost", "error", "timeout")
HIGHER_IS_BETTER_WORDS = ("throughput", "goodput", "completed")


# ----- results -----------------------------------------------------------------------------


#: A metric named `..._X_s` with X one of these is a rate, in X per second.
RATE_WORDS = ("req", "mbit", "kb", "mb", "bytes", "transactions", "ops", "messages", "packets")


@functools.lru_cache(maxsize=4096)
def _unit_of(metric: str) -> str:
    """A metric's unit, from its name (the part before any "." of a nested statistic):
    `_pct` %, `_us`/`_ms`/`_ns`, `X_s` X/s for a count X (RATE_WORDS), else `_s` s;
    anything else is a count."""
    name = metric.split(".")[0]
    if name.endswith("_s"):
        word = name[:-2].rpartition("_")[2]
        return f"{word}/s" if word in RATE_WORDS else "s"
    for suffix, unit in (("_pct", "%"), ("_us", "us"), ("_ms", "ms"), ("_ns", "ns")):
        if name.endswith(suffix):
            return unit
    return "count"


def workload_metrics(dom: dict[str, Any]) -> dict[str, int | float | None]:
    """A domain's numeric workload metrics, nested statistics flattened
    (`response_ms.p99`); null values are kept (None), text and flags left out."""
    out: dict[str, int | float | None] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else k, v)
        elif value is None or _number(value) is not None:
            out[prefix] = value

    walk("", {k: v for k, v in dom["workload"].items() if k != "kind"})
    return out


def _number(v: Any) -> int | float | None:
    """A metric's value if it is a number (not a bool, not null), else None."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return v


def direction(metric: str) -> int:
    """+1 if more is better, -1 if less is better, 0 if the metric has no better side."""
    metric = metric.split(".")[0]  # response_ms.p99 is better when response_ms is
    if metric in METRIC_DIRECTION:
        return METRIC_DIRECTION[metric]
    if any(w in metric for w in LOWER_IS_BETTER_WORDS):
        return -1
    if any(w in metric for w in HIGHER_IS_BETTER_WORDS):
        return +1
    return 0


#: Per-domain metrics from summary.json: (key, unit, direction as in `direction`).
DOMAIN_METRICS = (
    ("cpu_pct", "%", 0),
    ("runnable_pct", "%", -1),
    ("blocked_pct", "%", 0),
    ("offline_pct", "%", 0),
)
#: Wake-up latency statistics (per VCPU): summary key -> metric name.
LATENCY_METRICS = {"p50": "wake_p50_us", "p95": "wake_p95_us", "p99": "wake_p99_us"}
LATENCY_METRICS |= {"max": "wake_max_us", "mean": "wake_mean_us"}


@dataclass(frozen=True)
class MetricValues:
    """One metric across the runs: (name, one value per run or None) per domain or VCPU."""

    title: str
    #: "%", "µs", another unit, or "" for counts.
    unit: str
    #: -1 lower is better, +1 higher is better, 0 no better side.
    better: int
    items: list[tuple[str, list[Any]]]


def _fmt(v: float) -> str:
    from vmsched.htmlreport import format_number

    return format_number(v)


def _same(a: float, b: float, unit: str) -> bool:
    if unit == "%":
        return abs(a - b) <= SAME_PCT_POINTS
    if unit == "µs" and abs(a - b) <= SAME_LATENCY_US:
        return True
    return abs(a - b) <= SAME_REL * max(abs(a), abs(b))


def _apart(hi: float, lo: float, unit: str) -> str:
    """How far apart two values are, in words."""
    if unit == "%":
        return f"{hi - lo:.1f} percentage points apart"
    if lo > 0:
        ratio = hi / lo
        if ratio >= 100:
            return f"{ratio:,.0f}x"
        if ratio >= 2:
            return f"{ratio:.1f}x"
        return f"{(ratio - 1) * 100:.0f} % apart"
    return _fmt(hi - lo) + ("" if unit in ("", "%") else " ") + unit + " apart"


def differs(
    values: Sequence[float | None],
    unit: str,
    intervals: Sequence[tuple[float, float]] | None = None,
) -> bool:
    """Whether the runs' values (None: no value) differ by more than the verdicts'
    tolerance (SAME_REL, SAME_PCT_POINTS, SAME_LATENCY_US) and, given each run's 95 %
    interval, whether the highest and the lowest run's intervals separate."""
    have = [(v, k) for k, v in enumerate(values) if v is not None]
    if len(have) < 2:
        return False
    (hi, k_hi), (lo, k_lo) = max(have), min(have)
    if _same(hi, lo, unit):
        return False
    return intervals is None or separated(intervals[k_hi], intervals[k_lo])


def verdict_sentence(
    name: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    unit: str,
    better: int,
    intervals: Sequence[tuple[float, float]] | None = None,
) -> str:
    """One sentence on one metric of one domain across the runs.

    `better` is -1 (lower is better), +1 (higher is better) or 0 (no better side).
    With `intervals` (each run's 95 % interval of its mean over replications), two runs
    whose intervals overlap count as the same.
    """
    have = [(lab, v) for lab, v in zip(labels, values, strict=True) if v is not None]
    missing = [lab for lab, v in zip(labels, values, strict=True) if v is None]
    tail = f" (no value under {', '.join(missing)})" if missing else ""

    def show(v: float) -> str:
        if unit == "%":
            return f"{v:.1f}%"
        return _fmt(v) + (" " + unit if unit else "")

    if not have:
        return f"{name}: no value under any run"
    hi_v = max(v for _, v in have)
    lo_v = min(v for _, v in have)
    box = dict(zip(labels, intervals, strict=True)) if intervals is not None else {}

    def tied(a: str, va: float, b: str, vb: float) -> bool:
        """Same value within tolerance, or (with intervals) intervals that overlap."""
        if _same(va, vb, unit):
            return True
        return bool(box) and not separated(box[a], box[b])

    hi_lab = next(lab for lab, v in have if v == hi_v)
    lo_lab = next(lab for lab, v in have if v == lo_v)
    if len(have) == 1 or tied(hi_lab, hi_v, lo_lab, lo_v):
        if len(have) == 1:
            return f"{name}: {show(hi_v)} under {have[0][0]} only{tail}"
        span = show(lo_v) if show(lo_v) == show(hi_v) else f"{show(lo_v)} to {show(hi_v)}"
        return f"{name}: the same under every run ({span}){tail}"
    his = [lab for lab, v in have if tied(lab, v, hi_lab, hi_v)]
    los = [lab for lab, v in have if tied(lab, v, lo_lab, lo_v)]
    apart = _apart(hi_v, lo_v, unit)
    if better == 0:
        return (
            f"{name}: highest under {', '.join(his)} ({show(hi_v)}), lowest under "
            f"{', '.join(los)} ({show(lo_v)}): {apart}{tail}"
        )
    best, best_v, worst, worst_v = (los, lo_v, his, hi_v) if better < 0 else (his, hi_v, los, lo_v)
    return (
        f"{name}: best {', '.join(best)} ({show(best_v)}), worst {', '.join(worst)} "
        f"({show(worst_v)}): {apart}{tail}"
    )
