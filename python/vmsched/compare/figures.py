"""The figures of a comparison (CPU over time, CPU share, wake-up latency, workload
metrics), drawn in the batch layer's workers."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from vmsched.batch import run_all
from vmsched.compare.metrics import _fmt, _unit_of, workload_metrics
from vmsched.compare.spec import (
    FIG_CPU_SHARE,
    FIG_CPU_TIME,
    FIG_LATENCY,
    FIG_WORKLOAD,
    MAX_METRIC_PANELS,
)

if TYPE_CHECKING:
    from vmsched.compare.comparison import Comparison


class Figures:
    """The figures of a `Comparison` (a base class of it)."""

    def figure_pngs(self) -> dict[str, bytes]:
        """The report's figures as PNG bytes, each drawn in a worker of the batch layer
        (where the runs were simulated), not one after another here."""
        names = [FIG_CPU_TIME, FIG_CPU_SHARE, FIG_LATENCY, FIG_WORKLOAD]
        pngs = run_all(
            _draw_figure,
            [(self, name) for name in names],
            backend=self.where.name,
            jobs=self.where.jobs,
            address=self.where.address,
            batch_size=1,
            label="figures",
        )
        return {n: png for n, png in zip(names, pngs, strict=True) if png is not None}

    def figures(self) -> dict[str, Any]:
        """The report's figures by file stem (matplotlib Figures)."""
        figs = {
            FIG_CPU_TIME: self._fig_cpu_time(),
            FIG_CPU_SHARE: self._fig_cpu_share(),
            FIG_LATENCY: self._fig_latency(),
        }
        work = self._fig_workload()
        if work is not None:
            figs[FIG_WORKLOAD] = work
        return figs

    def _fig_cpu_time(self):
        from vmsched import plot

        n = len(self.runs)
        fig = plot.new_figure(plot.FIGSIZE[0], 0.6 + 1.6 * n)
        with plot.style():
            axes = fig.subplots(n, 1, sharex=True, sharey=True, squeeze=False)[:, 0]
            for ax, r in zip(axes, self.runs, strict=True):
                plot.cpu_figure(r.summary, r.timeseries, ax=ax, title=r.label, legend=False)
                ax.set_ylabel("")
                ax.label_outer()
            fig.supylabel(plot.CPU_YLABEL, fontsize=plot.STYLE["axes.labelsize"])
            handles, labels = axes[0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="outside right upper")
        return fig

    def _run_series(self, values_per_run: list[list[float]]):
        from vmsched import plot

        return [
            (r.label, vals, plot.colour(k), "")
            for k, (r, vals) in enumerate(zip(self.runs, values_per_run, strict=True))
        ]

    def _fig_cpu_share(self):
        from vmsched import plot

        names = self._domain_names()
        fig = plot.new_figure(*plot.FIGSIZE)
        with plot.style():
            ax = fig.add_subplot()
            values = [[d["cpu_pct"] for d in r.summary["domains"]] for r in self.runs]
            plot.grouped_bars(
                ax,
                names,
                self._run_series(values),
                value_labels=len(self.runs) * len(names) <= 12,
            )
            if self.replications > 1:
                self._interval_bars(ax, "cpu_pct", len(names))
            ax.set_ylabel(plot.CPU_YLABEL)
            ax.set_xlabel("domain")
            ax.set_title(
                "CPU share over the measured run"
                + (" (mean and 95 % interval)" if self.replications > 1 else "")
            )
            ax.grid(axis="x", visible=False)
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return fig

    def _interval_bars(self, ax: Any, key: str, n_groups: int) -> None:
        """Each run's 95 % interval of a per-domain number as an error bar on its bar of
        `plot.grouped_bars` (the same positions)."""
        import numpy as np

        width = 0.8 / max(len(self.runs), 1)
        x = np.arange(n_groups)
        for k, r in enumerate(self.runs):
            mean = np.array([float(d[key]) for d in r.summary["domains"]])
            lo = np.array([float(d[key]) for d in r.summary_low["domains"]])
            hi = np.array([float(d[key]) for d in r.summary_high["domains"]])
            yerr = np.nan_to_num(np.vstack([mean - lo, hi - mean]), nan=0.0)
            ax.errorbar(
                x - 0.4 + width * (k + 0.5), mean, yerr=yerr, fmt="none", ecolor="black", lw=0.8
            )

    def _fig_latency(self):
        from vmsched import plot

        entries = [plot.latency_entries(r.summary) for r in self.runs]
        woken = [k for k in range(len(entries[0])) if any(es[k].wakeups > 0 for es in entries)]
        n = max(len(woken), 1)
        ncols = min(2, n)
        nrows = math.ceil(n / ncols)
        fig = plot.new_figure(plot.FIGSIZE[0], 0.8 + 2.2 * nrows)
        with plot.style():
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            for ax, k in zip(axes, woken, strict=False):
                values = [
                    [es[k].stats[s] if es[k].wakeups else 0.0 for s in plot.LATENCY_STATS]
                    for es in entries
                ]
                plot.grouped_bars(
                    ax, plot.LATENCY_STATS, self._run_series(values), value_labels=False
                )
                plot.latency_axes_setup(ax, log=True)
                ax.set_title(entries[0][k].label)
            for ax in axes[len(woken) :]:
                ax.set_axis_off()
            if not woken:
                axes[0].text(0.5, 0.5, "no wake-ups were measured", ha="center", va="center")
            else:
                handles, labels = axes[0].get_legend_handles_labels()
                fig.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)))
            fig.suptitle("Wake-up latency per domain: p50, p95, p99 and max of all wake-ups")
        return fig

    def _fig_workload(self):
        from matplotlib.patches import Patch

        from vmsched import plot

        panels = []
        names = self._domain_names()
        for metric in self._workload_metrics():
            for i, n in enumerate(names):
                values = [workload_metrics(r.summary["domains"][i]).get(metric) for r in self.runs]
                if any(v is not None for v in values):
                    panels.append((n, metric, values))
        if not panels:
            return None
        panels = panels[:MAX_METRIC_PANELS]
        ncols = min(3, len(panels))
        nrows = math.ceil(len(panels) / ncols)
        fig = plot.new_figure(plot.FIGSIZE[0] * (1.3 if ncols == 3 else 1), 0.9 + 2.0 * nrows)
        with plot.style():
            axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
            for ax, (dom, metric, values) in zip(axes, panels, strict=False):
                heights = [v if v is not None else 0.0 for v in values]
                bars = ax.bar(
                    range(len(values)),
                    heights,
                    color=[plot.colour(k) for k in range(len(values))],
                    label=self.labels,
                )
                ax.bar_label(
                    bars,
                    labels=[_fmt(v) if v is not None else "n/a" for v in values],
                    fontsize=6,
                    padding=1,
                )
                ax.set_xticks([])
                unit = _unit_of(metric)
                ax.set_ylabel(metric + ("" if unit == "count" else f" ({unit})"))
                ax.set_title(dom)
                ax.margins(y=0.15)
                ax.grid(axis="x", visible=False)
            for ax in axes[len(panels) :]:
                ax.set_axis_off()
            handles = [Patch(color=plot.colour(k), label=lab) for k, lab in enumerate(self.labels)]
            fig.legend(handles=handles, loc="outside lower center", ncols=min(3, len(handles)))
            fig.suptitle("Application metrics (workload metrics in summary.json)")
        return fig


def _draw_figure(item: tuple[Comparison, str]) -> bytes | None:
    """One figure of a comparison as PNG bytes (None if it has none), in a worker."""
    from vmsched.htmlreport import png_bytes

    comparison, name = item
    draw = {
        FIG_CPU_TIME: comparison._fig_cpu_time,
        FIG_CPU_SHARE: comparison._fig_cpu_share,
        FIG_LATENCY: comparison._fig_latency,
        FIG_WORKLOAD: comparison._fig_workload,
    }[name]
    fig = draw()
    return None if fig is None else png_bytes(fig)
