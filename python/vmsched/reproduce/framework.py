"""Experiments as data, run in parallel, measured into one results table.

An `Experiment` is a published experiment written down as data:

- **the grid**: a function of the run length (`Timing`) returning `Run`s, each a
  scheduler, the parameters varied in the paper (`{"dom0_weight_ratio": 2, ...}`)
  and the `Scenario` that sets them up;
- **metrics**: `measure(run, summary)` turns one run's summary.json into
  `{metric: value}`; `derive(table)` may add rows computed across runs (a ratio
  of two runs, a mean over modes); `units` names every metric's unit;
- **the published numbers** (`Published`), copied from the papers' text and
  tables; where a paper's results are kept for independent validation there
  are none, and `published` stays empty;
- **claims** (`Claim`): small functions over the results `Table` returning
  (reproduced, evidence), with an `explanation` a person writes after looking
  at the results;
- **figures** in the paper's layout (`Figure`, `Panel`).

`run_experiments` simulates the grids of one or more experiments on one
process pool (results do not depend on the number of processes: every run has
a fixed seed and results are put back in grid order) and returns one
`Reproduction` per experiment. Every configuration runs once per seed
(`Timing.seeds`: `FULL_REPLICATIONS` seeds for full runs, `QUICK_REPLICATIONS`
with `--quick`, or `replications=N`); each seed's runs are measured and derived
alone, and the table holds the mean over the seeds with its 95 % Student-t
interval (`vmsched.reproduce.stats`); `Reproduction.save(out)` writes results.csv,
report.md, report.html and the figures (see `vmsched.reproduce.report`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vmsched.api import run as simulate
from vmsched.batch import RunStore, check_jobs, run_all
from vmsched.errors import InternalError, ScenarioError, VmschedError
from vmsched.reproduce.checks import recording
from vmsched.reproduce.stats import Estimate, mean
from vmsched.scenario import Scenario

ParamValue = str | int | float | bool
Params = Mapping[str, ParamValue]

#: The columns of results.csv, in order.
RESULT_COLUMNS = ("scheduler", "params", "metric", "simulated", "published", "unit")
#: The columns of replications.csv (one row per results.csv row, in the same order): the
#: number of seeds, the mean (results.csv's `simulated`), its 95 % interval, the seeds and
#: every seed's value, `;`-separated in seed order.
REPLICATION_COLUMNS = (
    "scheduler",
    "params",
    "metric",
    "replications",
    "mean",
    "ci95_low",
    "ci95_high",
    "seeds",
    "values",
)
#: Seeds per configuration of a full-length run, and of a `--quick` one (a smoke check:
#: one seed, so its intervals are empty).
FULL_REPLICATIONS = 3
QUICK_REPLICATIONS = 1

#: The grids an experiment runs: `full` (the full-length runs, the scorecard's), `quick`
#: (`--quick`: a smoke check that everything runs and every verdict can be judged; fewer
#: configurations and shorter runs) and `sensitivity` (what the sensitivity tables of a
#: full-length run rerun with one seed per estimate; `Experiment.sensitivity`).
GRIDS = ("full", "quick", "sensitivity")


# ----- parameters as text -------------------------------------------------------------------


def fmt_value(value: ParamValue) -> str:
    """A parameter value as results.csv writes it: `true`, `4`, `0.25`, `wc`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def params_key(params: Params) -> str:
    """`key=value;key=value`, sorted by key: the `params` column of results.csv."""
    return ";".join(f"{k}={fmt_value(params[k])}" for k in sorted(params))


def run_source(exp_id: str, scheduler: str, params: Params) -> str:
    """How a run's scenario names itself in errors: `reproduce:ID:scheduler:params`."""
    return f"reproduce:{exp_id}:{scheduler}:{params_key(params)}"


# ----- what an experiment is ----------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    """How long each run of an experiment is."""

    #: Simulated seconds measured (after the warm-up).
    duration_s: float
    #: Simulated seconds before measurement starts.
    warmup_s: float
    #: The seed of every run (the first seed, with replications).
    seed: int = 1
    #: Whether this is a short timing (`--quick`'s or the sensitivity grid's): a grid may
    #: also be smaller then.
    quick: bool = False
    #: Whether this is `--quick`'s smoke timing. It tells `--quick`'s timing from the
    #: sensitivity grid's where their lengths are equal (dynweight-credit, mcredit2). A
    #: grid may read it to drop configurations its claims do not need (every verdict must
    #: stay computable); no grid does today.
    smoke: bool = False
    #: Seeds per configuration; None: FULL_REPLICATIONS, or QUICK_REPLICATIONS if quick.
    replications: int | None = None

    @property
    def seeds(self) -> list[int]:
        """The seeds every configuration runs with: seed, seed + 1, ..."""
        n = self.replications
        if n is None:
            n = QUICK_REPLICATIONS if self.quick else FULL_REPLICATIONS
        return [self.seed + i for i in range(n)]

    def scenario(self, **kwargs: Any) -> Scenario:
        """A new Scenario with this timing (`kwargs` as `Scenario`'s)."""
        return Scenario(
            duration_s=self.warmup_s + self.duration_s,
            warmup_s=self.warmup_s,
            seed=self.seed,
            sample_ms=1000,
            **kwargs,
        )


@dataclass(frozen=True)
class Run:
    """One simulation of an experiment's grid."""

    #: The results' `scheduler` column (the scheduler's name in vmsched).
    scheduler: str
    #: The parameters the paper varies, as in the results' `params` column.
    params: Params
    #: What is simulated.
    scenario: Scenario = field(compare=False)
    #: The replication's seed (the scenario's).
    seed: int = 1

    @property
    def key(self) -> str:
        return params_key(self.params)


@dataclass(frozen=True)
class Published:
    """One number a paper publishes, where the results table holds its counterpart."""

    #: Where in the paper: "Table 1", "Table 6.2", "Appendix A".
    table: str
    scheduler: str
    params: Params
    metric: str
    #: The number, or a (low, high) range as the paper states it ("94% - 99%").
    value: float | tuple[float, float]

    def text(self) -> str:
        """As results.csv writes it: `934`, `87.85`, or a range `94-99`."""
        if isinstance(self.value, tuple):
            lo, hi = self.value
            return f"{lo:g}-{hi:g}"
        return f"{self.value:g}"


#: What a claim's check returns: (reproduced, the measured evidence in words).
Verdict = tuple[bool, str]


@dataclass(frozen=True)
class Claim:
    """A published claim and how to check it against the results table."""

    #: The claim's number in the project's list of the papers' claims, or a label for a text claim.
    id: str
    #: The claim in one line, with the paper's numbers.
    statement: str
    #: Where the paper says it.
    source: str
    #: Decides the claim on the results; may raise MissingResult.
    check: Callable[[Table], Verdict] = field(compare=False)
    #: Why the claim is reproduced or not (which mechanism, or what the model, the
    #: calibration, the paper or Xen's code leaves out), with measured numbers, written by a
    #: person who has looked at the results. Empty until then; the report then shows a marked
    #: placeholder for a claim that is not reproduced. Where the experiment has an `explain`
    #: function the text is a template (`str.format`): each `{name}` is a number of this
    #: run that `explain` computes from the results table, filled in when the run is judged
    #: (`ClaimResult.explanation`); literal braces are doubled.
    explanation: str = ""


@dataclass(frozen=True)
class Panel:
    """One plot of a figure: one metric over rows matching `where`."""

    title: str
    metric: str
    #: Required parameter values (a tuple = any of them); the key "scheduler" selects the
    #: scheduler column.
    where: Params | Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Figure:
    """A figure in the paper's layout: panels side by side, one line (or bar group) per
    scheduler variant, the paper's numbers as open markers where it has any."""

    file: str
    title: str
    #: The parameter on the x axis.
    x: str
    xlabel: str
    panels: tuple[Panel, ...]
    #: The parameters that tell lines apart (besides the scheduler).
    lines: tuple[str, ...] = ()
    #: "line" (numeric x) or "bar" (x values as categories).
    kind: str = "line"
    log_x: bool = False


def default_label(scheduler: str, params: Params) -> str:
    """`credit`, `sedf mode=wc period_ms=10`."""
    return " ".join([scheduler, *(f"{k}={fmt_value(v)}" for k, v in sorted(params.items()))])


@dataclass(frozen=True)
class Alternative:
    """A setup the paper's text leaves open, other than the one the experiment chose.

    The sensitivity table (`vmsched.reproduce.sensitivity`) reruns the sensitivity grid with
    `apply` rewriting every run's scenario data, and the report gives the verdicts and
    the simulated numbers under it beside the chosen setup's."""

    #: Short name, e.g. "guest 1 VCPU".
    name: str
    #: Why it is an alternative and why it was not chosen (the evidence), in Markdown.
    evidence: str
    #: Rewrites one run's scenario data in place.
    apply: Callable[[dict[str, Any]], None] = field(compare=False)


@dataclass(frozen=True)
class Experiment:
    """A published experiment as data (see the module's docstring)."""

    #: The ID on the command line: `<paper>-<experiment>`.
    id: str
    #: One line for `vmsched reproduce --list`.
    title: str
    #: The paper, by its authors, title and venue.
    paper: str
    #: What of the paper it reproduces: its figures, tables and sections, and the claims checked.
    source: str
    #: What is simulated, in Markdown (a paragraph).
    setup: str
    #: Every choice the paper leaves open and how it was made, in Markdown (one per item).
    decisions: tuple[str, ...]
    #: metric -> unit, for every metric `measure` and `derive` produce.
    units: Mapping[str, str]
    #: The runs, for a run length.
    grid: Callable[[Timing], list[Run]] = field(compare=False)
    #: One run's summary.json -> {metric: value}.
    measure: Callable[[Run, dict[str, Any]], dict[str, float]] = field(compare=False)
    #: Full-length and `--quick` run lengths.
    full: Timing
    quick: Timing
    published: tuple[Published, ...] = ()
    claims: tuple[Claim, ...] = ()
    figures: tuple[Figure, ...] = ()
    #: Rows computed across runs: table -> [(scheduler, params, metric, value)].
    derive: Callable[[Table], list[tuple[str, Params, str, float]]] | None = field(
        default=None, compare=False
    )
    #: A variant's name in figures and tables: (scheduler, line parameters) -> text.
    label: Callable[[str, Params], str] = field(default=default_label, compare=False)
    #: Said in the report where the paper's results are held back or otherwise absent.
    note: str = ""
    #: Which runs the claims' explanations were written from ("the full-length runs of the
    #: model at commit ..."): the report says so above the claims. Without `explain`, the
    #: numbers an explanation quotes are that run's, not necessarily the current one's; with
    #: it, the reasoning is that run's and the numbers are this run's, except those the text
    #: itself labels with the other run (and command) they come from.
    explained_from: str = ""
    #: The numbers the claims' explanation templates quote, computed from this run's
    #: results table: table -> {field: value} (a value is formatted by the template's
    #: format spec, or is a string already). None: the explanations are plain text.
    explain: Callable[[Table], Mapping[str, Any]] | None = field(default=None, compare=False)
    #: Swept parameters whose flat curves the paper's own text explains: parameter -> that
    #: explanation (quoted evidence). A flat sweep not listed here is reported as a setup
    #: defect (`vmsched.reproduce.binding`).
    flat_explained: Mapping[str, str] = field(default_factory=dict, compare=False)
    #: Swept parameters whose curve the paper's text says moves but the model's stays flat,
    #: and no setup defect was found against the text: parameter -> (the part of the sweeps'
    #: fixed settings, `Sweep.where`, that names the flat ones, e.g. "workload=disk"; the
    #: measured cause, a template filled in, as the claims' explanations are, with
    #: `explain`'s numbers from this run). Such a sweep stays flagged: the report lists it as
    #: a miss with its cause, never as explained.
    flat_missed: Mapping[str, tuple[str, str]] = field(default_factory=dict, compare=False)
    #: Setups the paper leaves open that the experiment did not choose: run as sensitivity
    #: cases (sensitivity grid, one seed) when the sensitivity table is made.
    alternatives: tuple[Alternative, ...] = field(default=(), compare=False)
    #: The run lengths of the sensitivity grid (`GRIDS`), which the sensitivity tables
    #: rerun; None: the `quick` timing.
    sensitivity: Timing | None = None

    def timing(self, grid: str) -> Timing:
        """The run lengths of one of `GRIDS`."""
        if grid == "full":
            return self.full
        if grid == "quick":
            return self.quick
        if grid == "sensitivity":
            return self.sensitivity if self.sensitivity is not None else self.quick
        raise InternalError(f"{grid!r} is not a grid; expected one of {', '.join(GRIDS)}")

    def runs(self, quick: bool, *, grid: str | None = None) -> list[Run]:
        """The runs of the full-length grid, or `--quick`'s with `quick`, or `grid`'s."""
        return self.grid(self.timing(grid or ("quick" if quick else "full")))


# ----- the results table ------------------------------------------------------------------


class MissingResult(KeyError):
    """A claim asked for a result the table does not have."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "missing result"


@dataclass(frozen=True)
class Row:
    scheduler: str
    params: dict[str, str]
    metric: str
    #: The mean over the replications (NaN where none has a value).
    simulated: float
    published: str
    unit: str
    #: Every replication's value, in seed order (empty: a published number alone).
    values: tuple[float, ...] = ()
    seeds: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        return params_key(self.params)

    @property
    def estimate(self) -> Estimate:
        """`simulated` with the replications' values and 95 % interval."""
        return Estimate(self.simulated, self.values or (self.simulated,))


def _matches(row_params: Mapping[str, str], where: Mapping[str, Any]) -> bool:
    for k, want in where.items():
        if k not in row_params:
            return False
        options = want if isinstance(want, tuple | list | set) else (want,)
        if row_params[k] not in {fmt_value(o) for o in options}:
            return False
    return True


class Table:
    """The results: one row per (scheduler, params, metric), as results.csv."""

    def __init__(self, rows: Iterable[Row]) -> None:
        self.rows = list(rows)
        self._index = {(r.scheduler, r.key, r.metric): r for r in self.rows}

    def get(self, scheduler: str, metric: str, **params: ParamValue) -> Estimate:
        """The simulated value of exactly this scheduler, parameter set and metric: the mean
        over the replications, carrying their values and 95 % interval."""
        key = params_key(params)
        row = self._index.get((scheduler, key, metric))
        if row is None or not math.isfinite(row.simulated):
            raise MissingResult(f"no result for {scheduler} {key or '(no params)'} {metric}")
        return row.estimate

    def where(self, metric: str | None = None, **where: Any) -> list[Row]:
        """Rows of `metric` (all if None) whose parameters match `where` (a tuple value means
        any of; the key `scheduler` selects the scheduler)."""
        out = []
        for r in self.rows:
            if metric is not None and r.metric != metric:
                continue
            if not _matches({**r.params, "scheduler": r.scheduler}, where):
                continue
            out.append(r)
        return out

    def series(self, scheduler: str, metric: str, x: str, **fixed: ParamValue) -> list[float]:
        """The values of a metric along parameter `x` (sorted by x, numerically), with the
        other parameters fixed; every row must exist."""
        rows = [
            r
            for r in self.where(metric, scheduler=scheduler, **fixed)
            if set(r.params) == {x, *fixed}
        ]
        if not rows:
            raise MissingResult(f"no {metric} of {scheduler} along {x} with {params_key(fixed)}")
        rows.sort(key=lambda r: float(r.params[x]))
        return [r.estimate for r in rows]

    def frame(self):
        """results.csv as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(
            [(r.scheduler, r.key, r.metric, r.simulated, r.published, r.unit) for r in self.rows],
            columns=list(RESULT_COLUMNS),
        )


# ----- running --------------------------------------------------------------------------------


@dataclass
class ClaimResult:
    claim: Claim
    reproduced: bool
    evidence: str
    #: What the check compared (see `checks.recording`): ("effect", measured, published) and
    #: ("order", values) entries, for the scorecard.
    compared: list[tuple] = field(default_factory=list)
    #: The claim's explanation with this run's numbers filled in (`explain_claims`).
    explanation: str = ""


@dataclass
class Reproduction:
    """One experiment, run: its table, verdicts and run records."""

    experiment: Experiment
    quick: bool
    timing: Timing
    runs: list[Run]
    #: One summary.json per run, in grid order.
    summaries: list[dict[str, Any]]
    table: Table
    verdicts: list[ClaimResult]
    #: Wall seconds from the start of the batch this experiment was simulated in until
    #: this experiment's runs were all back (its report could be made). Not the
    #: experiment's own cost (that is `sim_wall_s`): `run_experiments` returns every
    #: experiment of a batch together, so each gets the whole batch's time; the pipeline
    #: of `vmsched reproduce` (`pipeline.run_and_draw`) makes each experiment's report as
    #: soon as its own runs are back, so its time includes whatever other experiments'
    #: runs the workers did before and excludes those done after.
    wall_s: float
    jobs: int
    #: The seeds every configuration ran with.
    seeds: tuple[int, ...] = (1,)
    #: The sensitivity table (`vmsched.reproduce.sensitivity.Table`), when it was made.
    sensitivity: Any = None

    @property
    def events(self) -> int:
        return sum(int(s.get("events", 0)) for s in self.summaries)

    @property
    def sim_wall_s(self) -> float:
        """Wall seconds spent simulating this experiment's runs (summed over processes)."""
        return sum(float(s.get("wall_s", 0.0)) for s in self.summaries)

    def save(
        self, out: str | Path, pngs: Mapping[str, bytes] | None = None, *, figures: bool = True
    ) -> Path:
        """Write results.csv, report.md, report.html and the figures into `out` (`pngs`:
        the figures drawn already, by file; none with `figures=False`)."""
        from vmsched.reproduce.report import save

        return save(self, out, pngs, figures=figures)


def _simulate(data: dict[str, Any]) -> dict[str, Any]:
    """Run one scenario (in a worker of the batch layer, or in-process); its summary."""
    return simulate(data, progress=False).summary


def _run_all(
    scenarios: list[dict[str, Any]],
    jobs: int,
    label: str,
    progress,
    backend: str = "local",
    address: str | None = None,
    store: RunStore | None = None,
) -> list[dict[str, Any]]:
    """Simulate every scenario through the batch layer (vmsched.batch: local processes or
    Ray); summaries in the order given, whatever order they finish in. A scenario that
    appears more than once (two experiments share a configuration) is simulated once:
    the same scenario and seed give the same summary."""
    unique, where = unique_scenarios(scenarios)
    summaries = run_all(
        _simulate,
        unique,
        backend=backend,
        jobs=jobs,
        address=address,
        batch_size=run_batch_size(len(unique), jobs),
        progress=progress,
        label=label,
        store=store,
    )
    return [summaries[i] for i in where]


def unique_scenarios(scenarios: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[int]]:
    """The distinct scenarios, in order of first appearance, and where each of
    `scenarios` is among them."""
    first: dict[str, int] = {}
    unique: list[dict[str, Any]] = []
    where: list[int] = []
    for tree in scenarios:
        key = json.dumps(tree, sort_keys=True)
        if key not in first:
            first[key] = len(unique)
            unique.append(tree)
        where.append(first[key])
    return unique, where


def run_batch_size(n_runs: int, jobs: int) -> int:
    """Runs per task. Runs differ in length by 100x across experiments: small batches
    (about 32 per worker) keep the workers finishing together."""
    return max(1, math.ceil(n_runs / (32 * max(1, jobs))))


def default_jobs(jobs: int | None) -> int:
    """`jobs`, checked, or the number of CPUs."""
    return check_jobs(jobs)


def _validated(exp: Experiment, runs: list[Run]) -> list[dict[str, Any]]:
    """Each run's scenario tree, validated: a scenario the core rejects is a bug here."""
    trees = []
    for run in runs:
        try:
            run.scenario.validate()
        except VmschedError as exc:
            raise InternalError(
                f"reproduction {exp.id}: the scenario of {run.scheduler} {run.key} is invalid: "
                f"{exc} (a bug in vmsched/reproduce; please report it)"
            ) from None
        trees.append(run.scenario.data)
    return trees


def _seed_rows(exp: Experiment, runs: list[Run], summaries: list[dict[str, Any]]) -> list[Row]:
    """One replication: measure every run, derive the cross-run rows."""
    measured: list[tuple[str, Params, str, float]] = []
    for run, summary in zip(runs, summaries, strict=True):
        for metric, value in exp.measure(run, summary).items():
            measured.append((run.scheduler, run.params, metric, value))
    rows = [_row(exp, *m) for m in measured]
    if exp.derive is not None:
        rows += [_row(exp, *d) for d in exp.derive(Table(rows))]
    return rows


def _table(
    exp: Experiment,
    runs: list[Run],
    summaries: list[dict[str, Any]],
    seeds: Sequence[int] = (1,),
) -> Table:
    """Measure and derive each replication alone, average over the seeds, attach the
    published numbers. `runs` and `summaries` hold the seeds' grids one after another."""
    per = len(runs) // len(seeds)
    per_seed = [
        {
            (r.scheduler, r.key, r.metric): r
            for r in _seed_rows(
                exp, runs[i * per : (i + 1) * per], summaries[i * per : (i + 1) * per]
            )
        }
        for i in range(len(seeds))
    ]
    rows = []
    for k, first in per_seed[0].items():
        values = tuple(p[k].simulated if k in p else float("nan") for p in per_seed)
        rows.append(
            Row(
                first.scheduler,
                first.params,
                first.metric,
                mean(values),
                "",
                first.unit,
                values,
                tuple(seeds),
            )
        )
    published = {(p.scheduler, params_key(p.params), p.metric): p for p in exp.published}
    if len(published) != len(exp.published):
        raise InternalError(f"reproduction {exp.id}: a published number is listed twice (a bug)")
    out = []
    for r in rows:
        p = published.pop((r.scheduler, r.key, r.metric), None)
        out.append(
            Row(
                r.scheduler,
                r.params,
                r.metric,
                r.simulated,
                p.text() if p else "",
                r.unit,
                r.values,
                r.seeds,
            )
        )
    # Published numbers the grid did not produce (a shortened grid) keep their row.
    for p in published.values():
        out.append(
            Row(
                p.scheduler,
                {k: fmt_value(v) for k, v in p.params.items()},
                p.metric,
                float("nan"),
                p.text(),
                _unit(exp, p.metric),
            )
        )
    return Table(out)


def _unit(exp: Experiment, metric: str) -> str:
    try:
        return exp.units[metric]
    except KeyError:
        raise InternalError(
            f"reproduction {exp.id}: metric {metric!r} has no unit in `units` (a bug)"
        ) from None


def _row(exp: Experiment, scheduler: str, params: Params, metric: str, value: float) -> Row:
    v = float(value) if value is not None else float("nan")
    return Row(
        scheduler, {k: fmt_value(x) for k, x in params.items()}, metric, v, "", _unit(exp, metric)
    )


def judge(claim: Claim, table: Table) -> ClaimResult:
    """Run a claim's check; a result it needs but the table lacks makes it not reproduced."""
    with recording() as compared:
        try:
            ok, evidence = claim.check(table)
        except MissingResult as exc:
            return ClaimResult(claim, False, f"could not be evaluated: {exc}", list(compared))
    return ClaimResult(claim, bool(ok), evidence, list(compared))


#: The explanation of a run that lacks a result its explanation would quote.
UNEXPLAINED = (
    "This run lacks a result the explanation quotes ({missing}), so its numbers are not "
    "filled in; the evidence above says what was measured."
)


def explain_claims(exp: Experiment, table: Table, verdicts: list[ClaimResult]) -> None:
    """Fill in each verdict's explanation: the claim's text, with the numbers its template
    quotes computed from `table` by the experiment's `explain` (a template that names a
    number `explain` does not give, or a number the table lacks, is a bug)."""
    if exp.explain is None:
        for v in verdicts:
            v.explanation = v.claim.explanation
        return
    if not any(v.claim.explanation for v in verdicts):
        return
    try:
        fields = dict(exp.explain(table))
    except MissingResult as exc:
        # A run can lack a result its explanation quotes without a bug: a sensitivity
        # variant whose workload completes nothing (no response time) leaves the claim
        # "could not be evaluated". The explanation then says so instead of quoting
        # numbers; the standard grids never get here (tests/test_reproduce.py).
        for v in verdicts:
            v.explanation = UNEXPLAINED.format(missing=exc)
        return
    for v in verdicts:
        try:
            v.explanation = v.claim.explanation.format_map(fields)
        except (KeyError, IndexError, ValueError) as exc:
            raise InternalError(
                f"reproduction {exp.id}: claim {v.claim.id}'s explanation cannot be filled "
                f"in: {exc!r} (a bug in vmsched/reproduce)"
            ) from None


def flat_misses(exp: Experiment, table: Table) -> dict[str, str]:
    """The measured causes of `exp.flat_missed`, filled in with `exp.explain`'s numbers
    from `table` (the same fields the claims' explanations quote)."""
    if not exp.flat_missed:
        return {}
    try:
        fields = dict(exp.explain(table)) if exp.explain is not None else {}
    except MissingResult as exc:
        return {p: UNEXPLAINED.format(missing=exc) for p in exp.flat_missed}
    out = {}
    for param, (_, template) in exp.flat_missed.items():
        try:
            out[param] = template.format_map(fields)
        except (KeyError, IndexError, ValueError) as exc:
            raise InternalError(
                f"reproduction {exp.id}: the cause of the flat `{param}` sweep cannot be "
                f"filled in: {exc!r} (a bug in vmsched/reproduce)"
            ) from None
    return out


def run_experiments(
    experiments: Sequence[Experiment],
    *,
    quick: bool = False,
    jobs: int | None = None,
    progress: bool | Callable[[int, int], None] = True,
    replications: int | None = None,
    backend: str = "local",
    address: str | None = None,
    store: RunStore | None = None,
    grid: str | None = None,
) -> list[Reproduction]:
    """Simulate the grids of `experiments` through the batch layer (`jobs` local
    processes, default all CPUs, or a Ray cluster: `backend`, `address`), each
    configuration once per seed (`replications` seeds, default the timing's), and return
    one Reproduction each. The grid is the full-length one, `--quick`'s with `quick`, or
    `grid` (one of `GRIDS`). Every scenario is validated first. With a `store`
    (vmsched.batch.RunStore), runs already in it are not simulated again."""
    n_jobs = default_jobs(jobs)
    plans, trees = plan_experiments(experiments, quick, replications, grid=grid)
    # A Reproduction is `quick` on any grid but the full-length one.
    quick = (grid or ("quick" if quick else "full")) != "full"
    label = "reproduce " + (experiments[0].id if len(experiments) == 1 else "experiments")
    t0 = time.perf_counter()
    summaries = _run_all(trees, n_jobs, label, progress, backend, address, store)
    wall = time.perf_counter() - t0
    return [
        plan.reproduction(summaries[plan.first : plan.first + len(plan.runs)], quick, wall, n_jobs)
        for plan in plans
    ]


@dataclass(frozen=True)
class Plan:
    """One experiment's runs, ready to simulate: its scenarios are
    `trees[first : first + len(runs)]` of `plan_experiments`."""

    experiment: Experiment
    runs: list[Run]
    first: int
    timing: Timing
    seeds: list[int]

    def reproduction(
        self, summaries: list[dict[str, Any]], quick: bool, wall_s: float, jobs: int
    ) -> Reproduction:
        """The Reproduction of these runs' `summaries` (in grid order): table and verdicts."""
        exp = self.experiment
        table = _table(exp, self.runs, summaries, self.seeds)
        verdicts = [judge(c, table) for c in exp.claims]
        explain_claims(exp, table, verdicts)
        return Reproduction(
            experiment=exp,
            quick=quick,
            timing=self.timing,
            runs=self.runs,
            summaries=summaries,
            table=table,
            verdicts=verdicts,
            wall_s=wall_s,
            jobs=jobs,
            seeds=tuple(self.seeds),
        )


def plan_experiments(
    experiments: Sequence[Experiment],
    quick: bool,
    replications: int | None,
    *,
    grid: str | None = None,
) -> tuple[list[Plan], list[dict[str, Any]]]:
    """Every experiment's seeded grid (the full-length one, `--quick`'s with `quick`, or
    `grid`; `replications` seeds, default the timing's) and all their scenario trees,
    validated, in experiment order."""
    n_reps = check_replications(replications)
    grid = grid or ("quick" if quick else "full")
    plans = []
    trees: list[dict[str, Any]] = []
    for exp in experiments:
        timing = exp.timing(grid)
        if n_reps is not None:
            timing = replace(timing, replications=n_reps)
        seeds = timing.seeds
        runs = [run for s in seeds for run in _seeded_grid(exp, timing, s)]
        plans.append(Plan(exp, runs, len(trees), timing, seeds))
        trees += _validated(exp, runs)
    return plans, trees


def check_replications(replications: int | None) -> int | None:
    """`replications`, checked (None: each timing's default)."""
    if replications is None:
        return None
    if isinstance(replications, bool) or not isinstance(replications, int) or replications < 1:
        raise ScenarioError(
            f"{replications!r} is not allowed; expected an integer >= 1", path="--replications"
        )
    return replications


def _seeded_grid(exp: Experiment, timing: Timing, seed: int) -> list[Run]:
    """The experiment's grid with every scenario on `seed`, each Run marked with it."""
    runs = exp.grid(replace(timing, seed=seed))
    out = []
    for run in runs:
        got = run.scenario.data.get("run", {}).get("seed")
        if got != seed:
            raise InternalError(
                f"reproduction {exp.id}: the grid gave {run.scheduler} {run.key} seed "
                f"{got} instead of the timing's {seed} (a bug)"
            )
        out.append(replace(run, seed=seed))
    return out
