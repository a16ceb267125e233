"""Schedulers written in Python: `vmsched.Scheduler`, and loading one by name.

A scheduler is a subclass of `Scheduler` that overrides the hooks it needs
(the others keep the defaults described on each method) and declares its
parameters in `params`. It is named by where it lives, `path/to/file.py:Class`
or `package.module:Class`, wherever a scheduler's name goes: `--scheduler`,
`[scheduler] name = "..."`, `compare --schedulers credit,lottery.py:Lottery`,
`reproduce ID --with lottery.py:Lottery`, `vmsched.run(...)`. Loading it
registers it with the core, which then validates its parameters and runs it
like any built-in. docs/write-a-scheduler.md is the tutorial.

Ids are plain integers: VCPUs `0..host.nvcpus` (domain by domain, in the
scenario's order), PCPUs `0..host.npcpus`, domains `0..host.ndomains`.
`self.host` (a `vmsched._core.Host`) reads the world and acts on it, and only
inside a hook.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from vmsched import _core
from vmsched.errors import ScenarioError, SchedulerError

#: The hooks a subclass may override (the core calls only those it does).
HOOKS = (
    "init",
    "init_domain",
    "insert_vcpu",
    "remove_vcpu",
    "wake",
    "sleep",
    "yield_",
    "do_schedule",
    "context_saved",
    "pick_cpu",
    "migrate",
    "timer",
    "adjust",
    "adjust_global",
)


@dataclass(frozen=True)
class Param:
    """A declared parameter: its default (whose type is the parameter's type:
    int, float, bool, or str with `choices`), range, unit, scope ("domain":
    `[domain.sched]`; "global": `[scheduler]`) and one line of doc. Values
    are validated by the core exactly as built-in schedulers' are."""

    default: int | float | bool | str
    unit: str = ""
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    scope: str = "domain"
    doc: str = ""

    def declaration(self, name: str) -> dict[str, Any]:
        """The declaration the core reads."""
        d = self.default
        if isinstance(d, bool):
            kind = "bool"
        elif isinstance(d, int):
            kind = "int"
        elif isinstance(d, float):
            kind = "float"
        elif isinstance(d, str) and self.choices:
            kind = "choice"
        else:
            raise TypeError(
                f"parameter {name}: default {d!r}; expected an int, float, bool, "
                "or a str with choices"
            )
        if self.scope not in ("domain", "global"):
            raise TypeError(
                f'parameter {name}: scope {self.scope!r}; expected "domain" or "global"'
            )
        out: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "default": d,
            "unit": self.unit,
            "scope": self.scope,
            "doc": self.doc,
        }
        if kind == "int":
            out["min"] = int(self.min) if self.min is not None else -(2**62)
            out["max"] = int(self.max) if self.max is not None else 2**62
        if kind == "float":
            out["min"] = float(self.min) if self.min is not None else -1e300
            out["max"] = float(self.max) if self.max is not None else 1e300
        if kind == "choice":
            out["choices"] = list(self.choices)
        return out


class Scheduler:
    """Base class of a VM scheduler written in Python (see the module doc).

    Class attributes declare it: `params` (name -> `Param`), `title` and
    `summary` (for reports and `vmsched schedulers`), `allocation` (how it
    holds a domain to A % of one PCPU, if it can cap: the catalogue's form,
    e.g. `{"rule": "cap = A", "domain": [{"name": "cap", "unit": "%",
    "share_of": 100}]}`) and `hook_timeout_s` (wall seconds a hook may run
    before the run is stopped).

    `self.host` is the host view and `self.params` the global parameters
    (a dict), both set before `init`. Do not override `__init__`: set your
    state up in `init`.
    """

    params: ClassVar[dict[str, Param]] = {}
    title: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    allocation: ClassVar[dict[str, Any] | None] = None
    hook_timeout_s: ClassVar[float] = 10.0

    host: Any
    global_params: dict[str, Any]

    # ----- the hooks (defaults) ---------------------------------------------------------

    def init(self) -> None:
        """The host is built (`host.npcpus` PCPUs). Set up run queues; arm timers."""

    def init_domain(self, dom: int, params: dict[str, Any]) -> None:
        """Domain `dom` is created with its validated parameters. Keep what you need."""

    def insert_vcpu(self, vcpu: int) -> None:
        """`vcpu` joins, not runnable yet; `host.processor(vcpu)` is its initial PCPU."""

    def remove_vcpu(self, vcpu: int) -> None:
        """`vcpu` leaves (its domain is destroyed); it is neither running nor queued."""

    def wake(self, vcpu: int) -> None:
        """`vcpu` became runnable: queue it (it may already be queued or running:
        then do nothing) and tickle a PCPU that should run it."""
        raise NotImplementedError("a scheduler must define wake(vcpu)")

    def sleep(self, vcpu: int) -> None:
        """`vcpu` stopped being runnable for another reason than blocking (pause,
        migration, hotplug): take it off your queue, or tickle the PCPU it runs on.
        May be called when it already was not runnable: then do nothing harmful."""
        raise NotImplementedError("a scheduler must define sleep(vcpu)")

    def yield_(self, vcpu: int) -> None:
        """The running `vcpu` yields; `do_schedule` on its PCPU follows at once."""

    def do_schedule(self, pcpu: int) -> tuple[int | None, int | None] | None:
        """`pcpu` must choose: return (vcpu, slice_ns), (None, slice_ns) to idle
        until a timer, or None to idle until tickled. `host.current(pcpu)` is the
        previous VCPU; `host.runnable(prev)` says whether it may go on. The VCPU
        returned must be runnable, allowed on `pcpu` and not running elsewhere;
        the slice a whole number of ns > 0."""
        raise NotImplementedError("a scheduler must define do_schedule(pcpu)")

    def context_saved(self, vcpu: int) -> None:
        """`vcpu` is now off its PCPU."""

    def pick_cpu(self, vcpu: int) -> int:
        """Choose a PCPU for a migrating `vcpu` (default: where it is, if allowed,
        else the first PCPU its hard affinity allows)."""
        return self.host.processor(vcpu)

    def migrate(self, vcpu: int, to: int) -> None:
        """Move `vcpu`'s bookkeeping to `to` (default: `host.set_processor`)."""
        self.host.set_processor(vcpu, to)

    def timer(self, id: int) -> None:
        """Your timer `id` (armed with `host.arm_timer`) fired."""

    def adjust(self, dom: int, params: dict[str, Any]) -> None:
        """Domain `dom`'s parameters changed at run time (the complete new set)."""

    def adjust_global(self, params: dict[str, Any]) -> None:
        """The global parameters changed at run time (the complete new set)."""

    def counters(self) -> dict[str, int]:
        """Counters for the summary's `scheduler_counters` (name -> whole number)."""
        return {}

    def dump(self) -> str:
        """Your state in words, for debugging (`Sim.dump()`)."""
        return ""

    def state(self) -> dict[str, Any]:
        """Your state as data, for tests (`Sim.state()`): any of `global` (a dict),
        `pcpus`, `domains`, `vcpus` (lists of dicts, by id) of JSON values."""
        return {}

    # ----- for the core --------------------------------------------------------------------

    @classmethod
    def declaration(cls) -> dict[str, Any]:
        """What the core registers: parameters, title, summary, allocation, limits."""
        return {
            "params": [p.declaration(n) for n, p in cls.params.items()],
            "title": cls.title or cls.__name__,
            "summary": cls.summary or (cls.__doc__ or "").strip().split("\n")[0],
            "origin": f"Python class {cls.__qualname__} in {_where(cls)}",
            "allocation": cls.allocation,
            "hook_timeout_s": float(cls.hook_timeout_s),
        }

    @classmethod
    def _overridden(cls) -> list[str]:
        return [h for h in HOOKS if getattr(cls, h) is not getattr(Scheduler, h)]

    @classmethod
    def _instantiate(cls, host: Any, params: dict[str, Any]) -> tuple[Scheduler, list[str]]:
        """Called by the core for each run: a fresh instance and its hooks."""
        obj = cls()
        obj.host = host
        obj.global_params = dict(params)
        return obj, cls._overridden()


def _where(cls: type) -> str:
    """The file (or module) a class was loaded from."""
    module = sys.modules.get(cls.__module__)
    return getattr(module, "__file__", None) or cls.__module__


# ----- loading a scheduler by name ---------------------------------------------------------


def is_spec(name: object) -> bool:
    """Does `name` name a user's scheduler (`file.py:Class`, `module:Class`)?"""
    return isinstance(name, str) and ":" in name


#: spec -> (file's resolved path or module name, its mtime or 0): what is registered.
_REGISTERED: dict[str, tuple[str, float]] = {}


def _user_traceback(exc: BaseException) -> str:
    """The traceback of an exception raised by the user's code, without vmsched's frames."""
    tb = exc.__traceback__
    while tb is not None and "vmsched" in Path(tb.tb_frame.f_code.co_filename).parts[-2:-1]:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()


def _import_file(path: Path, spec: str, where: str) -> Any:
    import hashlib  # only for a scheduler of your own (OpenSSL loads slowly)

    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    mod_name = f"vmsched_user_{path.stem}_{digest}"
    mspec = importlib.util.spec_from_file_location(mod_name, path)
    if mspec is None or mspec.loader is None:
        raise ScenarioError(f'"{spec}": {path} cannot be imported; expected a .py file', path=where)
    module = importlib.util.module_from_spec(mspec)
    sys.modules[mod_name] = module
    try:
        mspec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's code: shown with its traceback
        del sys.modules[mod_name]
        raise SchedulerError(
            f'"{spec}": importing {path} raised {type(exc).__name__}\n{_user_traceback(exc)}',
            path=where,
        ) from None
    return module


def resolve(spec: str, base: Path | None = None, where: str = "scheduler.name") -> type[Scheduler]:
    """The class `spec` names, imported (a relative file is looked for under
    `base`, else the current folder). ScenarioError if it cannot be found or
    is not a `vmsched.Scheduler`; SchedulerError if importing it raised."""
    target, _, cls_name = spec.rpartition(":")
    if not target or not cls_name.isidentifier():
        raise ScenarioError(
            f'"{spec}" is not a scheduler name; expected a built-in name, '
            "path/to/file.py:Class or package.module:Class",
            path=where,
        )
    if target.endswith(".py") or "/" in target:
        path = Path(target)
        if not path.is_absolute() and base is not None:
            path = base / path
        if not path.is_file():
            raise ScenarioError(
                f'"{spec}": {path} does not exist; expected the path of a Python file '
                "(relative to the scenario's folder, or to the current one on the command line)",
                path=where,
            )
        module = _import_file(path.resolve(), spec, where)
    else:
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            raise ScenarioError(
                f'"{spec}": no module {exc.name!r}; expected an importable package.module',
                path=where,
            ) from None
        except Exception as exc:  # noqa: BLE001 - the user's code
            raise SchedulerError(
                f'"{spec}": importing {target} raised {type(exc).__name__}\n{_user_traceback(exc)}',
                path=where,
            ) from None
    cls = getattr(module, cls_name, None)
    if cls is None:
        found = sorted(
            n
            for n, v in vars(module).items()
            if isinstance(v, type) and issubclass(v, Scheduler) and v is not Scheduler
        )
        raise ScenarioError(
            f'"{spec}": {target} has no {cls_name}; expected one of its '
            f"vmsched.Scheduler classes ({', '.join(found) or 'it has none'})",
            path=where,
        )
    if not (isinstance(cls, type) and issubclass(cls, Scheduler)):
        raise ScenarioError(
            f'"{spec}": {cls_name} is not a subclass of vmsched.Scheduler', path=where
        )
    return cls


def register(spec: str, base: Path | None = None, where: str = "scheduler.name") -> str:
    """Load the class `spec` names and register it with the core under `spec`
    (again only if its file changed). Returns `spec`."""
    target = spec.rpartition(":")[0]
    key = target
    mtime = 0.0
    if target.endswith(".py") or "/" in target:
        path = Path(target) if base is None else base / target
        try:
            key, mtime = str(path.resolve()), path.stat().st_mtime
        except OSError:
            pass  # resolve() says what is wrong
    if _REGISTERED.get(spec) == (key, mtime):
        return spec
    cls = resolve(spec, base, where)
    try:
        decl = json.dumps(cls.declaration())
    except TypeError as exc:
        raise ScenarioError(f'"{spec}": {exc}', path=where) from None
    try:
        _core.register_scheduler(spec, decl, cls._instantiate)
    except ValueError as exc:
        raise ScenarioError(f'"{spec}": {exc}', path=where) from None
    _REGISTERED[spec] = (key, mtime)
    return spec


def unregister(spec: str) -> bool:
    """Remove the user scheduler registered under `spec` from the catalogue (a
    run already built with it keeps it). Returns whether one was registered."""
    _REGISTERED.pop(spec, None)
    return bool(_core.unregister_scheduler(spec))


def registered() -> list[str]:
    """The names of the user schedulers registered now, oldest first."""
    return list(_REGISTERED)


@contextlib.contextmanager
def scope() -> Iterator[None]:
    """Every user scheduler registered inside the `with` block is unregistered
    at its end (one registered before keeps its registration), so that tests
    and notebooks do not leak schedulers into each other's catalogue:

        with vmsched.scheduler.scope():
            vmsched.run("s.toml", scheduler="wrr.py:WeightedRR")
    """
    before = set(_REGISTERED)
    try:
        yield
    finally:
        for spec in [s for s in _REGISTERED if s not in before]:
            unregister(spec)


def register_in(data: dict[str, Any], base: Path | None = None) -> None:
    """Register every user scheduler a scenario tree names (each host of a cluster)."""
    from vmsched.scenario import scheduler_tables

    for where, table in scheduler_tables(data):
        if isinstance(table, dict) and is_spec(table.get("name")):
            register(table["name"], base, f"{where}.name")


def under(sc: Any, name: str, where: str = "--scheduler") -> Any:
    """Scenario `sc` moved to scheduler `name` (a built-in or yours) as `vmsched
    compare` moves it: parameters carried where they mean the same, dropped
    otherwise (each drop said on stderr)."""
    from vmsched.compare import RunSpec, port

    if is_spec(name):
        register(name, where=where)
    ported, notes = port(sc.validate(), RunSpec(name, name))
    for note in notes:
        print(f"vmsched: {where} {name}: {note}", file=sys.stderr)
    return ported


def rebase(data: dict[str, Any], base: Path) -> None:
    """Make the relative file of a user scheduler a scenario names relative
    to the current folder instead of the scenario's (`base`), so the
    scenario means the same wherever it is run from (worker processes)."""
    hosts = data.get("host")
    tables = (
        [h.get("scheduler") for h in hosts if isinstance(h, dict)]
        if isinstance(hosts, list)
        else [data.get("scheduler")]
    )
    for table in tables:
        if not (isinstance(table, dict) and is_spec(table.get("name"))):
            continue
        target, _, cls_name = table["name"].rpartition(":")
        if (target.endswith(".py") or "/" in target) and not Path(target).is_absolute():
            path = base / target
            try:
                path = path.relative_to(Path.cwd())
            except ValueError:
                path = path.resolve()
            table["name"] = f"{path.as_posix()}:{cls_name}"
