"""Which resource limits each run, and which swept parameters change nothing.

**Binding resource.** Every configuration of a reproduction is read for the
resource that limits it, measured from its own summary (the first seed's):

- a **cap or reservation**: a domain using at least 95 % of its Credit `cap`
  (percent of one PCPU) or of its SEDF reservation without extra time
  (`slice / period` per VCPU);
- the **link**: the bytes the guests sent and received (xentop's `netrx_kb`,
  `nettx_kb`) over the run at 90 % or more of the NIC's rate;
- the **disk**: the sectors read and written, at the disk's transfer rate, 90 %
  or more of the run (a lower bound on the disk's busy time: seeks excluded);
- the **CPU**: the PCPUs 95 % busy or more; it is **Dom0's share** when the
  driver domain also waits runnable 10 % of the time or more (its scheduler, not
  its demand, holds it back);
- the **TCP window**: a workload reporting the time it was window-limited
  (`window_limited_pct`) at 50 % or more;
- otherwise **latency or load**: nothing saturates, so the workload's own
  pacing (closed-loop clients, one synchronous request at a time, blocking on
  the driver domain's turn) sets the rate. The statement gives the busy
  fractions that show it.

The thresholds are fixed here, the same for every experiment.

**Flat sweeps.** A numeric parameter the grid varies, with everything else
fixed, that changes no metric by more than 2 % (largest minus smallest, over
the larger) is flagged: a setup defect to be found against the paper's text,
unless the experiment records, in `Experiment.flat_explained`, the paper's own
reason for the flat curve. Where the paper's text says the parameter moves the
results and no setup defect was found, the experiment records the measured
cause in `Experiment.flat_missed`: the sweep stays flagged, as a miss.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: A domain at this fraction of its cap or reservation is held by it.
CAP_FRACTION = 0.95
#: The PCPUs are saturated at this mean busy percentage.
CPU_SATURATED_PCT = 95.0
#: The driver domain waiting runnable this share of the time is held back by its share.
DOM0_WAIT_PCT = 10.0
#: The link or the disk is the limit at this busy percentage.
DEVICE_BUSY_PCT = 90.0
#: A workload window-limited this share of the time is limited by the TCP window.
WINDOW_LIMITED_PCT = 50.0
#: A sweep changing no metric by more than this relative amount is flat.
FLAT_REL = 0.02


@dataclass(frozen=True)
class Binding:
    """The limiting resource of one configuration, with the measurements behind it."""

    scheduler: str
    key: str
    resource: str
    evidence: str


def _pct(x: float) -> str:
    return f"{x:.0f} %" if x >= 10 else f"{x:.1f} %"


def _limit_pct(d: Mapping[str, Any]) -> tuple[str, float] | None:
    """(what, percent of one PCPU) of a domain's cap or reservation, if it has one."""
    sched = d.get("sched", {}) or {}
    vcpus = len(d.get("vcpus", [])) or 1
    cap = sched.get("cap")
    if isinstance(cap, int | float) and cap > 0:
        return "cap", float(cap)
    period, slice_ = sched.get("period"), sched.get("slice")
    if (
        sched.get("extratime") is False
        and isinstance(period, int | float)
        and isinstance(slice_, int | float)
        and period > 0
    ):
        return "reservation", 100.0 * vcpus * slice_ / period
    return None


def binding(summary: Mapping[str, Any]) -> tuple[str, str]:
    """(resource, evidence) for one run's summary (see the module's docstring); a cluster's
    is each host's, named by host when they differ."""
    hosts = summary.get("hosts")
    if isinstance(hosts, list) and hosts:
        each = [(str(h.get("name", i)), *_host_binding(h)) for i, h in enumerate(hosts)]
        kinds = {r for _, r, _ in each}
        if len(kinds) == 1:
            name, resource, evidence = each[0]
            return resource, f"every host; {name}: {evidence}"
        return "mixed", "; ".join(f"{n}: {r} ({e})" for n, r, e in each)
    return _host_binding(summary)


def _host_binding(summary: Mapping[str, Any]) -> tuple[str, str]:
    host = summary.get("host", {})
    io = host.get("io", {}) or {}
    measured_s = float(summary.get("measured_s") or summary.get("duration_s") or 0) or 1.0
    busy = [float(p.get("busy_pct", 0)) for p in host.get("pcpus_detail", [])]
    cpu_busy = sum(busy) / len(busy) if busy else 0.0
    domains = summary.get("domains", [])

    net_kb = sum(
        max(
            float(d.get("xentop", {}).get("netrx_kb", 0)),
            float(d.get("xentop", {}).get("nettx_kb", 0)),
        )
        for d in domains
        if not d.get("driver")
    )
    nic_mbit = float(io.get("nic_mbit") or 0)
    link_pct = 100 * net_kb * 1024 * 8 / (nic_mbit * 1e6 * measured_s) if nic_mbit else 0.0
    sectors = sum(
        float(d.get("xentop", {}).get("vbd_rsect", 0))
        + float(d.get("xentop", {}).get("vbd_wsect", 0))
        for d in domains
    )
    disk_mb_s = float(io.get("disk_transfer_mb_s") or 0)
    disk_pct = 100 * sectors * 512 / (disk_mb_s * 1e6 * measured_s) if disk_mb_s else 0.0
    measured = f"host {_pct(cpu_busy)} busy, link {_pct(link_pct)}, disk {_pct(disk_pct)}"

    held = []
    for d in domains:
        limit = _limit_pct(d)
        if limit is None:
            continue
        what, pct = limit
        used = float(d.get("cpu_pct", 0))
        if pct > 0 and used >= CAP_FRACTION * pct:
            held.append(f"{d['name']} at {_pct(used)} of its {_pct(pct)} {what}")
    if held:
        return "cap/reservation", "; ".join(held) + f" ({measured})"
    if link_pct >= DEVICE_BUSY_PCT:
        return "link", measured
    if disk_pct >= DEVICE_BUSY_PCT:
        return "disk", measured
    window = [
        (d["name"], float(d["workload"]["window_limited_pct"]))
        for d in domains
        if isinstance(d.get("workload", {}).get("window_limited_pct"), int | float)
    ]
    limited = [(n, w) for n, w in window if w >= WINDOW_LIMITED_PCT]
    if limited:
        parts = "; ".join(f"{n} window-limited {_pct(w)} of the time" for n, w in limited)
        return "TCP window", f"{parts} ({measured})"
    if cpu_busy >= CPU_SATURATED_PCT:
        waits = [
            (d["name"], float(d.get("runnable_pct", 0)))
            for d in domains
            if d.get("driver") and float(d.get("runnable_pct", 0)) >= DOM0_WAIT_PCT
        ]
        if waits:
            n, w = waits[0]
            return "Dom0's share", f"CPU saturated and {n} runnable-waiting {_pct(w)} ({measured})"
        return "CPU", measured
    return "latency/load", f"nothing saturated: {measured}"


def bindings(runs: Sequence[Any], summaries: Sequence[Mapping[str, Any]]) -> list[Binding]:
    """The binding resource of every configuration, from its first replication."""
    seen: dict[tuple[str, str], Binding] = {}
    for run, summary in zip(runs, summaries, strict=True):
        k = (run.scheduler, run.key)
        if k in seen:
            continue
        resource, evidence = binding(summary)
        seen[k] = Binding(run.scheduler, run.key, resource, evidence)
    return list(seen.values())


@dataclass(frozen=True)
class Sweep:
    """One numeric parameter varied with everything else fixed."""

    param: str
    #: The fixed part: scheduler and the other parameters.
    where: str
    values: tuple[str, ...]
    #: The largest relative change of any metric along the sweep, and that metric.
    largest_change: float
    metric: str

    @property
    def flat(self) -> bool:
        return self.largest_change <= FLAT_REL


def _number(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


def sweeps(rows: Sequence[Any]) -> list[Sweep]:
    """Every numeric sweep of a results table (rows with `scheduler`, `params`, `metric`,
    `simulated`), with the largest change of any metric along it."""
    params = sorted({k for r in rows for k in r.params})
    out = []
    for p in params:
        groups: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
        for r in rows:
            if p not in r.params or _number(r.params[p]) is None:
                continue
            if not math.isfinite(r.simulated):
                continue
            rest = ";".join(f"{k}={v}" for k, v in sorted(r.params.items()) if k != p)
            g = groups.setdefault((r.scheduler, rest), {})
            g.setdefault(r.metric, {})[r.params[p]] = r.simulated
        for (sched, rest), metrics in groups.items():
            xs = sorted({x for m in metrics.values() for x in m}, key=lambda v: float(v))
            if len(xs) < 2:
                continue
            best, best_metric = 0.0, ""
            for metric, by_x in metrics.items():
                vals = list(by_x.values())
                if len(vals) < 2:
                    continue
                hi, lo = max(vals), min(vals)
                scale = max(abs(hi), abs(lo))
                change = (hi - lo) / scale if scale > 0 else 0.0
                if change > best:
                    best, best_metric = change, metric
            where = f"{sched} {rest}".strip()
            out.append(Sweep(p, where, tuple(xs), best, best_metric))
    return out
