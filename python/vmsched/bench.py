"""Speed and memory of the engine on the standard scenarios (`vmsched bench`).

The cases come from the core (`vmsched._core.bench_cases`), the same ones
`cargo bench` measures. Each case is simulated a few times from scratch and the
fastest repetition is kept, as the least disturbed by the rest of the machine.
With `trace=True` each case is also measured writing both traces (trace.txt
and trace.xentrace, into a temporary folder removed afterwards), which gives
the cost of tracing. This measures; it asserts nothing.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from vmsched import _core
from vmsched.api import catalogue
from vmsched.errors import from_core, unknown_name
from vmsched.scheduler import is_spec, register

#: Repetitions of each case; the fastest is reported.
REPEATS = 3
#: Simulate "to the end": later than any run's end (u64 nanoseconds).
UNTIL_END_NS = 2**64 - 1


def _measure(scenario_json: str, trace_dir: Path | None = None) -> dict[str, float]:
    """One repetition: build the simulation, run it to the end, time the run.
    With `trace_dir`, both traces are written there (finishing them is timed
    too) and removed afterwards."""
    sim = _core.Sim(scenario_json)
    files = []
    if trace_dir is not None:
        files = [trace_dir / "trace.txt", trace_dir / "trace.xentrace"]
        sim.set_trace(text=files[0], xentrace=files[1])
    t0 = time.perf_counter()
    _now, end_ns, events, _finished = sim.run_until(UNTIL_END_NS)
    if files:
        sim.finish_trace()
    wall = time.perf_counter() - t0
    result = {
        "wall_s": wall,
        "simulated_s": end_ns / 1e9,
        "events": events,
        "events_per_s": events / wall,
        "realtime_factor": end_ns / 1e9 / wall,
        "bytes_per_vcpu": sim.bytes_per_vcpu(),
    }
    if files:
        result["trace_bytes"] = sum(f.stat().st_size for f in files)
        for f in files:
            f.unlink()
    return result


def _best(scenario_json: str, repeats: int, trace_dir: Path | None = None) -> dict[str, float]:
    runs = (_measure(scenario_json, trace_dir) for _ in range(repeats))
    return min(runs, key=lambda m: m["wall_s"])


def run_benchmarks(
    scheduler: str = "credit", *, quick: bool = False, repeats: int = REPEATS, trace: bool = False
) -> dict[str, Any]:
    """Measure every standard case under `scheduler`; `quick` uses short runs.

    Returns a dict with the machine, the settings and one entry per case:
    events per wall second, simulated seconds per wall second
    (`realtime_factor`) and bytes of model state per VCPU, best of `repeats`.
    With `trace`, each case also has `traced`: the same measured while
    writing trace.txt and trace.xentrace, their size (`trace_bytes`) and
    the extra wall time in percent (`cost_pct`).
    """
    if is_spec(scheduler):
        register(scheduler, where="--scheduler")
    known = [s["name"] for s in catalogue()["schedulers"]]
    if scheduler not in known:
        raise unknown_name("scheduler", scheduler, known, path="--scheduler")
    cases = []
    try:
        with tempfile.TemporaryDirectory(prefix="vmsched-bench-") as tmp:
            for name, about, scenario_json in _core.bench_cases(scheduler, quick):
                case = {"name": name, "about": about, **_best(scenario_json, repeats)}
                if trace:
                    traced = _best(scenario_json, repeats, Path(tmp))
                    traced["cost_pct"] = (traced["wall_s"] / case["wall_s"] - 1) * 100
                    case["traced"] = traced
                cases.append(case)
    except Exception as exc:  # noqa: BLE001 - translated, never swallowed
        raise from_core(exc, None) from None
    return {
        "vmsched_version": _core.__version__,
        "scheduler": scheduler,
        "quick": quick,
        "repeats": repeats,
        "trace": trace,
        "machine": {
            "python": platform.python_version(),
            "system": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
        },
        "cases": cases,
    }
