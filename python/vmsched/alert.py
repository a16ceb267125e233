"""ALERT, the ALlocation ERror Test of Cherkasova, Gupta and Vahdat (2007, §5.2).

What it measures. One PCPU; Dom0 is allocated a fixed 6 % of it; Dom1 runs a
CPU-hungry loop whose allocation is fixed to a target A. Every second the CPU
usage U of Dom1 is sampled and its relative allocation error

    Er = (U - A) / A        (positive = the domain got more than allocated)

is recorded, for A = 1..10 % and 20..90 %, 3 minutes per target. The paper
prints Er = (A - U)/A, but that form cannot exceed +100 % and does not fit the
errors its text reports; (U - A)/A is the one that does (literature digest,
E001-3), so it is the one used here.

"Allocated A %" means "A % of one PCPU and never more, even when the PCPU is
otherwise idle" (NWC mode). Each scheduler says that in its own parameters;
ALLOCATIONS below is the table of how (Credit: cap = A; SEDF: slice = A % of a
10 ms period, no extra time; ...). That is configuration, the same for every
target and for Dom0's 6 %, never a correction.

    from vmsched.alert import run_alert, compare
    r = run_alert("credit", quick=True)          # AlertResult
    r.targets                                    # per-target statistics (DataFrame)
    r.save("results/alert")                      # CSVs, summary.json, report.md, plots
    compare(["credit@3.0", "credit@4.22"], quick=True).save("results/alert-cmp")

The command line is `vmsched alert` (see docs/alert.md).
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from vmsched.api import catalogue, prepare_out_dir, run, write_atomic
from vmsched.errors import InternalError, ScenarioError
from vmsched.progress import RunsProgress
from vmsched.scenario import Scenario

# ----- the paper's setup ---------------------------------------------------------------

#: Dom1's allocation targets in the paper: 1..10 % by 1, 20..90 % by 10 (18 points).
PAPER_TARGETS_PCT: tuple[float, ...] = (*range(1, 11), *range(20, 100, 10))
#: Targets of `--quick`.
QUICK_TARGETS_PCT: tuple[float, ...] = (1, 5, 10, 50, 90)
#: Length of one target's experiment in the paper ("each experiment i continues for 3 min").
PAPER_DURATION_S = 180.0
#: Length of the SMP experiment in the paper ("Each experiment is performed for 10 min").
SMP_DURATION_S = 600.0
#: Length of each run under `--quick`.
QUICK_DURATION_S = 10.0
#: Sampling interval ("we sample CPU usage of Dom1 at the second time scale").
SAMPLE_MS = 1000
#: Dom0's allocation ("a fixed, 6% CPU share ... more than sufficient to run XenMon").
DOM0_ALLOCATION_PCT = 6.0
#: Allocation of each of the three domains in the SMP variant ("allocated 66% of CPU").
SMP_TARGET_PCT = 66.0
#: PCPUs of the two variants.
PCPUS, SMP_PCPUS = 1, 2
#: The paper ran Xen 3.0.3; its Credit debited credit by sampling at the 10 ms tick.
PAPER_XEN_VERSION = "3.0.3"
#: xenbaked (XenMon's collector) polls the trace buffers every 100 ms by default (`-s`).
XENBAKED_POLL_MS = 100.0
#: Dom0's CPU demand under the default `xenmon` load: an assumption (the paper gives
#: none), a third of its 6 % allocation so that 6 % is "more than sufficient".
DOM0_XENMON_UTIL_PCT = 2.0
#: Time simulated before measurement starts, so the first sample is not the start-up.
WARMUP_S = 1.0


def window_phase_s(seed: int, target_pct: float, sample_ms: float) -> float:
    """Where the 1-s measurement windows start relative to the schedulers' periods: a
    phase in [0, sample_ms) added to the warm-up, drawn from the run's seed and the target.

    A real sampler (xenbaked polling the trace buffers) is not synchronised with the
    scheduler's periods and ticks; windows that start exactly on a multiple of every period
    would see the same part of each period every time. The phase is deterministic (same seed
    and target, same phase) and rounded to the microsecond."""
    import random

    rng = random.Random(f"alert-window-phase/{seed}/{target_pct!r}")
    return round(rng.random() * sample_ms / 1000.0, 6)


#: Error bands reported as "fraction of samples within ±x %".
WITHIN_PCT: tuple[int, ...] = (1, 2, 5, 10)
#: What Dom0 runs in the single-PCPU variant (see docs/alert.md, "Dom0").
DOM0_LOADS = ("xenmon", "hog", "idle")
#: The workload manager the paper has in mind needs errors of "typically, 1–2%".
MANAGER_ERROR_PCT = 2

# ----- allocation mapping: "A % of one PCPU" in each scheduler's parameters --------------

Quantity = tuple[Any, str]  # (value, unit): unit is "%", "ms", "us", "ns" or "bool"


@dataclass(frozen=True)
class Allocation:
    """How "A % of one PCPU, never more" is written in one scheduler's parameters."""

    #: The rule in words (for the report), as the scheduler's own tool would set it.
    rule: str
    #: First Xen release in which the scheduler can hold a domain to an allocation this way.
    since: str
    #: target % and Xen version (None if the scheduler has no version) -> per-domain parameters.
    params: Callable[[float, tuple[int, int] | None], dict[str, Quantity]]


#: SEDF and RTDS period: 10 ms, "to match the CPU allocation time granularity" (the paper, for
#: SEDF; RTDS's own default period is also 10 ms).
RESERVATION_PERIOD_MS = 10.0


def _rtds_params(a: float, v: tuple[int, int] | None) -> dict[str, Quantity]:
    p: dict[str, Quantity] = {
        "period": (RESERVATION_PERIOD_MS, "ms"),
        "budget": (a / 100 * RESERVATION_PERIOD_MS, "ms"),
    }
    # RTDS has had extratime (work-conserving by default) only since 4.10; before,
    # a depleted VCPU always waits for its next period.
    if v is None or v >= (4, 10):
        p["extratime"] = (False, "bool")
    return p


ALLOCATIONS: dict[str, Allocation] = {
    "credit": Allocation(
        rule="cap = A (xl sched-credit -c A)",
        since="3.0",
        params=lambda a, v: {"cap": (a, "%")},
    ),
    "credit2": Allocation(
        rule="cap = A (xl sched-credit2 -c A; a budget of A % of each 10 ms)",
        since="4.10",
        params=lambda a, v: {"cap": (a, "%")},
    ),
    # The proposals built on Credit and Credit2 keep their caps unchanged.
    "credit-enhanced": Allocation(
        rule="cap = A (as Credit: Enhanced credit keeps Credit's caps)",
        since="3.0",
        params=lambda a, v: {"cap": (a, "%")},
    ),
    "credit-dynweight": Allocation(
        rule="cap = A (as Credit: dynamic weights leave Credit's caps as they are)",
        since="3.0",
        params=lambda a, v: {"cap": (a, "%")},
    ),
    "mcredit2": Allocation(
        rule="cap = A (as Credit2: the weight boost leaves Credit2's budgets as they are)",
        since="4.10",
        params=lambda a, v: {"cap": (a, "%")},
    ),
    "sedf": Allocation(
        rule="period 10 ms, slice A % x 10 ms, extratime 0 (xm sched-sedf -p 10 -s A/10 -e 0)",
        since="3.0",
        params=lambda a, v: {
            "period": (RESERVATION_PERIOD_MS, "ms"),
            "slice": (a / 100 * RESERVATION_PERIOD_MS, "ms"),
            "extratime": (False, "bool"),
        },
    ),
    "rtds": Allocation(
        rule="period 10 000 us, budget A % x 10 000 us, no extratime "
        "(xl sched-rtds -p 10000 -b 100A -e 0)",
        since="4.5",
        params=_rtds_params,
    ),
}

_NS_PER = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}

# ----- small helpers ---------------------------------------------------------------------


def relative_error_pct(usage_pct: Any, target_pct: float) -> Any:
    """Er = (U - A) / A, in %: positive means the domain got more than its allocation.

    -100 % means it got nothing; +100 % means it got twice its allocation. Works on
    numbers and on numpy arrays.
    """
    return (np.asarray(usage_pct, dtype="float64") - target_pct) / target_pct * 100.0


def _parse_version(text: str) -> tuple[int, int, int] | None:
    """ "4.22" -> (4, 22, 0); "3.0.3" -> (3, 0, 3), as the core compares releases."""
    parts = str(text).strip().split(".")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        return None
    major, minor, patch = (int(p) for p in (parts + ["0"])[:3])
    return major, minor, patch


def _fmt_version(v: tuple[int, int, int]) -> str:
    return f"{v[0]}.{v[1]}" if v[2] == 0 else f"{v[0]}.{v[1]}.{v[2]}"


def _fmt_pct(x: float) -> str:
    return f"{x:g}"


def _scheduler_info(name: str) -> dict[str, Any]:
    scheds = catalogue()["schedulers"]
    for s in scheds:
        if s["name"] == name:
            return s
    known = [s["name"] for s in scheds]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise ScenarioError(
        f'unknown scheduler "{name}"; expected one of {", ".join(known)}{hint}',
        path="alert.scheduler",
    )


def _param(info: dict[str, Any], name: str, scope: str) -> dict[str, Any] | None:
    for p in info["params"]:
        if p["name"] == name and p["scope"] == scope:
            return p
    return None


def _version_range(
    spec: dict[str, Any],
) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    lo, hi = spec["range"].split("..")
    plo, phi = _parse_version(lo), _parse_version(hi)
    if plo is None or phi is None:
        raise InternalError(f"xen_version range {spec['range']!r} is not a version range (a bug)")
    return plo, phi


def _allocation_for(info: dict[str, Any]) -> Allocation:
    name = info["name"]
    if not info.get("can_cap"):
        raise ScenarioError(
            f'scheduler "{name}" cannot cap a domain (can_cap is false in `vmsched schedulers`), '
            "so it cannot hold a domain to an allocation; expected a scheduler that can cap: "
            + ", ".join(s["name"] for s in catalogue()["schedulers"] if s.get("can_cap")),
            path="alert.scheduler",
        )
    if name not in ALLOCATIONS:
        raise ScenarioError(
            f'scheduler "{name}" can cap, but ALERT has no allocation mapping for it; expected '
            f"one of {', '.join(sorted(ALLOCATIONS))} (add its rule to ALLOCATIONS in "
            "vmsched/alert.py)",
            path="alert.scheduler",
        )
    return ALLOCATIONS[name]


def resolve_version(scheduler: str, requested: str | None) -> str | None:
    """The `xen_version` ALERT uses for `scheduler` (None if it has no such parameter).

    Without a request: the paper's "3.0.3" when the scheduler has it, otherwise the
    earliest release in which the scheduler exists and can hold an allocation.
    """
    info = _scheduler_info(scheduler)
    alloc = _allocation_for(info)
    spec = _param(info, "xen_version", "global")
    if spec is None:
        if requested is not None:
            raise ScenarioError(
                f'"{requested}" cannot be applied: scheduler "{scheduler}" has no xen_version '
                "parameter; expected no --xen-version for it",
                path="alert.xen_version",
            )
        return None
    lo, hi = _version_range(spec)
    since = _parse_version(alloc.since)
    assert since is not None
    if requested is None:
        return _fmt_version(max(_parse_version(PAPER_XEN_VERSION), lo, since))
    v = _parse_version(requested)
    if v is None:
        raise ScenarioError(
            f'"{requested}" is not a Xen version; expected a version such as "3.0" or "4.22"',
            path="alert.xen_version",
        )
    if not (lo <= v and v[:2] <= hi[:2]):
        raise ScenarioError(
            f'"{requested}" is out of range for {scheduler}; expected a Xen version from '
            f'"{_fmt_version(lo)}" to "{_fmt_version(hi)}"',
            path="alert.xen_version",
        )
    if v < since:
        raise ScenarioError(
            f'"{requested}": {scheduler} cannot hold a domain to an allocation before Xen '
            f'{alloc.since} ({alloc.rule}); expected xen_version "{alloc.since}" or later',
            path="alert.xen_version",
        )
    return requested.strip()


def _express(info: dict[str, Any], target_pct: float, version: str | None) -> dict[str, Any]:
    """The per-domain parameters that allocate `target_pct` % under this scheduler, in the
    units and types the scheduler declares."""
    alloc = _allocation_for(info)
    v = _parse_version(version) if version is not None else None
    out: dict[str, Any] = {}
    for name, (value, unit) in alloc.params(target_pct, v).items():
        spec = _param(info, name, "domain")
        if spec is None:
            raise InternalError(
                f'ALERT\'s allocation rule for {info["name"]} sets "{name}", which the scheduler '
                "does not declare (a bug: ALLOCATIONS in vmsched/alert.py is out of date)"
            )
        declared = spec["unit"]
        if unit == "bool":
            out[name] = bool(value) if spec["range"] == "true|false" else int(bool(value))
            continue
        if unit in _NS_PER and declared in _NS_PER:
            value = value * _NS_PER[unit] / _NS_PER[declared]
        elif unit != declared:
            raise InternalError(
                f"ALERT's allocation rule for {info['name']} gives {name} in {unit!r}, but the "
                f"scheduler declares it in {declared!r} (a bug in vmsched/alert.py)"
            )
        if spec["expected"].startswith("an integer"):
            whole = round(value)
            if not math.isclose(value, whole, rel_tol=0, abs_tol=1e-9):
                raise ScenarioError(
                    f"{_fmt_pct(target_pct)} % cannot be expressed under {info['name']}: it needs "
                    f"{name} = {value:g} {declared}, and {name} takes {spec['expected']}; "
                    "expected targets that give a whole number",
                    path="alert.targets",
                )
            value = int(whole)
        else:
            value = round(value, 9)  # 0.7 ms, not 0.7000000000000001
        out[name] = value
    return out


def _check_targets(targets: Sequence[float]) -> list[float]:
    if len(targets) == 0:
        raise ScenarioError("is empty; expected at least one target", path="alert.targets")
    out = []
    for t in targets:
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
            raise ScenarioError(
                f"{t!r} is not a number; expected a % in (0, 100]", path="alert.targets"
            )
        if not 0 < t <= 100:
            raise ScenarioError(
                f"{_fmt_pct(t)} is out of range; expected a % of one PCPU in (0, 100]",
                path="alert.targets",
            )
        out.append(float(t))
    if len(set(out)) != len(out):
        raise ScenarioError("lists a target twice; expected distinct targets", path="alert.targets")
    return out


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ScenarioError(
            f"{value!r} is not allowed; expected a number > 0", path=f"alert.{name}"
        )
    return float(value)


# ----- scenarios ----------------------------------------------------------------------------


def build_scenario(
    scheduler: str,
    target_pct: float,
    *,
    xen_version: str | None,
    smp: bool = False,
    duration_s: float = PAPER_DURATION_S,
    seed: int = 1,
    dom0_load: str = "xenmon",
    dom0_util_pct: float = DOM0_XENMON_UTIL_PCT,
    warmup_s: float = WARMUP_S,
    sample_ms: float = SAMPLE_MS,
) -> Scenario:
    """The scenario of one ALERT run (one target). `xen_version` as from `resolve_version`."""
    info = _scheduler_info(scheduler)
    sched: dict[str, Any] = {"name": scheduler}
    if xen_version is not None:
        sched["xen_version"] = xen_version
    warmup_s = warmup_s + window_phase_s(seed, target_pct, sample_ms)
    sc = Scenario(
        pcpus=SMP_PCPUS if smp else PCPUS,
        scheduler=sched,
        duration_s=warmup_s + duration_s,
        warmup_s=warmup_s,
        seed=seed,
        sample_ms=sample_ms,
        source=f"alert:{scheduler}:{_fmt_pct(target_pct)}%",
    )
    alloc = _express(info, target_pct, xen_version)
    if smp:
        sc.add_domain("Dom0", driver=True, sched=alloc, workload="cpu-hog")
        sc.add_domain("Dom1", sched=alloc, workload="cpu-hog")
        sc.add_domain("Dom2", sched=alloc, workload="cpu-hog")
        return sc
    dom0_alloc = _express(info, DOM0_ALLOCATION_PCT, xen_version)
    if dom0_load == "xenmon":
        dom0_work: dict[str, Any] = {
            "kind": "duty-cycle",
            "util_pct": dom0_util_pct,
            "period_ms": XENBAKED_POLL_MS,
        }
    elif dom0_load == "hog":
        dom0_work = {"kind": "cpu-hog"}
    elif dom0_load == "idle":
        dom0_work = {"kind": "idle"}
    else:
        raise ScenarioError(
            f'"{dom0_load}" is not a Dom0 load; expected one of {", ".join(DOM0_LOADS)}',
            path="alert.dom0_load",
        )
    sc.add_domain("Dom0", driver=True, sched=dom0_alloc, workload=dom0_work)
    sc.add_domain("Dom1", sched=alloc, workload="cpu-hog")
    return sc


def measured_domains(smp: bool) -> tuple[str, ...]:
    """The domains whose allocation error ALERT reports."""
    return ("Dom0", "Dom1", "Dom2") if smp else ("Dom1",)


@dataclass(frozen=True)
class _Job:
    index: int
    scenario: dict[str, Any]
    warmup_s: float


@dataclass
class _Outcome:
    index: int
    #: domain -> (t_s since measurement start, usage %) at each sample.
    series: dict[str, tuple[list[float], list[float]]]
    #: domain -> CPU % over the whole measured run (summary.json's cpu_pct).
    run_usage: dict[str, float]
    events: int
    #: The host as summary.json describes it (topology and platform costs).
    host: dict[str, Any]


def _simulate(job: _Job) -> _Outcome:
    """Run one scenario (in a worker process or in-process)."""
    r = run(job.scenario, progress=False)
    ts = r.timeseries
    rows = ts[ts["vcpu"].isna()]
    series = {}
    for name, g in rows.groupby("domain", sort=False):
        series[str(name)] = (
            [round(t - job.warmup_s, 9) for t in g["time_s"]],
            [float(u) for u in g["cpu_pct"]],
        )
    return _Outcome(
        index=job.index,
        series=series,
        run_usage={d["name"]: float(d["cpu_pct"]) for d in r.summary["domains"]},
        events=int(r.summary["events"]),
        host={k: v for k, v in r.summary["host"].items() if k != "pcpus_detail"},
    )


def _run_jobs(jobs: list[_Job], n_workers: int, label: str, progress) -> list[_Outcome]:
    """Run independent jobs, in parallel when asked; results in job order whatever the order
    they finish in, so the output does not depend on `n_workers`."""
    results: list[_Outcome | None] = [None] * len(jobs)
    bar = RunsProgress(len(jobs), label, progress)
    try:
        if n_workers <= 1 or len(jobs) == 1:
            for i, job in enumerate(jobs):
                results[job.index] = _simulate(job)
                bar.update(i + 1)
        else:
            with ProcessPoolExecutor(max_workers=min(n_workers, len(jobs))) as pool:
                pending = {pool.submit(_simulate, job) for job in jobs}
                done_count = 0
                while pending:
                    done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                    for fut in done:
                        out = fut.result()
                        results[out.index] = out
                        done_count += 1
                    bar.update(done_count)
    finally:
        bar.close()
    return [r for r in results if r is not None]


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

    def save(self, out: str | Path) -> Path:
        """Write alert.csv, targets.csv, summary.json, report.md and the plots into `out`;
        every file appears whole or not at all."""
        out_dir = prepare_out_dir(out)
        write_atomic(out_dir / "alert.csv", _csv(self.samples))
        write_atomic(out_dir / "targets.csv", _csv(self.targets))
        write_atomic(out_dir / "summary.json", json.dumps(_jsonable(self.summary), indent=2) + "\n")
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
) -> AlertResult:
    sample_rows = []
    target_rows = []
    dom0_usage: dict[float, float] = {}
    for target, out in zip(targets, outcomes, strict=True):
        for dom in measured_domains(smp):
            t_s, usage = out.series.get(dom, ([], []))
            usage_arr = np.asarray(usage, dtype="float64")
            err = relative_error_pct(usage_arr, target)
            for t, u, e in zip(t_s, usage_arr, err, strict=True):
                sample_rows.append((scheduler, version or "", target, dom, t, u, e))
            run_usage = out.run_usage[dom]
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
                }
            )
        if not smp:
            dom0_usage[target] = out.run_usage["Dom0"]
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


# ----- the experiment --------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    scheduler: str
    version: str | None
    targets: list[float]
    jobs: list[_Job]
    setup: dict[str, Any]


def _plan(
    scheduler: str,
    *,
    targets: Sequence[float] | None,
    duration_s: float | None,
    xen_version: str | None,
    smp: bool,
    quick: bool,
    seed: int,
    dom0_load: str | None,
    dom0_util_pct: float | None,
    warmup_s: float,
    sample_ms: float,
    first_index: int = 0,
) -> _Plan:
    if not isinstance(scheduler, str) or not scheduler:
        raise ScenarioError(f"{scheduler!r} is not a scheduler name", path="alert.scheduler")
    version = resolve_version(scheduler, xen_version)
    if targets is None:
        targets = (
            [SMP_TARGET_PCT] if smp else list(QUICK_TARGETS_PCT if quick else PAPER_TARGETS_PCT)
        )
    target_list = _check_targets(list(targets))
    if duration_s is None:
        duration_s = QUICK_DURATION_S if quick else (SMP_DURATION_S if smp else PAPER_DURATION_S)
    duration_s = _positive("duration_s", duration_s)
    sample_ms = _positive("sample_ms", sample_ms)
    if duration_s * 1000 < sample_ms:
        raise ScenarioError(
            f"{duration_s:g} s is shorter than one sample ({sample_ms:g} ms); "
            "expected at least one sample",
            path="alert.duration_s",
        )
    if isinstance(warmup_s, bool) or not isinstance(warmup_s, int | float) or warmup_s < 0:
        raise ScenarioError(
            f"{warmup_s!r} is not allowed; expected a number >= 0", path="alert.warmup_s"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ScenarioError(f"{seed!r} is not allowed; expected an integer >= 0", path="alert.seed")
    if smp and (dom0_load is not None or dom0_util_pct is not None):
        raise ScenarioError(
            "does not apply to the SMP variant, where Dom0, Dom1 and Dom2 all run a "
            "CPU-hungry loop; expected no Dom0 load option with smp",
            path="alert.dom0_load",
        )
    load = dom0_load or "xenmon"
    if load not in DOM0_LOADS:
        raise ScenarioError(
            f'"{load}" is not a Dom0 load; expected one of {", ".join(DOM0_LOADS)}',
            path="alert.dom0_load",
        )
    util = DOM0_XENMON_UTIL_PCT if dom0_util_pct is None else dom0_util_pct
    if dom0_util_pct is not None and load != "xenmon":
        raise ScenarioError(
            f'applies to the "xenmon" Dom0 load only, not "{load}"', path="alert.dom0_util_pct"
        )
    if isinstance(util, bool) or not isinstance(util, int | float) or not 0 < util <= 100:
        raise ScenarioError(
            f"{util!r} is out of range; expected a % in (0, 100]", path="alert.dom0_util_pct"
        )
    info = _scheduler_info(scheduler)
    jobs = []
    for i, target in enumerate(target_list):
        sc = build_scenario(
            scheduler,
            target,
            xen_version=version,
            smp=smp,
            duration_s=duration_s,
            seed=seed,
            dom0_load=load,
            dom0_util_pct=util,
            warmup_s=warmup_s,
            sample_ms=sample_ms,
        ).validate()
        # The windows' phase is part of the scenario's warm-up (`window_phase_s`).
        measure_from_s = float(sc.data["run"]["warmup_s"])
        jobs.append(_Job(index=first_index + i, scenario=sc.data, warmup_s=measure_from_s))
    setup = {
        "variant": "smp" if smp else "single-pcpu",
        "pcpus": SMP_PCPUS if smp else PCPUS,
        "scheduler": scheduler,
        "xen_version": version,
        "xen_version_source": "given" if xen_version is not None else "default",
        "allocation_rule": _allocation_for(info).rule,
        "allocations": {_fmt_pct(t): _express(info, t, version) for t in target_list},
        "targets_pct": target_list,
        "duration_s": duration_s,
        "warmup_s": float(warmup_s),
        "sample_ms": sample_ms,
        "seed": seed,
        "measured_domains": list(measured_domains(smp)),
    }
    if not smp:
        setup["dom0"] = {
            "allocation_pct": DOM0_ALLOCATION_PCT,
            "allocation": _express(info, DOM0_ALLOCATION_PCT, version),
            "load": load,
            **({"util_pct": util, "period_ms": XENBAKED_POLL_MS} if load == "xenmon" else {}),
        }
    return _Plan(scheduler, version, target_list, jobs, setup)


def _default_jobs(jobs: int | None) -> int:
    if jobs is None:
        return os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ScenarioError(f"{jobs!r} is not allowed; expected an integer >= 1", path="alert.jobs")
    return jobs


@dataclass(frozen=True)
class _Experiment:
    """One or more validated ALERT runs (scheduler, version), ready to simulate."""

    plans: list[_Plan]
    smp: bool
    n_workers: int

    def execute(self, progress: bool | Callable[[int, int], None]) -> list[AlertResult]:
        """Simulate every target of every run on one process pool."""
        label = "ALERT " + " vs ".join(p.scheduler for p in self.plans)
        t0 = time.perf_counter()
        outcomes = _run_jobs(
            [j for p in self.plans for j in p.jobs], self.n_workers, label, progress
        )
        wall = time.perf_counter() - t0
        results = []
        for p in self.plans:
            mine = outcomes[p.jobs[0].index : p.jobs[-1].index + 1]
            results.append(
                _assemble(p.scheduler, p.version, self.smp, p.targets, mine, p.setup, wall)
            )
        return results


def _experiment(
    entries: list[tuple[str, str | None]], *, smp: bool, jobs: int | None, **options: Any
) -> _Experiment:
    """Validate everything (raising ScenarioError) before anything is simulated."""
    plans: list[_Plan] = []
    first = 0
    for name, version in entries:
        plan = _plan(name, xen_version=version, smp=smp, first_index=first, **options)
        first += len(plan.jobs)
        plans.append(plan)
    keys = [(p.scheduler, p.version) for p in plans]
    if len(set(keys)) != len(keys):
        raise ScenarioError(
            f"names {', '.join(f'{s}@{v}' for s, v in keys)}: the same scheduler and version "
            "twice; expected distinct runs",
            path="alert.compare",
        )
    return _Experiment(plans, smp, _default_jobs(jobs))


def run_alert(
    scheduler: str = "credit",
    targets: Sequence[float] | None = None,
    duration_s: float | None = None,
    xen_version: str | None = None,
    smp: bool = False,
    quick: bool = False,
    seed: int = 1,
    progress: bool | Callable[[int, int], None] = True,
    *,
    jobs: int | None = None,
    dom0_load: str | None = None,
    dom0_util_pct: float | None = None,
    warmup_s: float = WARMUP_S,
    sample_ms: float = SAMPLE_MS,
) -> AlertResult:
    """Run ALERT under one scheduler and return its AlertResult.

    `targets` (% of one PCPU, each in (0, 100]) default to the paper's 18, or to
    (1, 5, 10, 50, 90) with `quick`; `duration_s` per target defaults to 180 s
    (600 s with `smp`, 10 s with `quick`). `xen_version` defaults to the paper's
    "3.0.3" where the scheduler has it. `smp` runs the paper's SMP variant: 2 PCPUs,
    Dom0, Dom1 and Dom2 each a CPU hog allocated 66 % (or each target given).
    `dom0_load` ("xenmon", "hog" or "idle", single-PCPU variant only) is what Dom0
    runs under its 6 % allocation. Targets run in parallel on `jobs` processes
    (default: all CPUs); results do not depend on `jobs`. `progress=True` shows a
    bar on a terminal; a callable receives (runs done, runs in all).
    Raises ScenarioError on bad input, before anything is simulated.
    """
    exp = _experiment(
        [(scheduler, xen_version)],
        smp=smp,
        jobs=jobs,
        targets=targets,
        duration_s=duration_s,
        quick=quick,
        seed=seed,
        dom0_load=dom0_load,
        dom0_util_pct=dom0_util_pct,
        warmup_s=warmup_s,
        sample_ms=sample_ms,
    )
    return exp.execute(progress)[0]


@dataclass
class CompareResult:
    """ALERT under several schedulers (or Xen versions), run in one go."""

    results: list[AlertResult]
    wall_s: float = 0.0

    def folder_names(self) -> list[str]:
        """One sub-folder per run: the scheduler's name, with the version if a name repeats."""
        names = [r.scheduler for r in self.results]
        return [
            f"{r.scheduler}-{r.xen_version}" if names.count(r.scheduler) > 1 else r.scheduler
            for r in self.results
        ]

    @property
    def summary(self) -> dict[str, Any]:
        return {
            "experiment": "alert-compare",
            "runs": [
                {
                    "folder": f,
                    "scheduler": r.scheduler,
                    "xen_version": r.xen_version,
                    "all_samples": r.summary["all_samples"],
                    "targets": _records(r.targets),
                }
                for f, r in zip(self.folder_names(), self.results, strict=True)
            ],
            "wall_s": self.wall_s,
            "files": ["summary.json", "report.md", "targets.csv", *COMPARE_PLOT_FILES.values()],
        }

    def save(self, out: str | Path) -> Path:
        """Each run's full output in its own sub-folder, plus the comparison plots,
        targets.csv (all runs) and report.md at the top."""
        out_dir = prepare_out_dir(out)
        for name, r in zip(self.folder_names(), self.results, strict=True):
            r.save(out_dir / name)
        both = pd.concat([r.targets for r in self.results], ignore_index=True)
        write_atomic(out_dir / "targets.csv", _csv(both))
        write_atomic(out_dir / "summary.json", json.dumps(_jsonable(self.summary), indent=2) + "\n")
        _compare_plots(self.results, out_dir)
        write_atomic(out_dir / "report.md", _compare_report(self))
        return out_dir


def _parse_entry(entry: str) -> tuple[str, str | None]:
    name, _, ver = entry.strip().partition("@")
    return name.strip(), (ver.strip() or None)


def _compare_entries(
    schedulers: Sequence[str], xen_version: str | None
) -> list[tuple[str, str | None]]:
    entries = [_parse_entry(e) for e in schedulers]
    if len(entries) < 2:
        raise ScenarioError(
            f"{','.join(schedulers)!r} names {len(entries)} run; expected at least two, "
            'e.g. "credit,sedf" or "credit@3.0,credit@4.22"',
            path="alert.compare",
        )
    return [(name, ver if ver is not None else xen_version) for name, ver in entries]


def compare(
    schedulers: Sequence[str],
    targets: Sequence[float] | None = None,
    duration_s: float | None = None,
    xen_version: str | None = None,
    smp: bool = False,
    quick: bool = False,
    seed: int = 1,
    progress: bool | Callable[[int, int], None] = True,
    *,
    jobs: int | None = None,
    dom0_load: str | None = None,
    dom0_util_pct: float | None = None,
    warmup_s: float = WARMUP_S,
    sample_ms: float = SAMPLE_MS,
) -> CompareResult:
    """Run ALERT under each of `schedulers` with the same setup and return a CompareResult.

    An entry is a scheduler name, optionally with a Xen version: "sedf",
    "credit@4.22". `xen_version` applies to entries without one. All runs of all
    schedulers share one process pool. Other arguments as in `run_alert`.
    """
    exp = _experiment(
        _compare_entries(schedulers, xen_version),
        smp=smp,
        jobs=jobs,
        targets=targets,
        duration_s=duration_s,
        quick=quick,
        seed=seed,
        dom0_load=dom0_load,
        dom0_util_pct=dom0_util_pct,
        warmup_s=warmup_s,
        sample_ms=sample_ms,
    )
    results = exp.execute(progress)
    return CompareResult(results, results[0].wall_s)


# ----- plots -----------------------------------------------------------------------------------

#: The plots of one run: what each shows -> file name.
PLOT_FILES = {
    "fig7": "fig7-error-1s.png",
    "fig8": "fig8-error-cdf.png",
    "fig9": "fig9-error-run.png",
}
SMP_TIMESERIES_PLOT = "fig11-smp-error-timeseries.png"
COMPARE_PLOT_FILES = {
    "fig7": "compare-error-1s.png",
    "fig8": "compare-error-cdf.png",
    "fig9": "compare-error-run.png",
}
_DPI = 150
_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _png(fig) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)
    return buf.getvalue()


def _groups(r: AlertResult) -> list[tuple[str, pd.DataFrame]]:
    """(tick label, samples) per box: per target (single PCPU) or per domain (SMP)."""
    if r.smp:
        return [
            (f"{d}\n{_fmt_pct(t)} %", g)
            for (t, d), g in r.samples.groupby(["target_pct", "domain"], sort=True)
        ]
    return [(_fmt_pct(t), g) for t, g in r.samples.groupby("target_pct", sort=True)]


def _xlabel(r: AlertResult) -> str:
    return "Domain and its allocation" if r.smp else "Dom1 allocation target A (% of one PCPU)"


def _plot_error_1s(results: list[AlertResult], title: str) -> bytes:
    """Fig 7: the allocation error of every 1-s sample, one box (plus the points) per target."""
    labels = [lab for lab, _ in _groups(results[0])]
    fig = _figure(max(7.0, 0.55 * len(labels) * max(1, len(results)) + 2), 4.5)
    ax = fig.add_subplot()
    width = 0.8 / len(results)
    rng = np.random.default_rng(0)  # jitter of the strip points only
    handles = []
    for k, r in enumerate(results):
        groups = dict(_groups(r))
        data = [
            groups[lab]["error_pct"].to_numpy() if lab in groups else np.array([]) for lab in labels
        ]
        pos = np.arange(len(labels)) + (k - (len(results) - 1) / 2) * width
        colour = _COLOURS[k % len(_COLOURS)]
        bp = ax.boxplot(
            data,
            positions=pos,
            widths=width * 0.8,
            whis=(5, 95),
            showfliers=False,
            patch_artist=True,
            manage_ticks=False,
            medianprops={"color": "black"},
            boxprops={"facecolor": colour, "alpha": 0.35, "edgecolor": colour},
            whiskerprops={"color": colour},
            capprops={"color": colour},
        )
        for x, d in zip(pos, data, strict=True):
            ax.scatter(
                x + rng.uniform(-width * 0.3, width * 0.3, d.size),
                d,
                s=4,
                color=colour,
                alpha=0.4,
                linewidths=0,
            )
        handles.append((bp["boxes"][0], r.label))
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(np.arange(len(labels)), labels)
    ax.set_xlabel(_xlabel(results[0]))
    ax.set_ylabel("Allocation error Er = (U - A)/A (%)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(
        [h for h, _ in handles],
        [f"{lab}: box 25-75 %, whiskers 5-95 %, dots = 1-s samples" for _, lab in handles],
        loc="upper right",
        fontsize=8,
    )
    return _png(fig)


def _plot_error_cdf(results: list[AlertResult], title: str) -> bytes:
    """Fig 8: CDF of the negative errors and complementary CDF of the positive errors,
    over all 1-s samples of all targets."""
    fig = _figure(10, 4.2)
    neg_ax, pos_ax = fig.subplots(1, 2)
    for k, r in enumerate(results):
        err = np.sort(r.samples["error_pct"].to_numpy())
        n = err.size
        colour = _COLOURS[k % len(_COLOURS)]
        neg = err[err < 0]
        pos = err[err > 0]
        if neg.size:
            # P(Er <= x) for x < 0, as a fraction of all samples.
            x = np.concatenate([neg, [0.0]])
            y = np.concatenate([np.arange(1, neg.size + 1) / n, [neg.size / n]])
            neg_ax.step(
                x, y, where="post", color=colour, label=f"{r.label} ({neg.size}/{n} samples)"
            )
        if pos.size:
            # P(Er > x) for x >= 0, as a fraction of all samples.
            x = np.concatenate([[0.0], pos])
            y = np.concatenate([[pos.size / n], (pos.size - np.arange(1, pos.size + 1)) / n])
            pos_ax.step(
                x, y, where="post", color=colour, label=f"{r.label} ({pos.size}/{n} samples)"
            )
    neg_ax.set_xlabel("Allocation error Er (%), negative: under-allocation")
    neg_ax.set_ylabel("Fraction of all 1-s samples with error <= x")
    neg_ax.set_title("CDF of negative errors")
    pos_ax.set_xlabel("Allocation error Er (%), positive: over-allocation")
    pos_ax.set_ylabel("Fraction of all 1-s samples with error > x")
    pos_ax.set_title("Complementary CDF of positive errors")
    for ax, empty in ((neg_ax, "no negative errors"), (pos_ax, "no positive errors")):
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
        else:
            ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(title)
    return _png(fig)


def _plot_error_run(results: list[AlertResult], title: str) -> bytes:
    """Fig 9: the error over each whole run (3-minute granularity in the paper)."""
    first = results[0].targets
    labels = [
        (f"{d}\n{_fmt_pct(t)} %" if results[0].smp else _fmt_pct(t))
        for t, d in zip(first["target_pct"], first["domain"], strict=True)
    ]
    fig = _figure(max(7.0, 0.5 * len(labels) * max(1, len(results)) + 2), 4.2)
    ax = fig.add_subplot()
    width = 0.8 / len(results)
    for k, r in enumerate(results):
        pos = np.arange(len(labels)) + (k - (len(results) - 1) / 2) * width
        ax.bar(
            pos,
            r.targets["run_error_pct"].to_numpy(),
            width=width * 0.9,
            color=_COLOURS[k % len(_COLOURS)],
            label=r.label,
        )
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(np.arange(len(labels)), labels)
    ax.set_xlabel(_xlabel(results[0]))
    ax.set_ylabel("Allocation error over the whole run (%)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def _plot_smp_timeseries(r: AlertResult) -> bytes:
    """Fig 11a-like: each domain's error at every 1-s sample over the run."""
    fig = _figure(10, 4.2)
    ax = fig.add_subplot()
    for k, ((t, d), g) in enumerate(r.samples.groupby(["target_pct", "domain"], sort=True)):
        ax.plot(
            g["t_s"],
            g["error_pct"],
            lw=0.9,
            color=_COLOURS[k % len(_COLOURS)],
            label=f"{d} (allocated {_fmt_pct(t)} %)",
        )
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("Time since measurement start (s)")
    ax.set_ylabel("Allocation error Er = (U - A)/A (%)")
    ax.set_title(f"ALERT SMP, {r.label}: error of each domain at 1-s granularity")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def _plots(r: AlertResult, out_dir: Path) -> None:
    what = f"{r.label}, {'2 PCPUs' if r.smp else '1 PCPU'}"
    write_atomic(
        out_dir / PLOT_FILES["fig7"],
        _plot_error_1s([r], f"ALERT, {what}: error at 1-s granularity"),
    )
    write_atomic(
        out_dir / PLOT_FILES["fig8"],
        _plot_error_cdf([r], f"ALERT, {what}: distribution of 1-s errors"),
    )
    write_atomic(
        out_dir / PLOT_FILES["fig9"],
        _plot_error_run([r], f"ALERT, {what}: error over the whole run"),
    )
    if r.smp:
        write_atomic(out_dir / SMP_TIMESERIES_PLOT, _plot_smp_timeseries(r))


def _compare_plots(results: list[AlertResult], out_dir: Path) -> None:
    what = " vs ".join(r.label for r in results)
    write_atomic(
        out_dir / COMPARE_PLOT_FILES["fig7"],
        _plot_error_1s(results, f"ALERT: error at 1-s granularity, {what}"),
    )
    write_atomic(
        out_dir / COMPARE_PLOT_FILES["fig8"],
        _plot_error_cdf(results, f"ALERT: distribution of 1-s errors, {what}"),
    )
    write_atomic(
        out_dir / COMPARE_PLOT_FILES["fig9"],
        _plot_error_run(results, f"ALERT: error over the whole run, {what}"),
    )


# ----- reports ----------------------------------------------------------------------------------


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _f(x: float, nd: int = 1) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{nd}f}"


def _target_table(r: AlertResult) -> str:
    header = (
        ["A (%)"]
        + (["domain"] if r.smp else [])
        + [
            "mean U (%)",
            "mean Er",
            "min Er",
            "p5 Er",
            "p95 Er",
            "max Er",
            "whole-run Er",
            *(f"within ±{w} %" for w in WITHIN_PCT),
        ]
    )
    rows = []
    for row in r.targets.to_dict(orient="records"):
        rows.append(
            [_fmt_pct(row["target_pct"])]
            + ([row["domain"]] if r.smp else [])
            + [
                _f(row["mean_usage_pct"], 2),
                _f(row["mean_error_pct"]),
                _f(row["min_error_pct"]),
                _f(row["p5_error_pct"]),
                _f(row["p95_error_pct"]),
                _f(row["max_error_pct"]),
                _f(row["run_error_pct"]),
                *(f"{100 * row[f'within_{w}pct']:.0f} %" for w in WITHIN_PCT),
            ]
        )
    return _md_table(header, rows)


def _version_line(r: AlertResult) -> str:
    if r.xen_version is None:
        return f"The {r.scheduler} scheduler has no `xen_version` parameter."
    how = (
        "given on the command line"
        if r.setup["xen_version_source"] == "given"
        else f'ALERT\'s default: the paper ran Xen 3.0.3, so ALERT uses "{PAPER_XEN_VERSION}" '
        "wherever the scheduler has it, else the earliest release where it can hold an allocation"
    )
    return f'Behaviour of **Xen {r.xen_version}** (`xen_version = "{r.xen_version}"`, {how}).'


def _report(r: AlertResult) -> str:
    s = r.setup
    pooled = r.summary["all_samples"]
    n_pts = pooled["samples"]
    lines = [
        f"# ALERT: {r.label}{', SMP variant' if r.smp else ''}",
        "",
        "ALERT (ALlocation ERror Test, Cherkasova, Gupta and Vahdat 2007, §5.2) measures how "
        "accurately a scheduler holds a CPU-hungry domain to a fixed allocation A. Each second "
        "the domain's CPU usage U is sampled; the relative error is **Er = (U − A)/A**, so a "
        "positive error means the domain got *more* than its allocation and −100 % means it "
        "got nothing. (The paper prints (A − U)/A, which cannot exceed +100 % and does not fit "
        "the errors it reports; see docs/alert.md.)",
        "",
        "## Setup",
        "",
        f"- Scheduler: **{r.scheduler}**. {_version_line(r)}",
        f"- Host: {s['pcpus']} PCPU{'s' if s['pcpus'] > 1 else ''}, platform profile "
        f"`{s['host']['profile']}` (context switch {s['host']['ctx_switch_ns']} ns, IPI latency "
        f"{s['host']['ipi_latency_ns']} ns).",
        f"- Allocation of A % to a domain: {s['allocation_rule']}.",
    ]
    if r.smp:
        lines.append(
            "- Dom0, Dom1 and Dom2 each run a CPU-hungry loop (one VCPU) and are each allocated "
            f"A = {', '.join(_fmt_pct(t) for t in s['targets_pct'])} %; the error of every domain "
            "is reported (paper: 66 % each, 10 min)."
        )
    else:
        d0 = s["dom0"]
        load = {
            "xenmon": "a light periodic load standing for XenMon: busy "
            f"{_fmt_pct(d0.get('util_pct', 0))} % "
            f"of every {_fmt_pct(XENBAKED_POLL_MS)} ms (xenbaked's poll interval)",
            "hog": "a CPU-hungry loop (Dom0 always wants more than its allocation)",
            "idle": "nothing (Dom0 stays blocked)",
        }[d0["load"]]
        lines += [
            f"- Dom0: allocated {_fmt_pct(d0['allocation_pct'])} % "
            f"({', '.join(f'{k} = {v}' for k, v in d0['allocation'].items())}); it runs {load}.",
            "- Dom1: one VCPU running a CPU-hungry loop, allocated A % per run.",
        ]
    lines += [
        f"- Targets A: {', '.join(_fmt_pct(t) for t in s['targets_pct'])} % of one PCPU; "
        f"{s['duration_s']:g} s measured per target after {s['warmup_s']:g} s of warm-up; "
        f"sampled every {s['sample_ms']:g} ms; seed {s['seed']}.",
        f"- Simulated events: {r.events:,}; wall time {r.wall_s:.1f} s.",
        "",
        "## Results per target",
        "",
        'Er in %. "mean U" and the 1-s statistics are over the 1-s samples; "whole-run Er" '
        "is the error of the usage over the whole measured run (the paper's 3-minute "
        "granularity, Fig. 9).",
        "",
        _target_table(r),
        "",
    ]
    if not r.smp:
        lines += [
            "Dom0's mean usage per target: "
            + ", ".join(f"{_fmt_pct(t)} %: {u:.2f} %" for t, u in r.dom0_usage_pct.items())
            + ".",
            "",
        ]
    lines += [
        f"Over all {n_pts} samples: mean Er {_f(pooled['mean_error_pct'])} %, p5 "
        f"{_f(pooled['p5_error_pct'])} %, p95 {_f(pooled['p95_error_pct'])} %; "
        + ", ".join(f"{100 * pooled[f'within_{w}pct']:.0f} % within ±{w} %" for w in WITHIN_PCT)
        + ".",
        "",
        "## What the paper reports",
        "",
        "Cherkasova et al. ran ALERT on Xen 3.0.3 (1-GHz Pentium III) in NWC mode for "
        "Credit (30 ms slices) and SEDF (10 ms period), Figs 7–9, and the SMP variant for "
        "Credit (Fig. 11a). Their measured results are held back for "
        "validation in this project's literature digest, so **no published numbers are quoted "
        "here** and none are compared. The one related figure the paper states is its "
        'requirement for a workload manager: an allocation error of "typically, 1–2%" over '
        'control intervals of "e.g. 5 seconds". The paper does not say whether that error is '
        f'relative; the "within ±{MANAGER_ERROR_PCT} %" column above applies it to the relative '
        "error Er of each 1-s sample.",
        "",
        "## Plots",
        "",
        f"- `{PLOT_FILES['fig7']}` (like Fig. 7): the error of every 1-s sample per "
        f"{'domain' if r.smp else 'target'}.",
        f"- `{PLOT_FILES['fig8']}` (like Fig. 8): CDF of the negative and complementary CDF of "
        "the positive errors over all samples.",
        f"- `{PLOT_FILES['fig9']}` (like Fig. 9): the error over the whole run per "
        f"{'domain' if r.smp else 'target'}.",
    ]
    if r.smp:
        lines.append(f"- `{SMP_TIMESERIES_PLOT}` (like Fig. 11a): each domain's error over time.")
    lines += [
        "",
        f"![error at 1-s granularity]({PLOT_FILES['fig7']})",
        "",
        f"![error distribution]({PLOT_FILES['fig8']})",
        "",
        f"![error over the whole run]({PLOT_FILES['fig9']})",
        "",
    ]
    if r.smp:
        lines += [f"![SMP error over time]({SMP_TIMESERIES_PLOT})", ""]
    return "\n".join(lines)


def _compare_report(c: CompareResult) -> str:
    results = c.results
    first = results[0]
    lines = [
        "# ALERT comparison: " + " vs ".join(r.label for r in results),
        "",
        "Every run uses the same setup (see each sub-folder's report.md); only the scheduler "
        "(and its Xen version) differs. Er = (U − A)/A, positive = over-allocation.",
        "",
        "| run | folder | version | allocation rule |",
        "|---|---|---|---|",
    ]
    for f, r in zip(c.folder_names(), results, strict=True):
        lines.append(
            f"| {r.label} | `{f}/` | {r.xen_version or 'n/a'} | {r.setup['allocation_rule']} |"
        )
    lines += ["", "## Per target", ""]
    header = ["A (%)"] + (["domain"] if first.smp else [])
    for r in results:
        header += [f"{r.label}: mean U", "p5 / p95 Er", "whole-run Er"]
    rows = []
    for i, row in enumerate(first.targets.to_dict(orient="records")):
        cells = [_fmt_pct(row["target_pct"])] + ([row["domain"]] if first.smp else [])
        for r in results:
            rr = r.targets.iloc[i]
            cells += [
                _f(rr["mean_usage_pct"], 2),
                f"{_f(rr['p5_error_pct'])} / {_f(rr['p95_error_pct'])}",
                _f(rr["run_error_pct"]),
            ]
        rows.append(cells)
    lines += [_md_table(header, rows), "", "## All samples", ""]
    for r in results:
        p = r.summary["all_samples"]
        lines.append(
            f"- {r.label}: mean Er {_f(p['mean_error_pct'])} %, p5 {_f(p['p5_error_pct'])} %, "
            f"p95 {_f(p['p95_error_pct'])} %; "
            + ", ".join(f"{100 * p[f'within_{w}pct']:.0f} % within ±{w} %" for w in WITHIN_PCT)
        )
    lines += [
        "",
        "## Plots",
        "",
        f"![error at 1-s granularity]({COMPARE_PLOT_FILES['fig7']})",
        "",
        f"![error distribution]({COMPARE_PLOT_FILES['fig8']})",
        "",
        f"![error over the whole run]({COMPARE_PLOT_FILES['fig9']})",
        "",
    ]
    return "\n".join(lines)


# ----- command line ----------------------------------------------------------------------------


def _number_list(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a list of numbers; expected e.g. 1,2,3"
        ) from None


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register `vmsched alert` on an argparse subparsers object; returns its parser.

    The parser's default `func` is `main`, so a CLI can dispatch with `args.func(args)`.
    """
    p = subparsers.add_parser(
        "alert",
        help="the ALERT allocation-error benchmark (Cherkasova et al. 2007)",
        description=(
            "ALERT: hold a CPU-hungry Dom1 to an allocation A on one PCPU (Dom0 allocated 6 %), "
            "sample its usage U every second and report Er = (U - A)/A per target, with the "
            "paper's plots. Exit status: 0 done, 2 bad input."
        ),
    )
    p.add_argument("--scheduler", default=None, help="scheduler to test (default: credit)")
    p.add_argument(
        "--compare",
        default=None,
        metavar="S1,S2[,...]",
        help='run several schedulers and plot them together, e.g. "credit,sedf" or '
        '"credit@3.0,credit@4.22"',
    )
    p.add_argument(
        "--xen-version",
        default=None,
        metavar="V",
        help='Xen release whose behaviour to reproduce (default: "3.0.3", the paper\'s, where '
        "the scheduler has it)",
    )
    p.add_argument(
        "--targets",
        type=_number_list,
        default=None,
        metavar="A1,A2,...",
        help="allocation targets in %% of one PCPU (default: 1..10,20..90)",
    )
    p.add_argument(
        "--duration-s",
        type=float,
        default=None,
        metavar="S",
        help="measured seconds per target (default 180; 600 with --smp; 10 with --quick)",
    )
    p.add_argument(
        "--quick", action="store_true", help="targets 1,5,10,50,90 and 10 s each: a run of seconds"
    )
    p.add_argument(
        "--smp",
        action="store_true",
        help="the SMP variant: 2 PCPUs, Dom0/Dom1/Dom2 each a CPU hog allocated 66 %%",
    )
    p.add_argument(
        "--dom0-load",
        choices=DOM0_LOADS,
        default=None,
        help="what Dom0 runs under its 6 %% allocation (default: xenmon)",
    )
    p.add_argument(
        "--dom0-util-pct",
        type=float,
        default=None,
        metavar="P",
        help=f"CPU demand of the xenmon Dom0 load (default {DOM0_XENMON_UTIL_PCT:g})",
    )
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="parallel simulations (default: number of CPUs)",
    )
    p.add_argument(
        "--out",
        default="results/alert",
        metavar="DIR",
        help="output folder (default results/alert)",
    )
    p.set_defaults(func=main)
    return p


def _print_summary(r: AlertResult) -> None:
    print(
        f"ALERT {r.label}{' SMP' if r.smp else ''}: Er = (U - A)/A, % (positive = over-allocation)"
    )
    head = (
        f"{'A %':>6} {'domain':>6} {'mean U':>8} {'mean Er':>8} {'p5 Er':>8} {'p95 Er':>8} "
        f"{'run Er':>8} {'±2 %':>6}"
    )
    print(head)
    for row in r.targets.to_dict(orient="records"):
        print(
            f"{_fmt_pct(row['target_pct']):>6} {row['domain']:>6} "
            f"{_f(row['mean_usage_pct'], 2):>8} "
            f"{_f(row['mean_error_pct']):>8} {_f(row['p5_error_pct']):>8} "
            f"{_f(row['p95_error_pct']):>8} {_f(row['run_error_pct']):>8} "
            f"{100 * row['within_2pct']:>5.0f}%"
        )


def main(args: argparse.Namespace) -> int:
    """`vmsched alert`: run, write the outputs, print a short table. Returns the exit status.

    Every input (including the output folder) is checked before anything is simulated.
    """
    options = dict(
        targets=args.targets,
        duration_s=args.duration_s,
        quick=args.quick,
        seed=args.seed,
        dom0_load=args.dom0_load,
        dom0_util_pct=args.dom0_util_pct,
        warmup_s=WARMUP_S,
        sample_ms=SAMPLE_MS,
    )
    try:
        if args.compare is not None:
            if args.scheduler is not None:
                raise ScenarioError(
                    "--scheduler and --compare were both given; expected one of them",
                    path="alert.scheduler",
                )
            entries = _compare_entries(
                [e for e in args.compare.split(",") if e.strip()], args.xen_version
            )
        else:
            entries = [(args.scheduler or "credit", args.xen_version)]
        exp = _experiment(entries, smp=args.smp, jobs=args.jobs, **options)
        prepare_out_dir(args.out)
    except ScenarioError as exc:
        print(f"vmsched: error: {exc}", file=sys.stderr)
        return 2
    results = exp.execute(progress=True)
    if args.compare is not None:
        out = CompareResult(results, results[0].wall_s).save(args.out)
    else:
        out = results[0].save(args.out)
    for r in results:
        _print_summary(r)
    print(f"wrote {out}/ (report.md, alert.csv, targets.csv, summary.json, plots)")
    return 0


def _standalone(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vmsched")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(_standalone())
