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
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence

# `typing` is not loaded at run time (it is a tenth of `vmsched run`'s start-up):
# annotations are not evaluated (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rich.console import Console
    from rich.table import Table

#: The width tables are drawn at when the output is not a terminal (and
#: COLUMNS is not set): wide enough that no cell is cut or folded.
PIPE_WIDTH = 10_000

FORMATS = ("table", "csv", "json")


def console() -> Console:
    """Standard output as the commands print to it: names and docs as they
    are ([domain.sched] is not rich markup), no number highlighting, and the
    natural width when not on a terminal."""
    from rich.console import Console

    class _Console(Console):
        """A rich Console whose broken pipe is a BrokenPipeError (which the
        command line turns into a quiet exit 0), not rich's exit 1."""

        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    width = None
    if not sys.stdout.isatty() and not os.environ.get("COLUMNS"):
        width = PIPE_WIDTH
    return _Console(markup=False, highlight=False, width=width, soft_wrap=False)


# ------------------------------------------------ plain tables, without rich

#: Environment variables under which rich may style, size or wrap its output
#: even on a pipe: with any of them set, the output goes through rich.
_RICH_ENV = ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS")
#: Characters printed as they are by rich and one cell wide: printable ASCII,
#: and the micro and dash signs of the tables.
_PLAIN_TEXT = re.compile(r"[ -~µ—]*")
#: What rich could read as an emoji code (`:name:`) and replace.
_EMOJI_LIKE = re.compile(r":\S*?:")


class Grid:
    """A table as data (a header and justification per column, rows of
    strings, an optional title), drawn by rich ([`Grid.to_rich`]) or, where
    the output is a pipe or a file, as rich draws it there without loading
    rich ([`Grid.plain_lines`])."""

    def __init__(self, title: str | None = None) -> None:
        self.title = title
        self.columns: list[tuple[str, str, bool]] = []
        self.rows: list[list[str]] = []

    def add_column(self, header: str, justify: str = "left", no_wrap: bool = False) -> None:
        self.columns.append((header, justify, no_wrap))

    def add_row(self, *cells: str) -> None:
        self.rows.append(list(cells))

    def to_rich(self) -> Table:
        """The rich table (edges off, bold header) the commands print."""
        from rich.table import Table

        table = Table(show_edge=False, header_style="bold", title=self.title)
        for header, justify, no_wrap in self.columns:
            table.add_column(header, justify=justify, no_wrap=no_wrap)  # type: ignore[arg-type]
        for row in self.rows:
            table.add_row(*row)
        return table

    def plain_lines(self) -> list[str] | None:
        """The lines rich draws for this table at its natural width on a
        pipe (rich's heavy-head box without edges, one space of padding each
        side of a cell), or None where that is not known to be rich's
        drawing: a title, no rows, or text rich might treat specially."""
        if self.title is not None or not self.rows:
            return None
        for i, (header, justify, _) in enumerate(self.columns):
            if not all(_plain_cell(t, justify) for t in [header] + [r[i] for r in self.rows]):
                return None
        widths = [len(h) for h, _, _ in self.columns]
        for row in self.rows:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], len(cell))
        if sum(widths) + 3 * len(widths) > PIPE_WIDTH:
            return None

        def line(cells: Sequence[str], sep: str) -> str:
            parts = []
            for (_, justify, _), width, cell in zip(self.columns, widths, cells, strict=True):
                parts.append(
                    " " + (cell.rjust(width) if justify == "right" else cell.ljust(width)) + " "
                )
            return sep.join(parts)

        lines = [line([h for h, _, _ in self.columns], "┃")]
        lines.append("╇".join("━" * (w + 2) for w in widths))
        lines += [line(row, "│") for row in self.rows]
        return lines


def _plain_text(text: str) -> bool:
    """Does rich print `text` on a pipe as it is, one cell per character?"""
    return (
        len(text) < PIPE_WIDTH
        and _PLAIN_TEXT.fullmatch(text) is not None
        and _EMOJI_LIKE.search(text) is None
    )


def _plain_cell(text: str, justify: str) -> bool:
    """Does rich draw `text` in a cell as it is, padded to the column's
    width? Plain text without trailing spaces or runs of spaces (which rich
    may strip or fold), bar the indent of a left-justified cell."""
    body = text.lstrip(" ") if justify == "left" else text
    return (
        _plain_text(text)
        and not body.endswith(" ")
        and "  " not in body
        and body == body.lstrip(" ")
    )


class Output:
    """What a command prints (lines of text, bold lines, Grids), kept until
    [`Output.flush`]: on a pipe or a file, when everything is plain text that
    rich would print unchanged, it is written directly and rich is never
    loaded; otherwise it all goes through the rich console of [`console`]."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any]] = []

    def print(self, obj: Any = "", bold: bool = False) -> None:
        self.items.append(("bold" if bold else "text", obj))

    def _plain(self) -> list[str] | None:
        if sys.stdout.isatty() or any(os.environ.get(k) for k in _RICH_ENV):
            return None
        lines: list[str] = []
        for _, obj in self.items:
            if isinstance(obj, Grid):
                drawn = obj.plain_lines()
                if drawn is None:
                    return None
                lines += drawn
            elif isinstance(obj, str) and _plain_text(obj):
                lines.append(obj)
            else:
                return None
        return lines

    def flush(self) -> None:
        """Print everything, plainly where rich would print the same."""
        lines = self._plain()
        if lines is not None:
            sys.stdout.write("".join(line + "\n" for line in lines))
            sys.stdout.flush()
        else:
            from rich.text import Text

            out = console()
            for kind, obj in self.items:
                if isinstance(obj, Grid):
                    out.print(obj.to_rich())
                elif kind == "bold":
                    out.print(Text(obj, style="bold"))
                else:
                    out.print(obj)
        self.items = []


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
        import csv

        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)
    elif fmt == "json":
        print(json.dumps([dict(zip(columns, r, strict=True)) for r in rows], indent=2))
    else:
        raise ValueError(f"not a data format: {fmt}")
