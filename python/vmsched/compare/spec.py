"""What a comparison runs: the settings it knows, and each run's specification (a
scheduler with a variant's settings) parsed from `SCHED[:SETTING,...]`."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vmsched.api import catalogue
from vmsched.errors import ScenarioError, unknown_name
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


@dataclass(frozen=True)
class Backend:
    """Where the runs and the figures go (vmsched.batch): backend, workers, Ray address."""

    name: str = "local"
    jobs: int = 1
    address: str | None = None
