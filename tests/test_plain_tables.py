"""`vmsched run` on a pipe prints its tables without rich (tabular.Grid,
tabular.Output): the lines must be exactly those rich draws there, and
whatever the plain drawing does not know rich to draw the same way goes
through rich."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from vmsched import tabular
from vmsched.cli import _run_table


def _rich_lines(grid: tabular.Grid) -> list[str]:
    """The grid drawn by rich as `vmsched run` draws it on a pipe."""
    buf = io.StringIO()
    out = Console(
        file=buf,
        markup=False,
        highlight=False,
        width=tabular.PIPE_WIDTH,
        soft_wrap=False,
        force_terminal=False,
        color_system=None,
    )
    out.print(grid.to_rich())
    return buf.getvalue().split("\n")[:-1]


_CHARS = "abcxyz019 .,%()-_/µ—abcxyz019"


def _word(rng: random.Random, longest: int) -> str:
    return "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, longest)))


def test_plain_grids_are_drawn_as_rich_draws_them():
    rng = random.Random(7)
    drawn = 0
    for _ in range(600):
        grid = tabular.Grid()
        ncols = rng.randint(1, 7)
        for c in range(ncols):
            grid.add_column(
                _word(rng, 14) or f"c{c}",
                justify=rng.choice(["left", "right"]),
                no_wrap=rng.random() < 0.5,
            )
        for _ in range(rng.randint(1, 6)):
            grid.add_row(*(_word(rng, 20) for _ in range(ncols)))
        plain = grid.plain_lines()
        if plain is not None:
            drawn += 1
            assert plain == _rich_lines(grid), (grid.columns, grid.rows)
    assert drawn > 30  # most grids with a space in the wrong place go through rich


def _domain(name: str, vcpus: int, driver: bool = False) -> dict:
    lat = {"p50": 12.5, "p99": 1234.5}
    return {
        "name": name,
        "driver": driver,
        "cpu_pct": 33.3,
        "runnable_pct": 1.25,
        "blocked_pct": 65.0,
        "vcpus": [
            {
                "vcpu": i,
                "cpu_pct": 33.3 / vcpus,
                "runnable_ns": 1e8,
                "blocked_ns": 5e9,
                "context_switches": 1000 + i,
                "wake_latency_us": lat,
            }
            for i in range(vcpus)
        ],
    }


@pytest.mark.parametrize("verbose", [False, True])
def test_the_run_table_on_a_pipe_is_rich_s(verbose):
    doms = [_domain("dom0", 2, driver=True), _domain("web", 1)]
    doms += [_domain(f"vm{i}", 1 + i % 3) for i in range(40)]  # beyond the rows shown
    grid = _run_table(doms, 10.0, verbose)
    assert grid.plain_lines() == _rich_lines(grid)


@pytest.mark.parametrize(
    "text",
    [
        "a :smile: here",  # rich may replace emoji codes
        "tab\there",
        "wide 漢字",
        "x" * tabular.PIPE_WIDTH,
    ],
)
def test_text_rich_may_change_goes_through_rich(text, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdout.isatty", lambda: False, raising=False)
    for var in tabular._RICH_ENV:
        monkeypatch.delenv(var, raising=False)
    grid = tabular.Grid()
    grid.add_column("h")
    grid.add_row(text)
    assert grid.plain_lines() is None
    out = tabular.Output()
    out.print(text)
    assert out._plain() is None
    titled = tabular.Grid(title="t")
    titled.add_column("h")
    titled.add_row("x")
    assert titled.plain_lines() is None


def test_output_is_plain_on_a_pipe_and_rich_otherwise(monkeypatch, capsys):
    for var in tabular._RICH_ENV:
        monkeypatch.delenv(var, raising=False)
    grid = tabular.Grid()
    grid.add_column("domain", no_wrap=True)
    grid.add_column("CPU %", justify="right")
    grid.add_row("vm1", "66.7")

    def show() -> str:
        out = tabular.Output()
        out.print("title", bold=True)
        out.print("credit on 2 PCPUs")
        out.print(grid)
        out.print()
        out.flush()
        return capsys.readouterr().out

    plain = show()
    assert plain == "title\ncredit on 2 PCPUs\n" + "\n".join(_rich_lines(grid)) + "\n\n"
    monkeypatch.setenv("COLUMNS", "40")  # rich sizes the output: through rich
    assert show() == plain  # a narrow table is drawn the same at 40 columns
