"""The reproductions' figures drawn cheaper with the same pixels: panel titles placed
without matplotlib's measuring, and opaque PNGs written as RGB."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from vmsched import htmlreport
from vmsched.reproduce import figures
from vmsched.reproduce.figures import FigureData, Line, PanelData, draw


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def _data(scale: float, kind: str = "line", log_x: bool = False) -> FigureData:
    xs = [0.0, 1.0, 2.0] if kind == "bar" else [1.0, 2.0, 4.0]
    panels = [
        PanelData(
            title=f"panel {k}",
            xlabel="Dom0 weight",
            ylabel="throughput (req/s)",
            lines=[
                Line(
                    f"variant {j}",
                    j,
                    xs,
                    [scale * (1 + j + k + 0.3 * i) for i in range(3)],
                    [0.0, scale * 0.1, 0.0],
                    [0.0, scale * 0.2, 0.0],
                    [(xs[1], scale * 1.5, scale * 1.9)] if j == 0 else [],
                )
                for j in range(2)
            ],
            categories=["a", "b", "c"] if kind == "bar" else [],
            log_ticks=[(x, f"{x:g}") for x in xs] if log_x else [],
        )
        for k in range(4)
    ]
    return FigureData("f.png", "a figure", kind, log_x, panels, any_published=True)


def test_fixed_titles_give_the_pixels_of_matplotlibs_placement(monkeypatch):
    cases = [_data(40.0), _data(900.0, "bar"), _data(3.0, log_x=True), _data(1e4)]
    fixed = [draw(d) for d in cases]
    # Every title left to matplotlib (the threshold below every figure's values).
    monkeypatch.setattr(figures, "Y_FIXED_TITLE", 0.0)
    placed = [draw(d) for d in cases]
    for a, b in zip(fixed, placed, strict=True):
        assert np.array_equal(_pixels(a), _pixels(b))


def test_large_values_keep_matplotlibs_title_placement():
    # From 10^6 a y axis shows a multiplier ("1e6") above it: matplotlib may lift the
    # title over it, so the title is not fixed there.
    assert figures._y_top(_data(40.0)) < figures.Y_FIXED_TITLE
    assert figures._y_top(_data(1e6)) >= figures.Y_FIXED_TITLE
    # The interval's top and the published numbers count, not only the means.
    d = _data(1.0)
    line = d.panels[0].lines[0]
    big = Line(line.label, 0, line.xs, line.ys, line.err_lo, line.err_hi, [(1.0, 0.0, 2e5)])
    d.panels[0].lines[0] = big
    assert figures._y_top(d) >= figures.Y_FIXED_TITLE


def test_opaque_figures_are_rgb_and_transparent_ones_keep_alpha():
    from matplotlib.figure import Figure

    opaque = Figure(figsize=(2, 1.5))
    opaque.subplots().plot([0, 1], [1, 0])
    png = htmlreport.png_bytes(opaque, dpi=50)
    assert Image.open(io.BytesIO(png)).mode == "RGB"
    # The same pixels as the RGBA image matplotlib drew.
    rgba = np.asarray(opaque.canvas.buffer_rgba())
    assert np.array_equal(_pixels(png), rgba)

    clear = Figure(figsize=(2, 1.5))
    clear.patch.set_alpha(0.0)
    clear.subplots().plot([0, 1], [1, 0])
    png = htmlreport.png_bytes(clear, dpi=50)
    assert Image.open(io.BytesIO(png)).mode == "RGBA"
    assert np.array_equal(_pixels(png), np.asarray(clear.canvas.buffer_rgba()))
