"""The sweeps' speed figures (docs/sweep.md): one sweep of N runs of 10-second simulations,
with 1 and 2 local workers (and 2 Ray workers).

    .venv/bin/python tools/sweep_bench.py --runs 1000 --ray

Measures, in this order: the engine alone on the same N scenarios (in this process,
nothing else: the simulation itself), then `vmsched.sweeps.sweep` (figures off,
results written) with 1 local worker, 2 local workers and, with `--ray`, 2 workers of a
private local Ray cluster (its start-up timed apart). Then prints the figures the issue
asks for, each with its target:

- the speed-up of 2 local workers over 1 (target at least 1.8x), and of 2 Ray workers;
- the per-run overhead beyond the simulation (target under 20 ms): with 1 worker, the
  sweep's wall time less the engine's, per run; the same in CPU time (this process
  and its workers, which other work on the machine does not inflate); with Ray, the
  worker-seconds (2 x wall) less the engine's, per run.

Wall-clock figures mean something only on a quiet machine: the load average is
printed, with a warning when it exceeds the number of CPUs. The CPU-time overhead
holds on a loaded machine too.
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


def _cpu_s() -> tuple[float, float]:
    """User + system CPU seconds of (this process, its waited-for children)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--ray", action="store_true", help="also time --backend ray (2 CPUs)")
    ap.add_argument(
        "--scenario",
        default="scenarios/credit-three-vms.toml",
        help="the base scenario, run for 10 simulated seconds after a 1-s warm-up",
    )
    args = ap.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    tmp = Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    spec_path = tmp / "bench.toml"
    base = (root / args.scenario).resolve()
    spec_path.write_text(SPEC.format(runs=args.runs, base=base))
    spec = sweeps.load_spec(spec_path)
    runs = sweeps.plan(spec)
    n = len(runs)
    # Untimed: the first sweep of a process pays its imports (pyarrow, the catalogue),
    # which belong to neither worker count.
    warm = tmp / "warm.toml"
    warm.write_text(SPEC.format(runs=2, base=base))
    sweeps.sweep(sweeps.load_spec(warm), tmp / "warm", jobs=1, figures=False, progress=False)
    shutil.rmtree(tmp / "warm")
    t0 = time.perf_counter()
    cpu0 = sum(_cpu_s())
    for r in runs:
        sim = _core.Sim(json.dumps(r.scenario))
        sim.run_until(int(11e9))
        sim.summary(0.0)
    engine_s = time.perf_counter() - t0
    engine_cpu = sum(_cpu_s()) - cpu0
    print(
        f"{n} runs of 10 simulated s of {args.scenario}; the engine alone: "
        f"{engine_s:.2f} s ({engine_s / n * 1000:.2f} ms per run; CPU {engine_cpu:.2f} s)"
    )
    wall: dict[tuple[str, int], float] = {}
    cpu: dict[tuple[str, int], tuple[float, float]] = {}
    cases = [("local", 1), ("local", 2)] + ([("ray", 2)] if args.ray else [])
    for backend, jobs in cases:
        out = tmp / f"{backend}-{jobs}"
        if backend == "ray":
            import ray

            t0 = time.perf_counter()
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
            started = time.perf_counter() - t0
            print(f"ray: a local cluster of {jobs} CPUs started in {started:.1f} s (not counted)")
        t0 = time.perf_counter()
        me0, kids0 = _cpu_s()
        sweeps.sweep(spec, out, backend=backend, jobs=jobs, figures=False, progress=False)
        wall[backend, jobs] = w = time.perf_counter() - t0
        me1, kids1 = _cpu_s()
        cpu[backend, jobs] = (me1 - me0, kids1 - kids0)
        if backend == "ray":
            ray.shutdown()
        shutil.rmtree(out)
        line = f"{backend}, {jobs} worker(s): {w:.2f} s"
        main_cpu, workers_cpu = cpu[backend, jobs]
        if backend == "local":
            # CPU seconds of this process and its (joined) workers: how many cores the
            # sweep got on average, whatever else the machine was running.
            line += (
                f" (CPU: main process {main_cpu:.2f} s, workers {workers_cpu:.2f} s; "
                f"{(main_cpu + workers_cpu) / w:.2f} cores busy)"
            )
        else:
            # Ray's workers are not this process's children: only the main process's
            # CPU is known here.
            line += f" (CPU: main process {main_cpu:.2f} s)"
        print(line, flush=True)
    shutil.rmtree(tmp)
    cpus = os.cpu_count() or 1
    load = os.getloadavg()
    print(f"cpus: {cpus}, load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if load[0] > cpus:
        print("WARNING: the machine is loaded; the wall-clock figures below mean little")
    one = wall["local", 1]
    speedup = one / wall["local", 2]
    overhead_ms = (one - engine_s) / n * 1000
    overhead_cpu_ms = (sum(cpu["local", 1]) - engine_cpu) / n * 1000
    print("figures (sweep speed):")
    print(
        f"  speed-up, 2 local workers over 1 (target >= 1.8x): {speedup:.2f}x "
        f"[{_verdict(speedup >= 1.8)}]"
    )
    print(
        f"  per-run overhead beyond the simulation, 1 worker, wall (target < 20 ms): "
        f"{overhead_ms:.1f} ms [{_verdict(overhead_ms < 20)}]"
    )
    print(
        f"  per-run overhead beyond the simulation, 1 worker, CPU time (target < 20 ms): "
        f"{overhead_cpu_ms:.1f} ms [{_verdict(overhead_cpu_ms < 20)}]"
    )
    # What the main process spends per run while the workers simulate (receiving the
    # batches, writing the parts, gathering the results): on 2 cores it competes with
    # the 2 workers, so it bounds the speed-up. The estimate takes the CPU time of
    # the whole 1-worker sweep over half the CPU time of the 2-worker one (main process
    # and workers): what the wall-clock speed-up would be with nothing else running and
    # no serial part, the machine's load left out.
    main2, workers2 = cpu["local", 2]
    print(
        f"  main process CPU per run, 2 local workers: {main2 / n * 1000:.3f} ms "
        f"(workers: {workers2 / n * 1000:.3f} ms per run, the engine alone "
        f"{engine_cpu / n * 1000:.3f} ms)"
    )
    cpu_speedup = sum(cpu["local", 1]) / ((main2 + workers2) / 2)
    print(f"  speed-up in CPU time, 2 local workers over 1 (no serial part): {cpu_speedup:.2f}x")
    if ("ray", 2) in wall:
        print(f"  main process CPU per run, Ray: {cpu['ray', 2][0] / n * 1000:.3f} ms")
        ray_wall = wall["ray", 2]
        ray_overhead_ms = (2 * ray_wall - engine_s) / n * 1000
        print(f"  speed-up, 2 Ray workers over 1 local worker: {one / ray_wall:.2f}x")
        print(
            f"  per-run overhead beyond the simulation, 2 Ray workers (worker-seconds): "
            f"{ray_overhead_ms:.1f} ms [{_verdict(ray_overhead_ms < 20)}]"
        )


if __name__ == "__main__":
    main()
