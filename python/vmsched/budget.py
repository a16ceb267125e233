"""The memory a run will need, estimated before it starts, and its limit.

What grows with a run is its time series: one row per domain and per VCPU at
every sample (`run.sample_ms`) of the measured time. The core keeps the rows
in memory until the run ends, then they become a DataFrame and
`timeseries.parquet`. Everything else a run holds (the model, the event queue,
the wake-up latency histograms) is bounded by the number of domains and VCPUs.

So the estimate is rows × bytes per row at the peak (the core's columns, with
room to grow, their copy for Python, and the DataFrame built from them), and a
run whose estimate passes the limit is refused before anything is simulated,
with the estimate and what to change. The limit is `VMSCHED_MAX_MEMORY_MB`
(megabytes) when that environment variable is set, else the smaller of
DEFAULT_LIMIT_MB and half the machine's memory.

Traces (`--trace`, `--xentrace`) are not held in memory: they are streamed to
disk as the run goes. How large they will be is not known from the scenario
alone (it is the number of scheduling events), so before a traced run starts
a *pilot* simulates the scenario through its warm-up and the first second of
measured time (at most a twentieth of it), with the same traces written to a
scratch folder, and scales their size to the measured time. A
run whose traces would not fit in the free space of their file system, or
would pass `VMSCHED_MAX_TRACE_MB` (default DEFAULT_TRACE_LIMIT_MB), is refused before it starts,
with the estimate and what to change. The estimate is a rate measured at the
start; a disk that fills anyway ends the run with nothing left behind
(vmsched.output).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable

from vmsched.errors import ScenarioError

# `typing` is not loaded at run time (it is a tenth of `vmsched run`'s start-up):
# annotations are not evaluated (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

#: Peak bytes of memory per series row: 28 bytes in the core's columns (up
#: to twice that while a column grows), 28 in their copy handed to Python,
#: and about 60 in the DataFrame and while it is converted. A measured upper
#: bound (docs/cli.md, "Bounded resources").
BYTES_PER_ROW = 180

#: Peak bytes per series row when the rows stay in the core alone, as under
#: `vmsched top`, which draws its frames from the core's state times and
#: never builds the DataFrame: 28 bytes, twice that while a column grows.
CORE_BYTES_PER_ROW = 56

#: The default limit (MB), unless half the machine's memory is less.
DEFAULT_LIMIT_MB = 4096

#: The environment variable that sets the limit, in MB.
LIMIT_ENV = "VMSCHED_MAX_MEMORY_MB"

#: The environment variable that limits the traces' estimated size, in MB
#: (without it, the limit is the free space where they are written).
TRACE_LIMIT_ENV = "VMSCHED_MAX_TRACE_MB"

#: The default limit of the traces' size (MB), unless less space is free:
#: a trace beyond a few GB no longer opens in the Perfetto UI or reads in
#: reasonable time with xenalyze.
DEFAULT_TRACE_LIMIT_MB = 8192

#: The pilot's traced length: the first measured second, at most this share of
#: the measured time.
PILOT_S = 1.0
PILOT_SHARE = 1 / 20


def _number(v: Any, default: float) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else default


def _vcpus(domains: Any) -> tuple[int, int]:
    """(domains, VCPUs) of a validated domain list."""
    if not isinstance(domains, list):
        return 0, 0
    vcpus = sum(int(_number(d.get("vcpus"), 1)) for d in domains if isinstance(d, dict))
    return len(domains), vcpus


def series_rows(data: dict[str, Any]) -> int:
    """Rows of the time series a validated scenario tree will produce."""
    run = data.get("run") if isinstance(data.get("run"), dict) else {}
    duration_s = _number(run.get("duration_s"), 60.0)
    warmup_s = _number(run.get("warmup_s"), 0.0)
    sample_s = _number(run.get("sample_ms"), 1000.0) / 1000
    samples = math.ceil(max(duration_s - warmup_s, 0.0) / sample_s) + 1
    hosts = data.get("host")
    if isinstance(hosts, list):
        per_sample = sum(sum(_vcpus(h.get("domain"))) for h in hosts if isinstance(h, dict))
    else:
        per_sample = sum(_vcpus(data.get("domain")))
    return samples * per_sample


def machine_memory_mb() -> float | None:
    """The machine's physical memory in MB, where the system tells it."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e6
    except (ValueError, OSError, AttributeError):
        return None


def limit_mb() -> tuple[float, str]:
    """The memory limit (MB) and where it comes from, for the message."""
    value = _env_mb(LIMIT_ENV)
    if value is not None:
        return value, f"{LIMIT_ENV}={os.environ[LIMIT_ENV]}"
    mem = machine_memory_mb()
    if mem is not None and mem / 2 < DEFAULT_LIMIT_MB:
        return mem / 2, f"half of this machine's {mem:,.0f} MB; set {LIMIT_ENV} to change it"
    return float(DEFAULT_LIMIT_MB), f"the default; set {LIMIT_ENV} to change it"


def estimate_mb(data: dict[str, Any], bytes_per_row: int = BYTES_PER_ROW) -> float:
    """Peak memory (MB) the run of a validated scenario tree needs for its
    time series."""
    return series_rows(data) * bytes_per_row / 1e6


def check(
    data: dict[str, Any],
    file: str | None,
    *,
    bytes_per_row: int = BYTES_PER_ROW,
    path: str = "run.sample_ms",
    interval: str = "a larger run.sample_ms",
) -> None:
    """Refuse (ScenarioError) a validated scenario whose run would need more
    memory than the limit. `path` is the field the message names and
    `interval` how to lengthen the sampling interval (`vmsched top` names its
    `--interval`)."""
    need = estimate_mb(data, bytes_per_row)
    limit, why = limit_mb()
    if need <= limit:
        return
    rows = series_rows(data)
    raise ScenarioError(
        f"the run would keep {rows:,} time-series rows, about {need:,.0f} MB of memory, "
        f"more than the limit of {limit:,.0f} MB ({why}); expected {interval}, "
        "a shorter run.duration_s, or a higher limit",
        file=file,
        path=path,
    )


def _size(mb: float) -> str:
    """A size in MB as a person reads it: "3.2 kB", "41 MB", "39,000 MB"."""
    if mb < 1:
        return f"{mb * 1000:,.1f} kB"
    return f"{mb:,.1f} MB" if mb < 10 else f"{mb:,.0f} MB"


def _env_mb(name: str) -> float | None:
    """A positive size in MB from the environment, None when unset."""
    text = os.environ.get(name)
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise ScenarioError(
            f'"{text}" is not a size; expected a positive number of megabytes', path=name
        )
    return value


def pilot_span(data: dict[str, Any]) -> tuple[float, float, float]:
    """(warm-up, pilot, measured) simulated seconds of a validated scenario
    tree: the pilot runs the scenario itself through its warm-up (nothing of
    which is traced) and then `pilot` seconds of traced time."""
    run = data.get("run") if isinstance(data.get("run"), dict) else {}
    duration_s = _number(run.get("duration_s"), 60.0)
    warmup_s = _number(run.get("warmup_s"), 0.0)
    measured_s = max(duration_s - warmup_s, 0.0)
    return warmup_s, min(PILOT_S, measured_s * PILOT_SHARE), measured_s


def check_traces(
    data: dict[str, Any],
    file: str | None,
    targets: dict[str, Path],
    make_sim: Callable[[str], Any],
) -> None:
    """Refuse (ScenarioError) a traced run whose traces would not fit.

    `targets` maps each trace option ("trace", "xentrace") to its file;
    `make_sim` builds a core simulation from a scenario's JSON."""
    if not targets:
        return
    warmup_s, pilot_s, measured_s = pilot_span(data)
    if pilot_s <= 0:
        return
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="vmsched-pilot-") as scratch:
        from pathlib import Path

        files = {k: Path(scratch) / p.name for k, p in targets.items()}
        sim = make_sim(json.dumps(data))
        sim.set_trace(text=files.get("trace"), xentrace=files.get("xentrace"))
        sim.run_until(int(round((warmup_s + pilot_s) * 1e9)))
        sim.finish_trace()
        pilot_bytes = sum(f.stat().st_size for f in files.values())
    need_mb = pilot_bytes * measured_s / pilot_s / 1e6
    limit = _env_mb(TRACE_LIMIT_ENV)
    if limit is not None:
        why = f"{TRACE_LIMIT_ENV}={os.environ[TRACE_LIMIT_ENV]}"
    else:
        limit, why = DEFAULT_TRACE_LIMIT_MB, f"the default; set {TRACE_LIMIT_ENV} to change it"
    folder = next(iter(targets.values())).parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    free_mb = shutil.disk_usage(folder).free / 1e6
    if free_mb < limit:
        limit, why = free_mb, f"the free space in {folder}"
    if need_mb <= limit:
        return
    option = "--" + next(iter(targets))
    raise ScenarioError(
        f"the traces would take about {_size(need_mb)} ({_size(pilot_bytes / 1e6)} in the "
        f"first {pilot_s:g} measured s, scaled to {measured_s:g} s), more than "
        f"{_size(limit)} ({why}); expected a shorter run.duration_s, fewer domains, "
        "or the run without traces",
        file=file,
        path=option,
    )
