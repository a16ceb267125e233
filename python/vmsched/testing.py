"""Property tests for a scheduler, yours included: `check_scheduler("file.py:Class")`.

The checks the built-in schedulers pass in `crates/vmsched-core/tests/properties.rs`,
over random scenarios drawn from a seeded generator (hosts of 1-4 PCPUs, 1-5
domains of 1-3 VCPUs with random hard affinity, CPU hogs, duty cycles, sysbench
and idle domains, a pause and an affinity change on the way), for any scheduler
the catalogue knows:

- **the engine's invariants** hold at every decision (a VCPU runs on at most one
  PCPU, only runnable VCPUs run, within their hard affinity, ...): a violation
  stops the run with an error naming the scheduler, the hook and the VCPU;
- **accounting is exact**: each VCPU's running + runnable + blocked + offline
  time equals the time simulated, to the nanosecond, and all VCPUs together never
  ran longer than the PCPUs existed;
- **never on two PCPUs at once**: no VCPU ran more than 100 % of a PCPU in any
  sample of the time series (the engine's check at each decision, seen whole);
- **determinism**: the same scenario and seed give bit-identical results twice.

    from vmsched.testing import check_scheduler
    check_scheduler("wrr.py:WeightedRR", cases=20)   # raises AssertionError naming the case

Parameters the scheduler declares are drawn from their declared ranges too.
"""

from __future__ import annotations

import json
import random
from typing import Any

from vmsched import _core
from vmsched.api import catalogue
from vmsched.errors import from_core
from vmsched.scenario import Scenario
from vmsched.scheduler import is_spec, register

WORKLOADS = (
    {"kind": "cpu-hog"},
    {"kind": "duty-cycle", "util_pct": 30, "period_ms": 20},
    {"kind": "duty-cycle", "util_pct": 70, "period_ms": 7},
    {"kind": "sysbench-cpu"},
    {"kind": "idle"},
)


def _draw_param(rng: random.Random, p: dict[str, Any]) -> Any:
    """A value of a declared parameter within its range (None: keep the default)."""
    lo, _, hi = str(p.get("range", "")).partition("..")
    try:
        lo_v, hi_v = float(lo), float(hi.lstrip("="))
    except ValueError:
        return None
    if p["expected"].startswith("an integer"):
        hi_v = min(hi_v, max(lo_v, 1000.0))
        return rng.randint(int(lo_v), int(hi_v))
    if p["expected"].startswith("a number"):
        hi_v = min(hi_v, max(lo_v, 100.0))
        return round(rng.uniform(lo_v, hi_v), 3)
    return None


def random_scenario(scheduler: str, seed: int) -> Scenario:
    """A random valid-looking scenario for `scheduler` (validation may still refuse
    a drawn parameter; `check_scheduler` then draws again)."""
    rng = random.Random(seed)
    info = next(s for s in catalogue()["schedulers"] if s["name"] == scheduler)
    npcpus = rng.randint(1, 4)
    sc = Scenario(
        pcpus=npcpus,
        scheduler=scheduler,
        duration_s=round(rng.uniform(0.2, 1.0), 3),
        seed=rng.randint(1, 10_000),
        sample_ms=50,
    )
    domain_params = [p for p in info["params"] if p["scope"] == "domain"]
    names = []
    for i in range(rng.randint(1, 5)):
        name = f"d{i}"
        names.append(name)
        sched = {}
        for p in domain_params:
            if rng.random() < 0.5 and (v := _draw_param(rng, p)) is not None:
                sched[p["name"]] = v
        affinity = None
        if npcpus > 1 and rng.random() < 0.3:
            affinity = sorted(rng.sample(range(npcpus), rng.randint(1, npcpus)))
        sc.add_domain(
            name,
            vcpus=rng.randint(1, 3),
            workload=dict(rng.choice(WORKLOADS)),
            affinity=affinity,
            sched=sched or None,
        )
    if rng.random() < 0.5:
        victim = rng.choice(names)
        sc.add_action(sc.duration_s * 0.3, victim, pause=True)
    if npcpus > 1 and rng.random() < 0.5:
        sc.add_action(sc.duration_s * 0.45, rng.choice(names), affinity=[0])
    for act in list(sc.data.get("action", [])):
        if act.get("pause"):
            sc.add_action(sc.duration_s * 0.6, act["domain"], pause=False)
    return sc


def _simulate(sc: Scenario) -> tuple[dict[str, Any], list[tuple[int, ...]], dict[str, Any], int]:
    """Run to the end: (summary without wall time, per-VCPU state times, series, end ns)."""
    sim = _core.Sim(sc.to_json())
    end = int(round(sc.duration_s * 1e9))
    try:
        sim.run_until(end)
    except Exception as exc:  # noqa: BLE001 - translated
        raise from_core(exc, sc.source) from None
    summary = json.loads(sim.summary(0.0))
    summary.pop("wall_s", None)
    return summary, sim.vcpu_states(), sim.series(), sim.now_ns()


def check_case(sc: Scenario) -> None:
    """Every property on one scenario; AssertionError (or the scheduler's error) if broken."""
    import numpy as np

    summary, states, series, now = _simulate(sc)
    npcpus = sc.data["host"]["pcpus"]
    for dom, vcpu, running, runnable, blocked, offline in states:
        total = running + runnable + blocked + offline
        assert total == now, (
            f"domain {dom} vcpu {vcpu}: states add up to {total} ns, not the {now} ns simulated"
        )
        assert running <= now, f"domain {dom} vcpu {vcpu} ran {running} ns of {now}"
    ran = sum(s[2] for s in states)
    assert ran <= npcpus * now, f"VCPUs ran {ran} ns in all on {npcpus} PCPUs in {now} ns"
    vcpu = np.frombuffer(series["vcpu"], dtype="<i4")
    cpu = np.frombuffer(series["cpu_pct"], dtype="<f4")
    per_vcpu = cpu[vcpu >= 0]
    if per_vcpu.size:
        worst = float(per_vcpu.max())
        assert worst <= 100.0 + 1e-3, f"a VCPU ran {worst:.3f} % of a PCPU in one sample"
    again = _simulate(sc)
    assert again[0] == summary and again[1] == states, "two runs of the same scenario differ"
    for key in ("time_s", "domain", "vcpu", "cpu_pct", "runnable_pct", "blocked_pct"):
        assert again[2][key] == series[key], f"two runs differ in the series' {key}"


def sched_state(sim: Any) -> dict[str, Any]:
    """The scheduler's state as data (`Scheduler.state()`, or a built-in's
    `SchedState`) of a `vmsched._core.Sim`: `global`, `pcpus`, `domains`, `vcpus`."""
    return json.loads(sim.sched_state())


def check_scheduler(scheduler: str, *, cases: int = 20, seed: int = 1) -> int:
    """Check `scheduler` (a built-in name or your `file.py:Class`) on `cases` random
    scenarios; returns the number checked. An AssertionError says which property
    broke and on which scenario (its tree in the message, to rerun with `vmsched.run`)."""
    if is_spec(scheduler):
        register(scheduler, where="check_scheduler")
    from vmsched.errors import ScenarioError, SchedulerError

    done, draw = 0, seed
    while done < cases:
        sc = random_scenario(scheduler, draw)
        draw += 1
        try:
            sc.validate()
        except SchedulerError:
            raise
        except ScenarioError:
            continue  # a drawn parameter the scheduler's own checks refuse: draw again
        try:
            check_case(sc)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nscenario: {sc.to_json()}") from None
        done += 1
    return done
