"""Running a comparison: check everything and port the scenario to every run (`prepare`),
simulate the runs and their replications through the batch layer, combine the
replications' summaries into means and 95 % intervals."""

from __future__ import annotations

import copy
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vmsched.api import run
from vmsched.batch import RunStore, check_backend, check_jobs, run_all
from vmsched.compare.comparison import Comparison
from vmsched.compare.metrics import _number
from vmsched.compare.port import port, shorten
from vmsched.compare.spec import (
    QUICK_REPLICATIONS,
    REPLICATIONS,
    Backend,
    Run,
    RunSpec,
    _schedulers,
    plan_runs,
)
from vmsched.errors import ScenarioError
from vmsched.scenario import Scenario, read

# ----- running -----------------------------------------------------------------------------


def _simulate(data: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """Run one scenario (in a worker of the batch layer, or in-process)."""
    r = run(data, progress=False)
    ts = r.timeseries
    return r.summary, ts[ts["vcpu"].isna()].reset_index(drop=True)


def combine(trees: Sequence[Any]) -> tuple[Any, Any, Any]:
    """(mean, low, high) of the replications' summaries, leaf by leaf: a number that
    differs is replaced by its mean and the ends of its 95 % interval
    (vmsched.intervals); anything equal in every replication stays as it is."""
    from vmsched.intervals import mean_ci95

    first = trees[0]
    if all(t == first for t in trees[1:]):
        return first, first, first
    if isinstance(first, dict) and all(
        isinstance(t, dict) and t.keys() == first.keys() for t in trees
    ):
        parts = {k: combine([t[k] for t in trees]) for k in first}
        return tuple({k: v[i] for k, v in parts.items()} for i in range(3))
    if isinstance(first, list) and all(isinstance(t, list) and len(t) == len(first) for t in trees):
        parts = [combine([t[i] for t in trees]) for i in range(len(first))]
        return tuple([v[i] for v in parts] for i in range(3))
    numbers = [t for t in trees if t is None or (_number(t) is not None)]
    if len(numbers) == len(trees) and any(t is not None for t in trees):
        mean, low, high, _ = mean_ci95([t for t in trees if t is not None])
        return mean, low, high
    return first, first, first


def _seeded(tree: dict[str, Any], seed: int) -> dict[str, Any]:
    out = copy.deepcopy(tree)
    out.setdefault("run", {})["seed"] = seed
    return out


def _execute(
    runs: list[Run],
    where: Backend,
    progress: bool | Callable[[int, int], None],
    replications: int = 1,
    store: RunStore | None = None,
) -> None:
    if replications == 1:
        items = [r.scenario for r in runs]
        seeds = [(int(r.scenario.get("run", {}).get("seed", 1)),) for r in runs]
    else:
        seeds = [
            tuple(int(r.scenario.get("run", {}).get("seed", 1)) + k for k in range(replications))
            for r in runs
        ]
        items = [_seeded(r.scenario, s) for r, ss in zip(runs, seeds, strict=True) for s in ss]
    outcomes = run_all(
        _simulate,
        items,
        backend=where.name,
        jobs=where.jobs,
        address=where.address,
        batch_size=1,
        progress=progress,
        label="compare " + " vs ".join(r.label for r in runs),
        after_s=0.0,
        store=store,
    )
    n = replications
    for i, r in enumerate(runs):
        mine = outcomes[i * n : (i + 1) * n]
        r.seeds = seeds[i]
        r.timeseries = mine[0][1]
        if n == 1:
            r.summary = mine[0][0]
            continue
        r.summary, r.summary_low, r.summary_high = combine([m[0] for m in mine])


def _base_scenario(scenario: str | Path | Scenario | dict[str, Any]) -> Scenario:
    if isinstance(scenario, Scenario):
        sc = Scenario(scenario.data, source=scenario.source)
    elif isinstance(scenario, dict):
        sc = Scenario(scenario)
    else:
        sc = read(scenario)
    if sc.is_cluster:
        raise ScenarioError(
            "is a list of [[host]] tables (a cluster); expected a single-host scenario "
            "(vmsched compare varies one host's scheduler)",
            file=sc.source,
            path="host",
        )
    return sc.validate()


@dataclass
class Prepared:
    """A comparison checked and ready to simulate (nothing has run yet)."""

    runs: list[Run]
    base: Scenario
    quick_factor: float
    jobs: int
    command: str
    backend: str = "local"
    address: str | None = None
    replications: int = 1
    #: Where finished runs are kept for --resume (vmsched.batch.RunStore), if anywhere.
    store: RunStore | None = None

    @property
    def where(self) -> Backend:
        return Backend(self.backend, self.jobs, self.address)

    def execute(self, progress: bool | Callable[[int, int], None] = True) -> Comparison:
        """Simulate every run (in `jobs` workers of the batch layer) and return the
        Comparison."""
        t0 = time.perf_counter()
        _execute(self.runs, self.where, progress, self.replications, self.store)
        return Comparison(
            runs=self.runs,
            source=self.base.source,
            base=self.base.data,
            quick_factor=self.quick_factor,
            wall_s=time.perf_counter() - t0,
            command=self.command,
            where=self.where,
            replications=self.replications,
        )


def prepare(
    scenario: str | Path | Scenario | dict[str, Any],
    *,
    schedulers: Sequence[str] = (),
    variants: Sequence[str] = (),
    quick: bool = False,
    jobs: int | None = None,
    backend: str = "local",
    address: str | None = None,
    replications: int | None = None,
) -> Prepared:
    """Check everything and port the scenario to every run, simulating nothing.

    Raises ScenarioError on bad input (the scenario, a scheduler, a variant, --jobs,
    the backend).
    """
    base = _base_scenario(scenario)
    factor = 1.0
    if quick:
        base, factor = shorten(base)
    domains = [d["name"] for d in base.data["domain"]]
    specs = plan_runs(schedulers, variants, domains)
    n_reps = _check_replications(replications, quick)
    n_jobs = check_jobs(jobs, len(specs) * n_reps)
    check_backend(backend, address)
    infos = _schedulers()
    runs = []
    for spec in specs:
        sc, notes = port(base, spec, infos)
        runs.append(Run(spec, sc.data, notes))
    command = _command(base.source, specs, quick, jobs, replications)
    return Prepared(runs, base, factor, n_jobs, command, backend, address, n_reps)


def _check_replications(replications: int | None, quick: bool) -> int:
    if replications is None:
        return QUICK_REPLICATIONS if quick else REPLICATIONS
    if isinstance(replications, bool) or not isinstance(replications, int) or replications < 1:
        raise ScenarioError(
            f"{replications!r} is not allowed; expected an integer >= 1", path="--replications"
        )
    return replications


def compare(
    scenario: str | Path | Scenario | dict[str, Any],
    *,
    schedulers: Sequence[str] = (),
    variants: Sequence[str] = (),
    quick: bool = False,
    jobs: int | None = None,
    progress: bool | Callable[[int, int], None] = True,
    backend: str = "local",
    address: str | None = None,
    replications: int | None = None,
) -> Comparison:
    """Run `scenario` under each scheduler and variant; returns a Comparison.

    Everything is checked before anything is simulated (ScenarioError on bad input).
    `jobs` parallel workers (default: one per CPU, at most one per run) of the batch
    layer's `backend` ("local" processes, or "ray" at `address`; vmsched.batch).
    `progress`: a bar on a terminal (True), nothing (False), or a callable(done, total).
    Each run is simulated on `replications` seeds (default REPLICATIONS, QUICK_REPLICATIONS
    with `quick`); its numbers are their means, and verdicts count a difference only when
    the 95 % intervals separate.
    """
    prepared = prepare(
        scenario,
        schedulers=schedulers,
        variants=variants,
        quick=quick,
        jobs=jobs,
        backend=backend,
        address=address,
        replications=replications,
    )
    return prepared.execute(progress)


def _command(
    source: str | None,
    specs: Sequence[RunSpec],
    quick: bool,
    jobs: int | None,
    replications: int | None = None,
) -> str:
    plain = [s.label for s in specs if not s.settings]
    words = ["vmsched", "compare", source or "SCENARIO"]
    if plain:
        words += ["--schedulers", ",".join(plain)]
    for s in specs:
        if s.settings:
            words += ["--variant", s.label]
    if quick:
        words.append("--quick")
    if jobs is not None:
        words += ["--jobs", str(jobs)]
    if replications is not None:
        words += ["--replications", str(replications)]
    return shlex.join(words) + " --out DIR"
