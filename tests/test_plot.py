"""Figures of one run (`Result.plot`, vmsched.plot) and `vmsched plot RESULT_DIR`."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
import vmsched
from conftest import BASE, vmsched_cmd
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from vmsched import cli, plot

#: BASE with a two-VCPU domain, a driver domain and an idle domain that never wakes.
SCENARIO = (
    BASE.replace('name = "vm1"', 'name = "vm1"\nvcpus = 2')
    + """
[[domain]]
name = "dom0"
[domain.workload]
kind = "duty-cycle"
util_pct = 5
period_ms = 10

[[domain]]
name = "spare"
[domain.workload]
kind = "idle"
"""
)


@pytest.fixture(scope="module")
def result():
    return vmsched.run(vmsched.Scenario(_toml(SCENARIO)), progress=False)


def _toml(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)


def _legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None, "the figure has no legend"
    return [t.get_text() for t in legend.get_texts()]


def test_cpu_figure_has_units_and_one_legend_entry_per_domain(result):
    fig = result.plot.cpu()
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "time (s)"
    assert ax.get_ylabel() == "CPU (% of one PCPU)"
    assert _legend_texts(ax) == ["vm1", "vm2", "dom0 (driver)", "spare"]
    assert "credit" in ax.get_title()
    # One step curve per domain, in a distinct colour-blind-safe colour.
    colours = [a.get_edgecolor() for a in ax.patches]
    assert [tuple(c) for c in colours] == [to_rgba(plot.PALETTE[i]) for i in range(4)]
    assert len(set(plot.PALETTE)) == len(plot.PALETTE)


def test_cpu_figure_draws_the_time_series(result):
    fig = result.plot.cpu(domains=["vm2"])
    (ax,) = fig.axes
    (stairs,) = ax.patches
    values, edges, _ = stairs.get_data()
    ts = result.timeseries
    rows = ts[(ts["domain"] == "vm2") & ts["vcpu"].isna()]
    np.testing.assert_allclose(values, rows["cpu_pct"].to_numpy())
    # Each sample covers the interval that ends at its time, from the end of the warm-up.
    np.testing.assert_allclose(edges[1:], rows["time_s"].to_numpy())
    assert edges[0] == result.summary["warmup_s"]


def test_cpu_figure_per_vcpu_and_stacked(result):
    fig = result.plot.cpu(by_vcpu=True)
    assert _legend_texts(fig.axes[0]) == [
        "vm1 v0",
        "vm1 v1",
        "vm2 v0",
        "dom0 (driver) v0",
        "spare v0",
    ]
    assert "per VCPU" in fig.axes[0].get_title()
    stacked = result.plot.cpu(stacked=True, title="")
    ax = stacked.axes[0]
    assert ax.get_title() == ""
    top_values, _, _ = ax.patches[-1].get_data()
    ts = result.timeseries
    totals = ts[ts["vcpu"].isna()].groupby("time_s")["cpu_pct"].sum().to_numpy()
    np.testing.assert_allclose(top_values, totals, rtol=1e-9)


def test_latency_figure_units_legend_and_domains_without_wakeups(result):
    fig = result.plot.latency()
    (ax,) = fig.axes
    assert ax.get_ylabel() == "wake-up latency (µs)"
    assert ax.get_xlabel()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["p50", "p95", "p99", "max"]
    # vm1 has two VCPUs: an entry each; the idle domain never woke.
    vcpus = {d["name"]: d["vcpus"] for d in result.summary["domains"]}
    assert vcpus["spare"][0]["wakeups"] == 0
    assert _legend_texts(ax) == [
        f"vm1 v0 ({vcpus['vm1'][0]['wakeups']:,} wake-ups)",
        f"vm1 v1 ({vcpus['vm1'][1]['wakeups']:,} wake-ups)",
        f"vm2 ({vcpus['vm2'][0]['wakeups']:,} wake-ups)",
        f"dom0 (driver) ({vcpus['dom0'][0]['wakeups']:,} wake-ups)",
        "no wake-ups: spare",
    ]
    # The bars are the summary's statistics, in µs: the first four are vm1 v0's.
    stats = vcpus["vm1"][0]["wake_latency_us"]
    assert [p.get_height() for p in ax.patches[:4]] == [stats[k] for k in plot.LATENCY_STATS]
    assert plot.LATENCY_STATS == ("p50", "p95", "p99", "max")
    dom0 = vcpus["dom0"][0]["wake_latency_us"]
    assert [p.get_height() for p in ax.patches[12:16]] == [dom0[k] for k in plot.LATENCY_STATS]


def test_figures_draw_into_given_axes(result):
    fig = Figure()
    left, right = fig.subplots(1, 2)
    assert result.plot.cpu(ax=left) is fig
    assert result.plot.latency(ax=right) is fig
    assert left.get_ylabel() == "CPU (% of one PCPU)"
    assert right.get_ylabel() == "wake-up latency (µs)"
    assert len(fig.axes) == 2


def test_unknown_domain_is_named(result):
    with pytest.raises(ValueError, match="no domain 'vm9' in this run; the domains are vm1, vm2,"):
        result.plot.cpu(domains=["vm9"])


def _png_ok(path: Path, min_colours: int = 3) -> np.ndarray:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = matplotlib.image.imread(path)
    assert img.shape[0] > 300 and img.shape[1] > 600
    assert len(np.unique(img.reshape(-1, img.shape[2]), axis=0)) >= min_colours
    return img


def test_plot_command_writes_pngs(result, tmp_path):
    run_dir = result.save(tmp_path / "run1")
    proc = vmsched_cmd("plot", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    for name in ("cpu.png", "latency.png"):
        img = _png_ok(run_dir / name)
        # FIGSIZE inches at DPI.
        assert img.shape[:2] == (plot.FIGSIZE[1] * plot.DPI, plot.FIGSIZE[0] * plot.DPI)
    # Written under a temporary name and renamed: nothing else is left behind.
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "cpu.png",
        "latency.png",
        "summary.json",
        "timeseries.parquet",
    ]


def test_plot_command_out_folder_and_per_vcpu(result, tmp_path, capsys):
    run_dir = result.save(tmp_path / "run1")
    out = tmp_path / "figs" / "here"
    assert cli.main(["plot", str(run_dir), "--out", str(out), "--by-vcpu"]) == 0
    assert f"{out / 'cpu.png'}" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["cpu.png", "latency.png"]
    assert not (run_dir / "cpu.png").exists()


def test_saved_folder_plots_like_the_result(result, tmp_path):
    saved = plot.read_result_dir(result.save(tmp_path / "run1"))
    a = result.plot.cpu().axes[0].patches
    b = saved.plot.cpu().axes[0].patches
    assert len(a) == len(b)
    for pa, pb in zip(a, b, strict=True):
        np.testing.assert_allclose(pa.get_data()[0], pb.get_data()[0])


def _bad(tmp_path: Path, capsys, folder: Path) -> str:
    assert cli.main(["plot", str(folder), "--out", str(tmp_path / "never")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert not (tmp_path / "never").exists(), "nothing is written on bad input"
    return lines[0]


def test_plot_missing_folder(tmp_path, capsys):
    err = _bad(tmp_path, capsys, tmp_path / "nope")
    assert err == (
        f"vmsched: error: {tmp_path / 'nope'}: no such folder; expected a result folder as "
        "`vmsched run --out` writes it (summary.json, timeseries.parquet)"
    )


def test_plot_not_a_result_folder(tmp_path, capsys):
    folder = tmp_path / "empty"
    folder.mkdir()
    err = _bad(tmp_path, capsys, folder)
    assert err.startswith(f"vmsched: error: {folder / 'summary.json'}: no such file; expected")
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert "is not a folder; expected a result folder" in _bad(tmp_path, capsys, a_file)


def test_plot_bad_summary_and_series(result, tmp_path, capsys):
    run_dir = result.save(tmp_path / "run1")
    summary = run_dir / "summary.json"
    summary.write_text("{not json")
    err = _bad(tmp_path, capsys, run_dir)
    assert f"{summary}: cannot be read as JSON" in err
    summary.write_text(json.dumps({"scheduler": "credit", "warmup_s": 0}))
    err = _bad(tmp_path, capsys, run_dir)
    assert f"{summary}: is not a vmsched summary (no domains)" in err
    broken = dict(result.summary)
    broken["domains"] = [{"name": "vm1", "vcpus": [{"vcpu": 0}]}]
    summary.write_text(json.dumps(broken))
    assert "(no domains[0].vcpus[0].wakeups)" in _bad(tmp_path, capsys, run_dir)
    summary.write_text(json.dumps(result.summary))
    series = run_dir / "timeseries.parquet"
    series.write_bytes(b"not parquet")
    assert f"{series}: cannot be read as Parquet" in _bad(tmp_path, capsys, run_dir)
    series.unlink()
    assert f"{series}: no such file" in _bad(tmp_path, capsys, run_dir)
