"""What the reproductions share: how a weight ratio is written in each scheduler's
parameters, the paper workloads, reading metrics out of summary.json, and names.

**Shares.** The papers give CPU allocations as weights ("Dom0 is allocated 0.25
of the CPU allocated to Dom1"). Each scheduler says that in its own parameters,
by one rule for all experiments, which the scheduler declares in its own
registration (`shares` and `allocation` in `vmsched.catalogue()`; `shares` below
applies it):

- Credit, Credit2: `weight` proportional (the guest of reference has Xen's
  default 256); in NWC mode every domain is capped at its proportional part of
  the host, `cap = 100 x PCPUs x w / sum(w)`.
- SEDF: each domain reserves `slice = period x w / sum(w)` of every period, per
  VCPU, so the slices of the domains sharing a PCPU add up to the whole period
  (Cherkasova et al.'s "Conf 1" entitles each domain to at most 50 % in NWC
  mode); `extratime` on in WC mode, off in NWC mode. Slices are rounded down to
  whole microseconds so that they never add up to more than the period.
- BVT: `mcuadv` is the inverse of a weight: `mcuadv = 40 x w_ref / w` (40 so that
  every ratio the papers use, 0.25 to 4, gives a whole number). BVT has no NWC mode.

These are configuration, the same for every experiment and ratio; nothing here
is tuned per scheduler to make a result come out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from vmsched.api import catalogue
from vmsched.reproduce.framework import Params, fmt_value
from vmsched.scheduler import is_spec, register

#: Where the explanations of the Cherkasova and dynamic-weight claims come from (the report
#: says so above the claims; docs/reproduce.md has the run times and the sensitivity runs):
#: their reasoning; the numbers they quote are the run's own (`explain`), or name their run.
EXPLAINED_FROM = (
    "the full-length runs (`vmsched reproduce`) and targeted runs of the model from commit "
    "0b42cec to commit 5f7a47b"
)

#: The platform profiles of the testbeds.
CHERKASOVA_PROFILE = "cherkasova2007"
THESIS_PROFILE = "thesis2015"

#: iperf's receive window on the 2006 testbeds (Cherkasova et al. 2007 and the chapter that
#: mirrors it), derived from the tool and the guest kernel, not from any result: iperf 2
#: sets `SO_RCVBUF` only when given `-w`, and neither paper gives one, so the guest's
#: Linux 2.6.16 (the kernel of the Xen 3.0.x trees) autotunes the receive buffer
#: (`tcp_moderate_rcvbuf` = 1, on since 2.6.7) from `tcp_rmem[1]` = 87 380 bytes up to
#: `tcp_rmem[2]` = 2 x 87 380 = 174 760 bytes (`net/ipv4/tcp.c`; sizing the maximum from
#: memory came in 2.6.17). A bulk stream that outruns the window keeps growing it, so the
#: stream runs at the maximum; `tcp-stream` takes the socket buffer as the window
#: (`recv_socket_bytes`), as its default of 87 380 does.
IPERF_RECV_SOCKET_BYTES = 174_760

#: The connections the web server of those testbeds can hold (the web-server workload's
#: `backlog`: from the SYN the guest's kernel answers to the close), derived from the
#: server's and the kernel's code and shipped configuration, not from any result. Apache 2
#: "multi-process" is the prefork MPM: each connection in service holds one server
#: process, at most `MaxClients` = 150 (Apache 2.0's shipped httpd.conf); connections the
#: kernel has established and no process has accepted yet wait in the listen queue, whose
#: length is Apache's `ListenBacklog` (511 by default) capped by Linux's
#: `net.core.somaxconn` = `SOMAXCONN` = 128 (Linux 2.6.16). A SYN arriving while both are
#: full is dropped, which httperf counts as an error. 128 + 150 = 278.
WEB_HELD_CONNECTIONS = 128 + 150


#: The built-in schedulers' catalogue entries, read once: building a grid and labelling
#: its rows ask for them hundreds of times, and the catalogue (JSON from the core) takes
#: milliseconds to read. A user's scheduler is always named by its spec (`file.py:Class`),
#: so a name that is not a spec and not here is no scheduler at all.
_BUILT_IN: dict[str, dict[str, Any]] = {}


def _info(scheduler: str) -> dict[str, Any]:
    """The scheduler's catalogue entry (a user's scheduler is loaded first)."""
    if is_spec(scheduler):
        register(scheduler)
        for s in catalogue()["schedulers"]:
            if s["name"] == scheduler:
                return s
    else:
        if not _BUILT_IN:
            _BUILT_IN.update(
                (s["name"], s) for s in catalogue()["schedulers"] if not is_spec(s["name"])
            )
        if scheduler in _BUILT_IN:
            return _BUILT_IN[scheduler]
    raise ValueError(f"no scheduler {scheduler!r}")


def shares(
    scheduler: str,
    weights: Sequence[float],
    *,
    mode: str = "wc",
    period_ms: float | None = None,
    pcpus: int = 1,
) -> list[dict[str, Any]]:
    """The `[domain.sched]` parameters giving domains CPU in proportion to `weights`
    (the last weight is the reference, usually the guest's), in WC or NWC mode, as
    the scheduler declares it does (`shares` in the catalogue; NWC caps with its
    declared `allocation` of each domain's share of the host)."""
    if mode not in ("wc", "nwc"):
        raise ValueError(f"mode {mode!r}: expected wc or nwc")
    info = _info(scheduler)
    rule = info.get("shares")
    if rule is None:
        raise ValueError(f"no share rule for scheduler {scheduler!r}")
    total = sum(weights)
    ref = weights[-1]
    if rule["kind"] == "weight":
        out = []
        for w in weights:
            p: dict[str, Any] = {rule["param"]: round(rule["base"] * w / ref)}
            if mode == "nwc":
                p.update(_capped(info, 100 * pcpus * w / total))
            out.append(p)
        return out
    if rule["kind"] == "reservation":
        if period_ms is None:
            raise ValueError(f"{scheduler} needs a period")
        return [
            {
                rule["period"]: period_ms,
                rule["slice"]: math.floor(period_ms * w / total * 1000) / 1000,
                rule["extra"]: mode == "wc",
            }
            for w in weights
        ]
    if mode != "wc":
        raise ValueError(f"{scheduler} has no NWC mode")
    return [{rule["param"]: round(rule["base"] * ref / w)} for w in weights]


def _capped(info: dict[str, Any], pct: float) -> dict[str, Any]:
    """The parameters of the scheduler's allocation that scale with A (its cap),
    rounded to whole numbers, for A = `pct`."""
    alloc = info.get("allocation") or {}
    scaled = [p for p in alloc.get("domain", []) if "share_of" in p]
    if not scaled:
        raise ValueError(f"{info['name']} has no NWC mode")
    return {p["name"]: round(pct / 100 * p["share_of"]) for p in scaled}


# ----- summary.json -------------------------------------------------------------------------


def domain(summary: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """One domain of a summary, by name."""
    for d in summary["domains"]:
        if d["name"] == name:
            return d
    raise KeyError(f"no domain {name!r} in the summary")


def workload_metric(summary: Mapping[str, Any], name: str, metric: str) -> float:
    """A workload metric of one domain (NaN if the workload does not report it)."""
    value = domain(summary, name).get("workload", {}).get(metric)
    return float(value) if isinstance(value, int | float) else float("nan")


def disk_busy_pct(summary: Mapping[str, Any]) -> float:
    """The share of the measured time the host's disk was serving a request (NaN if the
    summary does not report it)."""
    value = summary.get("host", {}).get("io", {}).get("disk_busy_pct")
    return float(value) if isinstance(value, int | float) else float("nan")


def xenmon(summary: Mapping[str, Any], name: str, metric: str) -> float:
    """A XenMon metric of one domain (cpu_pct, exec_per_s, io_per_exec, ...); CPU % falls
    back to the domain's cpu_pct."""
    d = domain(summary, name)
    value = d.get("xenmon", {}).get(metric)
    if value is None and metric == "cpu_pct":
        value = d.get("cpu_pct")
    return float(value) if isinstance(value, int | float) else float("nan")


# ----- names --------------------------------------------------------------------------------

_PARAM_TEXT = {
    "mode": lambda v: str(v).upper() if str(v) in ("wc", "nwc") else str(v),
    "ctx_allow_ms": lambda v: f"C = {fmt_value(v)} ms",
    "period_ms": lambda v: f"P = {fmt_value(v)} ms",
    "dom0_weight_ratio": lambda v: f"Dom0/guest weight {fmt_value(v)}",
    "guests": lambda v: f"{fmt_value(v)} guest{'s' if str(v) != '1' else ''}",
    "workload": fmt_value,
    "case": fmt_value,
    "setup": fmt_value,
    "dom0": lambda v: f"Dom0 {fmt_value(v)}",
    "message_mb": lambda v: f"{fmt_value(v)} MB messages",
}


def _title(scheduler: str) -> str:
    """The scheduler's name in reports (`Credit2`); the name itself when it has none."""
    try:
        return _info(scheduler).get("title") or scheduler
    except ValueError:
        return scheduler


def label(scheduler: str, params: Params) -> str:
    """`BVT C = 5 ms`, `SEDF WC P = 10 ms`, `Credit NWC web`: a variant's name."""
    parts = [_title(scheduler)]
    for key in ("mode", "ctx_allow_ms", "period_ms"):
        if key in params:
            parts.append(_PARAM_TEXT[key](params[key]))
    for key in sorted(params):
        if key in ("mode", "ctx_allow_ms", "period_ms"):
            continue
        text = _PARAM_TEXT.get(key)
        parts.append(text(params[key]) if text else f"{key}={fmt_value(params[key])}")
    return " ".join(parts)
