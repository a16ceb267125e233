"""Tables on a terminal, through a pipe, and as CSV or JSON.

On a terminal the commands draw rich tables as wide as the terminal. When the
output goes to a pipe or a file, there is no width to fit: the tables are drawn
at their natural width (a line is as long as its cells need; `COLUMNS` still
sets a width if given), so `vmsched schedulers | less` shows what the terminal
shows, uncut. `--format csv` and `--format json` print the same rows as data
instead (one header line, then a row per line; or one JSON document).

A reader that goes away (`vmsched schedulers | head`) is not an error: the
output stops and the command exits 0 quietly (rich alone would exit 1).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console

#: The width tables are drawn at when the output is not a terminal (and
#: COLUMNS is not set): wide enough that no cell is cut or folded.
PIPE_WIDTH = 10_000

FORMATS = ("table", "csv", "json")


class _Console(Console):
    """A rich Console whose broken pipe is a BrokenPipeError (which the
    command line turns into a quiet exit 0), not rich's exit 1."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def console() -> Console:
    """Standard output as the commands print to it: names and docs as they
    are ([domain.sched] is not rich markup), no number highlighting, and the
    natural width when not on a terminal."""
    width = None
    if not sys.stdout.isatty() and not os.environ.get("COLUMNS"):
        width = PIPE_WIDTH
    return _Console(markup=False, highlight=False, width=width, soft_wrap=False)


def add_format_option(p: argparse.ArgumentParser) -> None:
    """`--format table|csv|json` on a command that prints a table."""
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default), or the same rows as CSV or JSON on stdout",
    )


def print_rows(fmt: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Rows as CSV (a header line, then one line per row) or as a JSON list
    of objects keyed by column."""
    if fmt == "csv":
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)
    elif fmt == "json":
        print(json.dumps([dict(zip(columns, r, strict=True)) for r in rows], indent=2))
    else:
        raise ValueError(f"not a data format: {fmt}")
