"""`Comparison`: the runs of one comparison and everything derived from them (results.csv,
verdicts, intervals); its figures and report come from `figures` and `report`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from vmsched.compare.figures import Figures
from vmsched.compare.metrics import (
    DOMAIN_METRICS,
    LATENCY_METRICS,
    MetricValues,
    _unit_of,
    direction,
    verdict_sentence,
    workload_metrics,
)
from vmsched.compare.report import Report
from vmsched.compare.spec import RESULT_COLUMNS, Backend, Run


@dataclass
class Comparison(Figures, Report):
    """The runs of one comparison and everything derived from them."""

    runs: list[Run]
    source: str | None
    #: The scenario every run started from (after --quick).
    base: dict[str, Any]
    #: --quick's time factor (1.0 without --quick).
    quick_factor: float
    wall_s: float
    #: The command line that repeats the comparison.
    command: str
    #: Where the figures are drawn (the batch layer's workers, as the runs were).
    where: Backend = field(default_factory=Backend)
    #: Seeds each run was simulated on.
    replications: int = 1

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.runs]

    def _seeds_text(self) -> str:
        seeds = self.runs[0].seeds
        if self.replications == 1 or len(seeds) < 2:
            return f"seed {self.runs[0].summary['seed']}"
        return (
            f"{self.replications} replications each (seeds {seeds[0]} to {seeds[-1]}): every "
            "number is the mean over them, every figure but CPU over time (first seed) "
            "shows it"
        )

    def _domain_names(self) -> list[str]:
        return [d["name"] for d in self.runs[0].summary["domains"]]

    def results(self):
        """One row per run x domain x metric (x VCPU for wake-up metrics): results.csv.
        `value` is the mean over the replications; `replications`, `ci95_low` and
        `ci95_high` say how many and the 95 % interval of that mean (empty with one)."""
        df = self._rows("summary")
        df["replications"] = self.replications
        if self.replications > 1:
            df["ci95_low"] = self._rows("summary_low")["value"]
            df["ci95_high"] = self._rows("summary_high")["value"]
        else:
            df["ci95_low"] = float("nan")
            df["ci95_high"] = float("nan")
        return df

    def _rows(self, which: str):
        import pandas as pd

        rows = []
        for r in self.runs:
            for d in getattr(r, which)["domains"]:
                base = (r.label, r.spec.scheduler, d["name"])
                for metric, unit, _ in DOMAIN_METRICS:
                    rows.append((*base, None, metric, float(d[metric]), unit))
                for metric in ("context_switches", "migrations"):
                    total = sum(int(v[metric]) for v in d["vcpus"])
                    rows.append((*base, None, metric, total, "count"))
                for v in d["vcpus"]:
                    rows.append((*base, v["vcpu"], "wakeups", int(v["wakeups"]), "count"))
                    for key, metric in LATENCY_METRICS.items():
                        value = float(v["wake_latency_us"][key]) if v["wakeups"] else None
                        rows.append((*base, v["vcpu"], metric, value, "us"))
                for name, value in workload_metrics(d).items():
                    rows.append((*base, None, f"workload.{name}", value, _unit_of(name)))
        df = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
        df["vcpu"] = df["vcpu"].astype("Int64")
        df["value"] = pd.to_numeric(df["value"], errors="coerce")
        return df

    def verdict_inputs(self, which: str = "summary") -> list[MetricValues]:
        """What the verdicts are about: per metric, each domain's (or VCPU's) value under
        each run (None where it has none). `which` "summary_low" or "summary_high" gives
        the ends of the values' 95 % intervals instead (with several replications)."""
        from vmsched.plot import latency_entries

        summaries = [getattr(r, which) for r in self.runs]
        names = self._domain_names()

        def per_domain(key: str) -> list[tuple[str, list[Any]]]:
            return [(n, [s["domains"][i][key] for s in summaries]) for i, n in enumerate(names)]

        out = [
            MetricValues("CPU share (CPU %, 100 = one PCPU)", "%", 0, per_domain("cpu_pct")),
            MetricValues("Waiting for a PCPU (runnable %)", "%", -1, per_domain("runnable_pct")),
        ]
        entries = [latency_entries(s) for s in summaries]
        lat_items = []
        for k, e in enumerate(entries[0]):
            values = [es[k].stats["p99"] if es[k].wakeups else None for es in entries]
            if any(v is not None for v in values):
                lat_items.append((e.label, values))
        if lat_items:
            out.append(MetricValues("Wake-up latency p99", "µs", -1, lat_items))
        for metric in self._workload_metrics():
            items = []
            for i, n in enumerate(names):
                values = [workload_metrics(s["domains"][i]).get(metric) for s in summaries]
                if any(v is not None for v in values):
                    items.append((n, values))
            unit = _unit_of(metric)
            out.append(
                MetricValues(
                    f"{metric} (workload metric)",
                    "" if unit == "count" else unit,
                    direction(metric),
                    items,
                )
            )
        return out

    def verdicts(self) -> list[tuple[str, list[str]]]:
        """Per metric, one sentence per domain (or VCPU): which run is best and worst (or
        highest and lowest, for metrics with no better side) and by how much."""
        out = []
        for m, bounds in zip(self.verdict_inputs(), self.intervals(), strict=True):
            sentences = [
                verdict_sentence(n, self.labels, v, m.unit, m.better, iv)
                for (n, v), iv in zip(m.items, bounds, strict=True)
            ]
            out.append((m.title, sentences))
        return out

    def intervals(self) -> list[list[list[tuple[float, float]] | None]]:
        """Per metric of `verdict_inputs`, per item, each run's 95 % interval (low, high);
        None per item with one replication."""
        inputs = self.verdict_inputs()
        if self.replications == 1:
            return [[None] * len(m.items) for m in inputs]
        lows = self.verdict_inputs("summary_low")
        highs = self.verdict_inputs("summary_high")
        out = []
        for m, lo, hi in zip(inputs, lows, highs, strict=True):
            per_item = []
            for (_, _v), (_, lv), (_, hv) in zip(m.items, lo.items, hi.items, strict=True):
                per_item.append(
                    [
                        (math.nan, math.nan) if a is None or b is None else (float(a), float(b))
                        for a, b in zip(lv, hv, strict=True)
                    ]
                )
            out.append(per_item)
        return out

    def _workload_metrics(self) -> list[str]:
        seen: list[str] = []
        for r in self.runs:
            for d in r.summary["domains"]:
                for name, value in workload_metrics(d).items():
                    if name not in seen and value is not None:
                        seen.append(name)
        return seen
