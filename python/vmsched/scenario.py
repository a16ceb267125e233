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

import json
import math
import os

from vmsched import _core
from vmsched.errors import ScenarioError, from_core
from vmsched.output import pure

# `typing` is not loaded at run time (it is a tenth of `vmsched run`'s start-up):
# annotations are not evaluated (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

#: The largest scenario or profile file read (bytes). A scenario of a thousand
#: domains is a few hundred kB; this bounds what a wrong path (`/dev/zero`, a
#: log file) can cost before it is refused.
MAX_FILE_BYTES = 16 * 1024 * 1024

#: The deepest nesting of tables and lists a scenario may have. A real one is
#: five levels deep; the core's JSON reader stops at 128.
MAX_DEPTH = 64

#: Integers the core can hold (u64 and i64).
_INT_RANGE = (-(2**63), 2**64 - 1)

#: What a non-finite number is replaced by when the core is asked what the
#: field expects (it cannot receive NaN or infinity itself).
_LARGEST = 1.7976931348623157e308


def read_text_limited(path: str | Path, what: str, file: str, field: str = "") -> str:
    """The text of a scenario or profile file, read up to MAX_FILE_BYTES.
    Raises ScenarioError naming `file` (and `field`) if it cannot be read, is
    larger, or is not UTF-8."""

    def bad(message: str) -> ScenarioError:
        return ScenarioError(f"{message}; expected {what}", file=file, path=field)

    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise bad("no such file") from None
    except IsADirectoryError:
        raise bad("is a folder") from None
    except OSError as exc:
        raise bad(f"cannot be read ({exc.strerror or exc})") from None
    except ValueError:  # a NUL character in the path
        raise bad("is not a possible file name") from None
    if len(data) > MAX_FILE_BYTES:
        raise bad(f"is larger than {MAX_FILE_BYTES // 2**20} MiB (the most that is read)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise bad(f"is not UTF-8 text (byte {exc.start})") from None


def parse_toml(text: str, file: str, field: str = "", where: str = "") -> dict[str, Any]:
    """TOML text as a tree; a syntax error or nesting too deep for the parser
    is a ScenarioError (`where` names the file in the message when `file`
    is another one).

    The core reads the files where its TOML reader and `tomllib` are known to
    make the same tree (`_core.toml_json`: most scenario files), so that
    `tomllib` (and `typing` with it) is not loaded; `tomllib` reads the
    others, and gives a file that is not TOML its message."""
    tree = _core.toml_json(text, MAX_DEPTH)
    if tree is not None:
        return json.loads(tree)
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"TOML syntax error{where}: {exc}", file=file, path=field) from None
    except RecursionError:
        raise ScenarioError(
            f"tables or lists nested too deeply{where}; expected at most {MAX_DEPTH} levels",
            file=file,
            path=field,
        ) from None


def _child(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _describe(v: object) -> str:
    # A date or time can only come from tomllib, which has imported datetime.
    import datetime

    if isinstance(v, datetime.datetime | datetime.date | datetime.time):
        return f"{v.isoformat()} is a TOML date or time"
    return f"{v!r} is a {type(v).__name__}"


def check_tree(data: Any, file: str | None) -> list[tuple[str, float]]:
    """Check that a scenario tree is one the core can read: tables with string
    keys, lists, strings, booleans, integers within 64 bits, numbers, at most
    MAX_DEPTH deep. Raises ScenarioError at the first field that is not;
    returns the non-finite numbers (NaN, ±infinity) with their paths, for the
    caller to report with what their field expects."""
    nonfinite: list[tuple[str, float]] = []
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack:
        path, v, depth = stack.pop()
        if depth > MAX_DEPTH:
            if len(path) > 60:
                path = path[:60] + "..."
            raise ScenarioError(
                f"is nested more than {MAX_DEPTH} tables or lists deep; "
                f"expected at most {MAX_DEPTH} levels",
                file=file,
                path=path,
            )
        if v is None or isinstance(v, bool):
            continue
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                raise ScenarioError(
                    f"{v!r} is not valid Unicode text; expected a string of characters",
                    file=file,
                    path=path,
                ) from None
        elif isinstance(v, int):
            if not _INT_RANGE[0] <= v <= _INT_RANGE[1]:
                raise ScenarioError(
                    f"{v} is too large; expected an integer of at most 64 bits",
                    file=file,
                    path=path,
                )
        elif isinstance(v, float):
            if not math.isfinite(v):
                nonfinite.append((path, v))
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                if not isinstance(k, str):
                    raise ScenarioError(
                        f"the key {k!r} is a {type(k).__name__}; expected string keys",
                        file=file,
                        path=path,
                    )
                stack.append((_child(path, k), x, depth + 1))
        elif isinstance(v, list | tuple):
            for i in reversed(range(len(v))):
                stack.append((_child(path, i), v[i], depth + 1))
        else:
            raise ScenarioError(
                f"{_describe(v)}; expected a string, number, boolean, list or table",
                file=file,
                path=path,
            )
    return nonfinite


def _finite_copy(v: Any) -> Any:
    """`v` with every non-finite number replaced by the largest finite one of
    its sign (NaN as +), which every range check refuses."""
    if isinstance(v, float) and not math.isfinite(v):
        return -_LARGEST if v < 0 else _LARGEST
    if isinstance(v, dict):
        return {k: _finite_copy(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_finite_copy(x) for x in v]
    return v


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
        self.data: dict[str, Any] = {}
        if data:
            import copy

            # Too deep a tree is refused before copying it (which recurses).
            check_tree(data, source)
            self.data = copy.deepcopy(data)
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

    @classmethod
    def _adopt(cls, data: dict[str, Any], source: str | None) -> Scenario:
        """`Scenario(data, source=source)` over a tree nobody else holds (one
        just parsed from a file): checked as that checks it, not copied."""
        check_tree(data, source)
        sc = cls.__new__(cls)
        sc.data = data
        sc.source = source
        if not sc.is_cluster:
            sc.data.setdefault("domain", [])
        return sc

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
        """The tree as the core reads it. Raises ScenarioError if it holds
        something JSON cannot carry (NaN, infinity, a date, an object)."""
        nonfinite = check_tree(self.data, self.source)
        if nonfinite:
            raise self._nonfinite_error(*nonfinite[0])
        return json.dumps(self.data, allow_nan=False)

    def _nonfinite_error(self, path: str, value: float) -> ScenarioError:
        """`path: nan is not a finite number; expected ...`, with what the
        field expects as the core says it (asked with the value replaced by
        the largest finite number, which no range admits)."""
        expected = "expected a finite number"
        try:
            _core.validate(json.dumps(_finite_copy(self.data)))
        except Exception as exc:  # noqa: BLE001 - only its wording is used
            err = from_core(exc, self.source)
            # The core's first complaint is about this field if it quotes the
            # stand-in value (`weight` is checked as `sched.weight`).
            about = err.path == path or repr(_LARGEST) in err.message
            if isinstance(err, ScenarioError) and about and "; expected" in err.message:
                expected = "expected" + err.message.split("; expected", 1)[1]
        return ScenarioError(
            f"{value!r} is not a finite number; {expected}", file=self.source, path=path
        )

    def validate(self) -> Scenario:
        """Check the scenario completely; raises ScenarioError. A scheduler
        written in Python that it names is loaded and registered first."""
        self._validated_json()
        return self

    def _validated_json(self) -> str:
        """`validate`, returning the tree as the core reads it (`to_json`),
        which the caller can hand to the core without converting it again."""
        names = [t.get("name") for _, t in scheduler_tables(self.data) if isinstance(t, dict)]
        # (vmsched.scheduler's is_spec; that module loads only when needed.)
        if any(isinstance(n, str) and ":" in n for n in names):
            from vmsched import scheduler

            try:
                scheduler.register_in(self.data)
            except ScenarioError as exc:
                raise type(exc)(exc.message, file=self.source, path=exc.path) from None
        text = self.to_json()
        try:
            _core.validate(text)
        except Exception as exc:  # noqa: BLE001 - translated, never swallowed
            raise from_core(exc, self.source) from None
        return text

    @property
    def duration_s(self) -> float:
        return float(self.data.get("run", {}).get("duration_s", 60.0))

    def __repr__(self) -> str:
        if self.is_cluster:
            names = [h.get("name") if isinstance(h, dict) else None for h in self.data["host"]]
            return f"Scenario(cluster, hosts={names!r})"
        name = self.data.get("scheduler", {}).get("name")
        return f"Scenario(scheduler={name!r}, domains={len(self.data.get('domain', []))})"


def scheduler_tables(data: dict[str, Any]) -> list[tuple[str, Any]]:
    """Each `[scheduler]` table of a scenario tree (each host's in a
    cluster), with where it is."""
    hosts = data.get("host")
    if isinstance(hosts, list):
        return [
            (f"host[{i}].scheduler", h.get("scheduler"))
            for i, h in enumerate(hosts)
            if isinstance(h, dict)
        ]
    return [("scheduler", data.get("scheduler"))]


def _resolve_profile(data: dict[str, Any], scenario: str, file: str) -> None:
    """A profile given as a path to a TOML file (relative to the folder of
    the scenario file `scenario`) is read and inlined (in each host of a
    cluster)."""
    host = data.get("host")
    if isinstance(host, list):
        for i, h in enumerate(host):
            _resolve_host_profile(h, scenario, file, f"host[{i}].profile")
    else:
        _resolve_host_profile(host, scenario, file, "host.profile")


def _resolve_host_profile(host: Any, scenario: str, file: str, path: str) -> None:
    if not isinstance(host, dict):
        return
    prof = host.get("profile")
    if isinstance(prof, str) and (prof.endswith(".toml") or "/" in prof):
        from pathlib import Path

        p = Path(scenario).parent / os.path.expanduser(prof)
        what = "a built-in profile name or the path of a profile TOML file"
        try:
            text = read_text_limited(p, what, file, path)
        except ScenarioError as exc:
            raise ScenarioError(f'"{prof}" ({p}) {exc.message}', file=file, path=path) from None
        host["profile"] = parse_toml(text, file, path, where=f" in {p}")


def read(path: str | Path) -> Scenario:
    """Read a scenario file without validating it (to change it first, as the
    CLI's overrides do). Raises ScenarioError naming the file if it cannot be
    read or is not TOML."""
    file = str(path)
    if not file:
        raise ScenarioError(
            '"" is empty; expected the path of a scenario TOML file', path="SCENARIO"
        )
    # As pathlib writes it (`pure`), without loading pathlib (vmsched.output).
    p = pure(path)
    text = read_text_limited(p, "the path of a scenario TOML file", file)
    data = parse_toml(text, file)
    _resolve_profile(data, p, file)
    # Only a scheduler of the user's (`file.py:Class`) is rebased: the module
    # that does it (and what it imports) loads only for one.
    names = [t.get("name") for _, t in scheduler_tables(data) if isinstance(t, dict)]
    if any(isinstance(n, str) and ":" in n for n in names):
        from pathlib import Path

        from vmsched import scheduler

        scheduler.rebase(data, Path(p).parent)
    return Scenario._adopt(data, file)


def load(path: str | Path) -> Scenario:
    """Read and validate a scenario file. Raises ScenarioError naming the file."""
    return read(path).validate()
