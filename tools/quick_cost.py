"""Where the CPU of `vmsched reproduce --all --quick`'s simulations goes, per experiment.

    python tools/quick_cost.py            # every experiment's quick grid
    python tools/quick_cost.py ID ...     # some of them
    python tools/quick_cost.py --grid sensitivity [ID ...]   # the sensitivity grids
                                          # (one seed: what each table's baseline runs)

Each experiment's seeded quick grid (every replication) is simulated in this one
process, one run after the other, with `time.process_time()` around it: runs,
simulated seconds (warm-up included), events, CPU seconds and events per CPU
second. No figure, no report, no worker: the simulations' own cost, which on a
shared machine is steadier than wall clock.
"""

from __future__ import annotations

import sys
import time

from vmsched.reproduce import EXPERIMENTS, experiment
from vmsched.reproduce.framework import _simulate, plan_experiments


def main(ids: list[str]) -> int:
    grid = "quick"
    if ids[:1] == ["--grid"] and len(ids) > 1:
        grid, ids = ids[1], ids[2:]
    exps = [experiment(i) for i in ids] if ids else list(EXPERIMENTS.values())
    width = max(len(e.id) for e in exps)
    head = f"{'runs':>5}  {'sim s':>7}  {'events':>11}  {'CPU s':>6}  ev/CPU-s"
    print(f"{'experiment':<{width}}  {head}")
    totals = [0, 0.0, 0, 0.0]
    for exp in exps:
        reps = 1 if grid == "sensitivity" else None
        (plan,), trees = plan_experiments([exp], quick=True, replications=reps, grid=grid)
        sim_s = sum(float(t["run"]["duration_s"]) for t in trees)
        c0 = time.process_time()
        events = sum(int(_simulate(t).get("events", 0)) for t in trees)
        cpu = time.process_time() - c0
        for k, v in enumerate((len(trees), sim_s, events, cpu)):
            totals[k] += v
        rate = events / cpu if cpu > 0 else float("nan")
        print(
            f"{exp.id:<{width}}  {len(trees):>5}  {sim_s:>7.0f}  {events:>11,}  {cpu:>6.2f}"
            f"  {rate:>10,.0f}",
            flush=True,
        )
    n, sim_s, events, cpu = totals
    print(f"{'total':<{width}}  {n:>5}  {sim_s:>7.0f}  {events:>11,}  {cpu:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
