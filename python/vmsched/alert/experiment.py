"""ALERT as an experiment: plan every run of one or more schedulers (validating all input
first), simulate them together, assemble one AlertResult per scheduler."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from vmsched.alert.allocation import (
    _allocation_for,
    _check_targets,
    _express,
    _positive,
    _scheduler_info,
    resolve_version,
)
from vmsched.alert.plots import COMPARE_PLOT_FILES, _compare_plots
from vmsched.alert.report import _compare_report
from vmsched.alert.results import AlertResult, _assemble, _csv, _jsonable, _records
from vmsched.alert.runs import Where, _Job, _run_jobs, build_scenario, measured_domains
from vmsched.alert.setup import (
    DOM0_ALLOCATION_PCT,
    DOM0_LOADS,
    DOM0_XENMON_UTIL_PCT,
    PAPER_DURATION_S,
    PAPER_TARGETS_PCT,
    PCPUS,
    QUICK_DURATION_S,
    QUICK_REPLICATIONS,
    QUICK_TARGETS_PCT,
    REPLICATIONS,
    SAMPLE_MS,
    SMP_DURATION_S,
    SMP_PCPUS,
    SMP_TARGET_PCT,
    WARMUP_S,
    XENBAKED_POLL_MS,
    _fmt_pct,
)
from vmsched.api import prepare_out_dir, write_atomic
from vmsched.batch import RunStore, check_backend, check_jobs
from vmsched.errors import ScenarioError

# ----- the experiment --------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    scheduler: str
    version: str | None
    targets: list[float]
    jobs: list[_Job]
    setup: dict[str, Any]
    seeds: tuple[int, ...] = (1,)


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
    replications: int | None = None,
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
    if replications is None:
        replications = QUICK_REPLICATIONS if quick else REPLICATIONS
    if isinstance(replications, bool) or not isinstance(replications, int) or replications < 1:
        raise ScenarioError(
            f"{replications!r} is not allowed; expected an integer >= 1", path="alert.replications"
        )
    seeds = tuple(seed + k for k in range(replications))
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
    for target in target_list:
        for s in seeds:
            sc = build_scenario(
                scheduler,
                target,
                xen_version=version,
                smp=smp,
                duration_s=duration_s,
                seed=s,
                dom0_load=load,
                dom0_util_pct=util,
                warmup_s=warmup_s,
                sample_ms=sample_ms,
            ).validate()
            # The windows' phase is part of the scenario's warm-up (`window_phase_s`).
            measure_from_s = float(sc.data["run"]["warmup_s"])
            jobs.append(
                _Job(index=first_index + len(jobs), scenario=sc.data, warmup_s=measure_from_s)
            )
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
        "replications": replications,
        "seeds": list(seeds),
        "measured_domains": list(measured_domains(smp)),
    }
    if not smp:
        setup["dom0"] = {
            "allocation_pct": DOM0_ALLOCATION_PCT,
            "allocation": _express(info, DOM0_ALLOCATION_PCT, version),
            "load": load,
            **({"util_pct": util, "period_ms": XENBAKED_POLL_MS} if load == "xenmon" else {}),
        }
    return _Plan(scheduler, version, target_list, jobs, setup, seeds)


@dataclass(frozen=True)
class _Experiment:
    """One or more validated ALERT runs (scheduler, version), ready to simulate."""

    plans: list[_Plan]
    smp: bool
    where: Where

    def execute(
        self, progress: bool | Callable[[int, int], None], store: RunStore | None = None
    ) -> list[AlertResult]:
        """Simulate every target of every run through the batch layer (runs found in
        `store`, a vmsched.batch.RunStore, are not simulated again)."""
        label = "ALERT " + " vs ".join(p.scheduler for p in self.plans)
        t0 = time.perf_counter()
        jobs = [j for p in self.plans for j in p.jobs]
        outcomes = _run_jobs(jobs, self.where, label, progress, store)
        wall = time.perf_counter() - t0
        results = []
        for p in self.plans:
            mine = outcomes[p.jobs[0].index : p.jobs[-1].index + 1]
            r = _assemble(p.scheduler, p.version, self.smp, p.targets, mine, p.setup, wall, p.seeds)
            r.where = self.where
            results.append(r)
        return results


def _experiment(
    entries: list[tuple[str, str | None]],
    *,
    smp: bool,
    jobs: int | None,
    backend: str = "local",
    address: str | None = None,
    **options: Any,
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
    n_jobs = check_jobs(jobs, path="alert.jobs")
    return _Experiment(plans, smp, Where(check_backend(backend, address), n_jobs, address))


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
    backend: str = "local",
    address: str | None = None,
    replications: int | None = None,
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
    runs under its 6 % allocation. Targets run in parallel on `jobs` workers
    (default: all CPUs) of the batch layer's `backend` ("local" processes, or "ray"
    at `address`: vmsched.batch), which also draws the plots; results depend on
    neither. `progress=True` shows a
    bar on a terminal; a callable receives (runs done, runs in all). Each target runs
    on `replications` seeds (`seed`, `seed`+1, ...; default REPLICATIONS, or
    QUICK_REPLICATIONS with `quick`): the 1-s statistics pool their samples, the
    whole-run error is that of the mean usage, with its 95 % interval.
    Raises ScenarioError on bad input, before anything is simulated.
    """
    exp = _experiment(
        [(scheduler, xen_version)],
        smp=smp,
        jobs=jobs,
        backend=backend,
        address=address,
        replications=replications,
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

    def save(self, out: str | Path, figures: bool = True) -> Path:
        """Each run's full output in its own sub-folder, plus the comparison plots (unless
        `figures` is False), targets.csv (all runs) and report.md at the top."""
        out_dir = prepare_out_dir(out)
        for name, r in zip(self.folder_names(), self.results, strict=True):
            r.save(out_dir / name, figures=figures)
        both = pd.concat([r.targets for r in self.results], ignore_index=True)
        write_atomic(out_dir / "targets.csv", _csv(both))
        write_atomic(out_dir / "summary.json", json.dumps(_jsonable(self.summary), indent=2) + "\n")
        if figures:
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
    backend: str = "local",
    address: str | None = None,
    replications: int | None = None,
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
        backend=backend,
        address=address,
        replications=replications,
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
