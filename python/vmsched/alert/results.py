"""The results of ALERT under one scheduler: every 1-s sample's error, per-target
statistics over the replications, and the files they are saved as."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vmsched.alert.plots import PLOT_FILES, SMP_TIMESERIES_PLOT, _plots
from vmsched.alert.report import _report
from vmsched.alert.runs import Where, _Outcome, measured_domains
from vmsched.alert.setup import WITHIN_PCT, _fmt_pct
from vmsched.api import prepare_out_dir, write_atomic

# ----- small helpers ---------------------------------------------------------------------


def relative_error_pct(usage_pct: Any, target_pct: float) -> Any:
    """Er = (U - A) / A, in %: positive means the domain got more than its allocation.

    -100 % means it got nothing; +100 % means it got twice its allocation. Works on
    numbers and on numpy arrays.
    """
    return (np.asarray(usage_pct, dtype="float64") - target_pct) / target_pct * 100.0


# ----- results ---------------------------------------------------------------------------------


def _stats(errors: np.ndarray) -> dict[str, float]:
    if errors.size == 0:
        nan = float("nan")
        return {k: nan for k in ("mean", "std", "min", "p5", "p95", "max")} | {
            f"within_{w}pct": nan for w in WITHIN_PCT
        }
    out = {
        "mean": float(errors.mean()),
        "std": float(errors.std()),
        "min": float(errors.min()),
        "p5": float(np.percentile(errors, 5)),
        "p95": float(np.percentile(errors, 95)),
        "max": float(errors.max()),
    }
    for w in WITHIN_PCT:
        out[f"within_{w}pct"] = float(np.mean(np.abs(errors) <= w))
    return out


#: Columns of alert.csv (one row per target x measured domain x sample).
SAMPLE_COLUMNS = [
    "scheduler",
    "xen_version",
    "target_pct",
    "domain",
    "t_s",
    "usage_pct",
    "error_pct",
    "seed",
]
#: Columns of targets.csv (one row per target x measured domain).
TARGET_COLUMNS = [
    "scheduler",
    "xen_version",
    "target_pct",
    "domain",
    "samples",
    "mean_usage_pct",
    "mean_error_pct",
    "std_error_pct",
    "min_error_pct",
    "p5_error_pct",
    "p95_error_pct",
    "max_error_pct",
    "run_usage_pct",
    "run_error_pct",
    *(f"within_{w}pct" for w in WITHIN_PCT),
    # The replications: how many, and the 95 % interval of the whole-run error over them.
    "replications",
    "run_error_ci95_low",
    "run_error_ci95_high",
]


@dataclass
class AlertResult:
    """The results of ALERT under one scheduler (and Xen version)."""

    scheduler: str
    xen_version: str | None
    smp: bool
    #: Everything needed to say what was run (also in summary.json and report.md).
    setup: dict[str, Any]
    #: One row per target x measured domain x 1-s sample (alert.csv).
    samples: pd.DataFrame
    #: Per-target statistics (targets.csv).
    targets: pd.DataFrame
    #: Dom0's mean CPU % per target in the single-PCPU variant (it is not measured for error).
    dom0_usage_pct: dict[float, float] = field(default_factory=dict)
    wall_s: float = 0.0
    events: int = 0
    #: Where the plots are drawn: the batch layer's workers, as the runs were.
    where: Where = field(default_factory=Where)

    @property
    def label(self) -> str:
        """`credit (Xen 3.0)`, or the scheduler name if it has no version."""
        return f"{self.scheduler} (Xen {self.xen_version})" if self.xen_version else self.scheduler

    @property
    def summary(self) -> dict[str, Any]:
        """summary.json: setup, per-target statistics and pooled statistics."""
        errors = self.samples["error_pct"].to_numpy()
        return {
            "experiment": "alert",
            "scheduler": self.scheduler,
            "xen_version": self.xen_version,
            "smp": self.smp,
            "setup": self.setup,
            "error_convention": "Er = (U - A) / A x 100; positive = over-allocation",
            "targets": _records(self.targets),
            "dom0_usage_pct": {_fmt_pct(k): v for k, v in self.dom0_usage_pct.items()},
            "all_samples": {"samples": int(errors.size), **_prefixed(_stats(errors))},
            "events": self.events,
            "wall_s": self.wall_s,
            "files": _files(self.smp),
        }

    def report(self) -> str:
        """report.md as text."""
        return _report(self)

    def save(self, out: str | Path, figures: bool = True) -> Path:
        """Write alert.csv, targets.csv, summary.json, report.md and (unless `figures` is
        False) the plots into `out`; every file appears whole or not at all."""
        out_dir = prepare_out_dir(out)
        write_atomic(out_dir / "alert.csv", _csv(self.samples))
        write_atomic(out_dir / "targets.csv", _csv(self.targets))
        summary = self.summary
        if not figures:
            summary["files"] = [f for f in summary["files"] if not f.endswith(".png")]
        write_atomic(out_dir / "summary.json", json.dumps(_jsonable(summary), indent=2) + "\n")
        if figures:
            _plots(self, out_dir)
        write_atomic(out_dir / "report.md", self.report())
        return out_dir


def _prefixed(stats: dict[str, float]) -> dict[str, float]:
    return {(k if k.startswith("within") else f"{k}_error_pct"): v for k, v in stats.items()}


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _jsonable(v) for k, v in row.items()} for row in df.to_dict(orient="records")]


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        return None if not math.isfinite(float(v)) else float(v)
    return v


def _csv(df: pd.DataFrame) -> str:
    return df.to_csv(index=False, float_format="%.6g", lineterminator="\n")


def _files(smp: bool) -> list[str]:
    files = ["alert.csv", "targets.csv", "summary.json", "report.md", *PLOT_FILES.values()]
    if smp:
        files.append(SMP_TIMESERIES_PLOT)
    return files


def _assemble(
    scheduler: str,
    version: str | None,
    smp: bool,
    targets: list[float],
    outcomes: list[_Outcome],
    setup: dict[str, Any],
    wall_s: float,
    seeds: Sequence[int] = (1,),
) -> AlertResult:
    """The results of one scheduler: `outcomes` per target, one per seed (seed-minor).
    The 1-s statistics pool every replication's samples; the whole-run error is that of
    the mean usage over the replications, with its 95 % interval."""
    from vmsched.intervals import mean_ci95

    n = len(seeds)
    sample_rows = []
    target_rows = []
    dom0_usage: dict[float, float] = {}
    for k, target in enumerate(targets):
        mine = outcomes[k * n : (k + 1) * n]
        for dom in measured_domains(smp):
            all_usage = []
            for seed, out in zip(seeds, mine, strict=True):
                t_s, usage = out.series.get(dom, ([], []))
                usage_arr = np.asarray(usage, dtype="float64")
                err = relative_error_pct(usage_arr, target)
                for t, u, e in zip(t_s, usage_arr, err, strict=True):
                    sample_rows.append((scheduler, version or "", target, dom, t, u, e, seed))
                all_usage.append(usage_arr)
            usage_arr = np.concatenate(all_usage)
            err = relative_error_pct(usage_arr, target)
            run_usages = [out.run_usage[dom] for out in mine]
            run_usage = float(np.mean(run_usages))
            _, lo, hi, _ = mean_ci95([float(relative_error_pct(u, target)) for u in run_usages])
            st = _stats(err)
            target_rows.append(
                {
                    "scheduler": scheduler,
                    "xen_version": version or "",
                    "target_pct": target,
                    "domain": dom,
                    "samples": int(usage_arr.size),
                    "mean_usage_pct": float(usage_arr.mean()) if usage_arr.size else float("nan"),
                    "mean_error_pct": st["mean"],
                    "std_error_pct": st["std"],
                    "min_error_pct": st["min"],
                    "p5_error_pct": st["p5"],
                    "p95_error_pct": st["p95"],
                    "max_error_pct": st["max"],
                    "run_usage_pct": run_usage,
                    "run_error_pct": float(relative_error_pct(run_usage, target)),
                    **{f"within_{w}pct": st[f"within_{w}pct"] for w in WITHIN_PCT},
                    "replications": n,
                    "run_error_ci95_low": lo,
                    "run_error_ci95_high": hi,
                }
            )
        if not smp:
            dom0_usage[target] = float(np.mean([out.run_usage["Dom0"] for out in mine]))
    setup = setup | {"host": outcomes[0].host}
    samples = pd.DataFrame(sample_rows, columns=SAMPLE_COLUMNS)
    stats = pd.DataFrame(target_rows, columns=TARGET_COLUMNS)
    return AlertResult(
        scheduler=scheduler,
        xen_version=version,
        smp=smp,
        setup=setup,
        samples=samples,
        targets=stats,
        dom0_usage_pct=dom0_usage,
        wall_s=wall_s,
        events=sum(o.events for o in outcomes),
    )
