"""Figures of one run, readable in a paper: CPU share over time and wake-up latency.

From the Python API, every `Result` has a `plot` accessor::

    r = vmsched.run("scenarios/credit-three-vms.toml")
    fig = r.plot.cpu()                   # CPU % per domain over time
    fig = r.plot.cpu(by_vcpu=True)       # one line per VCPU
    fig = r.plot.latency()               # wake-up latency p50/p95/p99/max per domain
    fig.savefig("cpu.pdf")

    fig, (a, b) = plt.subplots(1, 2)     # or draw into Axes of your own
    r.plot.cpu(ax=a); r.plot.latency(ax=b)

A folder written by `vmsched run --out DIR` gives the same figures:
`vmsched.plot.read_result_dir(DIR).plot.cpu()`, or on the command line
`vmsched plot DIR [--out OUT]`, which writes `cpu.png` and `latency.png`.

Conventions (docs/plots.md): CPU % as xentop counts it (100 = one PCPU); each sample
is drawn as a step over the interval it covers; latency in µs on a log scale
(symmetric-log, so that a latency of 0 stays drawable); one colour per domain from
the Okabe–Ito palette, which colour-blind readers can tell apart, in the same order
in every figure, with line styles for a second cue in print.

The figures are `matplotlib.figure.Figure` objects made without pyplot, so making
many does not accumulate open windows; pass `ax=` from `plt.subplots()` to show one
in a pyplot window.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vmsched.api import prepare_out_dir, write_atomic
from vmsched.errors import ScenarioError

#: Okabe & Ito's colour-blind-safe palette, ordered for lines on white (yellow last).
PALETTE = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
)
#: Line styles, the second cue: they change each time the palette wraps round.
LINESTYLES = ("-", "--", "-.", ":")
#: Hatches that tell apart the VCPUs of one domain in bar charts.
HATCHES = ("", "//", "..", "xx", "\\\\", "++")
#: Wake-up latency statistics drawn, in order (keys of summary.json's wake_latency_us).
LATENCY_STATS = ("p50", "p95", "p99", "max")
#: Below this many µs the latency axis is linear (symmetric log), so 0 µs is drawable.
LATENCY_LINEAR_BELOW_US = 1.0
#: The latency axis reaches at least this far (µs), so an all-zero chart has sane ticks.
LATENCY_MIN_TOP_US = 10.0
#: Figure size in inches: full text width of a two-column paper at a readable font size.
FIGSIZE = (6.4, 3.2)
#: Resolution of the PNG files.
DPI = 150
#: Bars are labelled with their values when a chart has at most this many groups.
MAX_LABELLED_ENTRIES = 3
#: Files `vmsched plot` writes.
CPU_PNG = "cpu.png"
LATENCY_PNG = "latency.png"

#: matplotlib settings of every figure here: small, legible fonts; light grid.
STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.4,
    "legend.frameon": False,
}

CPU_YLABEL = "CPU (% of one PCPU)"
TIME_XLABEL = "time (s)"
LATENCY_YLABEL = "wake-up latency (µs)"
LATENCY_XLABEL = "statistic over all wake-ups"


def colour(index: int) -> str:
    """The colour of the domain (or run) at `index`."""
    return PALETTE[index % len(PALETTE)]


def linestyle(index: int) -> str:
    """The line style of the domain (or run) at `index`: changes each time colours repeat."""
    return LINESTYLES[(index // len(PALETTE)) % len(LINESTYLES)]


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Apply STYLE to the figures and artists made inside the block."""
    import matplotlib

    with matplotlib.rc_context(STYLE):
        yield


def new_figure(width: float = FIGSIZE[0], height: float = FIGSIZE[1]):
    """A blank Figure (no pyplot) with constrained layout, in STYLE."""
    from matplotlib.figure import Figure

    with style():
        return Figure(figsize=(width, height), layout="constrained")


def root_figure(ax: Any):
    """The top-level Figure an Axes belongs to (not a SubFigure)."""
    try:
        return ax.get_figure(root=True)
    except TypeError:  # matplotlib < 3.10: Axes.figure is the root, SubFigure.figure too
        fig = ax.figure
        return getattr(fig, "figure", fig) or fig


def png_bytes(fig: Any, dpi: int = DPI) -> bytes:
    """A Figure as PNG bytes."""
    from vmsched.htmlreport import png_bytes as to_png

    return to_png(fig, dpi=dpi)


def save_png(fig: Any, path: str | Path, dpi: int = DPI) -> Path:
    """Write a Figure as a PNG, whole or not at all."""
    path = Path(path)
    write_atomic(path, png_bytes(fig, dpi))
    return path


# ----- data ------------------------------------------------------------------------------


def domain_label(dom: dict[str, Any]) -> str:
    """A domain as figures name it: its name, marked when it is the driver domain."""
    return dom["name"] + (" (driver)" if dom.get("driver") else "")


def _select_domains(summary: dict[str, Any], domains: Sequence[str] | None) -> list[int]:
    """Indices (in summary order) of the domains to draw; all when `domains` is None."""
    names = [d["name"] for d in summary["domains"]]
    if domains is None:
        return list(range(len(names)))
    if isinstance(domains, str):
        domains = [domains]
    unknown = [d for d in domains if d not in names]
    if unknown:
        raise ValueError(
            f"no domain {unknown[0]!r} in this run; the domains are {', '.join(names)}"
        )
    wanted = set(domains)
    return [i for i, n in enumerate(names) if n in wanted]


@dataclass(frozen=True)
class LatencyEntry:
    """One bar group member of a latency chart: a single-VCPU domain, or one VCPU of a
    multi-VCPU domain (percentiles of different VCPUs cannot be merged exactly)."""

    label: str
    domain_index: int
    vcpu: int | None
    wakeups: int
    stats: dict[str, float]


def latency_entries(summary: dict[str, Any], domains: Sequence[str] | None = None):
    """The wake-up latency of each domain (or VCPU of a multi-VCPU domain), in order."""
    out = []
    for i in _select_domains(summary, domains):
        dom = summary["domains"][i]
        several = len(dom["vcpus"]) > 1
        for v in dom["vcpus"]:
            label = domain_label(dom) + (f" v{v['vcpu']}" if several else "")
            out.append(
                LatencyEntry(
                    label=label,
                    domain_index=i,
                    vcpu=v["vcpu"] if several else None,
                    wakeups=int(v["wakeups"]),
                    stats={k: float(v["wake_latency_us"][k]) for k in LATENCY_STATS},
                )
            )
    return out


# ----- CPU share over time ---------------------------------------------------------------


def _axes(ax: Any, size: tuple[float, float]):
    if ax is not None:
        return root_figure(ax), ax
    fig = new_figure(*size)
    with style():
        return fig, fig.add_subplot()


def cpu_figure(
    summary: dict[str, Any],
    timeseries: Any,
    *,
    ax: Any = None,
    by_vcpu: bool = False,
    domains: Sequence[str] | None = None,
    stacked: bool = False,
    title: str | None = None,
    legend: bool = True,
):
    """CPU % over time per domain (or per VCPU), from a run's summary and time series.

    Each sample is a step over the interval it covers (`run.sample_ms`, from the end of
    the warm-up). `stacked=True` piles the domains up, so the top line is the host's
    total (at most 100 × PCPUs). `title=None` gives a default title, `""` none.
    Returns the Figure (the one `ax` belongs to, when given).
    """
    import numpy as np

    chosen = _select_domains(summary, domains)
    ts = timeseries
    rows = ts[ts["vcpu"].notna()] if by_vcpu else ts[ts["vcpu"].isna()]
    start = float(summary.get("warmup_s", 0.0))
    with style():
        fig, ax = _axes(ax, FIGSIZE)
        base = None
        drawn = 0
        for i in chosen:
            dom = summary["domains"][i]
            mine = rows[rows["domain"] == dom["name"]]
            groups = (
                [(int(v), g) for v, g in mine.groupby("vcpu", sort=True)]
                if by_vcpu
                else [(None, mine)]
            )
            for k, (vcpu, g) in enumerate(groups):
                g = g.sort_values("time_s")
                if g.empty:
                    continue
                values = g["cpu_pct"].to_numpy(dtype="float64")
                edges = np.concatenate([[start], g["time_s"].to_numpy(dtype="float64")])
                label = domain_label(dom) + (f" v{vcpu}" if vcpu is not None else "")
                ls = LINESTYLES[k % len(LINESTYLES)] if by_vcpu else linestyle(i)
                if stacked:
                    if base is None:
                        base = np.zeros_like(values)
                    if base.shape != values.shape:
                        raise ValueError(
                            "cannot stack: the series do not have the same sample times"
                        )
                    top = base + values
                    ax.stairs(
                        top,
                        edges,
                        baseline=base,
                        fill=True,
                        color=colour(i),
                        alpha=0.85,
                        label=label,
                    )
                    base = top
                else:
                    ax.stairs(
                        values, edges, baseline=None, color=colour(i), linestyle=ls, label=label
                    )
                drawn += 1
        if drawn == 0:
            ax.text(0.5, 0.5, "no samples", transform=ax.transAxes, ha="center", va="center")
        ax.set_xlabel(TIME_XLABEL)
        ax.set_ylabel(CPU_YLABEL)
        ax.set_ylim(bottom=0)
        ax.margins(x=0)
        if title is None:
            what = "VCPU" if by_vcpu else "domain"
            title = f"CPU share per {what} ({summary.get('scheduler', '?')})"
        if title:
            ax.set_title(title)
        if legend and drawn:
            ncols = 1 + (drawn - 1) // 16
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), ncols=ncols)
    return fig


# ----- wake-up latency -------------------------------------------------------------------


def latency_axes_setup(ax: Any, log: bool) -> None:
    """Label a latency axis (µs; symmetric-log when `log`)."""
    ax.set_ylabel(LATENCY_YLABEL)
    if log:
        ax.set_yscale("symlog", linthresh=LATENCY_LINEAR_BELOW_US, linscale=0.5)
    # Headroom for the value labels above the bars.
    ax.margins(y=0.12)
    ax.set_ylim(bottom=0)
    if log and ax.get_ylim()[1] < LATENCY_MIN_TOP_US:
        # All (near) zero: a readable axis rather than one scaled to nothing.
        ax.set_ylim(0, LATENCY_MIN_TOP_US)
    ax.grid(axis="x", visible=False)


def grouped_bars(
    ax: Any,
    groups: Sequence[str],
    series: Sequence[tuple[str, Sequence[float], str, str]],
    *,
    value_labels: bool,
) -> None:
    """Bars in groups: `series` is (label, one value per group, colour, hatch)."""
    import numpy as np

    n = max(len(series), 1)
    width = 0.8 / n
    x = np.arange(len(groups))
    for k, (label, values, col, hatch) in enumerate(series):
        bars = ax.bar(
            x - 0.4 + width * (k + 0.5),
            values,
            width,
            label=label,
            color=col,
            hatch=hatch,
            edgecolor="white" if not hatch else "#333333",
            linewidth=0.5,
        )
        if value_labels:
            from vmsched.htmlreport import format_number

            ax.bar_label(bars, labels=[format_number(v) for v in values], fontsize=6, padding=1)
    ax.set_xticks(x, groups)


def _name_list(names: Sequence[str], most: int = 6) -> str:
    """'a, b, c' or 'a, b, c and 4 more'."""
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most])} and {len(names) - most} more"


def latency_figure(
    summary: dict[str, Any],
    *,
    ax: Any = None,
    domains: Sequence[str] | None = None,
    log: bool = True,
    title: str | None = None,
    legend: bool = True,
):
    """Wake-up latency per domain: p50, p95, p99 and max of every wake-up, in µs.

    These are the statistics summary.json keeps (from a histogram within 1/16 of the true
    value; max exact). A multi-VCPU domain has one bar per VCPU (hatched). Domains with
    no measured wake-up (CPU hogs never block) have no bars and are listed in the legend.
    Returns the Figure.
    """
    entries = latency_entries(summary, domains)
    woken = [e for e in entries if e.wakeups > 0]
    silent = [e.label for e in entries if e.wakeups == 0]
    with style():
        fig, ax = _axes(ax, FIGSIZE)
        series = []
        for e in woken:
            hatch = HATCHES[e.vcpu % len(HATCHES)] if e.vcpu is not None else ""
            series.append(
                (
                    f"{e.label} ({e.wakeups:,} wake-ups)",
                    [e.stats[k] for k in LATENCY_STATS],
                    colour(e.domain_index),
                    hatch,
                )
            )
        grouped_bars(
            ax, LATENCY_STATS, series, value_labels=0 < len(series) <= MAX_LABELLED_ENTRIES
        )
        latency_axes_setup(ax, log)
        ax.set_xlabel(LATENCY_XLABEL)
        if not woken:
            ax.text(
                0.5,
                0.5,
                "no wake-ups were measured",
                transform=ax.transAxes,
                ha="center",
                va="center",
            )
        if title is None:
            title = f"Wake-up latency ({summary.get('scheduler', '?')})"
        if title:
            ax.set_title(title)
        if legend and (woken or silent):
            handles, labels = ax.get_legend_handles_labels()
            if silent:
                from matplotlib.patches import Patch

                handles.append(Patch(visible=False))
                labels.append("no wake-ups: " + _name_list(silent))
            ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


# ----- the accessor and result folders -----------------------------------------------------


class Plots:
    """`result.plot`: the figures of one run (a `Result` or a `SavedResult`)."""

    def __init__(self, result: Any) -> None:
        self._result = result

    def cpu(
        self,
        *,
        ax: Any = None,
        by_vcpu: bool = False,
        domains: Sequence[str] | None = None,
        stacked: bool = False,
        title: str | None = None,
    ):
        """CPU % over time per domain (`by_vcpu=True`: per VCPU); see `cpu_figure`."""
        r = self._result
        return cpu_figure(
            r.summary,
            r.timeseries,
            ax=ax,
            by_vcpu=by_vcpu,
            domains=domains,
            stacked=stacked,
            title=title,
        )

    def latency(
        self,
        *,
        ax: Any = None,
        domains: Sequence[str] | None = None,
        log: bool = True,
        title: str | None = None,
    ):
        """Wake-up latency p50/p95/p99/max per domain, in µs; see `latency_figure`."""
        return latency_figure(self._result.summary, ax=ax, domains=domains, log=log, title=title)


@dataclass
class SavedResult:
    """A run read back from its folder: the same `summary`, `timeseries` and `plot`
    as the `Result` that wrote it."""

    folder: Path
    summary: dict[str, Any]
    timeseries: Any

    @property
    def plot(self) -> Plots:
        return Plots(self)


RESULT_FOLDER = (
    "a result folder as `vmsched run --out` writes it (summary.json, timeseries.parquet)"
)
SUMMARY_KEYS = ("scheduler", "warmup_s", "domains")
DOMAIN_KEYS = ("name", "vcpus")
VCPU_KEYS = ("vcpu", "wakeups", "wake_latency_us")
SERIES_COLUMNS = ("time_s", "domain", "vcpu", "cpu_pct")


def _summary_problem(summary: Any) -> str | None:
    """The first field a plot needs that `summary` lacks, or None."""
    if not isinstance(summary, dict):
        return "a JSON object"
    for key in SUMMARY_KEYS:
        if key not in summary:
            return key
    if not isinstance(summary["domains"], list):
        return "domains (a list)"
    for i, d in enumerate(summary["domains"]):
        for key in DOMAIN_KEYS:
            if not isinstance(d, dict) or key not in d:
                return f"domains[{i}].{key}"
        for j, v in enumerate(d["vcpus"]):
            for key in VCPU_KEYS:
                if not isinstance(v, dict) or key not in v:
                    return f"domains[{i}].vcpus[{j}].{key}"
    return None


def _read_summary(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ScenarioError(f"no such file; expected {RESULT_FOLDER}", file=str(path))
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScenarioError(
            f"cannot be read as JSON ({exc}); expected the summary.json of {RESULT_FOLDER}",
            file=str(path),
        ) from None
    if isinstance(summary, dict) and summary.get("cluster") is True:
        raise ScenarioError(
            "is the summary of a cluster of hosts; vmsched plot draws one host's run",
            file=str(path),
        )
    problem = _summary_problem(summary)
    if problem is not None:
        raise ScenarioError(
            f"is not a vmsched summary (no {problem}); expected the summary.json of "
            f"{RESULT_FOLDER}",
            file=str(path),
        )
    return summary


def _read_series(path: Path):
    import pandas as pd

    if not path.is_file():
        raise ScenarioError(f"no such file; expected {RESULT_FOLDER}", file=str(path))
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - any reader failure is bad input here
        raise ScenarioError(
            f"cannot be read as Parquet ({type(exc).__name__}: {exc}); expected the "
            f"timeseries.parquet of {RESULT_FOLDER}",
            file=str(path),
        ) from None
    missing = [c for c in SERIES_COLUMNS if c not in df.columns]
    if missing:
        raise ScenarioError(
            f"has no column {', '.join(missing)}; expected the timeseries.parquet of "
            f"{RESULT_FOLDER}",
            file=str(path),
        )
    return df


def read_result_dir(folder: str | Path) -> SavedResult:
    """Read a folder written by `vmsched run --out` (or `Result.save`).

    Raises ScenarioError naming the folder or file and what was expected.
    """
    p = Path(folder)
    if not p.exists():
        raise ScenarioError(f"no such folder; expected {RESULT_FOLDER}", file=str(folder))
    if not p.is_dir():
        raise ScenarioError(f"is not a folder; expected {RESULT_FOLDER}", file=str(folder))
    summary = _read_summary(p / "summary.json")
    return SavedResult(p, summary, _read_series(p / "timeseries.parquet"))


def write_plots(folder: str | Path, out: str | Path | None = None, *, by_vcpu: bool = False):
    """Read a result folder and write cpu.png and latency.png into `out` (default: the
    result folder itself). Returns the paths written."""
    saved = read_result_dir(folder)
    out_dir = prepare_out_dir(out if out is not None else folder)
    cpu = save_png(saved.plot.cpu(by_vcpu=by_vcpu), out_dir / CPU_PNG)
    lat = save_png(saved.plot.latency(), out_dir / LATENCY_PNG)
    return [cpu, lat]


# ----- `vmsched plot` ----------------------------------------------------------------------


def add_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> Any:
    """Register `vmsched plot` on an argparse subparsers object."""
    about = "draw cpu.png and latency.png from a `vmsched run --out` folder"
    p = subparsers.add_parser("plot", parents=list(parents), help=about, description=about)
    p.add_argument(
        "result_dir", metavar="RESULT_DIR", help="folder with summary.json and timeseries.parquet"
    )
    p.add_argument("--out", metavar="DIR", help="write the PNGs into DIR (default: RESULT_DIR)")
    p.add_argument("--by-vcpu", action="store_true", help="one CPU line per VCPU, not per domain")
    p.set_defaults(func=main)
    return p


def main(args: argparse.Namespace) -> int:
    """`vmsched plot`: returns the exit status (bad input raises ScenarioError: status 2)."""
    written = write_plots(args.result_dir, args.out, by_vcpu=args.by_vcpu)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0
