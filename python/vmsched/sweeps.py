"""Sweeps: one base scenario, axes over any of its parameters, replications, tidy results.

A sweep spec (TOML, docs/sweep.md)::

    base = "../scenarios/web-through-dom0.toml"   # relative to the spec; or a [base] table
    replications = 3                              # seeds seed, seed+1, ... (default 1)
    seed = 1                                      # first seed (default: the base's run.seed)

    [[axis]]
    path = "scheduler.name"                       # schedulers as an axis
    values = ["credit", "credit2"]

    [[axis]]
    name = "batch_cap"                            # the results' column (default: the path)
    paths = ["domain.batch1.cap", "domain.batch2.cap"]   # one value set in several places
    values = [30, 50, 70]

    [[axis]]
    path = "scheduler.ratelimit_us"
    range = [500, 2000, 500]                      # start, stop (included), step

An axis is `values` (a list), `range` ([start, stop, step]) or `low`/`high`
(optionally `integer = true`): a *sampled* axis. The sampled axes are sampled
together, `[sample] n` points by `method = "lhs"` (Latin hypercube, default) or
`"random"`, from `[sample] seed`. The runs are every combination of the listed
axes' values, times the sample points, times the replications.

A path names a place in the scenario: `scheduler.X`, `run.X`, `host.X`,
`domain.NAME.X` (`domain.NAME.sched.X`, `domain.NAME.workload.X`) with NAME a
domain's name. `scheduler.name` moves the scenario to another scheduler as
`vmsched compare` does (docs/compare.md): parameters the target does not
declare are dropped, time units converted. Every run's scenario is validated
before anything is simulated; a bad axis stops the sweep with one line naming
the spec file, the axis, the value and what was expected.

Results (`out/`): `sweep.json` (the spec as resolved), `results.parquet`
(one row per run x domain x metric: run, point, every axis, seed,
scenario_hash, domain, vcpu, metric, value, unit, error), `summary.parquet`
and `summary.csv` (per point x domain x metric: n, mean, std and the 95 %
interval) and `report.html`. While the sweep runs, each finished batch of runs
is written as `parts/part-NNNNNN.parquet` (whole or not at all); an interrupted
sweep resumes with `resume=True` (`--resume`), skipping the runs done.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import shutil
import signal
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vmsched.errors import ScenarioError, WorkerLost, one_line, unknown_name
from vmsched.scenario import Scenario, read

SPEC_KEYS = ("base", "replications", "seed", "axis", "sample", "metrics", "report")
AXIS_KEYS = ("name", "path", "paths", "values", "range", "low", "high", "integer")
SAMPLE_METHODS = ("lhs", "random")
#: Most runs one range axis may have.
MAX_AXIS_VALUES = 10_000
#: Most runs a sweep may have (a spec beyond is most likely a mistake).
MAX_RUNS = 1_000_000
#: Columns of results.parquet besides the axes (which come after `point`).
RESULT_COLUMNS = ("run", "point", "seed", "scenario_hash", "domain", "vcpu", "metric", "value")
RESULT_TAIL = ("unit", "error")
#: Columns of summary.parquet besides the axes.
SUMMARY_COLUMNS = ("domain", "vcpu", "metric", "unit", "n", "mean", "std", "ci95_low", "ci95_high")
PARTS = "parts"
#: How the parts are compressed (by the workers; results.parquet is snappy too).
PART_COMPRESSION = "snappy"
SPEC_JSON = "sweep.json"
RESULTS = "results.parquet"
SUMMARY = "summary.parquet"
SUMMARY_CSV = "summary.csv"
REPORT_HTML = "report.html"
#: Figures the report draws at most (one per metric; the metrics that vary most).
MAX_REPORT_METRICS = 12


# ----- the spec ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """One swept parameter: its column name, where it goes, its values (None if sampled)."""

    name: str
    paths: tuple[str, ...]
    values: tuple[Any, ...] | None
    low: float | None = None
    high: float | None = None
    integer: bool = False

    @property
    def sampled(self) -> bool:
        return self.values is None


@dataclass
class Spec:
    """A checked sweep spec."""

    file: str
    base: Scenario
    axes: list[Axis]
    replications: int
    seed: int
    sample_n: int = 0
    sample_method: str = "lhs"
    sample_seed: int = 1
    #: Metric names to keep (all if empty).
    metrics: list[str] = field(default_factory=list)
    #: DOMAIN:METRIC pairs the report draws (chosen automatically if empty).
    report_metrics: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


def _err(file: str, path: str, message: str) -> ScenarioError:
    return ScenarioError(message, file=file, path=path)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _int(file: str, path: str, v: Any, low: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise _err(file, path, f"{v!r} is not allowed; expected an integer >= {low}")
    return v


def _range_values(file: str, where: str, r: Any) -> tuple[Any, ...]:
    if not (isinstance(r, list) and len(r) == 3 and all(_is_number(x) for x in r)):
        raise _err(file, where, f"{r!r} is not a range; expected [start, stop, step] numbers")
    start, stop, step = r
    if step <= 0 or stop < start:
        raise _err(
            file,
            where,
            f"{r!r} is empty; expected start <= stop and a step > 0",
        )
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > MAX_AXIS_VALUES:
        raise _err(file, where, f"{r!r} has {count} values; expected at most {MAX_AXIS_VALUES}")
    whole = all(isinstance(x, int) for x in r)
    # Each value from the start (no accumulated error), rounded to the step's decimals.
    return tuple(start + k * step if whole else round(start + k * step, 12) for k in range(count))


def _axis(file: str, i: int, t: Any, domains: Sequence[str]) -> Axis:
    where = f"axis[{i}]"
    if not isinstance(t, dict):
        raise _err(file, where, f"{t!r} is not a table; expected [[axis]] with path and values")
    for k in t:
        if k not in AXIS_KEYS:
            raise _err(file, f"{where}.{k}", f"unknown key; expected one of {', '.join(AXIS_KEYS)}")
    if ("path" in t) == ("paths" in t):
        raise _err(file, where, 'expected exactly one of path = "..." or paths = [...]')
    raw_paths = [t["path"]] if "path" in t else t["paths"]
    key = "path" if "path" in t else "paths"
    if (
        not isinstance(raw_paths, list)
        or not raw_paths
        or not all(isinstance(p, str) and p for p in raw_paths)
    ):
        raise _err(file, f"{where}.{key}", f"{raw_paths!r} is not allowed; expected dotted paths")
    for p in raw_paths:
        _check_path(file, f"{where}.{key}", p, domains)
    name = t.get("name", raw_paths[0])
    if not isinstance(name, str) or not name:
        raise _err(file, f"{where}.name", f"{name!r} is not allowed; expected a column name")
    kinds = [k for k in ("values", "range", "low") if k in t]
    if len(kinds) != 1 or ("low" in t) != ("high" in t):
        raise _err(
            file,
            where,
            "expected exactly one of values = [...], range = [start, stop, step] or low/high "
            "(a sampled axis)",
        )
    if "integer" in t and not isinstance(t["integer"], bool):
        raise _err(
            file, f"{where}.integer", f"{t['integer']!r} is not allowed; expected true/false"
        )
    integer = bool(t.get("integer", False))
    if "values" in t:
        vals = t["values"]
        if not isinstance(vals, list) or not vals:
            raise _err(
                file, f"{where}.values", f"{vals!r} is not allowed; expected a non-empty list"
            )
        kinds_of = {"number" if _is_number(v) else type(v).__name__ for v in vals}
        if len(kinds_of) != 1 or kinds_of - {"number", "str", "bool"}:
            raise _err(
                file,
                f"{where}.values",
                f"{vals!r} mixes kinds or holds tables; expected numbers, strings or booleans",
            )
        if len(set(map(repr, vals))) != len(vals):
            raise _err(file, f"{where}.values", f"{vals!r} repeats a value; expected each once")
        return Axis(name, tuple(raw_paths), tuple(vals))
    if "range" in t:
        return Axis(name, tuple(raw_paths), _range_values(file, f"{where}.range", t["range"]))
    lo, hi = t["low"], t["high"]
    if not (_is_number(lo) and _is_number(hi)) or not lo < hi:
        raise _err(
            file, f"{where}.low", f"low = {lo!r}, high = {hi!r}; expected numbers low < high"
        )
    return Axis(name, tuple(raw_paths), None, float(lo), float(hi), integer)


def _check_path(file: str, where: str, path: str, domains: Sequence[str]) -> None:
    parts = path.split(".")
    head = parts[0]
    if head == "domain":
        if len(parts) < 3:
            raise _err(file, where, f'"{path}" is not a place; expected domain.NAME.PARAM')
        if parts[1] not in domains:
            raise _err(
                file,
                where,
                f'"{path}": no domain "{parts[1]}" in the base scenario; expected one of '
                f"{', '.join(domains)}",
            )
        return
    if head in ("scheduler", "run", "host") and len(parts) >= 2 and all(parts):
        if head == "run" and parts[1] == "seed":
            raise _err(file, where, f'"{path}": the seed is set by replications and seed')
        return
    raise _err(
        file,
        where,
        f'"{path}" is not a place in a scenario; expected scheduler.X, run.X, host.X or '
        "domain.NAME.X",
    )


def load_spec(path: str | Path) -> Spec:
    """Read and check a sweep spec file (ScenarioError naming file, field, value and what
    was expected)."""
    file = str(path)
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise ScenarioError("no such file; expected a sweep spec TOML file", file=file) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"cannot be read ({exc}); expected a sweep spec", file=file) from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"TOML syntax error: {exc}", file=file) from None
    return parse_spec(raw, file=file, base_dir=p.parent)


def parse_spec(raw: dict[str, Any], *, file: str = "sweep", base_dir: Path | None = None) -> Spec:
    """Check a sweep spec given as a tree (what `load_spec` reads from TOML)."""
    for k in raw:
        if k not in SPEC_KEYS:
            raise _err(file, k, f"unknown key; expected one of {', '.join(SPEC_KEYS)}")
    if "base" not in raw:
        raise _err(file, "base", 'missing; expected base = "SCENARIO.toml" or a [base] table')
    b = raw["base"]
    if isinstance(b, str):
        bp = Path(b) if Path(b).is_absolute() or base_dir is None else base_dir / b
        try:
            base = read(bp)
        except ScenarioError as exc:
            raise _err(file, "base", f"{b}: {exc.message}") from None
    elif isinstance(b, dict):
        base = Scenario(copy.deepcopy(b), source=f"{file} [base]")
    else:
        raise _err(file, "base", f"{b!r} is not allowed; expected a scenario path or a table")
    if base.is_cluster:
        raise _err(file, "base", "is a cluster ([[host]]); expected a single-host scenario")
    base.validate()
    domains = [d["name"] for d in base.data.get("domain", [])]
    axes_raw = raw.get("axis", [])
    if not isinstance(axes_raw, list):
        raise _err(file, "axis", "expected [[axis]] tables")
    axes = [_axis(file, i, t, domains) for i, t in enumerate(axes_raw)]
    names = [a.name for a in axes]
    for i, a in enumerate(axes):
        if names.count(a.name) > 1:
            raise _err(file, f"axis[{i}].name", f'"{a.name}" names two axes; expected each once')
        if a.name in RESULT_COLUMNS + RESULT_TAIL + SUMMARY_COLUMNS:
            raise _err(file, f"axis[{i}].name", f'"{a.name}" is a results column; expected another')
    taken: dict[str, int] = {}
    for i, a in enumerate(axes):
        for pth in a.paths:
            if pth in taken:
                raise _err(file, f"axis[{i}]", f'"{pth}" is set by axis[{taken[pth]}] too')
            taken[pth] = i
    reps = _int(file, "replications", raw.get("replications", 1), low=1)
    seed0 = base.data.get("run", {}).get("seed", 1)
    seed = _int(file, "seed", raw.get("seed", seed0))
    spec = Spec(file, base, axes, reps, seed, raw=raw)
    sample = raw.get("sample", {})
    if not isinstance(sample, dict):
        raise _err(file, "sample", "expected a [sample] table with n, method, seed")
    for k in sample:
        if k not in ("n", "method", "seed"):
            raise _err(file, f"sample.{k}", "unknown key; expected n, method or seed")
    if any(a.sampled for a in axes):
        if "n" not in sample:
            raise _err(file, "sample.n", "missing; a sampled axis (low/high) needs [sample] n")
        spec.sample_n = _int(file, "sample.n", sample["n"], low=1)
        spec.sample_method = sample.get("method", "lhs")
        if spec.sample_method not in SAMPLE_METHODS:
            raise _err(
                file,
                "sample.method",
                f'"{spec.sample_method}" is not a method; expected one of '
                + ", ".join(SAMPLE_METHODS),
            )
        spec.sample_seed = _int(file, "sample.seed", sample.get("seed", 1))
    elif sample:
        raise _err(file, "sample", "no axis is sampled (low/high); expected no [sample] table")
    metrics = raw.get("metrics", [])
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise _err(file, "metrics", f"{metrics!r} is not allowed; expected a list of metric names")
    spec.metrics = list(metrics)
    rep = raw.get("report", {})
    if not isinstance(rep, dict) or set(rep) - {"metrics"}:
        raise _err(file, "report", 'expected a [report] table with metrics = ["DOMAIN:METRIC"]')
    rm = rep.get("metrics", [])
    if not isinstance(rm, list) or not all(isinstance(m, str) and ":" in m for m in rm):
        raise _err(file, "report.metrics", f'{rm!r} is not allowed; expected ["DOMAIN:METRIC"]')
    spec.report_metrics = list(rm)
    n = n_runs(spec)
    if n > MAX_RUNS:
        raise _err(file, "axis", f"{n:,} runs; expected at most {MAX_RUNS:,}")
    return spec


def n_runs(spec: Spec) -> int:
    """How many runs the spec makes."""
    n = spec.replications * max(1, spec.sample_n)
    for a in spec.axes:
        if not a.sampled:
            n *= len(a.values)
    return n


# ----- the runs -----------------------------------------------------------------------------


def _samples(spec: Spec) -> list[dict[str, Any]]:
    """The sample points of the sampled axes: [{axis name: value}] (one empty point if none)."""
    sampled = [a for a in spec.axes if a.sampled]
    if not sampled:
        return [{}]
    import numpy as np

    rng = np.random.default_rng(spec.sample_seed)
    n = spec.sample_n
    if spec.sample_method == "lhs":
        # One point in each of n equal strata per axis, strata paired at random.
        u = np.empty((n, len(sampled)))
        for j in range(len(sampled)):
            u[:, j] = (rng.permutation(n) + rng.random(n)) / n
    else:
        u = rng.random((n, len(sampled)))
    points = []
    for row in u:
        point = {}
        for a, x in zip(sampled, row, strict=True):
            v = a.low + float(x) * (a.high - a.low)
            point[a.name] = int(math.floor(v)) if a.integer else round(v, 12)
        points.append(point)
    return points


def points(spec: Spec) -> list[dict[str, Any]]:
    """Every point of the sweep (axis name -> value), in run order."""
    grid = [a for a in spec.axes if not a.sampled]
    samples = _samples(spec)
    out = []
    for combo in itertools.product(*(a.values for a in grid)):
        for s in samples:
            values = dict(zip((a.name for a in grid), combo, strict=True)) | s
            out.append({a.name: values[a.name] for a in spec.axes})
    return out


def _set(tree: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    if parts[0] == "domain":
        node = next(d for d in tree["domain"] if d["name"] == parts[1])
        parts = parts[2:]
    else:
        node = tree.setdefault(parts[0], {})
        parts = parts[1:]
    for k in parts[:-1]:
        node = node.setdefault(k, {})
        if not isinstance(node, dict):
            raise ScenarioError(f"{k} is not a table", path=path)
    if parts[-1] in ("weight", "cap") and len(parts) == 1 and "sched" in node:
        node["sched"].pop(parts[-1], None)  # the axis replaces [domain.sched]'s value
    node[parts[-1]] = value


def scenario_hash(tree: dict[str, Any]) -> str:
    """The first 16 hex digits of the SHA-256 of the scenario tree as canonical JSON."""
    text = json.dumps(tree, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _seeded(tree: dict[str, Any], seed: int) -> dict[str, Any]:
    """`tree` with run.seed set (a shallow copy: the point's tree is shared)."""
    return {**tree, "run": {**tree.get("run", {}), "seed": seed}}


@dataclass(frozen=True)
class PlannedRun:
    """One run: its number, its point, its seed and axis values, and its point's
    scenario (without the seed, shared by the point's replications)."""

    run: int
    point: int
    seed: int
    values: dict[str, Any]
    point_tree: dict[str, Any]

    @property
    def scenario(self) -> dict[str, Any]:
        """The scenario as run."""
        return _seeded(self.point_tree, self.seed)

    @property
    def scenario_hash(self) -> str:
        return scenario_hash(self.scenario)


def plan(spec: Spec) -> list[PlannedRun]:
    """Every run's scenario, validated (ScenarioError naming the axis and value if one
    is wrong); nothing is simulated."""
    from vmsched.compare import RunSpec, port
    from vmsched.compare.spec import _schedulers

    infos = _schedulers()

    sched_axis = next((a for a in spec.axes if "scheduler.name" in a.paths), None)
    ported: dict[str, dict[str, Any]] = {}
    checked: dict[str, None] = {}
    runs: list[PlannedRun] = []
    for p_index, values in enumerate(points(spec)):
        base = spec.base.data
        if sched_axis is not None:
            name = values[sched_axis.name]
            if name not in ported:
                if name not in infos:
                    exc = unknown_name("scheduler", str(name), list(infos))
                    raise _axis_error(spec, sched_axis, name, exc)
                try:
                    sc, _notes = port(spec.base, RunSpec(str(name), str(name)))
                except ScenarioError as exc:
                    raise _axis_error(spec, sched_axis, name, exc) from None
                ported[name] = sc.data
            base = ported[name]
        tree = copy.deepcopy(base)
        for a in spec.axes:
            for pth in a.paths:
                if pth != "scheduler.name":
                    _set(tree, pth, values[a.name])
        tree.setdefault("run", {}).pop("seed", None)
        key = scenario_hash(tree)
        if key not in checked:
            try:
                Scenario(tree, source=spec.file).validate()
            except ScenarioError as exc:
                raise _point_error(spec, values, exc) from None
            checked[key] = None
        for r in range(spec.replications):
            runs.append(PlannedRun(len(runs), p_index, spec.seed + r, values, tree))
    return runs


def _axis_error(spec: Spec, axis: Axis, value: Any, exc: ScenarioError) -> ScenarioError:
    i = spec.axes.index(axis)
    return ScenarioError(
        f"{value!r}: {exc.message}", file=spec.file, path=f"axis[{i}] ({axis.name})"
    )


def _point_error(spec: Spec, values: dict[str, Any], exc: ScenarioError) -> ScenarioError:
    """A run's scenario is invalid: name the axis whose path the error is about, if any."""
    for i, a in enumerate(spec.axes):
        for pth in a.paths:
            if _same_place(spec, pth, exc.path):
                return ScenarioError(
                    f"{values[a.name]!r} ({exc.path}): {exc.message}",
                    file=spec.file,
                    path=f"axis[{i}] ({a.name})",
                )
    at = ", ".join(f"{k} = {v!r}" for k, v in values.items())
    return ScenarioError(
        f"the run with {at} is invalid: {exc.path}: {exc.message}", file=spec.file, path="axis"
    )


def _same_place(spec: Spec, axis_path: str, error_path: str) -> bool:
    """Is a validation error's field path (domain[1].sched.cap) the axis path
    (domain.web.cap)?"""
    parts = axis_path.split(".")
    if parts[0] == "domain":
        names = [d["name"] for d in spec.base.data["domain"]]
        i = names.index(parts[1])
        rest = parts[2:]
        options = {f"domain[{i}]." + ".".join(rest)}
        if len(rest) == 1:
            options.add(f"domain[{i}].sched.{rest[0]}")
        return error_path in options
    return error_path == axis_path


# ----- one run, in a worker ----------------------------------------------------------------


def metric_rows(summary: dict[str, Any]) -> list[tuple[str | None, int | None, str, float, str]]:
    """One run's metrics: (domain or None, vcpu or None, metric, value, unit), every
    number of summary.json that does not depend on the machine (not wall_s)."""
    from vmsched.compare import DOMAIN_METRICS, LATENCY_METRICS, workload_metrics
    from vmsched.compare.metrics import _unit_of

    rows: list[tuple[str | None, int | None, str, float, str]] = [
        (None, None, "events", float(summary["events"]), "count")
    ]
    for d in summary["domains"]:
        name = d["name"]
        for metric, unit, _ in DOMAIN_METRICS:
            rows.append((name, None, metric, float(d[metric]), unit))
        for metric in ("context_switches", "migrations"):
            rows.append((name, None, metric, float(sum(v[metric] for v in d["vcpus"])), "count"))
        for v in d["vcpus"]:
            rows.append((name, v["vcpu"], "wakeups", float(v["wakeups"]), "count"))
            for key, metric in LATENCY_METRICS.items():
                value = float(v["wake_latency_us"][key]) if v["wakeups"] else math.nan
                rows.append((name, v["vcpu"], metric, value, "us"))
        for mname, value in workload_metrics(d).items():
            val = math.nan if value is None else float(value)
            rows.append((name, None, f"workload.{mname}", val, _unit_of(mname)))
        xm = d.get("xenmon") or {}
        for k, value in xm.items():
            if _is_number(value):
                unit = "1/s" if k.endswith("_per_s") else _unit_of(k)
                rows.append((name, None, f"xenmon.{k}", float(value), unit))
    return rows


def simulate_metrics(tree: dict[str, Any], keep: Sequence[str] = ()) -> list[tuple]:
    """Simulate one scenario tree; its metric rows (only `keep`'s metrics if any)."""
    from vmsched import _core
    from vmsched.errors import from_core

    # The engine directly, as vmsched.run drives it but without its time series (a
    # sweep keeps the summary's numbers): the same events, the same results.
    try:
        sim = _core.Sim(json.dumps(tree))
        end_ns = int(round(float(tree.get("run", {}).get("duration_s", 60.0)) * 1e9))
        sim.run_until(end_ns)
        summary = json.loads(sim.summary(0.0))
    except Exception as exc:  # noqa: BLE001 - translated
        raise from_core(exc, None) from None
    rows = metric_rows(summary)
    if keep:
        rows = [r for r in rows if r[2] in keep]
    return rows


@dataclass(frozen=True)
class _Work:
    """What a worker needs for one run: everything but the tree is small."""

    point_tree: dict[str, Any]
    seed: int
    run: int
    point: int
    values: tuple[Any, ...]
    axis_types: tuple[tuple[str, str], ...]
    keep: tuple[str, ...]


def _simulate_run(w: _Work) -> list[tuple]:
    """One run, in a worker: its metric rows (`simulate_metrics`)."""
    return simulate_metrics(_seeded(w.point_tree, w.seed), w.keep)


def _encode_part(batch: list[tuple[int, _Work]], results: list[tuple[int, Any]]):
    """A finished batch, in the worker that ran it: its rows of results.parquet (a row
    with its error for each run that failed) encoded as a Parquet file.
    (indices of its runs, runs failed, the file's bytes): the main process writes the
    bytes as they are, so its work per batch does not grow with the runs in it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from vmsched.batch import Failure

    first = batch[0][1]
    n_axes = len(first.values)
    run: list[int] = []
    point: list[int] = []
    axes: list[list[Any]] = [[] for _ in range(n_axes)]
    seed: list[int] = []
    hashes: list[str] = []
    dom: list[Any] = []
    vcpu: list[Any] = []
    metric: list[Any] = []
    value: list[float] = []
    unit: list[Any] = []
    error: list[Any] = []
    failed = 0
    for (index, w), (same, result) in zip(batch, results, strict=True):
        assert index == same
        if isinstance(result, Failure):
            failed += 1
            k = 1
            dom.append(None)
            vcpu.append(None)
            metric.append(None)
            value.append(math.nan)
            unit.append(None)
            error.append(str(result))
        else:
            k = len(result)
            if k:
                d, v, m, x, u = zip(*result, strict=True)
                dom += d
                vcpu += v
                metric += m
                value += x
                unit += u
                error += [None] * k
        run += [w.run] * k
        point += [w.point] * k
        for col, v in zip(axes, w.values, strict=True):
            col += [v] * k
        seed += [w.seed] * k
        hashes += [scenario_hash(_seeded(w.point_tree, w.seed))] * k
    schema = _schema_of(first.axis_types)
    cols = [run, point, *axes, seed, hashes, dom, vcpu, metric, value, unit, error]
    arrays = [pa.array(c, type=f.type) for c, f in zip(cols, schema, strict=True)]
    table = pa.Table.from_arrays(arrays, schema=schema)
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf, compression=PART_COMPRESSION)
    # The same rows as an Arrow stream too: what the main process keeps for the end
    # (it reads a stream at almost no cost, a Parquet file it would have to decode).
    stream = pa.BufferOutputStream()
    with pa.ipc.new_stream(stream, schema) as writer:
        writer.write_table(table)
    return [i for i, _ in batch], failed, buf.getvalue().to_pybytes(), stream.getvalue()


# ----- running a sweep ---------------------------------------------------------------------


@dataclass
class SweepResult:
    """A finished (or resumed-to-the-end) sweep: where it is and what is in it."""

    out: Path
    n_runs: int
    n_failed: int
    wall_s: float
    ran: int

    def results(self):
        """results.parquet as a DataFrame."""
        import pandas as pd

        return pd.read_parquet(self.out / RESULTS, dtype_backend="numpy_nullable")

    def summary(self):
        """summary.parquet as a DataFrame."""
        import pandas as pd

        return pd.read_parquet(self.out / SUMMARY)


def spec_hash(spec: Spec) -> str:
    """What identifies a sweep for --resume: its spec and its base scenario."""
    text = json.dumps([spec.raw, spec.base.data], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _axis_dtypes(spec: Spec) -> dict[str, str]:
    out = {}
    for a in spec.axes:
        if a.sampled:
            out[a.name] = "int64" if a.integer else "float64"
            continue
        v = a.values
        if all(isinstance(x, bool) for x in v):
            out[a.name] = "bool"
        elif all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            out[a.name] = "int64"
        elif all(_is_number(x) for x in v):
            out[a.name] = "float64"
        else:
            out[a.name] = "string"
    return out


def _schema(spec: Spec):
    """The Arrow schema of results.parquet (and of every part)."""
    return _schema_of(tuple(_axis_dtypes(spec).items()))


def _schema_of(axis_types: tuple[tuple[str, str], ...]):
    import pyarrow as pa

    arrow = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    arrow["string"] = pa.string()
    fields = [("run", pa.int64()), ("point", pa.int64())]
    fields += [(name, arrow[t]) for name, t in axis_types]
    fields += [("seed", pa.int64()), ("scenario_hash", pa.string()), ("domain", pa.string())]
    fields += [("vcpu", pa.int64()), ("metric", pa.string()), ("value", pa.float64())]
    fields += [("unit", pa.string()), ("error", pa.string())]
    return pa.schema(fields)


def _write_part(table, path: Path, compression: str = "snappy") -> None:
    """Write an Arrow table as Parquet, whole or not at all."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from vmsched.api import write_atomic

    buf = pa.BufferOutputStream()
    pq.write_table(table, buf, compression=compression)
    write_atomic(path, buf.getvalue().to_pybytes())


def _done_runs(out: Path) -> set[int]:
    import pyarrow.parquet as pq

    done: set[int] = set()
    files = sorted((out / PARTS).glob("part-*.parquet")) if (out / PARTS).is_dir() else []
    if (out / RESULTS).exists():
        files.append(out / RESULTS)
    for f in files:
        done.update(pq.read_table(f, columns=["run"]).column("run").to_pylist())
    return done


class _Interrupts:
    """SIGINT and SIGTERM stop a sweep as Ctrl-C does (KeyboardInterrupt: the batch in
    progress is dropped, every file written so far stays whole), except while a part is
    being written (`deferred()`): then the signal is noted and raised right after the
    file is in place, never between its temporary file and the rename. Python runs
    signal handlers in the main thread only, so this works whichever thread the
    operating system delivered the signal to."""

    def __init__(self) -> None:
        self.deferring = False
        self.pending = False

    def handler(self, signum, frame) -> None:  # noqa: ARG002
        if self.deferring:
            self.pending = True
            return
        raise KeyboardInterrupt

    @contextmanager
    def installed(self) -> Iterator[_Interrupts]:
        import threading

        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        old = {sig: signal.signal(sig, self.handler) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield self
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.pending:
            raise KeyboardInterrupt


def _prepare(out: Path, spec: Spec, resume: bool, n: int) -> None:
    from vmsched.api import prepare_out_dir, write_atomic

    prepare_out_dir(out)
    meta = out / SPEC_JSON
    h = spec_hash(spec)
    if meta.exists():
        try:
            old = json.loads(meta.read_text())
        except (OSError, ValueError):
            old = {}
        if not resume:
            raise ScenarioError(
                "holds a sweep already; expected --resume to complete it, or a new folder",
                file=str(out),
            )
        if old.get("spec_hash") != h:
            raise ScenarioError(
                f"holds another sweep (spec {old.get('spec_hash')}, this one {h}); expected "
                "the same spec to resume, or a new folder",
                file=str(out),
            )
    else:
        doc = {
            "spec_file": spec.file,
            "spec_hash": h,
            "spec": spec.raw,
            "base": spec.base.data,
            "axes": [
                {
                    "name": a.name,
                    "paths": list(a.paths),
                    "values": list(a.values) if a.values is not None else None,
                    "low": a.low,
                    "high": a.high,
                    "integer": a.integer,
                }
                for a in spec.axes
            ],
            "replications": spec.replications,
            "seeds": [spec.seed + r for r in range(spec.replications)],
            "runs": n,
            "report_metrics": spec.report_metrics,
        }
        write_atomic(meta, json.dumps(doc, indent=2, default=str) + "\n")
    parts = out / PARTS
    parts.mkdir(exist_ok=True)
    # A temporary file of a batch that was being written when the sweep was killed.
    for stale in parts.glob(".part-*"):
        stale.unlink(missing_ok=True)


def sweep(
    spec: str | Path | Spec,
    out: str | Path,
    *,
    backend: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    batch_size: int | None = None,
    resume: bool = False,
    figures: bool = True,
    progress: bool | Callable[[int, int], None] = True,
    on_start: Callable[[int, int], None] | None = None,
) -> SweepResult:
    """Run a sweep into `out` and return its SweepResult.

    `spec` is a spec file (or a Spec from `load_spec`). Everything is checked and every
    run's scenario validated before anything is simulated (ScenarioError). `backend`
    "local" (processes; `jobs`, default every CPU) or "ray" (`address` of a cluster, or a
    private local one); `batch_size` runs per task (default: chosen from the number of
    runs and workers). `resume=True` continues an interrupted sweep in `out`, skipping
    the runs done. `figures=False` skips report.html. `on_start(runs in all, runs to do)`
    is called once the plan is checked, before the first run.
    """
    from contextlib import ExitStack

    import pyarrow as pa

    from vmsched.batch import Workers, check_backend, run_batches
    from vmsched.progress import RunsProgress

    spec = spec if isinstance(spec, Spec) else load_spec(spec)
    check_backend(backend, address)
    out = Path(out)
    with ExitStack() as stack:
        if backend == "local":
            # The local processes start (fork) while the runs are planned and checked; a
            # Ray cluster only once they are, so that a mistake is told at once.
            workers = stack.enter_context(Workers(backend, jobs, address, n_runs(spec)))
        runs = plan(spec)
        _prepare(out, spec, resume, len(runs))
        done = _done_runs(out) if resume else set()
        if on_start is not None:
            on_start(len(runs), len(runs) - len(done))
        if backend != "local":
            workers = stack.enter_context(Workers(backend, jobs, address, len(runs)))
        keep = tuple(spec.metrics)
        axis_types = tuple(_axis_dtypes(spec).items())
        items = [
            _Work(
                r.point_tree,
                r.seed,
                r.run,
                r.point,
                tuple(r.values[a.name] for a in spec.axes),
                axis_types,
                keep,
            )
            for r in runs
        ]
        bar = RunsProgress(len(runs), f"sweep {Path(spec.file).name}", progress, initial=len(done))
        t0 = time.perf_counter()
        n_done, failed, ran = len(done), 0, 0
        #: The parts written now, decoded (while the workers run): {first run: table}.
        parts: dict[int, Any] = {}
        try:
            with _Interrupts().installed() as interrupts:
                bar.update(n_done)
                for indices, n_failed, data, rows in run_batches(
                    _simulate_run,
                    items,
                    batch_size=batch_size,
                    skip=done,
                    encode=_encode_part,
                    workers=workers,
                ):
                    first = min(indices)
                    with interrupts.deferred():
                        _write_bytes(out / PARTS / f"part-{first:06d}.parquet", data)
                    parts[first] = pa.ipc.open_stream(rows).read_all()
                    n_done += len(indices)
                    ran += len(indices)
                    failed += n_failed
                    bar.update(n_done, failed)
        finally:
            bar.close()
        wall = time.perf_counter() - t0
        # The workers exit while the results are gathered (they are waited for after).
        workers.release()
        interrupts = _Interrupts()
        with interrupts.installed(), interrupts.deferred():
            n_failed = _finish(out, spec, parts)
        if figures:
            # A Ray cluster draws the figures too (a private one is not started twice);
            # the local processes have been told to exit: the figures get new ones.
            again = workers if backend == "ray" else None
            report(out, backend=backend, jobs=jobs, address=address, workers=again)
    return SweepResult(out, len(runs), n_failed, wall, ran)


def _write_bytes(path: Path, data: bytes) -> None:
    """A part, whole or not at all: a temporary file (.part-..., which an interrupted
    sweep's resume removes) renamed into place. Lean, as it is written for every
    batch: one open, the writes, one rename; the mode is open()'s (0o666 less umask)."""
    import os

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _read_part(data: Any, spec: Spec):
    """A part's Parquet bytes (or file) as an Arrow table of the results' schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = pa.BufferReader(data) if isinstance(data, bytes) else data
    # ParquetFile, not read_table: a part is one small file, and the dataset machinery
    # read_table goes through costs as much as the decoding.
    table = pq.ParquetFile(source).read(use_threads=False)
    schema = _schema(spec)
    return table if table.schema.equals(schema) else table.cast(schema)


def _finish(out: Path, spec: Spec, parts: dict[int, Any] | None = None) -> int:
    """Gather the parts into results.parquet (sorted by run), write the summaries, drop
    the parts; the number of runs that failed. `parts`: the parts this process wrote,
    already decoded ({first run: table}); the others are read from `out/parts/`."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv

    from vmsched.api import write_atomic

    sources: dict[int, Any] = dict(parts or {})
    for f in (out / PARTS).glob("part-*.parquet"):
        first = int(f.stem.split("-")[1])
        if first not in sources:
            sources[first] = f
    ordered = [sources[k] for k in sorted(sources)]
    if (out / RESULTS).exists():
        ordered.append(out / RESULTS)
    schema = _schema(spec)
    tables = []
    seen: set[int] = set()
    for src in ordered:
        t = src if isinstance(src, pa.Table) else _read_part(src, spec)
        runs = set(pc.unique(t.column("run")).to_pylist())
        if runs & seen:
            # A run in two files (a finish interrupted between writing results.parquet
            # and removing the parts): each file holds whole runs, keep the first.
            t = t.filter(pc.invert(pc.is_in(t.column("run"), pa.array(sorted(seen)))))
        seen |= runs
        tables.append(t)
    table = pa.concat_tables(tables) if tables else schema.empty_table()
    # By run; within a run, rows keep the order the worker made them in (a stable sort).
    # The parts come in the order of their first runs: most often that is already the
    # order of the runs, and the sort is not needed.
    run = table.column("run")
    if len(run) > 1 and not pc.all(pc.less_equal(run.slice(0, len(run) - 1), run.slice(1))).as_py():
        table = table.take(pc.sort_indices(table, [("run", "ascending")]))
    # results.parquet is encoded in a thread while the summaries are computed here (Arrow
    # works without the GIL: two cores, now that the workers are done).
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        written = pool.submit(_write_part, table, out / RESULTS, "snappy")
        # One chunk: the aggregations' sums then do not depend on how the runs were cut
        # into batches (the summaries are the same bit for bit whatever the workers).
        axes = [a.name for a in spec.axes]
        used = ["point", *axes, "domain", "vcpu", "metric", "value", "unit"]
        summ = summarise(table.select(used).combine_chunks(), axes)
        _write_part(summ, out / SUMMARY, compression="snappy")
        buf = pa.BufferOutputStream()
        pa_csv.write_csv(summ, buf)
        write_atomic(out / SUMMARY_CSV, buf.getvalue().to_pybytes())
        written.result()
    shutil.rmtree(out / PARTS, ignore_errors=True)
    failed = table.filter(pc.is_valid(table.column("error"))).column("run")
    return len(pc.unique(failed))


def summarise(table, axes: Sequence[str]):
    """Per point x domain x vcpu x metric (an Arrow table of results in, one out): n
    (replications with a value), mean, std and the 95 % interval of the mean
    (Student's t, vmsched.intervals). Arrow all the way: no pandas on this path."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from vmsched.intervals import t975

    ok = table.filter(pc.is_valid(table.column("metric")))
    value = ok.column("value")
    # A missing number (no wake-ups) is NaN in a run's rows; it counts as no value.
    value = pc.if_else(pc.is_nan(value), pa.scalar(None, pa.float64()), value)
    ok = ok.set_column(ok.schema.get_field_index("value"), "value", value)
    keys = ["point", *axes, "domain", "vcpu", "metric", "unit"]
    g = ok.group_by(keys, use_threads=False).aggregate(
        [
            ("value", "count"),
            ("value", "mean"),
            ("value", "stddev", pc.VarianceOptions(ddof=1)),
        ]
    )
    g = g.sort_by([(k, "ascending") for k in keys])
    n = g.column("value_count").to_numpy()
    mean = g.column("value_mean").to_numpy(zero_copy_only=False)
    std = g.column("value_stddev").to_numpy(zero_copy_only=False)
    t = np.array([t975(int(k) - 1) if k > 1 else math.nan for k in n])
    half = t * std / np.sqrt(np.maximum(n, 1))
    cols = {k: g.column(k) for k in keys}
    cols |= {"n": pa.array(n, pa.int64()), "mean": g.column("value_mean")}
    cols |= {"std": g.column("value_stddev")}
    # No interval from one replication: null, as std is.
    none = n < 2
    cols |= {"ci95_low": pa.array(mean - half, mask=none)}
    cols |= {"ci95_high": pa.array(mean + half, mask=none)}
    return pa.table(cols)


# ----- the report ------------------------------------------------------------------------


def _numeric_axes(meta: dict[str, Any], summ, grid_only: bool = False) -> list[str]:
    """The axes with numbers and more than one value (`grid_only`: not sampled ones)."""
    out = []
    for a in meta["axes"]:
        col = summ[a["name"]]
        if grid_only and a["values"] is None:
            continue
        if col.dtype.kind in "iuf" and col.nunique() > 1:
            out.append(a["name"])
    return out


def _choose_metrics(meta: dict[str, Any], summ) -> list[tuple[str | None, str]]:
    """The (domain, metric) pairs to draw: the spec's [report] metrics, else the ones
    whose mean varies most across the points (relative to their size)."""
    if meta.get("report_metrics"):
        return [(d or None, m) for d, _, m in (x.partition(":") for x in meta["report_metrics"])]
    import numpy as np

    rows = summ[summ["vcpu"].isna() | (summ["vcpu"] == 0)]
    scores = []
    for (dom, metric), g in rows.groupby(["domain", "metric"], dropna=False, sort=True):
        m = g["mean"].to_numpy(dtype="float64")
        m = m[np.isfinite(m)]
        if m.size < 2 or metric == "events":
            continue
        spread = float(m.max() - m.min())
        scale = float(np.abs(m).mean()) or 1.0
        if spread > 0:
            scores.append((spread / scale, None if not isinstance(dom, str) else dom, metric))
    scores.sort(key=lambda s: -s[0])
    return [(d, m) for _, d, m in scores[:MAX_REPORT_METRICS]]


def _draw(item: tuple[Any, dict[str, Any], str | None, str, str]) -> bytes:
    """One metric's figure (in a worker): a line per combination of the other axes
    against the first numeric axis, with its 95 % band; bars when no axis is numeric."""
    summ, meta, dom, metric, kind = item
    from vmsched import plot

    sel = summ[(summ["metric"] == metric) & (summ["vcpu"].isna() | (summ["vcpu"] == 0))]
    sel = sel[sel["domain"].isna()] if dom is None else sel[sel["domain"] == dom]
    axes = [a["name"] for a in meta["axes"]]
    numeric = _numeric_axes(meta, summ)
    unit = sel["unit"].iloc[0] if len(sel) else ""
    ylabel = f"{dom + ': ' if dom else ''}{metric}" + (
        f" ({unit})" if unit and unit != "count" else ""
    )
    fig = plot.new_figure(plot.FIGSIZE[0] + 1.6, plot.FIGSIZE[1] + 0.6)
    with plot.style():
        if kind == "heat":
            x, y = _numeric_axes(meta, summ, grid_only=True)[:2]
            others = [a for a in axes if a not in (x, y)]
            groups = list(sel.groupby(others, sort=True)) if others else [((), sel)]
            groups = groups[:4]
            axs = fig.subplots(1, len(groups), squeeze=False)[0]
            for ax, (key, g) in zip(axs, groups, strict=True):
                pv = g.pivot_table(index=y, columns=x, values="mean", aggfunc="mean")
                im = ax.imshow(pv.to_numpy(), origin="lower", aspect="auto", cmap="viridis")
                ax.set_xticks(range(len(pv.columns)), [f"{v:g}" for v in pv.columns])
                ax.set_yticks(range(len(pv.index)), [f"{v:g}" for v in pv.index])
                ax.set_xlabel(x)
                ax.set_ylabel(y)
                key = key if isinstance(key, tuple) else (key,)
                ax.set_title(", ".join(f"{k}={v}" for k, v in zip(others, key, strict=False)))
                ax.grid(False)
                fig.colorbar(im, ax=ax, label=ylabel)
            return plot.png_bytes(fig)
        ax = fig.add_subplot()
        if numeric:
            x = numeric[0]
            others = [a for a in axes if a != x]
            groups = list(sel.groupby(others, sort=True)) if others else [((), sel)]
            for k, (key, g) in enumerate(groups[:10]):
                g = g.groupby(x, sort=True)[["mean", "ci95_low", "ci95_high"]].mean()
                key = key if isinstance(key, tuple) else (key,)
                label = ", ".join(f"{o}={v}" for o, v in zip(others, key, strict=False)) or metric
                ax.plot(g.index, g["mean"], marker="o", ms=3, color=plot.colour(k), label=label)
                ax.fill_between(
                    g.index, g["ci95_low"], g["ci95_high"], color=plot.colour(k), alpha=0.2, lw=0
                )
            ax.set_xlabel(x)
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
        else:
            labels = (
                [", ".join(f"{v}" for v in row) for row in sel[axes].itertuples(index=False)]
                if axes
                else ["(base)"] * len(sel)
            )
            means = sel["mean"].to_numpy()
            err = [means - sel["ci95_low"].to_numpy(), sel["ci95_high"].to_numpy() - means]
            ax.bar(range(len(sel)), means, yerr=err, color=plot.colour(0), capsize=3)
            ax.set_xticks(range(len(sel)), labels, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{ylabel}: mean and 95 % interval over the replications", fontsize=8)
    return plot.png_bytes(fig)


def _fig_name(domain: str | None, metric: str, suffix: str = "") -> str:
    """A figure's file stem: `web-workload.response_ms.p99`, other characters as `_`."""
    import re

    text = f"{domain}-{metric}" if domain else metric
    return re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip("._-") + suffix


def report(
    out: str | Path,
    *,
    backend: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    workers: Any = None,
) -> Path:
    """Write `out/report.html` from a finished sweep's files; the figures are drawn in
    the batch layer's workers (`workers`, a running `vmsched.batch.Workers`, if given).
    Returns the report's path."""
    import pandas as pd

    from vmsched import htmlreport as h
    from vmsched.batch import run_all

    out = Path(out)
    if not (out / SPEC_JSON).exists() or not (out / SUMMARY).exists():
        raise ScenarioError(
            f"has no finished sweep ({SPEC_JSON}, {SUMMARY}); expected the --out folder of "
            "vmsched sweep",
            file=str(out),
        )
    meta = json.loads((out / SPEC_JSON).read_text())
    summ = pd.read_parquet(out / SUMMARY)
    res = pd.read_parquet(out / RESULTS, columns=["run", "error"])
    chosen = _choose_metrics(meta, summ)
    numeric = _numeric_axes(meta, summ, grid_only=True)
    items = [(summ, meta, d, m, "line") for d, m in chosen]
    if len(numeric) >= 2:
        items += [(summ, meta, d, m, "heat") for d, m in chosen[:4]]
    pngs = run_all(
        _draw,
        items,
        backend=backend,
        jobs=jobs,
        address=address,
        label="figures",
        workers=workers,
    )
    axes = meta["axes"]
    failed = res[res["error"].notna()].drop_duplicates("run")
    blocks: list[Any] = [
        h.Paragraph(
            f"{meta['runs']} runs of {meta['spec_file']}: "
            + "; ".join(
                f"{a['name']} ({', '.join(a['paths'])}) "
                + (
                    "= " + ", ".join(str(v) for v in a["values"])
                    if a["values"] is not None
                    else f"sampled in [{a['low']:g}, {a['high']:g}]"
                )
                for a in axes
            )
            + f"; {meta['replications']} replication(s), seeds {meta['seeds']}. "
            f"{len(failed)} run(s) failed."
        ),
        h.Code(f"vmsched sweep {meta['spec_file']} --out {out}"),
        h.Heading("Metrics against the axes"),
        h.Paragraph(
            "Each line is the mean over the replications of one combination of the other "
            "axes; the band is its 95 % interval (Student's t). summary.parquet holds every "
            "metric; results.parquet every run."
        ),
    ]
    for (d, m), png in zip(chosen, pngs[: len(chosen)], strict=True):
        blocks.append(h.Figure(png, f"{d + ': ' if d else ''}{m}", _fig_name(d, m)))
    if len(pngs) > len(chosen):
        blocks.append(h.Heading("Heat maps"))
        blocks.append(h.Paragraph(f"Mean of each metric over {numeric[0]} and {numeric[1]}."))
        for (d, m), png in zip(chosen[:4], pngs[len(chosen) :], strict=True):
            caption = f"{d + ': ' if d else ''}{m} over two axes"
            blocks.append(h.Figure(png, caption, _fig_name(d, m, "-heat")))
    if len(failed):
        blocks.append(h.Heading("Failed runs"))
        errs = pd.read_parquet(out / RESULTS)
        errs = errs[errs["error"].notna()].drop_duplicates("run")
        blocks.append(h.Table(errs[["run", *[a["name"] for a in axes], "seed", "error"]]))
    title = "Sweep: " + Path(meta["spec_file"]).name
    return h.write_report(out / REPORT_HTML, title, blocks)


# ----- the command line (its options are declared in vmsched.cli) ----------------------------


def main(args: Any) -> int:
    """`vmsched sweep SPEC --out DIR` or `vmsched sweep report DIR`."""
    import sys

    if args.spec[0] == "report" and len(args.spec) == 2:
        path = report(args.spec[1], backend=args.backend, jobs=args.jobs, address=args.address)
        print(f"report: {path}")
        return 0
    if len(args.spec) != 1:
        raise ScenarioError(
            f"{' '.join(args.spec)}: expected one spec file, or `report DIR`", path="SPEC"
        )
    spec = load_spec(args.spec[0])
    if args.dry_run:
        runs = plan(spec)
        print(f"{args.spec[0]}: OK, {len(runs):,} runs ({len(points(spec)):,} points)")
        return 0
    if args.out is None:
        raise ScenarioError("missing; expected --out DIR for the results", path="--out")

    def started(total: int, todo: int) -> None:
        resumed = f", {total - todo:,} done before" if todo != total else ""
        print(f"{total:,} runs{resumed}; {todo:,} to run on {args.backend}", file=sys.stderr)

    try:
        r = sweep(
            spec,
            args.out,
            backend=args.backend,
            jobs=args.jobs,
            address=args.address,
            batch_size=args.batch_size,
            resume=args.resume,
            figures=not args.no_figures,
            on_start=started,
        )
    except KeyboardInterrupt:
        print(
            f"vmsched: interrupted; the runs done are in {args.out}/{PARTS}/. Complete the "
            f"sweep with: vmsched sweep {args.spec[0]} --out {args.out} --resume",
            file=sys.stderr,
        )
        return 130
    except WorkerLost as exc:
        print(
            f"vmsched: error: {one_line(str(exc))}; the runs done are in {args.out}/{PARTS}/. "
            f"Complete the sweep with: vmsched sweep {args.spec[0]} --out {args.out} --resume",
            file=sys.stderr,
        )
        return 1
    rate = f", {r.ran / r.wall_s:,.0f} runs/s" if r.ran and r.wall_s > 0 else ""
    print(f"{r.n_runs:,} runs ({r.ran:,} run now, {r.n_failed} failed) in {r.wall_s:.1f} s{rate}")
    files = [RESULTS, SUMMARY, SUMMARY_CSV] + ([] if args.no_figures else [REPORT_HTML])
    print(f"results in {args.out}/ ({', '.join(files)})")
    return 0
