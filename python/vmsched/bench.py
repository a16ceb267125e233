"""Speed and memory of the engine on the standard scenarios (`vmsched bench`).

The cases come from the core (`vmsched._core.bench_cases`), the same ones
`cargo bench` measures. Each case is simulated a few times from scratch and the
fastest repetition is kept, as the least disturbed by the rest of the machine.
This measures; it asserts nothing.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any

from vmsched import _core
from vmsched.api import catalogue
from vmsched.errors import from_core, unknown_name

#: Repetitions of each case; the fastest is reported.
REPEATS = 3
#: Simulate "to the end": later than any run's end (u64 nanoseconds).
UNTIL_END_NS = 2**64 - 1


def _measure(scenario_json: str) -> dict[str, float]:
    """One repetition: build the simulation, run it to the end, time the run."""
    sim = _core.Sim(scenario_json)
    t0 = time.perf_counter()
    _now, end_ns, events, _finished = sim.run_until(UNTIL_END_NS)
    wall = time.perf_counter() - t0
    return {
        "wall_s": wall,
        "simulated_s": end_ns / 1e9,
        "events": events,
        "events_per_s": events / wall,
        "realtime_factor": end_ns / 1e9 / wall,
        "bytes_per_vcpu": sim.bytes_per_vcpu(),
    }


def run_benchmarks(
    scheduler: str = "credit", *, quick: bool = False, repeats: int = REPEATS
) -> dict[str, Any]:
    """Measure every standard case under `scheduler`; `quick` uses short runs.

    Returns a dict with the machine, the settings and one entry per case:
    events per wall second, simulated seconds per wall second
    (`realtime_factor`) and bytes of model state per VCPU, best of `repeats`.
    """
    known = [s["name"] for s in catalogue()["schedulers"]]
    if scheduler not in known:
        raise unknown_name("scheduler", scheduler, known, path="--scheduler")
    cases = []
    try:
        for name, about, scenario_json in _core.bench_cases(scheduler, quick):
            best = min((_measure(scenario_json) for _ in range(repeats)), key=lambda m: m["wall_s"])
            cases.append({"name": name, "about": about, **best})
    except Exception as exc:  # noqa: BLE001 - translated, never swallowed
        raise from_core(exc, None) from None
    return {
        "vmsched_version": _core.__version__,
        "scheduler": scheduler,
        "quick": quick,
        "repeats": repeats,
        "machine": {
            "python": platform.python_version(),
            "system": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
        },
        "cases": cases,
    }
