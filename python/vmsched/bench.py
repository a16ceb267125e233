"""Speed and memory of the engine on the standard scenarios (`vmsched bench`).

The cases come from the core (`vmsched._core.bench_cases`), the same ones
`cargo bench` measures. Each case is simulated a few times from scratch and the
fastest repetition is kept, as the least disturbed by the rest of the machine.
With `trace=True` each case is also measured writing both traces (trace.txt
and trace.xentrace, into a temporary folder removed afterwards), which gives
the cost of tracing.

Each figure is given in wall time and in CPU time (`cpu_s`,
`cpu_realtime_factor`): on a machine shared with other work the wall clock
also counts the time the run waited for a processor, the CPU time does not.

Peak memory is measured in a fresh process per case (the largest resident
set the operating system saw; the process is forked from a small launcher,
`_LAUNCHER`, so that it is its own peak and not this one's): `peak_mib`
imports what `vmsched run` loads (the engine; rich only draws on a
terminal) and simulates the case. The whole-command cases
(`_core.bench_commands`) time `vmsched run --out` as a user runs it, from
process start to results written, and give its peak beside that
engine-only peak of the same scenario; `baseline_mib` is the peak of a
process that imports the same and simulates nothing, so `peak_ratio` =
(command − baseline) ÷ (engine − baseline) is the run's memory over what
the engine itself added. This measures; it asserts nothing.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from vmsched import _core
from vmsched.api import catalogue
from vmsched.errors import from_core, unknown_name
from vmsched.scenario import load
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
    t0, c0 = time.perf_counter(), time.thread_time()
    _now, end_ns, events, _finished = sim.run_until(UNTIL_END_NS)
    if files:
        sim.finish_trace()
    wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
    result = {
        "wall_s": wall,
        "cpu_s": cpu,
        "cpu_realtime_factor": end_ns / 1e9 / max(cpu, 1e-9),
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


#: Runs `python ARGV...` in a process it forks, and prints on the last line
#: of its standard error the child's wall seconds, CPU seconds, peak resident
#: KiB and exit status (JSON). The child is forked from this small process,
#: not started from the caller's: on Linux a process started by the caller
#: (vfork and exec, as `subprocess` does) reports at least the caller's own
#: peak as its `ru_maxrss`, and `vmsched bench` has simulated every case
#: in-process by the time it measures the whole command.
_LAUNCHER = """
import json, os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
_pid, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
code = os.waitstatus_to_exitcode(status)
cpu = usage.ru_utime + usage.ru_stime
print(json.dumps([wall, cpu, usage.ru_maxrss, code]), file=sys.stderr)
"""


def _child(argv: list[str]) -> tuple[float, float, float]:
    """Run `python argv...` to its end, in a process forked from a small
    launcher (`_LAUNCHER`): (wall seconds, CPU seconds, peak resident MiB)."""
    proc = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    *err, last = proc.stderr.decode().rstrip("\n").split("\n")
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark launcher failed: {proc.stderr.decode()}")
    wall, cpu, maxrss_kib, code = json.loads(last)
    if code != 0:
        raise RuntimeError(f"benchmark process failed: {' '.join(argv)}: {chr(10).join(err)}")
    # ru_maxrss is in KiB on Linux.
    return wall, cpu, maxrss_kib / 1024


#: What `vmsched run --out` imports before it simulates and writes (the
#: series is encoded by the core: pyarrow is not loaded).
_IMPORTS = "import sys; import vmsched.cli; from vmsched import _core"
#: A process that also simulates a scenario (JSON file argv[1]), nothing more.
_ENGINE_ONLY = _IMPORTS + "; s = _core.Sim(open(sys.argv[1]).read()); s.run_until(2**64 - 1)"


def _engine_peak_mib(scenario_json: str, tmp: Path) -> float:
    path = tmp / "scenario.json"
    path.write_text(scenario_json)
    return _child(["-c", _ENGINE_ONLY, str(path)])[2]


def _baseline_mib() -> float:
    """Peak of a process that imports what `vmsched run` does, and stops."""
    return _child(["-c", _IMPORTS])[2]


def _measure_command(toml_text: str, repeats: int, tmp: Path) -> dict[str, float]:
    """The whole `vmsched run SCENARIO --out DIR`, best of `repeats`."""
    scenario = tmp / "scenario.toml"
    scenario.write_text(toml_text)
    out = tmp / "out"
    runs = []
    for _ in range(repeats):
        runs.append(_child(["-m", "vmsched", "run", str(scenario), "--out", str(out)]))
    summary = json.loads((out / "summary.json").read_text())
    wall = min(w for w, _, _ in runs)
    cpu = min(c for _, c, _ in runs)
    scenario_json = load(scenario).to_json()
    engine = _engine_peak_mib(scenario_json, tmp)
    # The model's state per VCPU, as the engine cases give it: the same
    # scenario simulated here once more.
    sim = _core.Sim(scenario_json)
    sim.run_until(UNTIL_END_NS)
    return {
        "bytes_per_vcpu": sim.bytes_per_vcpu(),
        "wall_s": wall,
        "simulated_s": summary["duration_s"],
        "events": summary["events"],
        "events_per_s": summary["events"] / wall,
        "realtime_factor": summary["duration_s"] / wall,
        "cpu_s": cpu,
        "cpu_realtime_factor": summary["duration_s"] / cpu,
        "peak_mib": max(m for _, _, m in runs),
        "engine_peak_mib": engine,
        "results_bytes": sum(f.stat().st_size for f in out.iterdir()),
    }


#: Chunks the engine/heap run is cut into, to sample the queue's size.
QUEUE_SAMPLES = 1000


def _heap_ratio(name: str, scenario_json: str) -> dict[str, Any]:
    """The engine on a case against a bare binary-heap loop
    (`_core.bare_heap_loop`) of the engine's mean queue size, both timed in
    this thread's CPU time: events per CPU second of each and their ratio."""
    sim = _core.Sim(scenario_json)
    _now, end_ns, _events, _finished = sim.run_until(0)
    cpu, sizes, events = 0.0, 0, 0
    for i in range(1, QUEUE_SAMPLES + 1):
        c0 = time.thread_time()
        _now, _end, events, _finished = sim.run_until(end_ns * i // QUEUE_SAMPLES)
        cpu += time.thread_time() - c0
        sizes += sim.queue_len()
    size = max(round(sizes / QUEUE_SAMPLES), 1)
    steps = min(max(events, 1_000_000), 100_000_000)
    c0 = time.thread_time()
    _core.bare_heap_loop(size, steps)
    heap_cpu = time.thread_time() - c0
    engine = events / max(cpu, 1e-9)
    heap = steps / max(heap_cpu, 1e-9)
    return {
        "case": name,
        "queue_size": size,
        "engine_events_per_cpu_s": engine,
        "heap_events_per_cpu_s": heap,
        "ratio": engine / heap,
    }


def _scaling(scheduler: str, quick: bool, repeats: int) -> list[dict[str, Any]]:
    """The mixed host from 2 to 512 PCPUs (`_core.bench_scaling`): CPU time
    per simulated PCPU-second, and that over log2 P."""
    rows = []
    for pcpus, scenario_json in _core.bench_scaling(scheduler, 1.0 if quick else 10.0):
        m = _best(scenario_json, repeats)
        per = m["cpu_s"] * 1e6 / (pcpus * m["simulated_s"])
        rows.append(
            {
                "pcpus": pcpus,
                "events": m["events"],
                "cpu_s": m["cpu_s"],
                "cpu_realtime_factor": m["cpu_realtime_factor"],
                "cpu_us_per_pcpu_s": per,
                "per_log2_p": per / math.log2(pcpus),
            }
        )
    return rows


def _best(scenario_json: str, repeats: int, trace_dir: Path | None = None) -> dict[str, float]:
    runs = (_measure(scenario_json, trace_dir) for _ in range(repeats))
    return min(runs, key=lambda m: m["wall_s"])


def run_benchmarks(
    scheduler: str = "credit", *, quick: bool = False, repeats: int = REPEATS, trace: bool = False
) -> dict[str, Any]:
    """Measure every standard case under `scheduler`; `quick` uses short runs.

    Returns a dict with the machine, the settings and one entry per case:
    events per wall second, simulated seconds per wall second
    (`realtime_factor`) and bytes of model state per VCPU, best of `repeats`,
    and the peak memory of a process simulating it (`peak_mib`). `commands`
    has the whole-command cases: the same figures for `vmsched run --out`
    from process start to results written (with the bytes per VCPU of the
    same scenario simulated in this process), its peak beside the engine-only
    peak (`engine_peak_mib`), and `peak_ratio`, the first over the second
    once the `baseline_mib` of an idle process is taken from both.
    `heap` compares the engine on three CPU hogs with a bare binary-heap
    loop of its mean queue size (events per CPU second of each, and the
    ratio); `scaling` has the mixed host from 2 to 512 PCPUs, CPU
    microseconds per simulated PCPU-second and that over log2 P.
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
    commands = []
    try:
        with tempfile.TemporaryDirectory(prefix="vmsched-bench-") as tmp:
            baseline = _baseline_mib()
            for name, about, scenario_json in _core.bench_cases(scheduler, quick):
                case = {"name": name, "about": about, **_best(scenario_json, repeats)}
                case["peak_mib"] = _engine_peak_mib(scenario_json, Path(tmp))
                if trace:
                    traced = _best(scenario_json, repeats, Path(tmp))
                    traced["cost_pct"] = (traced["wall_s"] / case["wall_s"] - 1) * 100
                    case["traced"] = traced
                cases.append(case)
            cases_json = dict((n, j) for n, _a, j in _core.bench_cases(scheduler, quick))
            heap = _heap_ratio("three-hogs-2pcpu", cases_json["three-hogs-2pcpu"])
            scaling = _scaling(scheduler, quick, repeats)
            for name, about, toml_text in _core.bench_commands(scheduler, quick):
                cmd = {"name": name, "about": about}
                cmd.update(_measure_command(toml_text, repeats, Path(tmp)))
                # What the results path adds, over the engine's own memory.
                cmd["peak_ratio"] = (cmd["peak_mib"] - baseline) / max(
                    cmd["engine_peak_mib"] - baseline, 1e-9
                )
                commands.append(cmd)
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
        "baseline_mib": baseline,
        "cases": cases,
        "commands": commands,
        "heap": heap,
        "scaling": scaling,
    }
