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
disk as the run goes, and a disk that fills ends the run with nothing left
behind (vmsched.output).
"""

from __future__ import annotations

import math
import os
from typing import Any

from vmsched.errors import ScenarioError

#: Peak bytes of memory per series row: 28 bytes in the core's columns (up
#: to twice that while a column grows), 28 in their copy handed to Python,
#: and about 60 in the DataFrame and while it is converted. A measured upper
#: bound (docs/cli.md, "Bounded resources").
BYTES_PER_ROW = 180

#: The default limit (MB), unless half the machine's memory is less.
DEFAULT_LIMIT_MB = 4096

#: The environment variable that sets the limit, in MB.
LIMIT_ENV = "VMSCHED_MAX_MEMORY_MB"


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
    text = os.environ.get(LIMIT_ENV)
    if text is not None:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (value > 0 and math.isfinite(value)):
            raise ScenarioError(
                f'"{text}" is not a size; expected a positive number of megabytes',
                path=LIMIT_ENV,
            )
        return value, f"{LIMIT_ENV}={text}"
    mem = machine_memory_mb()
    if mem is not None and mem / 2 < DEFAULT_LIMIT_MB:
        return mem / 2, f"half of this machine's {mem:,.0f} MB; set {LIMIT_ENV} to change it"
    return float(DEFAULT_LIMIT_MB), f"the default; set {LIMIT_ENV} to change it"


def estimate_mb(data: dict[str, Any]) -> float:
    """Peak memory (MB) the run of a validated scenario tree needs for its
    time series."""
    return series_rows(data) * BYTES_PER_ROW / 1e6


def check(data: dict[str, Any], file: str | None) -> None:
    """Refuse (ScenarioError) a validated scenario whose run would need more
    memory than the limit."""
    need = estimate_mb(data)
    limit, why = limit_mb()
    if need <= limit:
        return
    rows = series_rows(data)
    raise ScenarioError(
        f"the run would keep {rows:,} time-series rows, about {need:,.0f} MB of memory, "
        f"more than the limit of {limit:,.0f} MB ({why}); expected a larger run.sample_ms, "
        "a shorter run.duration_s, or a higher limit",
        file=file,
        path="run.sample_ms",
    )
