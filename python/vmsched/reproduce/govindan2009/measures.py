"""Reading a Govindan et al. 2009 run's summary: the domains' CPU and executions, TPC-W's
and the media server's numbers, the comm-aware scheduler's preferred decisions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vmsched.reproduce.checks import ratio
from vmsched.reproduce.framework import Params, Run, Table, params_key
from vmsched.reproduce.govindan2009.setups import (
    BVT,
    COMM,
    SEDF,
    STREAM_CLIENTS,
)
from vmsched.reproduce.setups import label as base_label


def domains(s: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    """Every domain called `name` (one per host in a cluster)."""
    found = [d for d in s["domains"] if d["name"] == name]
    if not found:
        raise KeyError(f"no domain {name!r} in the summary")
    return found


def domain(s: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The first domain called `name`."""
    return domains(s, name)[0]


def workload_of(s: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The workload summary of domain `name`."""
    return domain(s, name).get("workload", {})


def as_float(value: Any) -> float:
    """A summary number as a float; NaN when it is absent or not a number."""
    return float(value) if isinstance(value, int | float) else float("nan")


def cpu_pct(s: Mapping[str, Any], name: str) -> float:
    """XenMon's CPU share of domain `name`, in %."""
    return as_float(domain(s, name)["xenmon"]["cpu_pct"])


def exec_per_s(s: Mapping[str, Any], name: str) -> float:
    """XenMon's executions per second of domain `name`."""
    return as_float(domain(s, name)["xenmon"]["exec_per_s"])


def ctx_switches_s(s: Mapping[str, Any]) -> float:
    """Domain context switches per second (XenMon's executions, all domains); per host
    in a cluster (the mean over hosts)."""
    hosts = max(1, len({d.get("host") for d in s["domains"]}))
    return sum(as_float(d["xenmon"]["exec_per_s"]) for d in s["domains"]) / hosts


def hog_names(s: Mapping[str, Any]) -> list[str]:
    """The CPU-bound neighbours (`cpu1`, `cpu2`, ...)."""
    return [d["name"] for d in s["domains"] if d["name"].startswith("cpu")]


def hog_metrics(s: Mapping[str, Any]) -> dict[str, float]:
    """Each CPU-bound neighbour's CPU, their total and the least."""
    hogs = hog_names(s)
    if not hogs:
        return {}
    cpus = {f"{h}_cpu_pct": cpu_pct(s, h) for h in hogs}
    return {
        **cpus,
        "hogs_cpu_pct": sum(cpus.values()),
        "hog_min_cpu_pct": min(cpus.values()),
    }


def tpcw_metrics(s: Mapping[str, Any]) -> dict[str, float]:
    """TPC-W's numbers; the response times of a class (or of all requests) are left out
    when none completed in the measured run (there is no response time to report)."""
    front = workload_of(s, "jboss")
    out = {
        "throughput_req_s": as_float(front.get("throughput_req_s")),
        "front_cpu_pct": cpu_pct(s, "jboss"),
        "db_cpu_pct": cpu_pct(s, "mysql"),
    }
    if front.get("completed"):
        resp = front.get("response_ms", {})
        out["response_mean_ms"] = as_float(resp.get("mean"))
        out["response_p95_ms"] = as_float(resp.get("p95"))
        out["response_max_ms"] = as_float(resp.get("max"))
    r2 = front.get("classes", {}).get("r2", {})
    if r2.get("completed"):
        out["r2_mean_ms"] = as_float(r2.get("response_ms", {}).get("mean"))
        out["r2_max_ms"] = as_float(r2.get("response_ms", {}).get("max"))
    return out


def stream_metrics(s: Mapping[str, Any]) -> dict[str, float]:
    """The media server's numbers: underruns, clients within the SLO, transmission
    times, data delivered, its CPU."""
    w = workload_of(s, "media")
    transmit = w.get("transmit_ms", {})
    total = as_float(w.get("underruns_total"))
    clients = len(w.get("underruns", [])) or STREAM_CLIENTS
    measured = as_float(s["measured_s"])
    # The mean playing time between underruns per client; a run without any is censored at
    # the run's length.
    ttu = measured * clients / total if total and total > 0 else measured
    return {
        "underruns_mean": as_float(w.get("underruns_mean")),
        "clients_within_slo": as_float(w.get("clients_within_slo")),
        "transmit_mean_ms": as_float(transmit.get("mean")),
        "transmit_p95_ms": as_float(transmit.get("p95")),
        "time_to_underrun_s": ttu,
        "stream_mbit_s": as_float(w.get("throughput_mbit_s")),
        "media_cpu_pct": cpu_pct(s, "media"),
    }


def label(scheduler: str, params: Params) -> str:
    """`SEDF`, `comm-aware SEDF`, `BVT (warp)`, with the varied parameters."""
    names = {SEDF: "SEDF", COMM: "comm-aware SEDF", BVT: "BVT (warp)"}
    rest = base_label("", params).strip()
    return f"{names.get(scheduler, scheduler)} {rest}".strip()


def improvement(before: float, after: float) -> float:
    """How much lower `after` is than `before`, in % of `before`."""
    return 100 * (1 - ratio(after, before))


def value(t: Table, sched: str, metric: str, **params: Any) -> float:
    """A simulated value as it is, NaN if absent or not measured: for derived rows, which
    must not fail where a claim would only be unevaluable."""
    key = params_key(params)
    for r in t.where(metric, scheduler=sched):
        if r.key == key:
            return r.simulated
    return float("nan")


#: The communicating domains whose runnable wait the explanations quote, by metric prefix.
WAITERS = {"dom0": "dom0", "front": "jboss", "db": "mysql", "media": "media"}


def waited_pct(s: Mapping[str, Any]) -> dict[str, float]:
    """XenMon's runnable-but-waiting share (% of the measured time) of Dom0 (the first
    host's in a cluster) and of each communicating application in the run."""
    out = {}
    for prefix, name in WAITERS.items():
        found = [d for d in s["domains"] if d["name"] == name]
        if found:
            out[f"{prefix}_waited_pct"] = as_float(found[0]["xenmon"]["waited_pct"])
    return out


def with_preferred(measure):
    """`measure`, plus the communicating domains' runnable waits, and the comm-aware
    scheduler's preferences and its decisions at which it may not prefer (in its runs)."""

    def wrapped(run: Run, s: dict[str, Any]) -> dict[str, float]:
        out = {**measure(run, s), **waited_pct(s)}
        if run.scheduler == COMM:
            out["preferred_decisions"] = preferred_count(s)
            out["not_eligible_decisions"] = preferred_count(s, "comm_not_eligible")
        return out

    wrapped.__module__ = measure.__module__
    return wrapped


def preferred_count(s: Mapping[str, Any], counter: str = "comm_preferred") -> float:
    """The comm-aware scheduler's `comm_preferred` decisions, or another of its counters
    (all hosts of a cluster)."""
    hosts = s.get("hosts") or [s]
    return float(sum(h.get("scheduler_counters", {}).get(counter, 0) for h in hosts))
