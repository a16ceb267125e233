"""The paper's plots of ALERT (Figures 7-9 and 11), for one run or several side by side,
drawn in the batch layer's workers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from vmsched.alert.runs import Where
from vmsched.alert.setup import _fmt_pct
from vmsched.api import write_atomic
from vmsched.batch import run_all

if TYPE_CHECKING:
    from vmsched.alert.results import AlertResult


# ----- plots -----------------------------------------------------------------------------------

#: The plots of one run: what each shows -> file name.
PLOT_FILES = {
    "fig7": "fig7-error-1s.png",
    "fig8": "fig8-error-cdf.png",
    "fig9": "fig9-error-run.png",
}
SMP_TIMESERIES_PLOT = "fig11-smp-error-timeseries.png"
COMPARE_PLOT_FILES = {
    "fig7": "compare-error-1s.png",
    "fig8": "compare-error-cdf.png",
    "fig9": "compare-error-run.png",
}
_DPI = 150
_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _png(fig) -> bytes:
    from vmsched.htmlreport import png_bytes

    return png_bytes(fig, dpi=_DPI)


def _groups(r: AlertResult) -> list[tuple[str, pd.DataFrame]]:
    """(tick label, samples) per box: per target (single PCPU) or per domain (SMP)."""
    if r.smp:
        return [
            (f"{d}\n{_fmt_pct(t)} %", g)
            for (t, d), g in r.samples.groupby(["target_pct", "domain"], sort=True)
        ]
    return [(_fmt_pct(t), g) for t, g in r.samples.groupby("target_pct", sort=True)]


def _xlabel(r: AlertResult) -> str:
    return "Domain and its allocation" if r.smp else "Dom1 allocation target A (% of one PCPU)"


def _plot_error_1s(results: list[AlertResult], title: str) -> bytes:
    """Fig 7: the allocation error of every 1-s sample, one box (plus the points) per target."""
    labels = [lab for lab, _ in _groups(results[0])]
    fig = _figure(max(7.0, 0.55 * len(labels) * max(1, len(results)) + 2), 4.5)
    ax = fig.add_subplot()
    width = 0.8 / len(results)
    rng = np.random.default_rng(0)  # jitter of the strip points only
    handles = []
    for k, r in enumerate(results):
        groups = dict(_groups(r))
        data = [
            groups[lab]["error_pct"].to_numpy() if lab in groups else np.array([]) for lab in labels
        ]
        pos = np.arange(len(labels)) + (k - (len(results) - 1) / 2) * width
        colour = _COLOURS[k % len(_COLOURS)]
        bp = ax.boxplot(
            data,
            positions=pos,
            widths=width * 0.8,
            whis=(5, 95),
            showfliers=False,
            patch_artist=True,
            manage_ticks=False,
            medianprops={"color": "black"},
            boxprops={"facecolor": colour, "alpha": 0.35, "edgecolor": colour},
            whiskerprops={"color": colour},
            capprops={"color": colour},
        )
        for x, d in zip(pos, data, strict=True):
            ax.scatter(
                x + rng.uniform(-width * 0.3, width * 0.3, d.size),
                d,
                s=4,
                color=colour,
                alpha=0.4,
                linewidths=0,
            )
        handles.append((bp["boxes"][0], r.label))
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(np.arange(len(labels)), labels)
    ax.set_xlabel(_xlabel(results[0]))
    ax.set_ylabel("Allocation error Er = (U - A)/A (%)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(
        [h for h, _ in handles],
        [f"{lab}: box 25-75 %, whiskers 5-95 %, dots = 1-s samples" for _, lab in handles],
        loc="upper right",
        fontsize=8,
    )
    return _png(fig)


def _plot_error_cdf(results: list[AlertResult], title: str) -> bytes:
    """Fig 8: CDF of the negative errors and complementary CDF of the positive errors,
    over all 1-s samples of all targets."""
    fig = _figure(10, 4.2)
    neg_ax, pos_ax = fig.subplots(1, 2)
    for k, r in enumerate(results):
        err = np.sort(r.samples["error_pct"].to_numpy())
        n = err.size
        colour = _COLOURS[k % len(_COLOURS)]
        neg = err[err < 0]
        pos = err[err > 0]
        if neg.size:
            # P(Er <= x) for x < 0, as a fraction of all samples.
            x = np.concatenate([neg, [0.0]])
            y = np.concatenate([np.arange(1, neg.size + 1) / n, [neg.size / n]])
            neg_ax.step(
                x, y, where="post", color=colour, label=f"{r.label} ({neg.size}/{n} samples)"
            )
        if pos.size:
            # P(Er > x) for x >= 0, as a fraction of all samples.
            x = np.concatenate([[0.0], pos])
            y = np.concatenate([[pos.size / n], (pos.size - np.arange(1, pos.size + 1)) / n])
            pos_ax.step(
                x, y, where="post", color=colour, label=f"{r.label} ({pos.size}/{n} samples)"
            )
    neg_ax.set_xlabel("Allocation error Er (%), negative: under-allocation")
    neg_ax.set_ylabel("Fraction of all 1-s samples with error <= x")
    neg_ax.set_title("CDF of negative errors")
    pos_ax.set_xlabel("Allocation error Er (%), positive: over-allocation")
    pos_ax.set_ylabel("Fraction of all 1-s samples with error > x")
    pos_ax.set_title("Complementary CDF of positive errors")
    for ax, empty in ((neg_ax, "no negative errors"), (pos_ax, "no positive errors")):
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
        else:
            ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(title)
    return _png(fig)


def _plot_error_run(results: list[AlertResult], title: str) -> bytes:
    """Fig 9: the error over each whole run (3-minute granularity in the paper)."""
    first = results[0].targets
    labels = [
        (f"{d}\n{_fmt_pct(t)} %" if results[0].smp else _fmt_pct(t))
        for t, d in zip(first["target_pct"], first["domain"], strict=True)
    ]
    fig = _figure(max(7.0, 0.5 * len(labels) * max(1, len(results)) + 2), 4.2)
    ax = fig.add_subplot()
    width = 0.8 / len(results)
    for k, r in enumerate(results):
        pos = np.arange(len(labels)) + (k - (len(results) - 1) / 2) * width
        err = r.targets["run_error_pct"].to_numpy()
        lo = r.targets["run_error_ci95_low"].to_numpy()
        hi = r.targets["run_error_ci95_high"].to_numpy()
        # The 95 % interval over the replications (none with one replication).
        yerr = np.nan_to_num(np.vstack([err - lo, hi - err]), nan=0.0)
        ax.bar(
            pos,
            err,
            width=width * 0.9,
            color=_COLOURS[k % len(_COLOURS)],
            label=r.label,
            yerr=yerr,
            capsize=2,
            error_kw={"lw": 0.8},
        )
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(np.arange(len(labels)), labels)
    ax.set_xlabel(_xlabel(results[0]))
    ax.set_ylabel("Allocation error over the whole run (%, 95 % interval)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def _plot_smp_timeseries(r: AlertResult) -> bytes:
    """Fig 11a-like: each domain's error at every 1-s sample over the run."""
    fig = _figure(10, 4.2)
    ax = fig.add_subplot()
    for k, ((t, d), g) in enumerate(r.samples.groupby(["target_pct", "domain"], sort=True)):
        ax.plot(
            g["t_s"],
            g["error_pct"],
            lw=0.9,
            color=_COLOURS[k % len(_COLOURS)],
            label=f"{d} (allocated {_fmt_pct(t)} %)",
        )
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("Time since measurement start (s)")
    ax.set_ylabel("Allocation error Er = (U - A)/A (%)")
    ax.set_title(f"ALERT SMP, {r.label}: error of each domain at 1-s granularity")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _png(fig)


def _draw(item: tuple[str, list[AlertResult], str]) -> bytes:
    """One plot as PNG bytes, in a worker of the batch layer."""
    kind, results, title = item
    if kind == "fig7":
        return _plot_error_1s(results, title)
    if kind == "fig8":
        return _plot_error_cdf(results, title)
    if kind == "fig9":
        return _plot_error_run(results, title)
    return _plot_smp_timeseries(results[0])


def _write_plots(
    where: Where, out_dir: Path, plots: list[tuple[str, str, list[AlertResult], str]]
) -> None:
    """Draw [(file, kind, results, title)] in the batch layer's workers, then write them."""
    pngs = run_all(
        _draw,
        [(kind, results, title) for _, kind, results, title in plots],
        backend=where.backend,
        jobs=where.jobs,
        address=where.address,
        batch_size=1,
        label="plots",
    )
    for (file, *_), png in zip(plots, pngs, strict=True):
        write_atomic(out_dir / file, png)


def _plots(r: AlertResult, out_dir: Path) -> None:
    what = f"{r.label}, {'2 PCPUs' if r.smp else '1 PCPU'}"
    plots = [
        (PLOT_FILES["fig7"], "fig7", [r], f"ALERT, {what}: error at 1-s granularity"),
        (PLOT_FILES["fig8"], "fig8", [r], f"ALERT, {what}: distribution of 1-s errors"),
        (PLOT_FILES["fig9"], "fig9", [r], f"ALERT, {what}: error over the whole run"),
    ]
    if r.smp:
        plots.append((SMP_TIMESERIES_PLOT, "fig11", [r], ""))
    _write_plots(r.where, out_dir, plots)


def _compare_plots(results: list[AlertResult], out_dir: Path) -> None:
    what = " vs ".join(r.label for r in results)
    plots = [
        (COMPARE_PLOT_FILES["fig7"], "fig7", results, f"ALERT: error at 1-s granularity, {what}"),
        (
            COMPARE_PLOT_FILES["fig8"],
            "fig8",
            results,
            f"ALERT: distribution of 1-s errors, {what}",
        ),
        (COMPARE_PLOT_FILES["fig9"], "fig9", results, f"ALERT: error over the whole run, {what}"),
    ]
    _write_plots(results[0].where, out_dir, plots)
