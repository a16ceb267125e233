"""The scenario of one ALERT run (one target, one seed), and running many of them through
the batch layer (vmsched.batch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vmsched.alert.allocation import _express, _frames, _scheduler_info
from vmsched.alert.setup import (
    DOM0_ALLOCATION_PCT,
    DOM0_LOADS,
    DOM0_XENMON_UTIL_PCT,
    PAPER_DURATION_S,
    PCPUS,
    SAMPLE_MS,
    SMP_PCPUS,
    WARMUP_S,
    XENBAKED_POLL_MS,
    _fmt_pct,
    window_phase_s,
)
from vmsched.api import run
from vmsched.batch import RunStore, run_all
from vmsched.errors import ScenarioError
from vmsched.scenario import Scenario

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
        doms = ("Dom0", "Dom1", "Dom2")
        sc.data["scheduler"].update(_frames(info, dict.fromkeys(doms, target_pct)))
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
    sc.data["scheduler"].update(_frames(info, {"Dom0": DOM0_ALLOCATION_PCT, "Dom1": target_pct}))
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


def _run_jobs(
    jobs: list[_Job], where: Where, label: str, progress, store: RunStore | None = None
) -> list[_Outcome]:
    """Run independent jobs through the batch layer (vmsched.batch); results in job order
    whatever the order they finish in, so the output does not depend on the workers."""
    return run_all(
        _simulate,
        jobs,
        backend=where.backend,
        jobs=where.jobs,
        address=where.address,
        batch_size=1,
        progress=progress,
        label=label,
        store=store,
    )


@dataclass(frozen=True)
class Where:
    """Where runs and figures go (vmsched.batch): backend, workers, Ray address."""

    backend: str = "local"
    jobs: int = 1
    address: str | None = None
