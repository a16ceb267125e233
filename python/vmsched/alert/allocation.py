""" "A % of one PCPU, never more" in each scheduler's own parameters: the allocation rule
each scheduler declares in its registration, the Xen version ALERT runs it at, and the
checks of ALERT's inputs."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vmsched.alert.setup import PAPER_XEN_VERSION, _fmt_pct
from vmsched.api import catalogue
from vmsched.errors import InternalError, ScenarioError
from vmsched.scheduler import is_spec, register

# ----- allocation mapping: "A % of one PCPU" in each scheduler's parameters --------------

Quantity = tuple[Any, str]  # (value, unit): unit is "%", "ms", "us", "ns" or "bool"


@dataclass(frozen=True)
class Allocation:
    """How "A % of one PCPU, never more" is written in one scheduler's parameters."""

    #: The rule in words (for the report), as the scheduler's own tool would set it.
    rule: str
    #: First Xen release in which the scheduler can hold a domain to an allocation this way.
    since: str
    #: target % and Xen version (None if the scheduler has no version) -> per-domain parameters.
    params: Callable[[float, tuple[int, int] | None], dict[str, Quantity]]


def _declared_params(
    decl: dict[str, Any], a: float, v: tuple[int, int, int] | None
) -> dict[str, Quantity]:
    """The per-domain parameters of a scheduler's declared allocation rule for A %."""
    out: dict[str, Quantity] = {}
    for p in decl["domain"]:
        since = _parse_version(p["since"]) if p.get("since") else None
        if since is not None and v is not None and v < since:
            continue  # the release does not have the parameter yet
        if "share_of" in p:
            out[p["name"]] = (a / 100 * p["share_of"], p["unit"])
        elif "fixed" in p:
            out[p["name"]] = (p["fixed"], p["unit"])
        else:
            out[p["name"]] = (p["flag"], "bool")
    return out


_NS_PER = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}

# ----- small helpers ---------------------------------------------------------------------


def _parse_version(text: str) -> tuple[int, int, int] | None:
    """ "4.22" -> (4, 22, 0); "3.0.3" -> (3, 0, 3), as the core compares releases."""
    parts = str(text).strip().split(".")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        return None
    major, minor, patch = (int(p) for p in (parts + ["0"])[:3])
    return major, minor, patch


def _fmt_version(v: tuple[int, int, int]) -> str:
    return f"{v[0]}.{v[1]}" if v[2] == 0 else f"{v[0]}.{v[1]}.{v[2]}"


def _scheduler_info(name: str) -> dict[str, Any]:
    if is_spec(name):
        register(name, where="alert.scheduler")
    scheds = catalogue()["schedulers"]
    for s in scheds:
        if s["name"] == name:
            return s
    known = [s["name"] for s in scheds]
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise ScenarioError(
        f'unknown scheduler "{name}"; expected one of {", ".join(known)}{hint}',
        path="alert.scheduler",
    )


def _param(info: dict[str, Any], name: str, scope: str) -> dict[str, Any] | None:
    for p in info["params"]:
        if p["name"] == name and p["scope"] == scope:
            return p
    return None


def _version_range(
    spec: dict[str, Any],
) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    lo, hi = spec["range"].split("..")
    plo, phi = _parse_version(lo), _parse_version(hi)
    if plo is None or phi is None:
        raise InternalError(f"xen_version range {spec['range']!r} is not a version range (a bug)")
    return plo, phi


def _allocation_for(info: dict[str, Any]) -> Allocation:
    name = info["name"]
    if not info.get("can_cap"):
        raise ScenarioError(
            f'scheduler "{name}" cannot cap a domain (can_cap is false in `vmsched schedulers`), '
            "so it cannot hold a domain to an allocation; expected a scheduler that can cap: "
            + ", ".join(s["name"] for s in catalogue()["schedulers"] if s.get("can_cap")),
            path="alert.scheduler",
        )
    decl = info.get("allocation")
    if not decl:
        raise ScenarioError(
            f'scheduler "{name}" can cap, but declares no allocation mapping (how "A % of one '
            'PCPU, never more" is written in its parameters); expected one in its registration '
            "(`allocation` in the scheduler's own file, or in its Python class)",
            path="alert.scheduler",
        )
    return Allocation(
        rule=decl["rule"],
        since=decl.get("since") or "",
        params=lambda a, v: _declared_params(decl, a, v),
    )


def allocations() -> dict[str, Allocation]:
    """Every scheduler that can cap, with its declared allocation rule (from the catalogue)."""
    return {s["name"]: _allocation_for(s) for s in catalogue()["schedulers"] if s.get("allocation")}


def _frames(info: dict[str, Any], shares: dict[str, float]) -> dict[str, Any]:
    """The pool-wide parameters of a scheduler that allots time in a table of frames
    (ARINC 653): each domain's frame is its allocation % of the major frame."""
    f = (info.get("allocation") or {}).get("frames")
    if not f:
        return {}
    length = f["major_frame_len"]
    table = [
        {f["domain_field"]: dom, f["length_field"]: round(pct / 100 * length, 9)}
        for dom, pct in shares.items()
    ]
    return {f["table"]: table, f["major_frame"]: length}


def resolve_version(scheduler: str, requested: str | None) -> str | None:
    """The `xen_version` ALERT uses for `scheduler` (None if it has no such parameter).

    Without a request: the paper's "3.0.3" when the scheduler has it, otherwise the
    earliest release in which the scheduler exists and can hold an allocation.
    """
    info = _scheduler_info(scheduler)
    alloc = _allocation_for(info)
    spec = _param(info, "xen_version", "global")
    if spec is None:
        if requested is not None:
            raise ScenarioError(
                f'"{requested}" cannot be applied: scheduler "{scheduler}" has no xen_version '
                "parameter; expected no --xen-version for it",
                path="alert.xen_version",
            )
        return None
    lo, hi = _version_range(spec)
    since = _parse_version(alloc.since)
    assert since is not None
    if requested is None:
        return _fmt_version(max(_parse_version(PAPER_XEN_VERSION), lo, since))
    v = _parse_version(requested)
    if v is None:
        raise ScenarioError(
            f'"{requested}" is not a Xen version; expected a version such as "3.0" or "4.22"',
            path="alert.xen_version",
        )
    if not (lo <= v and v[:2] <= hi[:2]):
        raise ScenarioError(
            f'"{requested}" is out of range for {scheduler}; expected a Xen version from '
            f'"{_fmt_version(lo)}" to "{_fmt_version(hi)}"',
            path="alert.xen_version",
        )
    if v < since:
        raise ScenarioError(
            f'"{requested}": {scheduler} cannot hold a domain to an allocation before Xen '
            f'{alloc.since} ({alloc.rule}); expected xen_version "{alloc.since}" or later',
            path="alert.xen_version",
        )
    return requested.strip()


def _express(info: dict[str, Any], target_pct: float, version: str | None) -> dict[str, Any]:
    """The per-domain parameters that allocate `target_pct` % under this scheduler, in the
    units and types the scheduler declares."""
    alloc = _allocation_for(info)
    v = _parse_version(version) if version is not None else None
    out: dict[str, Any] = {}
    for name, (value, unit) in alloc.params(target_pct, v).items():
        spec = _param(info, name, "domain")
        if spec is None:
            raise InternalError(
                f'ALERT\'s allocation rule for {info["name"]} sets "{name}", which the scheduler '
                "does not declare (a bug in its declaration)"
            )
        declared = spec["unit"]
        if unit == "bool":
            out[name] = bool(value) if spec["range"] == "true|false" else int(bool(value))
            continue
        if unit in _NS_PER and declared in _NS_PER:
            value = value * _NS_PER[unit] / _NS_PER[declared]
        elif unit != declared:
            raise InternalError(
                f"ALERT's allocation rule for {info['name']} gives {name} in {unit!r}, but the "
                f"scheduler declares it in {declared!r} (a bug in its declaration)"
            )
        if spec["expected"].startswith("an integer"):
            whole = round(value)
            if not math.isclose(value, whole, rel_tol=0, abs_tol=1e-9):
                raise ScenarioError(
                    f"{_fmt_pct(target_pct)} % cannot be expressed under {info['name']}: it needs "
                    f"{name} = {value:g} {declared}, and {name} takes {spec['expected']}; "
                    "expected targets that give a whole number",
                    path="alert.targets",
                )
            value = int(whole)
        else:
            value = round(value, 9)  # 0.7 ms, not 0.7000000000000001
        out[name] = value
    return out


def _check_targets(targets: Sequence[float]) -> list[float]:
    if len(targets) == 0:
        raise ScenarioError("is empty; expected at least one target", path="alert.targets")
    out = []
    for t in targets:
        if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
            raise ScenarioError(
                f"{t!r} is not a number; expected a % in (0, 100]", path="alert.targets"
            )
        if not 0 < t <= 100:
            raise ScenarioError(
                f"{_fmt_pct(t)} is out of range; expected a % of one PCPU in (0, 100]",
                path="alert.targets",
            )
        out.append(float(t))
    if len(set(out)) != len(out):
        raise ScenarioError("lists a target twice; expected distinct targets", path="alert.targets")
    return out


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ScenarioError(
            f"{value!r} is not allowed; expected a number > 0", path=f"alert.{name}"
        )
    return float(value)
