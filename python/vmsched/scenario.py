"""Scenarios: loading TOML files and building them as Python objects.

A scenario is a plain tree (dict) with the structure documented in
`docs/scenarios.md`; the Rust core validates it completely before anything is
simulated. `Scenario` is a light builder over that tree::

    sc = Scenario(pcpus=2, scheduler="credit", duration_s=60)
    sc.add_domain("vm1", workload="cpu-hog", weight=512)
    sc.add_domain("vm2", workload={"kind": "duty-cycle", "util_pct": 20})
    r = vmsched.run(sc)

A cluster of hosts is the same tree with a list of host tables (`[[host]]`
in TOML, each with its own `name`, scheduler and domains) instead of one
`[host]`; `Scenario(tree)` holds one as well (`is_cluster` is then true).
"""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

from vmsched import _core
from vmsched.errors import ScenarioError, from_core


def _put(tree: dict[str, Any], table: str, key: str, value: Any) -> None:
    """Set `tree[table][key]` unless `value` is None. A `table` that is not a
    table is left as it is, for validation to report."""
    if value is None:
        return
    t = tree.setdefault(table, {})
    if isinstance(t, dict):
        t[key] = value


class Scenario:
    """A scenario as Python objects. `data` is the underlying tree."""

    def __init__(
        self,
        data: dict[str, Any] | None = None,
        *,
        pcpus: int | None = None,
        topology: dict[str, int] | None = None,
        scheduler: str | dict[str, Any] | None = None,
        duration_s: float | None = None,
        warmup_s: float | None = None,
        seed: int | None = None,
        sample_ms: float | None = None,
        profile: str | dict[str, Any] | None = None,
        source: str | None = None,
    ) -> None:
        self.data: dict[str, Any] = copy.deepcopy(data) if data else {}
        self.source = source
        _put(self.data, "host", "pcpus", pcpus)
        _put(self.data, "host", "topology", dict(topology) if topology is not None else None)
        _put(self.data, "host", "profile", profile)
        if isinstance(scheduler, str):
            _put(self.data, "scheduler", "name", scheduler)
        elif scheduler is not None:
            self.data["scheduler"] = dict(scheduler)
        _put(self.data, "run", "duration_s", duration_s)
        _put(self.data, "run", "warmup_s", warmup_s)
        _put(self.data, "run", "seed", seed)
        _put(self.data, "run", "sample_ms", sample_ms)
        if not self.is_cluster:
            self.data.setdefault("domain", [])

    @property
    def is_cluster(self) -> bool:
        """Is this a cluster of hosts (a list of `[[host]]` tables)?"""
        return isinstance(self.data.get("host"), list)

    def add_domain(
        self,
        name: str,
        *,
        workload: str | dict[str, Any] = "idle",
        vcpus: int | None = None,
        weight: int | None = None,
        cap: int | None = None,
        driver: bool | None = None,
        affinity: list[int] | str | None = None,
        sched: dict[str, Any] | None = None,
        host: str | None = None,
    ) -> Scenario:
        """Append a domain (in a cluster, to the host named `host`); returns
        self so calls can be chained."""
        dom: dict[str, Any] = {"name": name}
        for key, val in (
            ("vcpus", vcpus),
            ("weight", weight),
            ("cap", cap),
            ("driver", driver),
            ("affinity", affinity),
        ):
            if val is not None:
                dom[key] = val
        if sched:
            dom["sched"] = dict(sched)
        dom["workload"] = {"kind": workload} if isinstance(workload, str) else dict(workload)
        self._domains_of(host).append(dom)
        return self

    def _domains_of(self, host: str | None) -> list[dict[str, Any]]:
        """The domain list of this scenario, or of host `host` of a cluster."""
        if not self.is_cluster:
            if host is not None:
                raise ScenarioError(
                    f'host="{host}" given, but this scenario has one host; '
                    "expected no host, or a cluster built with add_host",
                    path="host",
                )
            return self.data["domain"]
        names = [h.get("name") for h in self.data["host"] if isinstance(h, dict)]
        for h in self.data["host"]:
            if isinstance(h, dict) and h.get("name") == host:
                return h.setdefault("domain", [])
        raise ScenarioError(
            f"host={host!r} names no host of this cluster; expected one of "
            + ", ".join(str(n) for n in names),
            path="host",
        )

    def add_host(
        self,
        name: str,
        *,
        pcpus: int | None = None,
        topology: dict[str, int] | None = None,
        scheduler: str | dict[str, Any] | None = None,
        profile: str | dict[str, Any] | None = None,
    ) -> Scenario:
        """Append a host to a cluster (a scenario built without `pcpus`,
        `topology` or `profile` becomes one); returns self. Add its domains
        with `add_domain(..., host=name)`."""
        if not self.is_cluster:
            if self.data.get("host") or self.data.get("domain") or self.data.get("scheduler"):
                raise ScenarioError(
                    "this scenario already has a [host], [scheduler] or domains; "
                    "expected a scenario built without them to make a cluster",
                    path="host",
                )
            self.data.pop("domain", None)
            self.data["host"] = []
        h: dict[str, Any] = {"name": name}
        for key, val in (("pcpus", pcpus), ("topology", topology), ("profile", profile)):
            if val is not None:
                h[key] = val
        if scheduler is not None:
            h["scheduler"] = {"name": scheduler} if isinstance(scheduler, str) else dict(scheduler)
        h["domain"] = []
        self.data["host"].append(h)
        return self

    def add_action(self, at_s: float, domain: str | None = None, **params: Any) -> Scenario:
        """A timed change, as `xl sched-*` would make it at `at_s`."""
        act: dict[str, Any] = {"at_s": at_s, **params}
        if domain is not None:
            act["domain"] = domain
        self.data.setdefault("action", []).append(act)
        return self

    def with_scheduler(self, name: str, **params: Any) -> Scenario:
        """A copy run under another scheduler (its global parameters given)."""
        other = Scenario(self.data, source=self.source)
        other.data["scheduler"] = {"name": name, **params}
        return other

    def to_json(self) -> str:
        return json.dumps(self.data)

    def validate(self) -> Scenario:
        """Check the scenario completely; raises ScenarioError. A scheduler
        written in Python that it names is loaded and registered first."""
        from vmsched import scheduler

        try:
            scheduler.register_in(self.data)
        except ScenarioError as exc:
            raise type(exc)(exc.message, file=self.source, path=exc.path) from None
        try:
            _core.validate(self.to_json())
        except Exception as exc:  # noqa: BLE001 - translated, never swallowed
            raise from_core(exc, self.source) from None
        return self

    @property
    def duration_s(self) -> float:
        return float(self.data.get("run", {}).get("duration_s", 60.0))

    def __repr__(self) -> str:
        if self.is_cluster:
            names = [h.get("name") if isinstance(h, dict) else None for h in self.data["host"]]
            return f"Scenario(cluster, hosts={names!r})"
        name = self.data.get("scheduler", {}).get("name")
        return f"Scenario(scheduler={name!r}, domains={len(self.data.get('domain', []))})"


def _resolve_profile(data: dict[str, Any], base: Path, file: str) -> None:
    """A profile given as a path to a TOML file is read and inlined (in each
    host of a cluster)."""
    host = data.get("host")
    if isinstance(host, list):
        for i, h in enumerate(host):
            _resolve_host_profile(h, base, file, f"host[{i}].profile")
    else:
        _resolve_host_profile(host, base, file, "host.profile")


def _resolve_host_profile(host: Any, base: Path, file: str, path: str) -> None:
    if not isinstance(host, dict):
        return
    prof = host.get("profile")
    if isinstance(prof, str) and (prof.endswith(".toml") or "/" in prof):
        p = (base / prof).resolve()
        try:
            host["profile"] = tomllib.loads(p.read_text())
        except FileNotFoundError:
            raise ScenarioError(
                f'"{prof}" does not exist (looked for {p}); expected a built-in profile name '
                "or the path of a profile TOML file",
                file=file,
                path=path,
            ) from None
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"TOML syntax error in {p}: {exc}", file=file, path=path) from None


def read(path: str | Path) -> Scenario:
    """Read a scenario file without validating it (to change it first, as the
    CLI's overrides do). Raises ScenarioError naming the file if it cannot be
    read or is not TOML."""
    p = Path(path)
    file = str(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ScenarioError(
            "no such file; expected the path of a scenario TOML file", file=file
        ) from None
    except IsADirectoryError:
        raise ScenarioError("is a directory; expected a scenario TOML file", file=file) from None
    except OSError as exc:
        raise ScenarioError(f"cannot be read ({exc.strerror})", file=file) from None
    except UnicodeDecodeError:
        raise ScenarioError("is not UTF-8 text; expected a scenario TOML file", file=file) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"TOML syntax error: {exc}", file=file) from None
    _resolve_profile(data, p.parent, file)
    from vmsched import scheduler

    scheduler.rebase(data, p.parent)
    return Scenario(data, source=file)


def load(path: str | Path) -> Scenario:
    """Read and validate a scenario file. Raises ScenarioError naming the file."""
    return read(path).validate()
