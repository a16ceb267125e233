"""Porting a scenario to another scheduler: keep, convert or drop each scheduler parameter
(see the package's docstring), listing every change with its reason."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

from vmsched.compare.spec import (
    ACTION_KEYS,
    DOMAIN_SHORTHANDS,
    MIN_SAMPLE_MS,
    NS_PER_UNIT,
    QUICK_DURATION_S,
    RunSpec,
    _decl,
    _schedulers,
)
from vmsched.errors import ScenarioError
from vmsched.scenario import Scenario

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
