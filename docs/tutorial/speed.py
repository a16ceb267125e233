"""Events per wall second and per CPU second of `vmsched bench`'s first case (three CPU
hogs on two PCPUs, 2,000 simulated s) under scheduler NAME (a built-in, or yours:
file.py:Class), best of 3:

    python docs/tutorial/speed.py docs/tutorial/rr.py:RoundRobin
"""

import resource
import sys
import time

from vmsched import _core
from vmsched.scheduler import is_spec, register


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


name = sys.argv[1]
if is_spec(name):
    register(name)
case, _about, scenario = _core.bench_cases(name, False)[0]
best_wall = best_cpu = 0.0
for _ in range(3):
    sim = _core.Sim(scenario)
    c0, t0 = cpu_s(), time.perf_counter()
    _, _, events, _ = sim.run_until(2**63)
    wall, cpu = time.perf_counter() - t0, cpu_s() - c0
    best_wall, best_cpu = max(best_wall, events / wall), max(best_cpu, events / cpu)
print(
    f"{name} {case}: {events} events; {best_wall / 1e6:.3f} M/wall s, "
    f"{best_cpu / 1e6:.3f} M/CPU s ({1e6 / best_cpu:.3f} µs of CPU per event)"
)
