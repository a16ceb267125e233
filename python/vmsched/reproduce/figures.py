"""A reproduction's figures, in two steps so they are drawn off the main process.

`figure_data(rep, fig)` reads what a figure shows out of the results table, in
the main process (it needs the experiment's labels and units, which do not
travel to a worker); the result is plain data (`FigureData`) that pickles.
`draw(data)` turns it into PNG bytes with matplotlib, and runs in a worker of
the batch layer (vmsched.batch) beside the other figures: `vmsched reproduce`
hands every experiment's figures to the workers at once, so they are drawn in
parallel and not one after another in the main process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from vmsched.reproduce.framework import Figure, Reproduction, Row, fmt_value

#: Resolution of the PNGs.
DPI = 130
COLOURS = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


@dataclass(frozen=True)
class Line:
    """One scheduler variant in one panel: its points, 95 % intervals and the paper's."""

    label: str
    #: Index into COLOURS and MARKERS (a variant keeps its colour across panels).
    style: int
    xs: list[float]
    ys: list[float]
    #: The interval below and above each mean (0 without one).
    err_lo: list[float]
    err_hi: list[float]
    #: The paper's numbers: (x, low, high) (low == high for a single number).
    published: list[tuple[float, float, float]] = field(default_factory=list)


@dataclass(frozen=True)
class PanelData:
    title: str
    xlabel: str
    ylabel: str
    lines: list[Line]
    #: Bar figures: the x values as category names, in order.
    categories: list[str] = field(default_factory=list)
    #: Line figures on a log axis: the ticks (value, label).
    log_ticks: list[tuple[float, str]] = field(default_factory=list)


@dataclass(frozen=True)
class FigureData:
    """Everything `draw` needs, as plain data."""

    file: str
    title: str
    kind: str
    log_x: bool
    panels: list[PanelData]
    any_published: bool


def _unit_label(unit: str) -> str:
    return f" ({unit})" if unit else ""


def _yerr(rows: list[Row]) -> tuple[list[float], list[float]]:
    """Error bars: the 95 % interval below and above each mean (0 without one)."""
    lo, hi = [], []
    for r in rows:
        est = r.estimate
        ok = math.isfinite(est.lo) and math.isfinite(est.hi) and math.isfinite(r.simulated)
        lo.append(max(r.simulated - est.lo, 0.0) if ok else 0.0)
        hi.append(max(est.hi - r.simulated, 0.0) if ok else 0.0)
    return lo, hi


def _xvalue(v: str) -> float | str:
    try:
        return float(v)
    except ValueError:
        return v


def _published(xs: list[float], rows: list[Row]) -> list[tuple[float, float, float]]:
    out = []
    for x, r in zip(xs, rows, strict=True):
        if not r.published:
            continue
        lo, _, hi = r.published.partition("-")
        try:
            y_lo, y_hi = float(lo), float(hi or lo)
        except ValueError:
            continue
        out.append((x, y_lo, y_hi))
    return out


def figure_data(rep: Reproduction, fig: Figure) -> FigureData:
    """What `fig` shows of `rep`'s results, as plain data for `draw`."""
    exp = rep.experiment
    style_of: dict[str, int] = {}
    panels = []
    for panel in fig.panels:
        rows = rep.table.where(panel.metric, **panel.where)
        rows = [r for r in rows if fig.x in r.params]
        by_label: dict[str, list[Row]] = {}
        for r in rows:
            line_params = {k: _xvalue(r.params[k]) for k in fig.lines if k in r.params}
            by_label.setdefault(exp.label(r.scheduler, line_params), []).append(r)
        categories = list(dict.fromkeys(r.params[fig.x] for r in rows))
        width = 0.8 / max(len(by_label), 1)
        lines = []
        for k, (label, rs) in enumerate(by_label.items()):
            style = style_of.setdefault(label, len(style_of))
            if fig.kind == "bar":
                xs = [
                    categories.index(r.params[fig.x]) + (k - (len(by_label) - 1) / 2) * width
                    for r in rs
                ]
            else:
                rs = sorted(rs, key=lambda r: float(r.params[fig.x]))
                xs = [float(r.params[fig.x]) for r in rs]
            lo, hi = _yerr(rs)
            lines.append(
                Line(label, style, xs, [r.simulated for r in rs], lo, hi, _published(xs, rs))
            )
        ticks = []
        if fig.kind != "bar" and fig.log_x:
            ticks = [(t, fmt_value(t)) for t in sorted({float(r.params[fig.x]) for r in rows})]
        panels.append(
            PanelData(
                title=panel.title,
                xlabel=fig.xlabel,
                ylabel=f"{panel.metric}{_unit_label(exp.units.get(panel.metric, ''))}",
                lines=lines,
                categories=categories if fig.kind == "bar" else [],
                log_ticks=ticks,
            )
        )
    return FigureData(
        file=fig.file,
        title=fig.title,
        kind=fig.kind,
        log_x=fig.log_x,
        panels=panels,
        any_published=any(ln.published for p in panels for ln in p.lines),
    )


#: Below this y value (the largest of any panel's points, interval tops and published
#: numbers), panel titles are placed at the top of the axes without matplotlib's
#: measuring (see `draw`); a tenth of where a y axis begins to show a multiplier.
Y_FIXED_TITLE = 1e5


def _y_top(data: FigureData) -> float:
    top = 0.0
    for panel in data.panels:
        for line in panel.lines:
            for y, hi in zip(line.ys, line.err_hi, strict=True):
                if math.isfinite(y):
                    top = max(top, abs(y) + hi)
            for _, y_lo, y_hi in line.published:
                top = max(top, abs(y_lo), abs(y_hi))
    return top


def draw(data: FigureData) -> bytes:
    """The figure as PNG bytes: panels side by side (three to a row), one line (or bar
    group) per variant with its 95 % intervals, the paper's numbers as open markers."""
    from matplotlib.figure import Figure as MplFigure
    from matplotlib.lines import Line2D

    from vmsched.htmlreport import png_bytes

    n = len(data.panels)
    cols = min(n, 3)
    nrows = math.ceil(n / cols)
    mpl = MplFigure(figsize=(max(4.6 * cols, 7.0), 3.7 * nrows + 0.4), layout="constrained")
    axes = mpl.subplots(nrows, cols, squeeze=False)
    # A panel's title sits just above its axes. matplotlib, left to place it, measures
    # the y axis's tick labels again at every layout pass and draw (about a tenth of a
    # figure's CPU) to lift the title over a top x axis or the y axis's offset text
    # ("1e6"). Our x axes are at the bottom and a y axis from 0 shows no offset; it
    # shows a multiplier only from 10^6 (axes.formatter.limits), so the title is put at
    # the top of the axes outright below that, where matplotlib would put it: the same
    # pixels (checked on every figure of `reproduce --all --quick`).
    fixed_titles = _y_top(data) < Y_FIXED_TITLE
    for i, panel in enumerate(data.panels):
        ax = axes[i // cols][i % cols]
        width = 0.8 / max(len(panel.lines), 1)
        for line in panel.lines:
            colour = COLOURS[line.style % len(COLOURS)]
            marker = MARKERS[line.style % len(MARKERS)]
            yerr = [line.err_lo, line.err_hi]
            if data.kind == "bar":
                ax.bar(
                    line.xs,
                    line.ys,
                    width * 0.9,
                    color=colour,
                    label=line.label,
                    yerr=yerr,
                    ecolor="black",
                    capsize=2,
                )
            else:
                ax.errorbar(
                    line.xs,
                    line.ys,
                    yerr=yerr,
                    marker=marker,
                    color=colour,
                    label=line.label,
                    lw=1.5,
                    capsize=3,
                )
            for x, y_lo, y_hi in line.published:
                ax.plot(
                    [x],
                    [(y_lo + y_hi) / 2],
                    marker=marker,
                    mfc="white",
                    mec=colour,
                    ms=9,
                    mew=1.5,
                    ls="none",
                )
                if y_hi != y_lo:
                    ax.vlines(x, y_lo, y_hi, colors=colour, lw=1.5)
        if data.kind == "bar":
            ax.set_xticks(range(len(panel.categories)), panel.categories)
        elif data.log_x:
            ax.set_xscale("log", base=2)
            ax.set_xticks([t for t, _ in panel.log_ticks], [s for _, s in panel.log_ticks])
        if fixed_titles:
            ax.set_title(panel.title, fontsize=10, y=1.0)
        else:
            ax.set_title(panel.title, fontsize=10)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
        if panel.lines:
            ax.legend(fontsize=7)
    for j in range(n, nrows * cols):
        axes[j // cols][j % cols].set_visible(False)
    if data.any_published:
        handle = Line2D([], [], marker="o", mfc="white", mec="black", ls="none", label="paper")
        mpl.legend(handles=[handle], loc="outside lower right", fontsize=8, frameon=False)
    mpl.suptitle(data.title, fontsize=11)
    return png_bytes(mpl, dpi=DPI)


def draw_all(
    reps: list[Reproduction],
    *,
    backend: str = "local",
    jobs: int | None = None,
    address: str | None = None,
    progress: bool = False,
) -> list[dict[str, bytes]]:
    """Every figure of every reproduction, drawn in the batch layer's workers (one figure
    per task, all experiments' at once): per reproduction, {file: PNG bytes}."""
    from vmsched.batch import run_all

    owners = [(k, f.file) for k, rep in enumerate(reps) for f in rep.experiment.figures]
    data = [figure_data(rep, f) for rep in reps for f in rep.experiment.figures]
    # The figures with most panels (the longest to draw) first, so that the workers
    # finish together rather than one drawing a large figure while the other waits.
    order = sorted(range(len(data)), key=lambda i: -len(data[i].panels))
    drawn = run_all(
        draw,
        [data[i] for i in order],
        backend=backend,
        jobs=jobs,
        address=address,
        batch_size=1,
        progress=progress,
        label="figures",
    )
    pngs: list[bytes] = [b""] * len(data)
    for i, png in zip(order, drawn, strict=True):
        pngs[i] = png
    out: list[dict[str, bytes]] = [{} for _ in reps]
    for (k, file), png in zip(owners, pngs, strict=True):
        out[k][file] = png
    return out
