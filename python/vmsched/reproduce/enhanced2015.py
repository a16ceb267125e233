"""The Xen scheduler thesis (2015): its "Enhanced" credit scheduler against Credit,
Credit2 and SEDF on the thesis's disk, network, OLTP and consolidated setups
(Figs 33-40).

- `thesis2015-enhanced`: the four setups of `vmsched.reproduce.thesis2015`
  (`thesis2015-disk`, `-net`, `-oltp`, `-consolidated`), run by their own grid
  functions, with every Credit run repeated under `credit-enhanced`
  (docs/schedulers/credit-enhanced.md). Nothing about the setups is copied: a
  change there changes this experiment too.

Published: the thesis's Table 4 and Table 5 for Credit, SEDF and Credit2, and the
Enhanced scheduler's numbers from its text (near-native 98-99 %, degradation
2-4 %, netperf 90.81 and 80.47 Mbit/s). Fig. 40 (consolidated) is held back for
validation: simulated, not compared.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from vmsched.reproduce import thesis2015 as t15
from vmsched.reproduce.checks import (
    TIE_POINTS,
    above,
    decreasing,
    increasing,
    num,
    ratio,
)
from vmsched.reproduce.framework import (
    Claim,
    Experiment,
    Figure,
    Panel,
    Params,
    Published,
    Run,
    Table,
    Timing,
    Verdict,
    run_source,
)
from vmsched.reproduce.setups import label as base_label
from vmsched.scenario import Scenario

EXP_ID = "thesis2015-enhanced"
PAPER = t15.PAPER
ENHANCED = "credit-enhanced"
#: The order of the thesis's comparisons: Enhanced first, then its baselines.
SCHEDULERS = (ENHANCED, "credit2", "credit", "sedf")
BASELINES = ("credit", "sedf", "credit2")

#: The thesis2015 setups: their grids and measures, reused as they are.
SETUPS: dict[str, tuple[Callable[[Timing], list[Run]], Callable[[Run, dict], dict]]] = {
    "disk": (t15._disk_grid, t15._disk_measure),
    "net": (t15._net_grid, t15._net_measure),
    "oltp": (t15._oltp_grid, t15._oltp_measure),
    "consolidated": (t15._consolidated_grid, t15._consolidated_measure),
}

UNITS = {
    **t15.UNITS,
    "ctx_switches_s": "1/s",
    "supersedes": "decisions",
    "differs_from_credit": "decisions",
    "ratelimit_overrides": "decisions",
    "moves_to_empty_pcpu": "VCPUs",
}


def label(scheduler: str, params: Params) -> str:
    """`Enhanced`, `Credit2`, ...: the thesis's names."""
    return base_label(scheduler, {k: v for k, v in params.items() if k != "setup"})


def _grid(timing: Timing) -> list[Run]:
    """Every run of the four thesis2015 setups, and each Credit run again under
    credit-enhanced (the same scenario but for the scheduler's name; the thesis built
    Enhanced on Xen 4.4.1's Credit, so it keeps Credit's `xen_version`)."""
    runs = []
    for setup, (grid, _) in SETUPS.items():
        for base in grid(timing):
            for sched in (
                (base.scheduler, ENHANCED) if base.scheduler == "credit" else (base.scheduler,)
            ):
                params = {**base.params, "setup": setup}
                sc = Scenario(base.scenario.data, source=run_source(EXP_ID, sched, params))
                sc.data["scheduler"]["name"] = sched
                runs.append(Run(sched, params, sc))
    return runs


def _ctx_switches_s(s: dict[str, Any]) -> float:
    """Context switches per second, all VCPUs of all domains (XenMon's executions)."""
    n = sum(v["context_switches"] for d in s["domains"] for v in d["vcpus"])
    return n / float(s["measured_s"])


def _measure(run: Run, s: dict[str, Any]) -> dict[str, float]:
    values = SETUPS[str(run.params["setup"])][1](run, s)
    values["ctx_switches_s"] = _ctx_switches_s(s)
    if run.scheduler == ENHANCED:
        # How often the Enhanced rule chose another VCPU than Credit would (of which
        # where Credit's rate limit would have kept the running one, and where it
        # took another than the queue's head), and moved a queued VCPU to an idle
        # PCPU (whole run, warm-up included).
        counters = s.get("scheduler_counters", {})
        for key in (
            "differs_from_credit",
            "ratelimit_overrides",
            "supersedes",
            "moves_to_empty_pcpu",
        ):
            values[key] = float(counters.get(key, float("nan")))
    return values


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _derive(t: Table) -> list[tuple[str, dict[str, Any], str, float]]:
    """As thesis2015 derives them, for the four schedulers: the disk ratios per mode and
    their mean (`mode=all`), the netperf means over message sizes and their drops, the
    OLTP ratios."""
    out = []
    for sched in SCHEDULERS:
        near, degr = [], []
        for mode in t15.IOZONE_MODES:
            if not t.where("throughput_kb_s", scheduler=sched, setup="disk", mode=mode):
                continue
            kb = {
                case: t.get(sched, "throughput_kb_s", setup="disk", case=case, mode=mode)
                for case in t15.DISK_CASES
            }
            near.append(100 * ratio(kb["domu"], kb["dom0-native"]))
            degr.append(100 * (1 - ratio(kb["domu-dom0-stress"], kb["domu"])))
            p = {"setup": "disk", "mode": mode}
            out += [
                (sched, p, "near_native_pct", near[-1]),
                (sched, p, "degradation_pct", degr[-1]),
            ]
        p = {"setup": "disk", "mode": "all"}
        out += [
            (sched, p, "near_native_pct", _mean(near)),
            (sched, p, "degradation_pct", _mean(degr)),
        ]

        mean = {}
        for case in t15.NET_CASES:
            rows = t.where("throughput_mbit_s", scheduler=sched, setup="net", dom0=case)
            mean[case] = _mean([r.simulated for r in rows if "message_mb" in r.params])
            out.append((sched, {"setup": "net", "dom0": case}, "throughput_mbit_s", mean[case]))
        for case in t15.NET_CASES[1:]:
            drop = 100 * (1 - ratio(mean[case], mean["idle"]))
            out.append((sched, {"setup": "net", "dom0": case}, "drop_pct", drop))

        tps = {
            case: t.get(sched, "transactions_s", setup="oltp", case=case) for case in t15.OLTP_CASES
        }
        out.append(
            (
                sched,
                {"setup": "oltp", "case": "domu"},
                "domu_vs_native_pct",
                100 * ratio(tps["domu"], tps["dom0-native"]),
            )
        )
        out.append(
            (
                sched,
                {"setup": "oltp", "case": "domu-dom0-stress"},
                "drop_pct",
                100 * (1 - ratio(tps["domu-dom0-stress"], tps["domu"])),
            )
        )
    return out


# ----- the published numbers -------------------------------------------------------------------


def _published() -> tuple[Published, ...]:
    out = []
    disk = {"setup": "disk", "mode": "all"}
    near = {"credit": 93, "sedf": 97, "credit2": (94, 99)}
    degr = {"credit": (4, 5), "sedf": (41, 45), "credit2": (4, 6)}
    for sched in BASELINES:
        out.append(Published("Table 4", sched, disk, "near_native_pct", near[sched]))
        out.append(Published("Table 4", sched, disk, "degradation_pct", degr[sched]))
    out.append(Published("§5, Figs 33-34", ENHANCED, disk, "near_native_pct", (98, 99)))
    out.append(Published("§5, Figs 35-36", ENHANCED, disk, "degradation_pct", (2, 4)))
    net = {
        "credit": (87.85, 72.71, 71.63),
        "sedf": (89.30, 63.55, 69.65),
        "credit2": (91.05, 79.15, 84.57),
    }
    for sched, values in net.items():
        for case, v in zip(t15.NET_CASES, values, strict=True):
            p = {"setup": "net", "dom0": case}
            out.append(Published("Table 5", sched, p, "throughput_mbit_s", v))
    for case, v in (("idle", 90.81), ("cpu-stress", 80.47)):
        p = {"setup": "net", "dom0": case}
        out.append(Published("§5, Figs 37-38", ENHANCED, p, "throughput_mbit_s", v))
    out.append(
        Published(
            "Appendix A (mean of 10)",
            "credit",
            {"setup": "oltp", "case": "dom0-native"},
            "transactions_s",
            1013.7,
        )
    )
    return tuple(out)


# ----- the claims --------------------------------------------------------------------------------


#: The thesis's contended runs: the guest's benchmark while Dom0 runs the CPU test or
#: its own disk I/O, and the consolidated server.
CONTENDED: tuple[tuple[str, dict[str, Any]], ...] = (
    ("disk, Dom0 stressed", {"setup": "disk", "case": "domu-dom0-stress"}),
    ("netperf, Dom0 stressed", {"setup": "net", "dom0": "cpu-stress"}),
    ("netperf, Dom0 disk I/O", {"setup": "net", "dom0": "disk-io"}),
    ("OLTP, Dom0 stressed", {"setup": "oltp", "case": "domu-dom0-stress"}),
    ("consolidated", {"setup": "consolidated"}),
)


def decisions_text(t: Table) -> str:
    """How often the Enhanced rule chose another VCPU than Credit would from the same
    state (the scheduler's `differs_from_credit` counter; of those, `ratelimit_overrides`
    where Credit's rate limit would have kept the running VCPU), summed over each
    contended setup's runs (mean over replications, whole run)."""
    parts = []
    for name, p in CONTENDED:
        differs = sum(_over_runs(t, ENHANCED, "differs_from_credit", p))
        held = sum(_over_runs(t, ENHANCED, "ratelimit_overrides", p))
        parts.append(f"{name} {differs:.0f} ({held:.0f} past Credit's rate limit)")
    return (
        "Decisions of Enhanced that differ from Credit's in the contended runs: "
        + "; ".join(parts)
        + "."
    )


def _with_decisions(check: Callable[[Table], Verdict]) -> Callable[[Table], Verdict]:
    """`check` with the count of Enhanced's own decisions added to its text, so that
    every claim says whether the rule acted in the runs it judges."""

    def checked(t: Table) -> Verdict:
        ok, text = check(t)
        return ok, f"{text} {decisions_text(t)}"

    return checked


def _named(values: dict[str, float], unit: str = "") -> str:
    return ", ".join(f"{label(s, {})} {num(v)}{unit}" for s, v in values.items())


def _claim_44(t: Table) -> Verdict:
    near = {s: t.get(s, "near_native_pct", setup="disk", mode="all") for s in SCHEDULERS}
    e = near[ENHANCED]
    ok = (
        above(e, near["credit"], points=True)
        and above(e, near["sedf"], points=True)
        and e >= near["credit2"] - 1
    )
    return ok, (
        "DomU's IOzone rate as % of Dom0's, mean over the four modes (required: Enhanced "
        "above Credit and SEDF by more than "
        f"{TIE_POINTS:g} points, and at most 1 point below Credit2): {_named(near, ' %')}."
    )


def _claim_45(t: Table) -> Verdict:
    d = {s: t.get(s, "degradation_pct", setup="disk", mode="all") for s in SCHEDULERS}
    e = d[ENHANCED]
    others = [v for s, v in d.items() if s != ENHANCED]
    ok = e <= 10 and all(above(o, e, points=True) for o in others)
    return ok, (
        "DomU's IOzone rate lost when Dom0 runs the CPU test, mean over the four modes "
        f"(required: Enhanced the smallest, by more than {TIE_POINTS:g} points, and at most "
        f"10 %): {_named(d, ' %')}."
    )


def _claim_45_write(t: Table) -> Verdict:
    order = (ENHANCED, "credit2", "credit", "sedf")
    d = {s: t.get(s, "degradation_pct", setup="disk", mode="seq-write") for s in order}
    ok = increasing(list(d.values()), points=True)
    return ok, (
        "S-write degradation (required: Enhanced < Credit2 < Credit < SEDF, each step more "
        f"than {TIE_POINTS:g} points): {_named(d, ' %')}."
    )


def _net(t: Table, sched: str, case: str, metric: str = "throughput_mbit_s") -> float:
    return t.get(sched, metric, setup="net", dom0=case)


def _claim_47(t: Table) -> Verdict:
    v = {s: _net(t, s, "idle") for s in SCHEDULERS}
    ok = above(v[ENHANCED], v["credit"]) and not above(v[ENHANCED], v["credit2"])
    return ok, (
        "netperf with Dom0 idle, mean over message sizes (required: Enhanced above Credit, "
        f"and not above Credit2 by more than a tie; paper 90.81 vs 87.85 and 91.05): "
        f"{_named(v, ' Mbit/s')}."
    )


def _claim_48(t: Table) -> Verdict:
    order = (ENHANCED, "credit2", "credit", "sedf")
    v = {s: _net(t, s, "cpu-stress") for s in order}
    drops = {s: _net(t, s, "cpu-stress", "drop_pct") for s in order}
    ok = decreasing(list(v.values())) and increasing(list(drops.values()), points=True)
    return ok, (
        "netperf with Dom0 under CPU stress (required: Enhanced > Credit2 > Credit > SEDF; "
        f"paper 80.47, 79.15, 72.71, 63.55): {_named(v, ' Mbit/s')}; drops from Dom0 idle "
        "(required: increasing in the same order; paper 11.4, 13.1, 17.2, 28.8 %): "
        f"{_named(drops, ' %')}."
    )


def _claim_48_disk(t: Table) -> Verdict:
    drops = {s: _net(t, s, "disk-io", "drop_pct") for s in SCHEDULERS}
    e = drops[ENHANCED]
    ok = all(above(o, e, points=True) for s, o in drops.items() if s != ENHANCED)
    return ok, (
        "netperf's drop from Dom0 idle when Dom0 does disk I/O (required: Enhanced's the "
        f"smallest, by more than {TIE_POINTS:g} points): {_named(drops, ' %')}."
    )


def _tps(t: Table, sched: str, case: str) -> float:
    return t.get(sched, "transactions_s", setup="oltp", case=case)


def _claim_52(t: Table) -> Verdict:
    native = {s: _tps(t, s, "dom0-native") for s in (ENHANCED, "credit", "credit2")}
    loss = {s: 100 * (1 - ratio(_tps(t, s, "domu"), native[s])) for s in (ENHANCED, "credit2")}
    similar = all(
        abs(ratio(native[ENHANCED], native[s]) - 1) <= 0.05 for s in ("credit", "credit2")
    )
    ok = similar and above(loss["credit2"], loss[ENHANCED], points=True)
    return ok, (
        "sysbench OLTP in Dom0 (required: Enhanced within 5 % of Credit and Credit2): "
        f"{_named(native, ' tx/s')}; loss when the guest hosts it, against Dom0-native "
        f"(required: Enhanced's below Credit2's by more than {TIE_POINTS:g} points): "
        f"{_named(loss, ' %')}."
    )


#: The runs where Dom0 is idle and the guest runs the benchmark: the thesis's "idle
#: conditions".
IDLE_RUNS: tuple[tuple[str, dict[str, Any]], ...] = (
    *(("throughput_kb_s", {"setup": "disk", "case": "domu", "mode": m}) for m in t15.IOZONE_MODES),
    ("throughput_mbit_s", {"setup": "net", "dom0": "idle"}),
    ("transactions_s", {"setup": "oltp", "case": "domu"}),
)


def _geo_mean(values: list[float]) -> float:
    if not values or min(values) <= 0:
        return float("nan")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _over_runs(t: Table, sched: str, metric: str, params: dict[str, Any]) -> list[float]:
    """A metric of every run matching `params` (netperf's runs of every message size)."""
    return [r.simulated for r in t.where(metric, scheduler=sched, **params)]


def _claim_53(t: Table) -> Verdict:
    perf, ctx, parts, chosen = [], [], [], 0.0
    for metric, p in IDLE_RUNS:
        e, c = t.get(ENHANCED, metric, **p), t.get("credit", metric, **p)
        perf.append(ratio(e, c))
        parts.append(f"{p.get('mode') or p['setup']} {num(e)} vs {num(c)}")
        ce = _mean(_over_runs(t, ENHANCED, "ctx_switches_s", p))
        cc = _mean(_over_runs(t, "credit", "ctx_switches_s", p))
        ctx.append(ratio(ce, cc))
        chosen += sum(_over_runs(t, ENHANCED, "differs_from_credit", p))
    p_ratio, c_ratio = _geo_mean(perf), _geo_mean(ctx)
    ok = above(1.0, p_ratio) and above(c_ratio, 1.0)
    return ok, (
        "Dom0 idle, the guest running IOzone (four modes), netperf and OLTP: Enhanced vs "
        f"Credit {'; '.join(parts)}; geometric mean ratio of performance {p_ratio:.3f} "
        f"(required below 1 by more than a tie) and of context switches per second "
        f"{c_ratio:.3f} (required above 1 by more than a tie); the Enhanced rule chose "
        f"another VCPU than Credit's {chosen:.0f} times in these runs."
    )


def _figures() -> tuple[Figure, ...]:
    scheds = {"scheduler": SCHEDULERS}
    return (
        Figure(
            file="fig33-36-disk.png",
            title="Figs 33-36: IOzone near-native ratio (Dom0 idle) and degradation (Dom0 "
            "stressed)",
            x="mode",
            xlabel="IOzone mode (all = mean)",
            panels=(
                Panel("near-native (% of Dom0)", "near_native_pct", {"setup": "disk", **scheds}),
                Panel(
                    "degradation with Dom0 stressed (%)",
                    "degradation_pct",
                    {"setup": "disk", **scheds},
                ),
            ),
            kind="bar",
        ),
        Figure(
            file="fig37-38-netperf.png",
            title="Figs 37-38: DomU netperf throughput by what Dom0 does (mean over sizes)",
            x="dom0",
            xlabel="Dom0",
            panels=(
                Panel("throughput", "throughput_mbit_s", {"setup": "net", **scheds}),
                Panel("drop from Dom0 idle", "drop_pct", {"setup": "net", **scheds}),
            ),
            kind="bar",
        ),
        Figure(
            file="fig39-oltp.png",
            title="Fig. 39: sysbench OLTP transactions/s",
            x="case",
            xlabel="where sysbench runs / what Dom0 does",
            panels=(Panel("OLTP", "transactions_s", {"setup": "oltp", **scheds}),),
            kind="bar",
        ),
        Figure(
            file="fig40-consolidated.png",
            title="Fig. 40: consolidated server",
            x="setup",
            xlabel="",
            panels=(
                Panel("Dom0 IOzone S-write", "dom0_throughput_kb_s", scheds),
                Panel("Dom1 netperf", "dom1_throughput_mbit_s", scheds),
                Panel("Dom2 sysbench OLTP", "dom2_transactions_s", scheds),
            ),
            kind="bar",
        ),
    )


#: Why each claim is or is not reproduced; written from the full run (`vmsched reproduce
#: thesis2015-enhanced`, see docs/reproduce-proposals.md). The texts are templates: every
#: `{name}` is a number of this run that `_explain` computes from the results table; a
#: number from another run says which run it comes from.
_SAME = (
    "The Enhanced rule acts in the thesis's contended runs: it deschedules the running VCPU "
    "at every decision (no Credit rate-limit hold, the thesis's `enhanced_schedule`) and runs "
    "the queued VCPU with the most remaining credit, and in this run its choice differs "
    "from Credit's {d_net_stress} times in netperf with Dom0 stressed (mean per seed, "
    "summed over the message sizes; {h_net_stress} of them past "
    "Credit's rate limit: the guest's VCPU preempting the CPU test at once), {d_oltp} times "
    "in OLTP with Dom0 stressed, {d_consolidated} in the consolidated server and "
    "{d_net_disk} in netperf with Dom0 doing disk I/O (summed likewise); {d_disk} in IOzone "
    "with Dom0 stressed, {h_disk} of them past Credit's rate limit, where the guest's VCPU "
    "wakes about once per 1 MiB record, after the CPU test has run longer than the rate "
    "limit, so Credit preempts at once too. Whether those "
    "decisions change a result depends on the setup: "
)
_SENSITIVITY = t15.OTHER_RUN_SENSITIVITY.format(exp="thesis2015-net")
EXPLANATIONS = {
    "44": _SAME + "with Dom0 idle the four schedulers give near-native ratios of {near} % "
    "(Credit: {near_seq} % sequential, {near_rand} % random; paper Credit 93, SEDF 97, "
    "Credit2 94-99, Enhanced 98-99 %): the guest's I/O never waits for a PCPU, and the ratio "
    "is set by the I/O path alone (the guest's block front end splits a 1 MB record into "
    "44 KiB requests, Dom0's own IOzone issues 512 KiB ones). The paper's spread between "
    "schedulers is not produced by the model.",
    "45": _SAME + "Dom0's CPU test costs the guest's disk I/O almost nothing under any "
    "scheduler: {degr} % (paper 2-4, 4-6, 4-5 and 41-45 %). "
    "Dom0's backends, kernel threads, preempt its CPU test as soon as a request wakes them "
    "(CFS), and the guest's VCPU waits about once per 1 MiB record (thesis2015-disk, claim "
    "45), so Enhanced has nothing left to win.",
    "45-write": _SAME + "S-write degradations are {w} % (the ranking needs steps of more "
    "than {tie} points): the same near-zero effect as claim 45, so there is no ranking to "
    "reproduce.",
    "47": _SAME + "with Dom0 idle the schedulers send {idle} Mbit/s, at the 100 Mbit/s "
    "link's payload rate with Linux's TCP timestamp option on every segment (94.15 Mbit/s): "
    "the stream is link-bound, so no scheduler can be above another (paper 87.85-91.05).",
    "48": _SAME + "with Dom0 under CPU stress the stream still runs at the link's rate: "
    "{stress} Mbit/s, drops of {stress_drop} %, against the paper's 80.47, 79.15, 72.71, "
    "63.55 (11-29 % drops). Enhanced's preemptions shorten the guest's waits, but netperf's "
    "autotuned buffers (thesis2015-net, claim 48) cover every wait of every scheduler, "
    "Credit's longest ({credit_longest_ms} ms, 1-MB messages) included, so there is nothing "
    "for Enhanced to remove. With the send buffer fixed at Table 3's printed 16 384 bytes "
    "(a setup alternative, from " + _SENSITIVITY + ") Credit lost 14.6 % through its 1-ms "
    "rate limit, which Enhanced, overriding it, does not.",
    "48-disk": _SAME + "with Dom0 writing to disk the stream's drops are {disk_drop} % "
    "(paper Credit2 7.1, Credit 18.5, SEDF 22.0 %): Dom0's IOzone waits on the disk, not "
    "on the CPU, and its backends and the guest never contend for a PCPU.",
    "52": _SAME + "OLTP in Dom0 runs {native_range} tx/s under the four (the first half of "
    "the claim needs them within 5 %); in the guest Enhanced loses {loss_enh} %, Credit "
    "{loss_credit} %, Credit2 {loss_credit2} % against Dom0-native: Enhanced's preemption "
    "lets the commit's blkback in at once where Credit's rate limit holds it, and so does "
    "Credit2 (Xen 4.4's, which has no rate limit), {gap} points from Enhanced, against "
    "the {tie}-point tie the claim needs (with the variabilities at 0, Credit2 lost 4.31 % "
    "run as of 4.8, with its 1-ms rate limit, and 4.20 % as of 4.4, in "
    + t15.OTHER_RUN_TARGETED.format(
        config="thesis2015-oltp DomU",
        change='the variabilities at 0, Credit2 as of "4.8" and "4.4"',
    )
    + "). In the runs of an earlier round, before Credit2's tickle was modelled, Credit2 "
    "lost 8.6 % here and the claim held; that was a defect.",
    "53": _SAME + "with Dom0 idle Enhanced makes {ctx_more} % more context switches per "
    "second than Credit (geometric mean over the idle runs), and its performance ratio to "
    "Credit is {perf_ratio}: OLTP {oltp_enh} against {oltp_credit} tx/s (Dom0's blkback "
    "preempts the guest's busy VCPUs at once instead of after Credit's rate limit), the "
    "other runs {others}. vmsched charges each decision "
    "and switch its profile cost (`sched_invoke_ns`, `ctx_switch_ns`, the refill), the "
    "same for every scheduler; at these rates that is less than what the faster commits "
    "gain.",
}


def _explain(t: Table) -> dict[str, str]:
    """The numbers EXPLANATIONS quote, from this run's table."""
    f = t15._f
    out: dict[str, str] = {"tie": f"{TIE_POINTS:g}"}
    for key, p in (
        ("disk", {"setup": "disk", "case": "domu-dom0-stress"}),
        ("net_stress", {"setup": "net", "dom0": "cpu-stress"}),
        ("net_disk", {"setup": "net", "dom0": "disk-io"}),
        ("oltp", {"setup": "oltp", "case": "domu-dom0-stress"}),
        ("consolidated", {"setup": "consolidated"}),
    ):
        out[f"d_{key}"] = f(sum(_over_runs(t, ENHANCED, "differs_from_credit", p)), 0)
        out[f"h_{key}"] = f(sum(_over_runs(t, ENHANCED, "ratelimit_overrides", p)), 0)

    def each(values: dict[str, float], digits: int = 2) -> str:
        return ", ".join(f"{label(s, {})} {f(v, digits)}" for s, v in values.items())

    order = (ENHANCED, "credit2", "credit", "sedf")
    out["near"] = each({s: t.get(s, "near_native_pct", setup="disk", mode="all") for s in order}, 1)
    near = {m: t.get("credit", "near_native_pct", setup="disk", mode=m) for m in t15.IOZONE_MODES}
    out["near_seq"] = f((near["seq-read"] + near["seq-write"]) / 2, 1)
    out["near_rand"] = f((near["rand-read"] + near["rand-write"]) / 2, 1)
    out["degr"] = each({s: t.get(s, "degradation_pct", setup="disk", mode="all") for s in order})
    out["w"] = each({s: t.get(s, "degradation_pct", setup="disk", mode="seq-write") for s in order})
    out["idle"] = each({s: _net(t, s, "idle") for s in order})
    out["stress"] = each({s: _net(t, s, "cpu-stress") for s in order})
    out["stress_drop"] = each({s: _net(t, s, "cpu-stress", "drop_pct") for s in order})
    out["disk_drop"] = each({s: _net(t, s, "disk-io", "drop_pct") for s in order})
    longest = t.get("credit", "domu_wait_max_us", setup="net", dom0="cpu-stress", message_mb=1)
    out["credit_longest_ms"] = f(longest / 1000, 1)
    native = [_tps(t, s, "dom0-native") for s in order]
    out["native_range"] = f"{f(min(native), 0)}-{f(max(native), 0)}"
    loss = {s: 100 * (1 - _tps(t, s, "domu") / _tps(t, s, "dom0-native")) for s in order}
    out["loss_enh"] = f(loss[ENHANCED])
    out["loss_credit"] = f(loss["credit"])
    out["loss_credit2"] = f(loss["credit2"])
    out["gap"] = f(loss["credit2"] - loss[ENHANCED])
    perf, ctx, others = [], [], []
    for metric, p in IDLE_RUNS:
        e, c = t.get(ENHANCED, metric, **p), t.get("credit", metric, **p)
        perf.append(e / c)
        ctx.append(
            _mean(_over_runs(t, ENHANCED, "ctx_switches_s", p))
            / _mean(_over_runs(t, "credit", "ctx_switches_s", p))
        )
        if p["setup"] != "oltp":
            others.append(f"{p.get('mode') or p['setup']} {f(100 * (e / c - 1))} %")
    out["ctx_more"] = f(100 * (_geo_mean(ctx) - 1), 1)
    out["perf_ratio"] = f(_geo_mean(perf), 3)
    out["oltp_enh"] = f(_tps(t, ENHANCED, "domu"), 0)
    out["oltp_credit"] = f(_tps(t, "credit", "domu"), 0)
    out["others"] = "differing from Credit's by " + ", ".join(others)
    return out


ENHANCED_EXP = Experiment(
    id=EXP_ID,
    title="the Enhanced credit scheduler vs Credit, Credit2 and SEDF: disk, net, OLTP, "
    "consolidated",
    paper=PAPER,
    source="§5, Figs 33-40 (claims 44, 45, 47, 48, 52, 53)",
    setup=(
        "The four setups of the thesis's Chapter 4, exactly as `thesis2015-disk`, "
        "`thesis2015-net`, `thesis2015-oltp` and `thesis2015-consolidated` define them "
        "(two cores, profile `thesis2015`, default scheduler parameters, 2 VCPUs per "
        "domain), each run under Credit, SEDF, Credit2 and the Enhanced scheduler "
        "(`credit-enhanced`): IOzone (4 modes) in Dom0, in the guest, and in the guest "
        "with Dom0 running the IBS CPU test; netperf from the guest (1-4 MB messages) "
        "with Dom0 idle, stressed or doing disk I/O; sysbench OLTP in Dom0, in the "
        "guest, and in the guest with Dom0 stressed; the consolidated server. 112 runs "
        "(76 with `--quick`). Derived as in those experiments (rows with `setup`), plus "
        "`ctx_switches_s`, every VCPU's context switches per second."
    ),
    decisions=(
        *t15.COMMON_DECISIONS,
        'The Enhanced scheduler keeps Credit\'s `xen_version` "4.4": the thesis built it '
        "on Xen 4.4.1's Credit, and every other setting is Credit's (weight 256, cap 0, "
        "30 ms slices); vmsched's rule and its decisions where the thesis's pseudocode "
        "cannot be run as written are in docs/schedulers/credit-enhanced.md.",
        "Every setup is taken from `vmsched.reproduce.thesis2015` (its grids and "
        "measures), so its decisions apply here: netperf message sizes 1-4 MB (1 MB with "
        "`--quick`), Dom0's heavy disk I/O = IOzone sequential writes, OLTP with "
        "1 000 000 rows, netperf 1 MB messages in the consolidated server.",
        "'Idle conditions' (claim 53) are the runs with Dom0 idle and the benchmark in the "
        "guest: IOzone in each mode, netperf (mean over sizes) and OLTP.",
    ),
    units=UNITS,
    grid=_grid,
    measure=_measure,
    derive=_derive,
    full=t15.FULL,
    quick=t15.QUICK,
    sensitivity=t15.SENSITIVITY,
    published=_published(),
    claims=(
        Claim(
            "44",
            "Enhanced's DomU reaches 98-99 % near-native disk I/O with Dom0 idle, 'on par "
            "with Credit2 and evidently better than the Credit and SEDF' (Credit 93 %, SEDF "
            "97 %, Credit2 94-99 %)",
            "§5, Figs 33-34; Table 4",
            _with_decisions(_claim_44),
            EXPLANATIONS["44"],
        ),
        Claim(
            "45",
            "Enhanced 'suffers a 2%-4% degradation in disk I/O performance' when Dom0 runs a "
            "CPU-bound load, the least of the four (Credit 4-5 %, Credit2 4-6 %, SEDF 41-45 %)",
            "§5, Figs 35-36; Table 4",
            _with_decisions(_claim_45),
            EXPLANATIONS["45"],
        ),
        Claim(
            "45-write",
            "S-write degradation: 'the enhanced scheduler is the least to deviate from its "
            "optimal performance followed by Credit2, Credit and finally SEDF'",
            "§5, Figs 35-36",
            _with_decisions(_claim_45_write),
            EXPLANATIONS["45-write"],
        ),
        Claim(
            "47",
            "Netperf with Dom0 idle: Enhanced 90.81 Mbit/s, above Credit (87.85), beside "
            "Credit2 (91.05)",
            "§5, Fig. 37; Table 5",
            _with_decisions(_claim_47),
            EXPLANATIONS["47"],
        ),
        Claim(
            "48",
            "Netperf with Dom0 CPU-bound: Enhanced 80.47 > Credit2 79.15 > Credit 72.71 > "
            "SEDF 63.55 Mbit/s; drops from idle 11.4 < 13.1 < 17.2 < 28.8 %",
            "§5, Figs 37-38; Table 5",
            _with_decisions(_claim_48),
            EXPLANATIONS["48"],
        ),
        Claim(
            "48-disk",
            "'the enhanced scheduler has the minimal performance drop when a network I/O "
            "intensive domain is competing with ... an I/O intensive domain' (Dom0 doing "
            "disk I/O)",
            "§5, Fig. 38",
            _with_decisions(_claim_48_disk),
            EXPLANATIONS["48-disk"],
        ),
        Claim(
            "52",
            "OLTP: Enhanced's Dom0-native rate 'similar to that of Credit and Credit2' "
            "(checked: within 5 %), and its loss when DomU hosts the database 'lower than "
            "Credit2'",
            "§5, Fig. 39",
            _with_decisions(_claim_52),
            EXPLANATIONS["52"],
        ),
        Claim(
            "53",
            "Enhanced's overhead: more context switches, and 'the performance of the "
            "scheduler in idle conditions is not on par with the credit scheduler'",
            "§5, abstract",
            _with_decisions(_claim_53),
            EXPLANATIONS["53"],
        ),
    ),
    figures=_figures(),
    label=label,
    explained_from=t15.THESIS_EXPLAINED_FROM,
    explain=_explain,
    alternatives=t15.ALL_ALTERNATIVES,
    note="Fig. 40 (the consolidated server) is kept for independent validation: it "
    "is simulated, not compared.",
)

EXPERIMENTS = (ENHANCED_EXP,)
