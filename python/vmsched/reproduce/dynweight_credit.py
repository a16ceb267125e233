"""The dynamic-weight Credit thesis chapter: original Credit vs Credit with dynamic
weight update, three guests loaded 20/60/80 % and 10/15/90 % (Tables 6.7-6.10,
Figs 6.1-6.4).

- `dynweight-credit`: each guest's PCPU share at every 10-s sample of a 120-s run,
  under `credit` and `credit-dynweight` (vmsched's dynamic-weight rule: the
  chapter's own is in a missing chapter, docs/schedulers/credit-dynweight.md).

The chapter's results (Tables 6.7-6.10, claims 40-43) are kept for
independent validation: nothing is published here and no claim is checked.
The chapter's stated goal (expected share_i = load_i / sum of loads) is shown
beside the results as `distance_pts`, the mean distance of the shares from it.

**Samples.** A reproduction measures one summary per run, and a summary covers
the measured part of the run only. The sample ending at t s is therefore its
own run: the same scenario and seed, run for t s with the first t - 10 s as
warm-up (the simulation is deterministic, so its first t s are the first t s of
the 120-s run; the warm-up only restarts the measurements).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vmsched.reproduce.checks import num
from vmsched.reproduce.framework import (
    Experiment,
    Figure,
    Panel,
    Run,
    Table,
    Timing,
    run_source,
)
from vmsched.reproduce.setups import label as base_label
from vmsched.reproduce.setups import xenmon
from vmsched.scenario import Scenario

EXP_ID = "dynweight-credit"
PAPER = "The dynamic-weight Credit thesis chapter"
SCHEDULERS = ("credit", "credit-dynweight")
#: The chapter names no release; 3.0.3 as in `dynweight-dom0-ratio` (the tree of the
#: experiment the chapter mirrors). The dynamic-weight rule runs on any of Credit's.
XEN_VERSION = "3.0.3"
#: "a workload ratio of 20%, 60% and 80%" and "10%, 15% and 90%".
LOADS = {"20/60/80": (20, 60, 80), "10/15/90": (10, 15, 90)}
DOMAINS = ("domain1", "domain2", "domain3")
#: One cycle of the load generator (the chapter names none; 100 ms is the usual cycle of
#: CPU load generators and `duty-cycle`'s default).
CYCLE_MS = 100.0
#: Single-VCPU guests on one PCPU, every one at Credit's default weight.
PCPUS = 1
WEIGHT = 256
#: How a guest's "workload ratio" becomes CPU demand (docs/schedulers/credit-dynweight.md):
#: - `allocation` (the chapter's words, "a workload ratio of 20% ... of the CPU they were
#:   allocated"): the guest asks for that share of the CPU the scheduler allocates it, its
#:   weight's part of the PCPU (a third each at equal weights), as work that arrives every
#:   cycle (`duty-cycle`). No guest asks for more than its allocation, so plain Credit gives
#:   every guest what it asks for.
#: - `vcpu` (a sensitivity case, the earlier reading): the guest is busy that share of
#:   wall-clock time on its own VCPU (`transient`), 160 % and 115 % of the one PCPU in
#:   total, so the loads contend and the scheduler decides the shares.
LOAD_MODELS = ("allocation", "vcpu")
#: 120 s, sampled every 10 s (quick: 6 s, every 2 s).
FULL = Timing(duration_s=120, warmup_s=0)
#: The sensitivity tables' grid (`Experiment.sensitivity`); `--quick` runs the same
#: lengths with one seed (`QUICK_REPLICATIONS`): the runs are cheap.
SENSITIVITY = Timing(duration_s=6, warmup_s=0, quick=True)
QUICK = replace(SENSITIVITY, smoke=True)
SAMPLE_S = {False: 10.0, True: 2.0}

UNITS = {
    **{f"{d}_share_pct": "%" for d in DOMAINS},
    "distance_pts": "points",
}


def label(scheduler: str, params: dict[str, Any]) -> str:
    """`Credit`, `Credit, dynamic weights`."""
    return base_label(scheduler, params)


def target(loads: str) -> tuple[float, ...]:
    """The chapter's expected shares: load_i / sum of loads, in %."""
    values = LOADS[loads]
    return tuple(100 * v / sum(values) for v in values)


def allocation_pct(n_domains: int = len(DOMAINS)) -> float:
    """A guest's allocation at equal weights: its weight's part of the PCPUs, in % of one."""
    return 100.0 * PCPUS * WEIGHT / (WEIGHT * n_domains)


def _scenario(
    sched: str, loads: str, model: str, t_s: float, sample_s: float, seed: int
) -> Scenario:
    params = {"loads": loads, "load_model": model, "t_s": t_s}
    sc = Scenario(
        pcpus=PCPUS,
        scheduler={"name": sched, "xen_version": XEN_VERSION},
        duration_s=t_s,
        warmup_s=t_s - sample_s,
        seed=seed,
        sample_ms=1000,
        source=run_source(EXP_ID, sched, params),
    )
    for i, (name, pct) in enumerate(zip(DOMAINS, LOADS[loads], strict=True)):
        if model == "allocation":
            workload: dict[str, Any] = {
                "kind": "duty-cycle",
                "threads": 1,
                "util_pct": round(pct * allocation_pct() / 100, 6),
                "period_ms": CYCLE_MS,
            }
        else:
            on = CYCLE_MS * pct / 100
            workload = {
                "kind": "transient",
                "threads": 1,
                "on_ms": on,
                "off_ms": CYCLE_MS - on,
                "offset_ms": round(i * CYCLE_MS / len(DOMAINS), 3),
            }
        sc.add_domain(name, sched={"weight": WEIGHT}, workload=workload)
    return sc


def _times(timing: Timing) -> list[float]:
    step = SAMPLE_S[timing.quick]
    n = round(timing.duration_s / step)
    return [step * (k + 1) for k in range(n)]


def _grid(timing: Timing) -> list[Run]:
    step = SAMPLE_S[timing.quick]
    runs = []
    for model in LOAD_MODELS:
        for loads in LOADS:
            for sched in SCHEDULERS:
                for t in _times(timing):
                    sc = _scenario(sched, loads, model, t, step, timing.seed)
                    params = {"loads": loads, "load_model": model, "t_s": t}
                    runs.append(Run(sched, params, sc))
    return runs


def _measure(run: Run, s: dict[str, Any]) -> dict[str, float]:
    return {f"{d}_share_pct": xenmon(s, d, "cpu_pct") for d in DOMAINS}


def _derive(t: Table) -> list[tuple[str, dict[str, Any], str, float]]:
    """Per load model, scheduler and load mix: the mean share over the samples, and the mean
    distance (points) of every sample's shares, as parts of the CPU the three used, from the
    chapter's expected shares."""
    out = []
    for model in LOAD_MODELS:
        for loads in LOADS:
            goal = target(loads)
            for sched in SCHEDULERS:
                samples: dict[str, list[float]] = {}
                for d in DOMAINS:
                    for r in t.where(
                        f"{d}_share_pct", scheduler=sched, loads=loads, load_model=model
                    ):
                        if "t_s" in r.params:
                            samples.setdefault(r.params["t_s"], []).append(r.simulated)
                if not samples:
                    continue
                where = {"loads": loads, "load_model": model}
                for k, d in enumerate(DOMAINS):
                    values = [v[k] for v in samples.values()]
                    out.append((sched, where, f"{d}_share_pct", sum(values) / len(values)))
                dist = [
                    abs(100 * v / sum(shares) - goal[k])
                    for shares in samples.values()
                    for k, v in enumerate(shares)
                    if sum(shares) > 0
                ]
                out.append((sched, where, "distance_pts", sum(dist) / len(dist)))
    return out


def _setup() -> str:
    goals = "; ".join(
        f"{loads} %: {' / '.join(num(g) for g in target(loads))} %" for loads in LOADS
    )
    alloc = num(allocation_pct())
    return (
        "One PCPU; three single-VCPU guests (Domain 1-3) at Credit's default weight 256, "
        "loaded 20/60/80 % or 10/15/90 %. `load_model=allocation` (the chapter's reading): "
        f"each guest asks for that share of the CPU it is allocated, {alloc} % of the PCPU "
        "(its weight's part), as CPU work arriving every 100 ms (`duty-cycle`, seeded "
        "phase): 6.7/20/26.7 % and 3.3/5/30 % of the PCPU. `load_model=vcpu` (sensitivity, "
        "the earlier reading): each guest busy that share of wall-clock time on its own "
        "VCPU, cycling every 100 ms (`transient`), started a third of a cycle apart, "
        "so that the loads contend (160 % and 115 % of the PCPU). Original Credit "
        "(`credit`) and Credit with dynamic weights (`credit-dynweight`): each guest's PCPU "
        "share (XenMon's CPU %) in every 10-s window of a 120-s run: 96 runs (each window "
        "its own run, see the decisions). The chapter's expected shares, load_i / sum of "
        f"loads: {goals}; `distance_pts` is the mean distance (in points) of each "
        "domain's part of the CPU the three used (its share / the sum of the three) from "
        "its expected share, over the three domains and the twelve samples."
    )


DYNWEIGHT_CREDIT = Experiment(
    id=EXP_ID,
    title="original vs dynamic-weight Credit: three guests loaded 20/60/80 % and 10/15/90 %",
    paper=PAPER,
    source="Tables 6.7-6.10, Figs 6.1-6.4 (claims 40-43 held back)",
    setup=_setup(),
    decisions=(
        "**Load model**. The chapter gives the guests 'a workload ratio "
        "of 20%, 60% and 80% of the CPU they were allocated in the virtual machine' (and "
        "10/15/90 %): a guest's load is a fraction of its allocation, the CPU the scheduler "
        "allots it, which at equal weights is a third of the PCPU. So each guest asks for "
        "20 % (60, 80 %) of a third of the PCPU, as CPU work arriving every 100 ms "
        "(`duty-cycle` with `util_pct` = load x 33.3 %). Under it no guest asks for more "
        "than its allocation, and plain Credit, work-conserving, gives every guest what it "
        "asks for (6.7/20/26.7 % of the PCPU), shares already in the proportion of the "
        "loads; the chapter's 'original Credit scheduler [allocates] based on the "
        "predefined weight values' is the allocation (equal thirds), of which each guest "
        "uses its load's part. The earlier reading, busy that share of wall-clock time on "
        "its VCPU (`transient`), makes the loads contend (160 %); on 3.0.3 (no BOOST: a "
        "waking guest preempts only an OVER one) plain Credit gives 12.3/43.3/44.4 % (with "
        "BOOST, max-min fair 20/40/40 %). It is kept as `load_model=vcpu`, the case where "
        "the dynamic weights have something to decide.",
        "The cycle is 100 ms (the chapter names none; the usual cycle of CPU load "
        "generators). `allocation`: each guest's first period starts at a seeded random "
        "offset. `vcpu`: the three guests start 0, 33.3 and 66.7 ms into the cycle.",
        "One PCPU and one VCPU per guest, no other domain: the chapter's setup chapter is "
        "missing; 'PCPU share' is then the % of the one PCPU, and the allocation a third "
        "of it.",
        "Every domain starts at weight 256 (Xen's default; the chapter does not say); "
        "`credit-dynweight` runs with its defaults (`window_ms` 1000, `gain` 0.5), every "
        "guest dynamic. vmsched's rule is not the chapter's, which is missing: see "
        "docs/schedulers/credit-dynweight.md.",
        f'Xen release: not given; `xen_version` "{XEN_VERSION}" for both, as in '
        "`dynweight-dom0-ratio`.",
        "The expected shares add up to 100 % while the loads can leave the PCPU idle "
        "(with 10/15/90 %, whenever the 90 % load is off and the others are too), so "
        "`distance_pts` compares each domain's part of the CPU the three used, not its "
        "share of the PCPU; the shares themselves are XenMon's CPU %.",
        "Samples: the share in the 10-s window ending at t = 10, 20, ..., 120 s is measured "
        "by a run of t s whose first t - 10 s are warm-up (a reproduction measures one "
        "summary per run; the runs are deterministic, so each is the first t s of the same "
        "120-s run). The chapter sampled with xentop and XenMon every 10 s.",
        "Every configuration runs with several seeds (3, 1 with `--quick`); numbers are means "
        "with 95 % intervals.",
    ),
    units=UNITS,
    grid=_grid,
    measure=_measure,
    derive=_derive,
    full=FULL,
    quick=QUICK,
    sensitivity=SENSITIVITY,
    figures=tuple(
        Figure(
            file=f"fig{n}-shares-{loads.replace('/', '-')}-{model}.png",
            title=f"Figs {n}: PCPU share over time, loads {loads} % ({model} load model; "
            "expected " + " / ".join(num(g) for g in target(loads)) + " %)",
            x="t_s",
            xlabel="time (s)",
            panels=tuple(
                Panel(
                    f"Domain {k + 1} ({LOADS[loads][k]} % load)",
                    f"{d}_share_pct",
                    {"loads": loads, "load_model": model},
                )
                for k, d in enumerate(DOMAINS)
            ),
        )
        for model in LOAD_MODELS
        for n, loads in (("6.1-6.2", "20/60/80"), ("6.3-6.4", "10/15/90"))
    ),
    label=label,
    note="Tables 6.7-6.10 (claims 40-43) are kept for independent validation: "
    "no published numbers or claims are compared here. `distance_pts` measures "
    "the distance from the chapter's stated goal, not from its results.",
    flat_explained={
        "t_s": '`t_s` is not a parameter but the sampling instant of one 120-s run ("The '
        "results were taken for a period of 120 seconds, with 10 second being the sampling "
        'time interval"); a share that stays put from sample to sample is the steady state of '
        "constant loads under a scheduler that does not adapt, which is what plain Credit is "
        "expected to show beside the dynamic-weight variant."
    },
)

EXPERIMENTS = (DYNWEIGHT_CREDIT,)
