"""Time one sweep of N runs of 10-second simulations with 1 and 2 workers (and Ray).

    .venv/bin/python tools/sweep_bench.py [--runs 1000] [--ray] [--scenario PATH]

Prints, for each backend (Ray: a private local cluster, its start-up timed
apart) and worker count, the wall time of `vmsched.sweeps.sweep` (figures off),
the speed-up over one worker, and the per-run overhead: the sweep's wall time
with one worker, less the time the engine alone takes for the same scenarios
(measured first, in this process), divided by the number of runs; the same in
CPU time, which other work on the machine does not inflate.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from vmsched import _core, sweeps

SPEC = """
replications = {runs}
base = "{base}"
[[axis]]
path = "run.duration_s"
values = [11]
[[axis]]
path = "run.warmup_s"
values = [1]
"""


def _cpu_s() -> float:
    """User + system CPU seconds of this process and its waited-for children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--ray", action="store_true", help="also time --backend ray (2 CPUs)")
    ap.add_argument(
        "--scenario",
        default="scenarios/credit-three-vms.toml",
        help="the base scenario, run for 10 simulated seconds after a 1-s warm-up",
    )
    args = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
    tmp = Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    spec_path = tmp / "bench.toml"
    base = (root / args.scenario).resolve()
    spec_path.write_text(SPEC.format(runs=args.runs, base=base))
    spec = sweeps.load_spec(spec_path)
    runs = sweeps.plan(spec)
    t0 = time.perf_counter()
    cpu0 = _cpu_s()
    for r in runs:
        sim = _core.Sim(json.dumps(r.scenario))
        sim.run_until(int(11e9))
        sim.summary(0.0)
    engine_s = time.perf_counter() - t0
    engine_cpu = _cpu_s() - cpu0
    print(
        f"{len(runs)} runs of 10 simulated s of {args.scenario}; the engine alone: "
        f"{engine_s:.2f} s (CPU {engine_cpu:.2f} s)"
    )
    results = {}
    cases = [("local", 1), ("local", 2)] + ([("ray", 2)] if args.ray else [])
    for backend, jobs in cases:
        out = tmp / f"{backend}-{jobs}"
        if backend == "ray":
            import ray

            t0 = time.perf_counter()
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
            started = time.perf_counter() - t0
            print(f"ray: a local cluster of {jobs} CPUs started in {started:.1f} s")
        t0 = time.perf_counter()
        cpu0 = _cpu_s()
        sweeps.sweep(spec, out, backend=backend, jobs=jobs, figures=False, progress=False)
        wall = time.perf_counter() - t0
        cpu = _cpu_s() - cpu0
        results[(backend, jobs)] = wall
        if backend == "ray":
            ray.shutdown()
        shutil.rmtree(out)
        line = f"{backend}, {jobs} worker(s): {wall:.2f} s"
        if backend == "local":
            # CPU seconds of this process and its (joined) workers: how many cores the
            # sweep got on average, whatever else the machine was running.
            line += f" (CPU {cpu:.2f} s: {cpu / wall:.2f} cores busy)"
        if (backend, jobs) != ("local", 1):
            line += f", {results[('local', 1)] / wall:.2f}x one local worker"
        else:
            line += (
                f", overhead {(wall - engine_s) / len(runs) * 1000:.1f} ms per run "
                f"(in CPU time {(cpu - engine_cpu) / len(runs) * 1000:.1f} ms)"
            )
        print(line, flush=True)
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
