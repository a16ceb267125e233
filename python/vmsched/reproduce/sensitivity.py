"""Sensitivity of the verdicts to the estimated numbers.

Each profile number marked *estimate* in docs/calibration.md (`ESTIMATES`), and
each setup choice the papers leave open (`SETUP_ESTIMATES`: the open-loop
request rate), is halved and doubled in turn; the experiment's sensitivity grid
(`Experiment.sensitivity`: short runs, the grid `--quick` ran before it became
a smaller smoke check) is rerun with one seed for each, and every verdict is
compared with the same grid's verdict at the profiled value. The report
carries the table: which verdicts hold, which flip.

Short runs with one seed keep this affordable (`vmsched reproduce --all`
runs it for every experiment within the command's time budget); the table
says so, since a verdict of the full-length run may differ from the
sensitivity grid's.

The built-in profiles' numbers are read from their TOML files in the
repository (`crates/vmsched-core/profiles/`); where the package is installed
without them, the report says the table could not be made.
"""

from __future__ import annotations

import copy
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vmsched.reproduce.framework import Experiment, Reproduction, Run, Timing, run_experiments

#: The factors every estimate is scaled by.
FACTORS = (0.5, 2.0)
#: Profile numbers marked *estimate* in docs/calibration.md, per built-in profile, that the
#: reproductions' results hinge on: the direct switch and backend-batch costs, the
#: indirect switch costs (TLB/L1 refill, the guest's per-batch work, the L2 and L3 refill
#: per line) and the scheduler's own run time. Keys a profile does not have, or has at 0
#: (a mechanism off), are skipped.
_SWITCH_ESTIMATES = (
    "ctx_switch_ns",
    "io_batch_ns",
    "switch_refill_ns",
    "guest_batch_ns",
    "l2_fill_ns",
    "l3_fill_ns",
    "sched_invoke_ns",
)
ESTIMATES: Mapping[str, tuple[str, ...]] = {
    # Also its NIC's interrupt interval (the NIC is not named) and the variability
    # estimates (docs/calibration.md).
    "cherkasova2007": _SWITCH_ESTIMATES
    + ("nic_irq_interval_us", "request_cpu_cv", "io_cost_cv", "disk_service_cv"),
    "thesis2015": _SWITCH_ESTIMATES,
    "govindan2009": _SWITCH_ESTIMATES,
}
#: Setup numbers the papers leave open: (workload kind, parameter) scaled the same way.
SETUP_ESTIMATES: tuple[tuple[str, str], ...] = (
    ("web-server", "rate"),
    # The web guest's working set, where a reproduction states it (an estimate).
    ("web-server", "working_set_kb"),
)
#: Setup numbers derived from a tool's and a kernel's code rather than given by the paper,
#: varied the same way but only in the experiments named (id prefixes), so that the tables
#: of experiments that state the same parameter from their own paper are unchanged: iperf's
#: receive window as Linux 2.6.16 autotunes it (`setups.IPERF_RECV_SOCKET_BYTES`), and the
#: connections Apache 2 prefork and Linux's listen queue hold (`setups.WEB_HELD_CONNECTIONS`).
SCOPED_SETUP_ESTIMATES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("tcp-stream", "recv_socket_bytes", ("cherkasova2007-", "dynweight-dom0-ratio")),
    # The connections the web server holds (`setups.WEB_HELD_CONNECTIONS`).
    ("web-server", "backlog", ("cherkasova2007-", "dynweight-dom0-ratio")),
)

#: Scheduler parameters the papers leave open: (workload kind, scheduler parameter) of the
#: domains running that workload, scaled the same way (a slice at most its period). The
#: SEDF reservations the Govindan et al. setups derive for the CPU-bound neighbours and the
#: media server (docs/reproduce-proposals.md).
SCHED_ESTIMATES: tuple[tuple[str, str], ...] = (
    ("cpu-hog", "slice"),
    ("streaming", "slice"),
)

_PROFILES = Path(__file__).resolve().parents[3] / "crates" / "vmsched-core" / "profiles"


def builtin_profile(name: str) -> dict[str, Any] | None:
    """A built-in profile's table, from the repository's TOML (None if not there)."""
    path = _PROFILES / f"{name}.toml"
    if not path.is_file():
        return None
    return tomllib.loads(path.read_text())


def _hosts(data: dict[str, Any]) -> list[dict[str, Any]]:
    host = data.get("host")
    if isinstance(host, list):
        return [h for h in host if isinstance(h, dict)]
    return [host] if isinstance(host, dict) else []


def _profile_of(runs: Sequence[Run]) -> str | None:
    names = {h.get("profile") for r in runs for h in _hosts(r.scenario.data)}
    names.discard(None)
    if len(names) != 1:
        return None
    name = names.pop()
    return name if isinstance(name, str) else None


def _domains(data: dict[str, Any]) -> list[dict[str, Any]]:
    out = list(data.get("domain", []) or [])
    for h in _hosts(data):
        out += list(h.get("domain", []) or [])
    return [d for d in out if isinstance(d, dict)]


@dataclass(frozen=True)
class Variant:
    """One estimate scaled by one factor."""

    name: str
    factor: float
    #: Rewrites one run's scenario data in place.
    apply: Callable[[dict[str, Any]], None]
    #: For a setup alternative (factor NaN): its evidence, from `Alternative.evidence`.
    evidence: str = ""


def variants(exp: Experiment) -> list[Variant]:
    """The estimates this experiment uses, each at every factor."""
    runs = exp.runs(True, grid="sensitivity")
    out: list[Variant] = []
    profile = _profile_of(runs)
    table = builtin_profile(profile) if profile else None
    if table is not None:
        for key in ESTIMATES.get(profile, ()):
            base = table.get(key)
            if not isinstance(base, int | float) or isinstance(base, bool) or base == 0:
                continue
            for f in FACTORS:
                scaled = dict(table)
                scaled[key] = type(base)(round(base * f)) if isinstance(base, int) else base * f

                def apply(data: dict[str, Any], scaled: dict[str, Any] = scaled) -> None:
                    for h in _hosts(data):
                        h["profile"] = dict(scaled)

                out.append(Variant(f"profile {key} = {scaled[key]:g}", f, apply))
    setup = list(SETUP_ESTIMATES) + [
        (kind, param)
        for kind, param, ids in SCOPED_SETUP_ESTIMATES
        if any(exp.id.startswith(i) for i in ids)
    ]
    for kind, param in setup:
        out += _scaled(runs, "workload", kind, param, f"{kind} {param} x{{f:g}}")
    for kind, param in SCHED_ESTIMATES:
        out += _scaled(runs, "sched", kind, param, f"{kind} domains' {param} x{{f:g}}")
    if table is not None:
        # An alternative may carry base costs of its own over the built-in profile's table
        # (the thesis's four-PCPU host), so without the table none is run, like the estimates.
        for alt in exp.alternatives:
            out.append(Variant(f"setup: {alt.name}", math.nan, alt.apply, alt.evidence))
    return out


def _scaled(runs: list[Run], table: str, kind: str, param: str, label: str) -> list[Variant]:
    """`param` of the `table` (`workload` or `sched`) of every domain whose workload is
    `kind`, at each factor (a slice no longer than its period); none where no run sets it."""
    used = [
        d[table].get(param)
        for r in runs
        for d in _domains(r.scenario.data)
        if _kind(d) == kind and isinstance(d.get(table), dict)
    ]
    if not any(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in used):
        return []
    out = []
    for f in FACTORS:

        def apply(data: dict[str, Any], f: float = f) -> None:
            for d in _domains(data):
                t = d.get(table)
                if _kind(d) != kind or not isinstance(t, dict) or not t.get(param):
                    continue
                scaled = t[param] * f
                if param == "slice" and isinstance(t.get("period"), int | float):
                    scaled = min(scaled, t["period"])
                t[param] = type(t[param])(scaled)

        out.append(Variant(label.format(f=f), f, apply))
    return out


def _kind(domain: dict[str, Any]) -> Any:
    w = domain.get("workload")
    return w.get("kind") if isinstance(w, dict) else None


def _varied(exp: Experiment, v: Variant) -> Experiment:
    def grid(timing: Timing) -> list[Run]:
        runs = exp.grid(timing)
        for run in runs:
            data = copy.deepcopy(run.scenario.data)
            v.apply(data)
            run.scenario.data.clear()
            run.scenario.data.update(data)
        return runs

    return replace(exp, grid=grid, id=f"{exp.id}:{v.name}")


@dataclass(frozen=True)
class Row:
    """One estimate at one factor: the verdicts that flip against the baseline."""

    variant: str
    factor: float
    flipped: tuple[str, ...]
    #: Verdicts reproduced under the variant.
    reproduced: int
    judged: int
    #: For a setup alternative: (claim id, reproduced, the verdict's evidence text) per claim.
    texts: tuple[tuple[str, bool, str], ...] = ()
    evidence: str = ""

    @property
    def alternative(self) -> bool:
        return math.isnan(self.factor)


@dataclass(frozen=True)
class Table:
    experiment: str
    baseline_reproduced: int
    judged: int
    rows: tuple[Row, ...]
    #: Why there is no table (no built-in profile TOML found, no estimates used), or "".
    missing: str = ""


def sensitivity(
    experiments: Sequence[Experiment],
    *,
    jobs: int | None = None,
    progress: bool = False,
    backend: str = "local",
    address: str | None = None,
) -> dict[str, Table]:
    """Each experiment's sensitivity table (sensitivity grids, one seed), all run in one batch
    of the batch layer (`jobs` local processes, or a Ray cluster: `backend`, `address`)."""
    batch: list[Experiment] = []
    plan: list[tuple[Experiment, list[Variant]]] = []
    for exp in experiments:
        vs = variants(exp)
        plan.append((exp, vs))
        if exp.claims:
            batch.append(exp)
            batch += [_varied(exp, v) for v in vs]
    reps = run_experiments(
        batch,
        grid="sensitivity",
        jobs=jobs,
        progress=progress,
        replications=1,
        backend=backend,
        address=address,
    )
    by_id: dict[str, Reproduction] = {r.experiment.id: r for r in reps}
    out: dict[str, Table] = {}
    for exp, vs in plan:
        if not exp.claims:
            out[exp.id] = Table(exp.id, 0, 0, (), "the experiment judges no claims")
            continue
        if not vs:
            out[exp.id] = Table(
                exp.id, 0, 0, (), "no estimated number of its profile or setup could be varied"
            )
            continue
        base = {v.claim.id: v.reproduced for v in by_id[exp.id].verdicts}
        rows = []
        for v in vs:
            results = by_id[f"{exp.id}:{v.name}"].verdicts
            got = {c.claim.id: c.reproduced for c in results}
            flipped = tuple(k for k in base if got.get(k) != base[k])
            texts = (
                tuple((c.claim.id, c.reproduced, c.evidence) for c in results)
                if math.isnan(v.factor)
                else ()
            )
            rows.append(
                Row(v.name, v.factor, flipped, sum(got.values()), len(got), texts, v.evidence)
            )
        out[exp.id] = Table(exp.id, sum(base.values()), len(base), tuple(rows))
    return out
