"""report.md of one ALERT run and of a comparison of several."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from vmsched.alert.plots import COMPARE_PLOT_FILES, PLOT_FILES, SMP_TIMESERIES_PLOT
from vmsched.alert.setup import (
    MANAGER_ERROR_PCT,
    PAPER_XEN_VERSION,
    WITHIN_PCT,
    XENBAKED_POLL_MS,
    _fmt_pct,
)

if TYPE_CHECKING:
    from vmsched.alert.experiment import CompareResult
    from vmsched.alert.results import AlertResult


# ----- reports ----------------------------------------------------------------------------------


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _f(x: float, nd: int = 1) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{nd}f}"


def _target_table(r: AlertResult) -> str:
    header = (
        ["A (%)"]
        + (["domain"] if r.smp else [])
        + [
            "mean U (%)",
            "mean Er",
            "min Er",
            "p5 Er",
            "p95 Er",
            "max Er",
            "whole-run Er",
            *(f"within ±{w} %" for w in WITHIN_PCT),
        ]
    )
    rows = []
    for row in r.targets.to_dict(orient="records"):
        rows.append(
            [_fmt_pct(row["target_pct"])]
            + ([row["domain"]] if r.smp else [])
            + [
                _f(row["mean_usage_pct"], 2),
                _f(row["mean_error_pct"]),
                _f(row["min_error_pct"]),
                _f(row["p5_error_pct"]),
                _f(row["p95_error_pct"]),
                _f(row["max_error_pct"]),
                _f(row["run_error_pct"]),
                *(f"{100 * row[f'within_{w}pct']:.0f} %" for w in WITHIN_PCT),
            ]
        )
    return _md_table(header, rows)


def _version_line(r: AlertResult) -> str:
    if r.xen_version is None:
        return f"The {r.scheduler} scheduler has no `xen_version` parameter."
    how = (
        "given on the command line"
        if r.setup["xen_version_source"] == "given"
        else f'ALERT\'s default: the paper ran Xen 3.0.3, so ALERT uses "{PAPER_XEN_VERSION}" '
        "wherever the scheduler has it, else the earliest release where it can hold an allocation"
    )
    return f'Behaviour of **Xen {r.xen_version}** (`xen_version = "{r.xen_version}"`, {how}).'


def _report(r: AlertResult) -> str:
    s = r.setup
    pooled = r.summary["all_samples"]
    n_pts = pooled["samples"]
    lines = [
        f"# ALERT: {r.label}{', SMP variant' if r.smp else ''}",
        "",
        "ALERT (ALlocation ERror Test, Cherkasova, Gupta and Vahdat 2007, §5.2) measures how "
        "accurately a scheduler holds a CPU-hungry domain to a fixed allocation A. Each second "
        "the domain's CPU usage U is sampled; the relative error is **Er = (U − A)/A**, so a "
        "positive error means the domain got *more* than its allocation and −100 % means it "
        "got nothing. (The paper prints (A − U)/A, which cannot exceed +100 % and does not fit "
        "the errors it reports; see docs/alert.md.)",
        "",
        "## Setup",
        "",
        f"- Scheduler: **{r.scheduler}**. {_version_line(r)}",
        f"- Host: {s['pcpus']} PCPU{'s' if s['pcpus'] > 1 else ''}, platform profile "
        f"`{s['host']['profile']}` (context switch {s['host']['ctx_switch_ns']} ns, IPI latency "
        f"{s['host']['ipi_latency_ns']} ns).",
        f"- Allocation of A % to a domain: {s['allocation_rule']}.",
    ]
    if r.smp:
        lines.append(
            "- Dom0, Dom1 and Dom2 each run a CPU-hungry loop (one VCPU) and are each allocated "
            f"A = {', '.join(_fmt_pct(t) for t in s['targets_pct'])} %; the error of every domain "
            "is reported (paper: 66 % each, 10 min)."
        )
    else:
        d0 = s["dom0"]
        load = {
            "xenmon": "a light periodic load standing for XenMon: busy "
            f"{_fmt_pct(d0.get('util_pct', 0))} % "
            f"of every {_fmt_pct(XENBAKED_POLL_MS)} ms (xenbaked's poll interval)",
            "hog": "a CPU-hungry loop (Dom0 always wants more than its allocation)",
            "idle": "nothing (Dom0 stays blocked)",
        }[d0["load"]]
        lines += [
            f"- Dom0: allocated {_fmt_pct(d0['allocation_pct'])} % "
            f"({', '.join(f'{k} = {v}' for k, v in d0['allocation'].items())}); it runs {load}.",
            "- Dom1: one VCPU running a CPU-hungry loop, allocated A % per run.",
        ]
    lines += [
        f"- Targets A: {', '.join(_fmt_pct(t) for t in s['targets_pct'])} % of one PCPU; "
        f"{s['duration_s']:g} s measured per target after {s['warmup_s']:g} s of warm-up; "
        f"sampled every {s['sample_ms']:g} ms; "
        + (
            f"{s['replications']} replications (seeds {s['seeds'][0]} to {s['seeds'][-1]}): the "
            "1-s statistics pool their samples, the whole-run error is that of the mean usage "
            "with its 95 % interval over the replications."
            if s.get("replications", 1) > 1
            else f"seed {s['seed']}."
        ),
        f"- Simulated events: {r.events:,}; wall time {r.wall_s:.1f} s.",
        "",
        "## Results per target",
        "",
        'Er in %. "mean U" and the 1-s statistics are over the 1-s samples; "whole-run Er" '
        "is the error of the usage over the whole measured run (the paper's 3-minute "
        "granularity, Fig. 9).",
        "",
        _target_table(r),
        "",
    ]
    if not r.smp:
        lines += [
            "Dom0's mean usage per target: "
            + ", ".join(f"{_fmt_pct(t)} %: {u:.2f} %" for t, u in r.dom0_usage_pct.items())
            + ".",
            "",
        ]
    lines += [
        f"Over all {n_pts} samples: mean Er {_f(pooled['mean_error_pct'])} %, p5 "
        f"{_f(pooled['p5_error_pct'])} %, p95 {_f(pooled['p95_error_pct'])} %; "
        + ", ".join(f"{100 * pooled[f'within_{w}pct']:.0f} % within ±{w} %" for w in WITHIN_PCT)
        + ".",
        "",
        "## What the paper reports",
        "",
        "Cherkasova et al. ran ALERT on Xen 3.0.3 (1-GHz Pentium III) in NWC mode for "
        "Credit (30 ms slices) and SEDF (10 ms period), Figs 7–9, and the SMP variant for "
        "Credit (Fig. 11a). Their measured results are held back for validation "
        "(an independent check of this tool), so **no published numbers are quoted "
        "here** and none are compared. The one related figure the paper states is its "
        'requirement for a workload manager: an allocation error of "typically, 1–2%" over '
        'control intervals of "e.g. 5 seconds". The paper does not say whether that error is '
        f'relative; the "within ±{MANAGER_ERROR_PCT} %" column above applies it to the relative '
        "error Er of each 1-s sample.",
        "",
        "## Plots",
        "",
        f"- `{PLOT_FILES['fig7']}` (like Fig. 7): the error of every 1-s sample per "
        f"{'domain' if r.smp else 'target'}.",
        f"- `{PLOT_FILES['fig8']}` (like Fig. 8): CDF of the negative and complementary CDF of "
        "the positive errors over all samples.",
        f"- `{PLOT_FILES['fig9']}` (like Fig. 9): the error over the whole run per "
        f"{'domain' if r.smp else 'target'}.",
    ]
    if r.smp:
        lines.append(f"- `{SMP_TIMESERIES_PLOT}` (like Fig. 11a): each domain's error over time.")
    lines += [
        "",
        f"![error at 1-s granularity]({PLOT_FILES['fig7']})",
        "",
        f"![error distribution]({PLOT_FILES['fig8']})",
        "",
        f"![error over the whole run]({PLOT_FILES['fig9']})",
        "",
    ]
    if r.smp:
        lines += [f"![SMP error over time]({SMP_TIMESERIES_PLOT})", ""]
    return "\n".join(lines)


def _abs_interval(lo: float, hi: float) -> tuple[float, float]:
    """The interval of |x| for x in [lo, hi]."""
    if lo >= 0:
        return lo, hi
    if hi <= 0:
        return -hi, -lo
    return 0.0, max(-lo, hi)


def _accuracy_verdicts(results: list[AlertResult]) -> list[str]:
    """Per target (and domain): the run whose whole-run error is closest to zero, when
    its interval separates from every other run's, else "no difference"."""
    from vmsched.intervals import separated

    out = []
    first = results[0].targets
    for i in range(len(first)):
        rows = [r.targets.iloc[i] for r in results]
        what = f"A = {_fmt_pct(rows[0]['target_pct'])} %" + (
            f", {rows[0]['domain']}" if results[0].smp else ""
        )
        boxes = [(row["run_error_ci95_low"], row["run_error_ci95_high"]) for row in rows]
        if any(math.isnan(b[0]) for b in boxes):
            # One replication: the values alone decide (no interval to compare).
            boxes = [(row["run_error_pct"], row["run_error_pct"]) for row in rows]
        order = sorted(range(len(rows)), key=lambda k: abs(rows[k]["run_error_pct"]))
        best = order[0]
        # Compare |error|: its interval is the error's folded at zero.
        size = [_abs_interval(lo, hi) for lo, hi in boxes]
        if all(separated(size[best], size[k]) for k in order[1:]):
            err = ", ".join(
                f"{r.label} {_f(row['run_error_pct'])} %"
                for r, row in zip(results, rows, strict=True)
            )
            out.append(f"{what}: {results[best].label} is the most accurate ({err})")
        else:
            out.append(f"{what}: no difference within the 95 % intervals")
    return out


def _compare_report(c: CompareResult) -> str:
    results = c.results
    first = results[0]
    lines = [
        "# ALERT comparison: " + " vs ".join(r.label for r in results),
        "",
        "Every run uses the same setup (see each sub-folder's report.md); only the scheduler "
        "(and its Xen version) differs. Er = (U − A)/A, positive = over-allocation.",
        "",
        "| run | folder | version | allocation rule |",
        "|---|---|---|---|",
    ]
    for f, r in zip(c.folder_names(), results, strict=True):
        lines.append(
            f"| {r.label} | `{f}/` | {r.xen_version or 'n/a'} | {r.setup['allocation_rule']} |"
        )
    lines += ["", "## Per target", ""]
    header = ["A (%)"] + (["domain"] if first.smp else [])
    for r in results:
        header += [f"{r.label}: mean U", "p5 / p95 Er", "whole-run Er"]
    rows = []
    for i, row in enumerate(first.targets.to_dict(orient="records")):
        cells = [_fmt_pct(row["target_pct"])] + ([row["domain"]] if first.smp else [])
        for r in results:
            rr = r.targets.iloc[i]
            cells += [
                _f(rr["mean_usage_pct"], 2),
                f"{_f(rr['p5_error_pct'])} / {_f(rr['p95_error_pct'])}",
                _f(rr["run_error_pct"]),
            ]
        rows.append(cells)
    lines += [_md_table(header, rows), "", "## Verdicts", ""]
    lines += [
        "Per target, which run holds the allocation closer over the whole run: a difference "
        "counts only when the 95 % intervals of the whole-run error over the replications "
        "separate.",
        "",
    ]
    lines += [f"- {v}" for v in _accuracy_verdicts(results)]
    lines += ["", "## All samples", ""]
    for r in results:
        p = r.summary["all_samples"]
        lines.append(
            f"- {r.label}: mean Er {_f(p['mean_error_pct'])} %, p5 {_f(p['p5_error_pct'])} %, "
            f"p95 {_f(p['p95_error_pct'])} %; "
            + ", ".join(f"{100 * p[f'within_{w}pct']:.0f} % within ±{w} %" for w in WITHIN_PCT)
        )
    lines += [
        "",
        "## Plots",
        "",
        f"![error at 1-s granularity]({COMPARE_PLOT_FILES['fig7']})",
        "",
        f"![error distribution]({COMPARE_PLOT_FILES['fig8']})",
        "",
        f"![error over the whole run]({COMPARE_PLOT_FILES['fig9']})",
        "",
    ]
    return "\n".join(lines)
