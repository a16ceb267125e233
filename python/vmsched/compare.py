"""`vmsched compare`: one scenario under several schedulers and parameter variants, side by side.

    vmsched compare scenarios/credit-three-vms.toml --schedulers credit,credit2,sedf \\
        --variant 'credit:tslice_ms=5' --variant 'credit:web.cap=50' --out results/cmp

Each run is the scenario moved to one scheduler (a *port*, below) with the variant's
settings applied; the runs are simulated in parallel processes and the folder gets
`report.html` (self-contained), its figures as PNGs and `results.csv` (one row per
run x domain x metric). From Python::

    from vmsched.compare import compare
    c = compare("scenarios/credit-three-vms.toml", schedulers=["credit", "credit2"],
                variants=["credit:tslice_ms=5"])
    c.results()                  # the rows of results.csv (DataFrame)
    c.verdicts()                 # [(metric, [sentences])]
    c.save("results/cmp")

**Variants.** `SCHED[:SETTING,SETTING,...]`; a SETTING is `PARAM=VALUE` for a
pool-wide parameter (`[scheduler]`) or `DOMAIN.PARAM=VALUE` for one domain's
(`[domain.sched]`). Values are TOML values (`5`, `2.5`, `true`, `[...]`); parameters
declared as strings (`xen_version`, `runqueue`) take the text as it is. The label of
a run is its variant as written (normalised), or the scheduler's name.

**Porting a scenario to another scheduler.** Scheduler parameters are Xen's own and
differ between schedulers, so a parameter of the scenario (in `[scheduler]`,
`[[domain]]`/`[domain.sched]` or an `[[action]]`) is

- kept when the target scheduler declares it in the same scope and unit;
- converted when it declares it in another time unit (SEDF's `period` in ms is
  RTDS's `period` in us); dropped if the value is then not whole where the target
  needs an integer;
- dropped when the target does not declare it (Credit's `tslice_ms` under SEDF),
  and also when the target's validation rejects the carried value (a `xen_version`
  the target does not have, a parameter the variant's `xen_version` lacks);
- an action left with nothing to do is dropped.

Every change is listed in the report ("Parameters adjusted") with its reason; a kept
parameter whose default differs between the two schedulers (SEDF's `weight` is not
Credit's) is pointed out too. The variant's own settings are never dropped: a wrong
one is bad input.
"""

from __future__ import annotations

import argparse
import copy
import math
import shlex
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vmsched.api import catalogue, prepare_out_dir, run, write_atomic
from vmsched.batch import add_backend_options, check_backend, check_jobs, run_all
from vmsched.errors import ScenarioError, unknown_name
from vmsched.intervals import separated
from vmsched.scenario import Scenario, read
from vmsched.scheduler import is_spec, register

#: `--quick`: the run is shortened to this many simulated seconds (warm-up included).
QUICK_DURATION_S = 5.0
#: Shortest sampling interval a scenario may have (docs/scenarios.md, run.sample_ms).
MIN_SAMPLE_MS = 0.1
#: Keys of an [[action]] that are not scheduler parameters.
ACTION_KEYS = ("at_s", "domain", "pause", "vcpus_online", "affinity")
#: Keys of a [[domain]] that are scheduler parameters given directly (shorthands).
DOMAIN_SHORTHANDS = ("weight", "cap")
#: Time units of scheduler parameters, in ns.
NS_PER_UNIT = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}
#: Values within this fraction of each other count as the same in verdicts.
SAME_REL = 0.01
#: Percentages within this many points count as the same in verdicts.
SAME_PCT_POINTS = 0.5
#: Latencies within this many µs count as the same in verdicts (below 1.024 µs the
#: latency histogram's buckets are 0.128 µs wide: docs/metrics.md).
SAME_LATENCY_US = 1.0
#: Replications (seeds) of each run by default, and with --quick. Each run is simulated
#: on seeds SEED, SEED+1, ... (SEED: the scenario's run.seed, 1 if unset).
REPLICATIONS = 3
QUICK_REPLICATIONS = 2
#: Most panels in the figure of application metrics.
MAX_METRIC_PANELS = 12

REPORT_HTML = "report.html"
RESULTS_CSV = "results.csv"
FIG_CPU_TIME = "cpu-over-time"
FIG_CPU_SHARE = "cpu-share"
FIG_LATENCY = "wake-latency"
FIG_WORKLOAD = "workload-metrics"
RESULT_COLUMNS = ("run", "scheduler", "domain", "vcpu", "metric", "value", "unit")
#: What results.csv gains from the replications: how many, and the 95 % interval of the
#: mean (`value` is the mean over the replications).
REPLICATION_COLUMNS = ("replications", "ci95_low", "ci95_high")

#: Workload metrics whose better direction is known: -1 lower is better, +1 higher.
#: Metrics not listed get a neutral verdict (highest / lowest), unless their name
#: says it (LOWER_IS_BETTER_WORDS, HIGHER_IS_BETTER_WORDS).
METRIC_DIRECTION = {
    "missed_periods": -1,
    "outstanding_items": -1,
    "completion_s": -1,
    "mean_completion_s": -1,
    "runs_completed": +1,
    "threads_done": +1,
    "completed": +1,
    "errors": -1,
    "timeouts": -1,
    "response_ms": -1,
    "transactions_s": +1,
    "txn_ms": -1,
}
LOWER_IS_BETTER_WORDS = ("latency", "missed", "response", "dropped", "lost", "error", "timeout")
HIGHER_IS_BETTER_WORDS = ("throughput", "goodput", "completed")


# ----- run specifications ------------------------------------------------------------------


@dataclass(frozen=True)
class RunSpec:
    """One run of a comparison: a scheduler plus the settings of its variant."""

    label: str
    scheduler: str
    #: Pool-wide parameters the variant sets ([scheduler]).
    global_params: dict[str, Any] = field(default_factory=dict)
    #: Per-domain parameters the variant sets: domain name -> {param: value}.
    domain_params: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def settings(self) -> str:
        """The variant's settings as written in its label ("" for a plain scheduler)."""
        return self.label.partition(":")[2]


def _schedulers() -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in catalogue()["schedulers"]}


def _decl(info: dict[str, Any], name: str, scope: str) -> dict[str, Any] | None:
    for p in info["params"]:
        if p["name"] == name and p["scope"] == scope:
            return p
    return None


def _split_settings(text: str) -> list[str]:
    """Split on commas outside brackets, braces and quotes (values may be TOML arrays)."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _is_string_param(decl: dict[str, Any]) -> bool:
    expected = decl["expected"]
    return "string" in expected or expected.startswith("one of")


def _value(text: str, decl: dict[str, Any]) -> Any:
    """A setting's value typed as its declaration asks."""
    if _is_string_param(decl):
        return text.strip("\"'")
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        # Not a TOML value: give it as text and let validation say what was expected.
        return text


def parse_variant(text: str, domains: Sequence[str]) -> RunSpec:
    """`SCHED[:PARAM=VALUE,DOMAIN.PARAM=VALUE,...]` -> RunSpec (ScenarioError if wrong)."""
    where = f"--variant {text}"
    sched, _, rest = text.strip().partition(":")
    sched = sched.strip()
    if "." in sched or "/" in sched:
        # A user's scheduler, file.py:Class or module:Class: its name holds a colon.
        cls, _, rest = rest.partition(":")
        sched = f"{sched}:{cls.strip()}"
        register(sched, where=where)
    infos = _schedulers()
    if sched not in infos:
        raise unknown_name("scheduler", sched, list(infos), path=where)
    info = infos[sched]
    global_params: dict[str, Any] = {}
    domain_params: dict[str, dict[str, Any]] = {}
    normalised = []
    for setting in _split_settings(rest) if rest.strip() else []:
        key, eq, raw = setting.partition("=")
        key, raw = key.strip(), raw.strip()
        if not eq or not key or not raw:
            raise ScenarioError(
                f'"{setting}" is not a setting; expected PARAM=VALUE or DOMAIN.PARAM=VALUE',
                path=where,
            )
        dom, dot, name = key.rpartition(".")
        scope = "domain" if dot else "global"
        if dot and dom not in domains:
            raise unknown_name("domain", dom, list(domains), path=where)
        decl = _decl(info, name, scope)
        if decl is None:
            known = sorted(p["name"] for p in info["params"] if p["scope"] == scope)
            other = "domain" if scope == "global" else "global"
            if _decl(info, name, other) is not None:
                how = "DOMAIN." + name if other == "domain" else name
                raise ScenarioError(
                    f"'{name}' is a {'per-domain' if other == 'domain' else 'pool-wide'} "
                    f"{sched} parameter; expected {how}=VALUE",
                    path=where,
                )
            kind = "per-domain" if scope == "domain" else "pool-wide"
            if not known:
                raise ScenarioError(
                    f"{sched} has no {kind} parameters; '{name}' cannot be set", path=where
                )
            raise unknown_name(f"{kind} {sched} parameter", name, known, path=where)
        value = _value(raw, decl)
        target = domain_params.setdefault(dom, {}) if dot else global_params
        if name in target:
            raise ScenarioError(f"sets {key} twice; expected each setting once", path=where)
        target[name] = value
        normalised.append(f"{key}={raw}")
    label = sched + (":" + ",".join(normalised) if normalised else "")
    return RunSpec(label, sched, global_params, domain_params)


def plan_runs(
    schedulers: Sequence[str], variants: Sequence[str], domains: Sequence[str]
) -> list[RunSpec]:
    """The runs of `--schedulers` then `--variant`, checked (ScenarioError if wrong)."""
    for name in schedulers:
        if is_spec(name):
            register(name, where="--schedulers")
    infos = _schedulers()
    specs = []
    for name in schedulers:
        if name not in infos:
            raise unknown_name("scheduler", name, list(infos), path="--schedulers")
        specs.append(RunSpec(name, name))
    specs += [parse_variant(v, domains) for v in variants]
    labels = [s.label for s in specs]
    twice = sorted({lab for lab in labels if labels.count(lab) > 1})
    if twice:
        raise ScenarioError(
            f"{twice[0]} is asked for twice; expected each run once", path="--schedulers/--variant"
        )
    if len(specs) < 2:
        got = f" (only {labels[0]})" if labels else ""
        raise ScenarioError(
            f"a comparison needs at least two runs{got}; expected --schedulers A,B or "
            "--variant options",
            path="--schedulers",
        )
    return specs


# ----- porting a scenario to a run ---------------------------------------------------------


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    return f"{v}"


def _carry(
    name: str,
    value: Any,
    src: dict[str, Any] | None,
    dst: dict[str, Any] | None,
    names: tuple[str, str],
    scope: str,
) -> tuple[bool, Any, str | None]:
    """Whether a parameter goes along from scheduler names[0] to names[1]:
    (keep, value there, note or None)."""
    src_name, dst_name = names
    if dst is None:
        kind = "per-domain" if scope == "domain" else "pool-wide"
        return False, None, f"{dst_name} has no {kind} parameter {name}"
    if src is None or src["unit"] == dst["unit"]:
        if src is not None and src["default"] != dst["default"]:
            return (
                True,
                value,
                f"kept, but {dst_name}'s {name} may mean something else: its default is "
                f"{dst['default']} there, {src['default']} under {src_name} "
                f"(docs/schedulers/{dst_name}.md)",
            )
        return True, value, None
    su, du = src["unit"], dst["unit"]
    if su in NS_PER_UNIT and du in NS_PER_UNIT and isinstance(value, int | float):
        converted = value * NS_PER_UNIT[su] / NS_PER_UNIT[du]
        if dst["expected"].startswith("an integer"):
            if not math.isclose(converted, round(converted), rel_tol=0, abs_tol=1e-9):
                return (
                    False,
                    None,
                    f"{dst_name} takes whole {du} and {value:g} {su} is {converted:g} {du}",
                )
            converted = int(round(converted))
        else:
            converted = round(converted, 9)
        return (
            True,
            converted,
            f"{dst_name} takes it in {du}: converted to {_fmt_value(converted)} {du}",
        )
    return (
        False,
        None,
        f"{dst_name} declares {name} in {du or 'no unit'}, {src_name} in {su or 'no unit'}",
    )


@dataclass
class _Ported:
    data: dict[str, Any]
    notes: list[str]
    #: Locations the variant set, which validation errors must not silently drop.
    variant_paths: set[str]


def _adjust(notes: list[str], where: str, name: str, value: Any, keep: bool, why: str | None):
    """Note what porting did to one parameter (nothing when it was kept as it is)."""
    if keep and why is None:
        return
    if keep:
        notes.append(f"{where}.{name} = {_fmt_value(value)}: {why}")
    else:
        notes.append(f"{where}.{name} = {_fmt_value(value)} dropped: {why}")


def _port_tree(base: dict[str, Any], spec: RunSpec, infos: dict[str, Any]) -> _Ported:
    data = copy.deepcopy(base)
    notes: list[str] = []
    src_name = base["scheduler"]["name"]
    src, dst = infos[src_name], infos[spec.scheduler]
    same = src_name == spec.scheduler

    def carry(where: str, name: str, value: Any, scope: str) -> tuple[bool, Any]:
        if same:
            return True, value
        keep, new, why = _carry(
            name,
            value,
            _decl(src, name, scope),
            _decl(dst, name, scope),
            (src_name, spec.scheduler),
            scope,
        )
        _adjust(notes, where, name, value, keep, why)
        return keep, new

    sched = {"name": spec.scheduler}
    for k, v in base["scheduler"].items():
        if k == "name":
            continue
        keep, new = carry("scheduler", k, v, "global")
        if keep:
            sched[k] = new
    data["scheduler"] = sched

    for i, dom in enumerate(data["domain"]):
        for k in [k for k in DOMAIN_SHORTHANDS if k in dom]:
            keep, new = carry(f"domain[{i}]", k, dom[k], "domain")
            if keep:
                dom[k] = new
            else:
                del dom[k]
        table = dom.get("sched", {})
        for k in list(table):
            keep, new = carry(f"domain[{i}].sched", k, table[k], "domain")
            if keep:
                table[k] = new
            else:
                del table[k]
        if "sched" in dom and not dom["sched"]:
            del dom["sched"]

    for j, act in enumerate(data.get("action", [])):
        scope = "domain" if "domain" in act else "global"
        for k in [k for k in act if k not in ACTION_KEYS]:
            keep, new = carry(f"action[{j}]", k, act[k], scope)
            if keep:
                act[k] = new
            else:
                del act[k]

    variant_paths: set[str] = set()
    sched.update(spec.global_params)
    variant_paths |= {f"scheduler.{k}" for k in spec.global_params}
    names = [d["name"] for d in data["domain"]]
    for dom_name, params in spec.domain_params.items():
        i = names.index(dom_name)
        dom = data["domain"][i]
        for k, v in params.items():
            dom.pop(k, None)  # the variant's value replaces a shorthand of the same name
            dom.setdefault("sched", {})[k] = v
            variant_paths |= {f"domain[{i}].{k}", f"domain[{i}].sched.{k}"}
    return _Ported(data, notes, variant_paths)


def _drop_idle_actions(data: dict[str, Any], notes: list[str]) -> None:
    """Remove actions that no longer do anything (all their parameters were dropped)."""
    actions = data.get("action")
    if not actions:
        return
    kept = []
    for act in actions:
        if any(k not in ("at_s", "domain") for k in act):
            kept.append(act)
        else:
            on = f" on {act['domain']}" if "domain" in act else ""
            notes.append(f"the action at {act.get('at_s')} s{on} dropped: nothing left to do")
    if kept:
        data["action"] = kept
    else:
        del data["action"]


def _tables(data: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], list[str]]]:
    """Every place scheduler parameters live in a tree: (group, where, table, keys).

    A domain's shorthands and its [domain.sched] share a group (validation names both
    as domain[i].sched.NAME).
    """
    out = [
        ("scheduler", "scheduler", data["scheduler"], [k for k in data["scheduler"] if k != "name"])
    ]
    for i, dom in enumerate(data["domain"]):
        group = f"domain[{i}]"
        out.append((group, group, dom, [k for k in DOMAIN_SHORTHANDS if k in dom]))
        if isinstance(dom.get("sched"), dict):
            out.append((group, f"{group}.sched", dom["sched"], list(dom["sched"])))
    for j, act in enumerate(data.get("action", [])):
        out.append((f"action[{j}]", f"action[{j}]", act, [k for k in act if k not in ACTION_KEYS]))
    return out


def _group_of(path: str) -> tuple[str, str]:
    """(group, parameter name) of a validation error's field path."""
    head, _, name = path.rpartition(".")
    return head.removesuffix(".sched"), name


def _remove_rejected(data: dict[str, Any], path: str, protected: set[str]) -> list[tuple[str, Any]]:
    """Remove what a validation error at `path` rejects: the carried parameter it names,
    or, when it names none (a parameter missing from a set that goes together, such as
    Atropos's period, slice and latency), every carried parameter of the same table.
    Returns [(field path, value)] removed; empty if the error is not about them."""
    group, name = _group_of(path)
    tables = [t for t in _tables(data) if t[0] == group]
    for _, where, table, keys in tables:
        if name in keys and f"{where}.{name}" not in protected:
            return [(f"{where}.{name}", table.pop(name))]
    removed = []
    for _, where, table, keys in tables:
        for k in keys:
            if f"{where}.{k}" not in protected:
                removed.append((f"{where}.{k}", table.pop(k)))
    for dom in data["domain"]:
        if "sched" in dom and not dom["sched"]:
            del dom["sched"]
    return removed


def port(base: Scenario, spec: RunSpec, infos: dict[str, Any] | None = None):
    """The scenario of one run and the notes on what changed: (Scenario, [notes]).

    `base` must be valid. Raises ScenarioError when the variant's own settings are
    wrong, naming the variant.
    """
    infos = infos if infos is not None else _schedulers()
    ported = _port_tree(base.data, spec, infos)
    data, notes = ported.data, ported.notes
    _drop_idle_actions(data, notes)
    # Each pass returns, raises, or drops at least one carried parameter that validation
    # rejects (with its reason), so the loop ends.
    while True:
        sc = Scenario(data, source=base.source)
        try:
            sc.validate()
        except ScenarioError as exc:
            if exc.path in ported.variant_paths:
                raise ScenarioError(
                    f"{exc.path}: {exc.message}", path=f"--variant {spec.label}"
                ) from None
            removed = _remove_rejected(data, exc.path, ported.variant_paths)
            if not removed:
                raise ScenarioError(
                    f"under {spec.label}: {exc.message}", file=exc.file, path=exc.path
                ) from None
            for where, value in removed:
                # A parameter converted on the way and then rejected: keep only the drop.
                notes[:] = [n for n in notes if not n.startswith(f"{where} = ")]
                notes.append(f"{where} = {_fmt_value(value)} dropped: {exc.message}")
            _drop_idle_actions(data, notes)
            continue
        return sc, notes


def shorten(base: Scenario, duration_s: float = QUICK_DURATION_S) -> tuple[Scenario, float]:
    """`--quick`: the scenario compressed in time to `duration_s` simulated seconds:
    duration, warm-up, sampling interval and action times scaled by one factor
    (returned; 1 when the run is already that short). Workload timings are unchanged."""
    data = copy.deepcopy(base.data)
    run_t = data.setdefault("run", {})
    total = float(run_t.get("duration_s", 60.0))
    if total <= duration_s:
        return base, 1.0
    factor = duration_s / total
    run_t["duration_s"] = duration_s
    if "warmup_s" in run_t:
        run_t["warmup_s"] = round(float(run_t["warmup_s"]) * factor, 9)
    sample = float(run_t.get("sample_ms", 1000.0))
    run_t["sample_ms"] = max(MIN_SAMPLE_MS, round(sample * factor, 6))
    for act in data.get("action", []):
        if isinstance(act.get("at_s"), int | float):
            act["at_s"] = round(float(act["at_s"]) * factor, 9)
    return Scenario(data, source=base.source), factor


# ----- running -----------------------------------------------------------------------------


@dataclass
class Run:
    """One run of a comparison: what was asked, what was run, what came out."""

    spec: RunSpec
    #: The scenario tree as run (after porting and the variant's settings).
    scenario: dict[str, Any]
    #: What porting changed, one sentence each.
    notes: list[str]
    #: summary.json with every number that differs between the replications replaced by
    #: its mean over them (the first replication's summary when there is one).
    summary: dict[str, Any] | None = None
    #: The domain rows of the time series (vcpu is null), of the first replication.
    timeseries: Any = None
    #: The same tree with the low and high ends of each number's 95 % interval (a number
    #: equal in every replication is its own interval); None with one replication.
    summary_low: dict[str, Any] | None = None
    summary_high: dict[str, Any] | None = None
    #: The seeds the run was simulated on.
    seeds: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return self.spec.label


def _simulate(data: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """Run one scenario (in a worker of the batch layer, or in-process)."""
    r = run(data, progress=False)
    ts = r.timeseries
    return r.summary, ts[ts["vcpu"].isna()].reset_index(drop=True)


@dataclass(frozen=True)
class Backend:
    """Where the runs and the figures go (vmsched.batch): backend, workers, Ray address."""

    name: str = "local"
    jobs: int = 1
    address: str | None = None


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

    @property
    def where(self) -> Backend:
        return Backend(self.backend, self.jobs, self.address)

    def execute(self, progress: bool | Callable[[int, int], None] = True) -> Comparison:
        """Simulate every run (in `jobs` workers of the batch layer) and return the
        Comparison."""
        t0 = time.perf_counter()
        _execute(self.runs, self.where, progress, self.replications)
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


# ----- results -----------------------------------------------------------------------------


#: A metric named `..._X_s` with X one of these is a rate, in X per second.
RATE_WORDS = ("req", "mbit", "kb", "mb", "bytes", "transactions", "ops", "messages", "packets")


def _unit_of(metric: str) -> str:
    """A metric's unit, from its name (the part before any "." of a nested statistic):
    `_pct` %, `_us`/`_ms`/`_ns`, `X_s` X/s for a count X (RATE_WORDS), else `_s` s;
    anything else is a count."""
    name = metric.split(".")[0]
    if name.endswith("_s"):
        word = name[:-2].rpartition("_")[2]
        return f"{word}/s" if word in RATE_WORDS else "s"
    for suffix, unit in (("_pct", "%"), ("_us", "us"), ("_ms", "ms"), ("_ns", "ns")):
        if name.endswith(suffix):
            return unit
    return "count"


def workload_metrics(dom: dict[str, Any]) -> dict[str, int | float | None]:
    """A domain's numeric workload metrics, nested statistics flattened
    (`response_ms.p99`); null values are kept (None), text and flags left out."""
    out: dict[str, int | float | None] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else k, v)
        elif value is None or _number(value) is not None:
            out[prefix] = value

    walk("", {k: v for k, v in dom["workload"].items() if k != "kind"})
    return out


def _number(v: Any) -> int | float | None:
    """A metric's value if it is a number (not a bool, not null), else None."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return v


def direction(metric: str) -> int:
    """+1 if more is better, -1 if less is better, 0 if the metric has no better side."""
    metric = metric.split(".")[0]  # response_ms.p99 is better when response_ms is
    if metric in METRIC_DIRECTION:
        return METRIC_DIRECTION[metric]
    if any(w in metric for w in LOWER_IS_BETTER_WORDS):
        return -1
    if any(w in metric for w in HIGHER_IS_BETTER_WORDS):
        return +1
    return 0


#: Per-domain metrics from summary.json: (key, unit, direction as in `direction`).
DOMAIN_METRICS = (
    ("cpu_pct", "%", 0),
    ("runnable_pct", "%", -1),
    ("blocked_pct", "%", 0),
    ("offline_pct", "%", 0),
)
#: Wake-up latency statistics (per VCPU): summary key -> metric name.
LATENCY_METRICS = {"p50": "wake_p50_us", "p95": "wake_p95_us", "p99": "wake_p99_us"}
LATENCY_METRICS |= {"max": "wake_max_us", "mean": "wake_mean_us"}


@dataclass(frozen=True)
class MetricValues:
    """One metric across the runs: (name, one value per run or None) per domain or VCPU."""

    title: str
    #: "%", "µs", another unit, or "" for counts.
    unit: str
    #: -1 lower is better, +1 higher is better, 0 no better side.
    better: int
    items: list[tuple[str, list[Any]]]


@dataclass
class Comparison:
    """The runs of one comparison and everything derived from them."""

    runs: list[Run]
    source: str | None
    #: The scenario every run started from (after --quick).
    base: dict[str, Any]
    #: --quick's time factor (1.0 without --quick).
    quick_factor: float
    wall_s: float
    #: The command line that repeats the comparison.
    command: str
    #: Where the figures are drawn (the batch layer's workers, as the runs were).
    where: Backend = field(default_factory=Backend)
    #: Seeds each run was simulated on.
    replications: int = 1

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.runs]

    def _seeds_text(self) -> str:
        seeds = self.runs[0].seeds
        if self.replications == 1 or len(seeds) < 2:
            return f"seed {self.runs[0].summary['seed']}"
        return (
            f"{self.replications} replications each (seeds {seeds[0]} to {seeds[-1]}): every "
            "number is the mean over them, every figure but CPU over time (first seed) "
            "shows it"
        )

    def _domain_names(self) -> list[str]:
        return [d["name"] for d in self.runs[0].summary["domains"]]

    def results(self):
        """One row per run x domain x metric (x VCPU for wake-up metrics): results.csv.
        `value` is the mean over the replications; `replications`, `ci95_low` and
        `ci95_high` say how many and the 95 % interval of that mean (empty with one)."""
        df = self._rows("summary")
        df["replications"] = self.replications
        if self.replications > 1:
            df["ci95_low"] = self._rows("summary_low")["value"]
            df["ci95_high"] = self._rows("summary_high")["value"]
        else:
            df["ci95_low"] = float("nan")
            df["ci95_high"] = float("nan")
        return df

    def _rows(self, which: str):
        import pandas as pd

        rows = []
        for r in self.runs:
            for d in getattr(r, which)["domains"]:
                base = (r.label, r.spec.scheduler, d["name"])
                for metric, unit, _ in DOMAIN_METRICS:
                    rows.append((*base, None, metric, float(d[metric]), unit))
                for metric in ("context_switches", "migrations"):
                    total = sum(int(v[metric]) for v in d["vcpus"])
                    rows.append((*base, None, metric, total, "count"))
                for v in d["vcpus"]:
                    rows.append((*base, v["vcpu"], "wakeups", int(v["wakeups"]), "count"))
                    for key, metric in LATENCY_METRICS.items():
                        value = float(v["wake_latency_us"][key]) if v["wakeups"] else None
                        rows.append((*base, v["vcpu"], metric, value, "us"))
                for name, value in workload_metrics(d).items():
                    rows.append((*base, None, f"workload.{name}", value, _unit_of(name)))
        df = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
        df["vcpu"] = df["vcpu"].astype("Int64")
        df["value"] = pd.to_numeric(df["value"], errors="coerce")
        return df

    def verdict_inputs(self, which: str = "summary") -> list[MetricValues]:
        """What the verdicts are about: per metric, each domain's (or VCPU's) value under
        each run (None where it has none). `which` "summary_low" or "summary_high" gives
        the ends of the values' 95 % intervals instead (with several replications)."""
        from vmsched.plot import latency_entries

        summaries = [getattr(r, which) for r in self.runs]
        names = self._domain_names()

        def per_domain(key: str) -> list[tuple[str, list[Any]]]:
            return [(n, [s["domains"][i][key] for s in summaries]) for i, n in enumerate(names)]

        out = [
            MetricValues("CPU share (CPU %, 100 = one PCPU)", "%", 0, per_domain("cpu_pct")),
            MetricValues("Waiting for a PCPU (runnable %)", "%", -1, per_domain("runnable_pct")),
        ]
        entries = [latency_entries(s) for s in summaries]
        lat_items = []
        for k, e in enumerate(entries[0]):
            values = [es[k].stats["p99"] if es[k].wakeups else None for es in entries]
            if any(v is not None for v in values):
                lat_items.append((e.label, values))
        if lat_items:
            out.append(MetricValues("Wake-up latency p99", "µs", -1, lat_items))
        for metric in self._workload_metrics():
            items = []
            for i, n in enumerate(names):
                values = [workload_metrics(s["domains"][i]).get(metric) for s in summaries]
                if any(v is not None for v in values):
                    items.append((n, values))
            unit = _unit_of(metric)
            out.append(
                MetricValues(
                    f"{metric} (workload metric)",
                    "" if unit == "count" else unit,
                    direction(metric),
                    items,
                )
            )
        return out

    def verdicts(self) -> list[tuple[str, list[str]]]:
        """Per metric, one sentence per domain (or VCPU): which run is best and worst (or
        highest and lowest, for metrics with no better side) and by how much."""
        out = []
        for m, bounds in zip(self.verdict_inputs(), self.intervals(), strict=True):
            sentences = [
                verdict_sentence(n, self.labels, v, m.unit, m.better, iv)
                for (n, v), iv in zip(m.items, bounds, strict=True)
            ]
            out.append((m.title, sentences))
        return out

    def intervals(self) -> list[list[list[tuple[float, float]] | None]]:
        """Per metric of `verdict_inputs`, per item, each run's 95 % interval (low, high);
        None per item with one replication."""
        inputs = self.verdict_inputs()
        if self.replications == 1:
            return [[None] * len(m.items) for m in inputs]
        lows = self.verdict_inputs("summary_low")
        highs = self.verdict_inputs("summary_high")
        out = []
        for m, lo, hi in zip(inputs, lows, highs, strict=True):
            per_item = []
            for (_, _v), (_, lv), (_, hv) in zip(m.items, lo.items, hi.items, strict=True):
                per_item.append(
                    [
                        (math.nan, math.nan) if a is None or b is None else (float(a), float(b))
                        for a, b in zip(lv, hv, strict=True)
                    ]
                )
            out.append(per_item)
        return out

    def _workload_metrics(self) -> list[str]:
        seen: list[str] = []
        for r in self.runs:
            for d in r.summary["domains"]:
                for name, value in workload_metrics(d).items():
                    if name not in seen and value is not None:
                        seen.append(name)
        return seen

    # ----- the report -----

    def figure_pngs(self) -> dict[str, bytes]:
        """The report's figures as PNG bytes, each drawn in a worker of the batch layer
        (where the runs were simulated), not one after another here."""
        names = [FIG_CPU_TIME, FIG_CPU_SHARE, FIG_LATENCY, FIG_WORKLOAD]
        pngs = run_all(
            _draw_figure,
            [(self, name) for name in names],
            backend=self.where.name,
            jobs=self.where.jobs,
            address=self.where.address,
            batch_size=1,
            label="figures",
        )
        return {n: png for n, png in zip(names, pngs, strict=True) if png is not None}

    def figures(self) -> dict[str, Any]:
        """The report's figures by file stem (matplotlib Figures)."""
        figs = {
            FIG_CPU_TIME: self._fig_cpu_time(),
            FIG_CPU_SHARE: self._fig_cpu_share(),
            FIG_LATENCY: self._fig_latency(),
        }
        work = self._fig_workload()
        if work is not None:
            figs[FIG_WORKLOAD] = work
        return figs

    def _fig_cpu_time(self):
        from vmsched import plot

        n = len(self.runs)
        fig = plot.new_figure(plot.FIGSIZE[0], 0.6 + 1.6 * n)
        with plot.style():
            axes = fig.subplots(n, 1, sharex=True, sharey=True, squeeze=False)[:, 0]
            for ax, r in zip(axes, self.runs, strict=True):
                plot.cpu_figure(r.summary, r.timeseries, ax=ax, title=r.label, legend=False)
                ax.set_ylabel("")
                ax.label_outer()
            fig.supylabel(plot.CPU_YLABEL, fontsize=plot.STYLE["axes.labelsize"])
            handles, labels = axes[0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="outside right upper")
        return fig

    def _run_series(self, values_per_run: list[list[float]]):
        from vmsched import plot

        return [
            (r.label, vals, plot.colour(k), "")
            for k, (r, vals) in enumerate(zip(self.runs, values_per_run, strict=True))
        ]

    def _fig_cpu_share(self):
        from vmsched import plot

        names = self._domain_names()
        fig = plot.new_figure(*plot.FIGSIZE)
        with plot.style():
            ax = fig.add_subplot()
            values = [[d["cpu_pct"] for d in r.summary["domains"]] for r in self.runs]
            plot.grouped_bars(
                ax,
                names,
                self._run_series(values),
                value_labels=len(self.runs) * len(names) <= 12,
            )
            if self.replications > 1:
                self._interval_bars(ax, "cpu_pct", len(names))
            ax.set_ylabel(plot.CPU_YLABEL)
            ax.set_xlabel("domain")
            ax.set_title(
                "CPU share over the measured run"
                + (" (mean and 95 % interval)" if self.replications > 1 else "")
            )
            ax.grid(axis="x", visible=False)
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return fig

    def _interval_bars(self, ax: Any, key: str, n_groups: int) -> None:
        """Each run's 95 % interval of a per-domain number as an error bar on its bar of
        `plot.grouped_bars` (the same positions)."""
        import numpy as np

        width = 0.8 / max(len(self.runs), 1)
        x = np.arange(n_groups)
        for k, r in enumerate(self.runs):
            mean = np.array([float(d[key]) for d in r.summary["domains"]])
            lo = np.array([float(d[key]) for d in r.summary_low["domains"]])
            hi = np.array([float(d[key]) for d in r.summary_high["domains"]])
            yerr = np.nan_to_num(np.vstack([mean - lo, hi - mean]), nan=0.0)
            ax.errorbar(
                x - 0.4 + width * (k + 0.5), mean, yerr=yerr, fmt="none", ecolor="black", lw=0.8
            )

    def _fig_latency(self):
        from vmsched import plot

        entries = [plot.latency_entries(r.summary) for r in self.runs]
        woken = [k for k in range(len(entries[0])) if any(es[k].wakeups > 0 for es in entries)]
        n = max(len(woken), 1)
        ncols = min(2, n)
        nrows = math.ceil(n / ncols)
        fig = plot.new_figure(plot.FIGSIZE[0], 0.8 + 2.2 * nrows)
        with plot.style():
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            for ax, k in zip(axes, woken, strict=False):
                values = [
                    [es[k].stats[s] if es[k].wakeups else 0.0 for s in plot.LATENCY_STATS]
                    for es in entries
                ]
                plot.grouped_bars(
                    ax, plot.LATENCY_STATS, self._run_series(values), value_labels=False
                )
                plot.latency_axes_setup(ax, log=True)
                ax.set_title(entries[0][k].label)
            for ax in axes[len(woken) :]:
                ax.set_axis_off()
            if not woken:
                axes[0].text(0.5, 0.5, "no wake-ups were measured", ha="center", va="center")
            else:
                handles, labels = axes[0].get_legend_handles_labels()
                fig.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)))
            fig.suptitle("Wake-up latency per domain: p50, p95, p99 and max of all wake-ups")
        return fig

    def _fig_workload(self):
        from matplotlib.patches import Patch

        from vmsched import plot

        panels = []
        names = self._domain_names()
        for metric in self._workload_metrics():
            for i, n in enumerate(names):
                values = [workload_metrics(r.summary["domains"][i]).get(metric) for r in self.runs]
                if any(v is not None for v in values):
                    panels.append((n, metric, values))
        if not panels:
            return None
        panels = panels[:MAX_METRIC_PANELS]
        ncols = min(3, len(panels))
        nrows = math.ceil(len(panels) / ncols)
        fig = plot.new_figure(plot.FIGSIZE[0] * (1.3 if ncols == 3 else 1), 0.9 + 2.0 * nrows)
        with plot.style():
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            for ax, (dom, metric, values) in zip(axes, panels, strict=False):
                heights = [v if v is not None else 0.0 for v in values]
                bars = ax.bar(
                    range(len(values)),
                    heights,
                    color=[plot.colour(k) for k in range(len(values))],
                    label=self.labels,
                )
                ax.bar_label(
                    bars,
                    labels=[_fmt(v) if v is not None else "n/a" for v in values],
                    fontsize=6,
                    padding=1,
                )
                ax.set_xticks([])
                unit = _unit_of(metric)
                ax.set_ylabel(metric + ("" if unit == "count" else f" ({unit})"))
                ax.set_title(dom)
                ax.margins(y=0.15)
                ax.grid(axis="x", visible=False)
            for ax in axes[len(panels) :]:
                ax.set_axis_off()
            handles = [Patch(color=plot.colour(k), label=lab) for k, lab in enumerate(self.labels)]
            fig.legend(handles=handles, loc="outside lower center", ncols=min(3, len(handles)))
            fig.suptitle("Application metrics (workload metrics in summary.json)")
        return fig

    def _tables(self):
        import pandas as pd

        from vmsched.plot import LATENCY_STATS, latency_entries

        names = self._domain_names()
        cpu = pd.DataFrame(
            {"domain": names}
            | {r.label: [float(d["cpu_pct"]) for d in r.summary["domains"]] for r in self.runs}
        )
        lat_rows = []
        entries = [latency_entries(r.summary) for r in self.runs]
        for k, e in enumerate(entries[0]):
            for stat in LATENCY_STATS:
                row = {"domain": e.label, "statistic": stat}
                for r, es in zip(self.runs, entries, strict=True):
                    row[r.label] = es[k].stats[stat] if es[k].wakeups else None
                lat_rows.append(row)
            row = {"domain": e.label, "statistic": "wake-ups"}
            for r, es in zip(self.runs, entries, strict=True):
                row[r.label] = es[k].wakeups
            lat_rows.append(row)
        work_rows = []
        for metric in self._workload_metrics():
            for i, n in enumerate(names):
                row = {"domain": n, "metric": metric}
                vals = [workload_metrics(r.summary["domains"][i]).get(metric) for r in self.runs]
                if all(v is None for v in vals):
                    continue
                row |= {r.label: v for r, v in zip(self.runs, vals, strict=True)}
                work_rows.append(row)
        params = pd.DataFrame(
            {"domain": names}
            | {
                r.label: [
                    ", ".join(f"{k}={_fmt_value(v)}" for k, v in d.get("sched", {}).items()) or "—"
                    for d in r.summary["domains"]
                ]
                for r in self.runs
            }
        )
        return cpu, pd.DataFrame(lat_rows), pd.DataFrame(work_rows), params

    def report_blocks(self, figures: dict[str, Any] | None = None) -> list[Any]:
        """The report as htmlreport blocks."""
        import pandas as pd

        from vmsched import htmlreport as h

        figs = figures if figures is not None else self.figures()
        s0 = self.runs[0].summary
        host = s0["host"]
        scen = self.source or "a scenario given as Python objects"
        quick = (
            f" With --quick, the run was compressed in time by a factor of "
            f"{self.quick_factor:.3g} (duration, warm-up, sampling interval and action times)."
            if self.quick_factor != 1.0
            else ""
        )
        blocks: list[Any] = [
            h.Paragraph(
                f"{len(self.runs)} runs of {scen} ({s0['title'] or 'untitled'}): "
                f"{host['pcpus']} PCPUs, {s0['measured_s']:g} s measured after a "
                f"{s0['warmup_s']:g} s warm-up, {self._seeds_text()}. CPU % follows xentop: "
                f"100 = one PCPU.{quick}"
            ),
            h.Code(self.command),
            h.Heading("Runs"),
        ]
        run_rows = [
            {
                "run": r.label,
                "scheduler": r.spec.scheduler,
                "scheduler parameters as used": ", ".join(
                    f"{k}={_fmt_value(v)}" for k, v in r.summary["scheduler_params"].items()
                )
                or "—",
                "events": int(r.summary["events"]),
                "wall s": float(r.summary["wall_s"]),
            }
            for r in self.runs
        ]
        cpu, lat, work, params = self._tables()
        blocks += [
            h.Table(pd.DataFrame(run_rows)),
            h.Table(params, caption="Per-domain scheduler parameters as used"),
            h.Heading("Parameters adjusted"),
        ]
        adjusted = [r for r in self.runs if r.notes]
        if adjusted:
            blocks.append(
                h.Paragraph(
                    "Scheduler parameters are Xen's own and differ between schedulers. Each run "
                    "keeps the scenario's parameters that its scheduler declares (converting "
                    "time units), and drops the others, which then take that scheduler's "
                    "defaults:"
                )
            )
            for r in adjusted:
                items = [h.Verdict(n, "warn" if " dropped:" in n else "info") for n in r.notes]
                blocks.append(h.Verdicts(items, title=r.label))
        else:
            blocks.append(
                h.Paragraph("None: every parameter of the scenario applies unchanged to every run.")
            )
        blocks.append(h.Heading("Verdicts"))
        blocks.append(
            h.Paragraph(
                "For each metric, the runs with the best and worst value (or the highest and "
                "lowest, for a metric with no better side). Values within "
                f"{SAME_REL:.0%} of each other count as the same, and so do percentages "
                f"within {SAME_PCT_POINTS:g} points and latencies within {SAME_LATENCY_US:g} µs."
                + (
                    " With several replications, two runs also count as the same unless "
                    "the 95 % intervals of their means separate."
                    if self.replications > 1
                    else ""
                )
            )
        )
        for metric, sentences in self.verdicts():
            blocks.append(h.Verdicts(sentences, title=metric))
        blocks += [
            h.Heading("CPU share"),
            h.Figure(
                figs.get(FIG_CPU_TIME),
                "CPU % per domain over time, one panel per run; each sample is a step over "
                "the interval it covers.",
                FIG_CPU_TIME,
            ),
            h.Figure(
                figs.get(FIG_CPU_SHARE), "CPU % per domain over the measured run.", FIG_CPU_SHARE
            ),
            h.Table(cpu, caption="CPU % per domain (100 = one PCPU)"),
            h.Heading("Wake-up latency"),
            h.Paragraph(
                "Time from a wake-up (the VCPU leaves blocked because its guest got work) to "
                "the moment a PCPU switches to it, in µs; percentiles within 1/16 of the true "
                "value, max exact (docs/metrics.md). Domains whose VCPUs never blocked have "
                "none. A domain with several VCPUs is shown per VCPU."
            ),
            h.Figure(
                figs.get(FIG_LATENCY),
                "Wake-up latency p50, p95, p99 and max (µs, symmetric-log scale), per run.",
                FIG_LATENCY,
            ),
            h.Table(lat, caption="Wake-up latency (µs) and number of wake-ups"),
            h.Heading("Application metrics"),
        ]
        if FIG_WORKLOAD in figs or (not figs and len(work)):
            blocks += [
                h.Figure(
                    figs.get(FIG_WORKLOAD),
                    "Each workload's numeric metrics (docs/workloads.md), per domain and run"
                    + (
                        f"; the first {MAX_METRIC_PANELS} panels."
                        if len(work) > MAX_METRIC_PANELS
                        else "."
                    ),
                    FIG_WORKLOAD,
                ),
                h.Table(work, caption="Workload metrics"),
            ]
        else:
            blocks.append(h.Paragraph("No workload in this scenario reports a numeric metric."))
        blocks += [
            h.Heading("Files"),
            h.Paragraph(
                f"{RESULTS_CSV}: one row per run, domain and metric (wake-up metrics per VCPU), "
                f"columns {', '.join(RESULT_COLUMNS + REPLICATION_COLUMNS)}: value is the mean "
                "over the replications, ci95_low and ci95_high the 95 % interval of that mean "
                "(empty with one replication). The figures are also PNG files beside this "
                "report."
            ),
        ]
        if not figs:
            # --no-figures: the tables stand alone.
            blocks = [b for b in blocks if not (isinstance(b, h.Figure) and b.figure is None)]
        return blocks

    def save(self, out: str | Path, figures: bool = True) -> Path:
        """Write report.html, its PNGs and results.csv into `out`; returns the folder.
        `figures=False` leaves the figures out of the report (and writes no PNGs)."""
        from vmsched.htmlreport import write_report

        out_dir = prepare_out_dir(out)
        # %.12g: whole numbers without ".0", others to the precision they were measured.
        csv = self.results().to_csv(index=False, float_format="%.12g")
        write_atomic(out_dir / RESULTS_CSV, csv)
        title = "Scheduler comparison: " + (
            self.runs[0].summary["title"] or Path(self.source or "scenario").name
        )
        figs = self.figure_pngs() if figures else {}
        write_report(out_dir / REPORT_HTML, title, self.report_blocks(figs))
        return out_dir


def _draw_figure(item: tuple[Comparison, str]) -> bytes | None:
    """One figure of a comparison as PNG bytes (None if it has none), in a worker."""
    from vmsched.htmlreport import png_bytes

    comparison, name = item
    draw = {
        FIG_CPU_TIME: comparison._fig_cpu_time,
        FIG_CPU_SHARE: comparison._fig_cpu_share,
        FIG_LATENCY: comparison._fig_latency,
        FIG_WORKLOAD: comparison._fig_workload,
    }[name]
    fig = draw()
    return None if fig is None else png_bytes(fig)


def _fmt(v: float) -> str:
    from vmsched.htmlreport import format_number

    return format_number(v)


def _same(a: float, b: float, unit: str) -> bool:
    if unit == "%":
        return abs(a - b) <= SAME_PCT_POINTS
    if unit == "µs" and abs(a - b) <= SAME_LATENCY_US:
        return True
    return abs(a - b) <= SAME_REL * max(abs(a), abs(b))


def _apart(hi: float, lo: float, unit: str) -> str:
    """How far apart two values are, in words."""
    if unit == "%":
        return f"{hi - lo:.1f} percentage points apart"
    if lo > 0:
        ratio = hi / lo
        if ratio >= 100:
            return f"{ratio:,.0f}x"
        if ratio >= 2:
            return f"{ratio:.1f}x"
        return f"{(ratio - 1) * 100:.0f} % apart"
    return _fmt(hi - lo) + ("" if unit in ("", "%") else " ") + unit + " apart"


def differs(
    values: Sequence[float | None],
    unit: str,
    intervals: Sequence[tuple[float, float]] | None = None,
) -> bool:
    """Whether the runs' values (None: no value) differ by more than the verdicts'
    tolerance (SAME_REL, SAME_PCT_POINTS, SAME_LATENCY_US) and, given each run's 95 %
    interval, whether the highest and the lowest run's intervals separate."""
    have = [(v, k) for k, v in enumerate(values) if v is not None]
    if len(have) < 2:
        return False
    (hi, k_hi), (lo, k_lo) = max(have), min(have)
    if _same(hi, lo, unit):
        return False
    return intervals is None or separated(intervals[k_hi], intervals[k_lo])


def verdict_sentence(
    name: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    unit: str,
    better: int,
    intervals: Sequence[tuple[float, float]] | None = None,
) -> str:
    """One sentence on one metric of one domain across the runs.

    `better` is -1 (lower is better), +1 (higher is better) or 0 (no better side).
    With `intervals` (each run's 95 % interval of its mean over replications), two runs
    whose intervals overlap count as the same.
    """
    have = [(lab, v) for lab, v in zip(labels, values, strict=True) if v is not None]
    missing = [lab for lab, v in zip(labels, values, strict=True) if v is None]
    tail = f" (no value under {', '.join(missing)})" if missing else ""

    def show(v: float) -> str:
        if unit == "%":
            return f"{v:.1f}%"
        return _fmt(v) + (" " + unit if unit else "")

    if not have:
        return f"{name}: no value under any run"
    hi_v = max(v for _, v in have)
    lo_v = min(v for _, v in have)
    box = dict(zip(labels, intervals, strict=True)) if intervals is not None else {}

    def tied(a: str, va: float, b: str, vb: float) -> bool:
        """Same value within tolerance, or (with intervals) intervals that overlap."""
        if _same(va, vb, unit):
            return True
        return bool(box) and not separated(box[a], box[b])

    hi_lab = next(lab for lab, v in have if v == hi_v)
    lo_lab = next(lab for lab, v in have if v == lo_v)
    if len(have) == 1 or tied(hi_lab, hi_v, lo_lab, lo_v):
        if len(have) == 1:
            return f"{name}: {show(hi_v)} under {have[0][0]} only{tail}"
        span = show(lo_v) if show(lo_v) == show(hi_v) else f"{show(lo_v)} to {show(hi_v)}"
        return f"{name}: the same under every run ({span}){tail}"
    his = [lab for lab, v in have if tied(lab, v, hi_lab, hi_v)]
    los = [lab for lab, v in have if tied(lab, v, lo_lab, lo_v)]
    apart = _apart(hi_v, lo_v, unit)
    if better == 0:
        return (
            f"{name}: highest under {', '.join(his)} ({show(hi_v)}), lowest under "
            f"{', '.join(los)} ({show(lo_v)}): {apart}{tail}"
        )
    best, best_v, worst, worst_v = (los, lo_v, his, hi_v) if better < 0 else (his, hi_v, los, lo_v)
    return (
        f"{name}: best {', '.join(best)} ({show(best_v)}), worst {', '.join(worst)} "
        f"({show(worst_v)}): {apart}{tail}"
    )


# ----- `vmsched compare` ---------------------------------------------------------------------


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def add_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> Any:
    """Register `vmsched compare` on an argparse subparsers object."""
    about = "run one scenario under several schedulers and parameter variants; write a report"
    p = subparsers.add_parser(
        "compare",
        parents=list(parents),
        help=about,
        description=about + ". Docs: docs/compare.md",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    p.add_argument(
        "--schedulers",
        type=_names,
        default=[],
        metavar="S1,S2,...",
        help="schedulers to run the scenario under, e.g. credit,credit2,sedf",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="SCHED:SETTINGS",
        help="one more run: SCHED:PARAM=VALUE,DOMAIN.PARAM=VALUE,... "
        "(e.g. 'credit:tslice_ms=5' or 'credit:web.cap=50'); repeatable",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="folder for report.html etc.")
    p.add_argument(
        "--jobs", type=int, default=None, metavar="N", help="parallel runs (default: CPUs)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"compress each run to {QUICK_DURATION_S:g} simulated seconds",
    )
    p.add_argument(
        "--replications",
        type=int,
        default=None,
        metavar="N",
        help=f"seeds per run (default {REPLICATIONS}; {QUICK_REPLICATIONS} with --quick); "
        "verdicts count a difference only when the 95 %% intervals separate",
    )
    add_backend_options(p)
    p.set_defaults(func=main)
    return p


def main(args: argparse.Namespace) -> int:
    """`vmsched compare`: check everything, run, write, print a short summary."""
    prepared = prepare(
        args.scenario,
        schedulers=args.schedulers,
        variants=args.variant,
        quick=args.quick,
        jobs=args.jobs,
        backend=args.backend,
        address=args.address,
        replications=args.replications,
    )
    prepare_out_dir(args.out)
    c = prepared.execute(progress=True)
    out = c.save(args.out, figures=not args.no_figures)
    _print_summary(c)
    print(f"report: {out / REPORT_HTML} (and {RESULTS_CSV}, PNGs) in {out}/")
    return 0


def _print_summary(c: Comparison) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(markup=False, highlight=False)
    table = Table(show_edge=False, header_style="bold", title="CPU % per domain")
    table.add_column("domain", no_wrap=True)
    for lab in c.labels:
        table.add_column(lab, justify="right")
    for i, name in enumerate(c._domain_names()):
        table.add_row(name, *(f"{r.summary['domains'][i]['cpu_pct']:.1f}" for r in c.runs))
    console.print(table)
    for r in c.runs:
        dropped = sum(1 for n in r.notes if " dropped:" in n)
        if dropped:
            console.print(f"{r.label}: {dropped} scenario parameter(s) dropped (see the report)")
    same = 0
    for m, bounds in zip(c.verdict_inputs(), c.intervals(), strict=True):
        differing = [
            (n, v, iv) for (n, v), iv in zip(m.items, bounds, strict=True) if differs(v, m.unit, iv)
        ]
        same += len(m.items) - len(differing)
        if differing:
            console.print(m.title, style="bold")
        for n, v, iv in differing:
            console.print("  " + verdict_sentence(n, c.labels, v, m.unit, m.better, iv))
    if same:
        console.print(f"{same} more metric(s) the same under every run (see the report)")
