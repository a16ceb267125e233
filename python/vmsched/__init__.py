"""vmsched: a laboratory for CPU scheduling of virtual machines.

Simulate a virtualised host under any of Xen's VCPU schedulers, faithful to
Xen's own behaviour, and measure what an operator or a paper would::

    import vmsched
    r = vmsched.run("scenarios/credit-three-vms.toml")
    print(r.cpu_pct())
    r.timeseries.head()
"""

from __future__ import annotations

import gc as _gc

# Loading the package makes thousands of lasting objects (modules, classes,
# functions) and no garbage; the cyclic collector would walk them again and
# again while they are made (about 8 M instructions, a twentieth of a
# command's start-up). It is paused while they load and left as it was.
_collecting = _gc.isenabled()
_gc.disable()
try:
    from os import PathLike

    from vmsched._core import __version__
    from vmsched.api import Result, catalogue, run
    from vmsched.errors import InternalError, ScenarioError, SchedulerError, VmschedError
    from vmsched.scenario import Scenario, load
finally:
    if _collecting:
        _gc.enable()

# `typing` is not loaded at run time (annotations are not evaluated).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vmsched.scheduler import Param, Scheduler

__all__ = [
    "InternalError",
    "Param",
    "Result",
    "Scenario",
    "ScenarioError",
    "Scheduler",
    "SchedulerError",
    "VmschedError",
    "__version__",
    "catalogue",
    "load",
    "run",
    "sweep",
]


def __getattr__(name: str) -> Any:
    """`Param` and `Scheduler` (for schedulers written in Python) load with
    their module when first used, so that a run of a built-in scheduler does
    not import it (and `dataclasses` with it)."""
    if name in ("Param", "Scheduler"):
        from vmsched import scheduler

        return getattr(scheduler, name)
    raise AttributeError(f"module 'vmsched' has no attribute {name!r}")


def sweep(spec: Any, out: str | PathLike, **options: Any) -> Any:
    """Run a sweep spec (a TOML path) into `out` and return its SweepResult; the options
    are `vmsched.sweeps.sweep`'s (docs/sweep.md). Its module loads only when called."""
    from vmsched.sweeps import sweep as run_sweep

    return run_sweep(spec, out, **options)
