"""Self-contained HTML reports: one file that opens anywhere, offline, with every figure in it.

A report is a title and a list of blocks, written in order::

    from vmsched.htmlreport import Figure, Heading, Paragraph, Table, Verdict, Verdicts
    from vmsched.htmlreport import write_report

    write_report("results/cmp/report.html", "Credit vs Credit2", [
        Heading("CPU share"),
        Paragraph("Each domain's CPU %, 100 = one PCPU."),
        Figure(fig, "CPU share over time", name="cpu-share"),   # also cpu-share.png
        Table(df, caption="Whole-run CPU %"),
        Verdicts([Verdict("credit2 keeps web's p99 under 1 ms", "pass"), "plain text"]),
    ])

The block kinds:

- `Heading(text, level=2)`: a section heading, `h2`..`h6` (the title is the one `h1`);
  level-2 headings also make the table of contents when there are three or more.
- `Paragraph(text)`: plain text, HTML-escaped; blank lines start new paragraphs.
- `Code(text)`: preformatted text, e.g. the command that reproduces the report.
- `Table(df, caption=None, index=False)`: a pandas DataFrame; numbers right-aligned and
  formatted by `format_number`, strings shown as they are (format them first for
  control), missing values as an em dash.
- `Figure(fig, caption, name=None)`: a matplotlib Figure, or PNG bytes, embedded as a
  base64 PNG and also written as `NAME.png` beside the HTML file (`figure-N.png`
  without a name).
- `Verdicts(items, title=None)`: a list of findings, each a `Verdict(text, status)`
  with status `pass`, `fail`, `warn` or `info` (shown as a tag and a coloured bar), or
  a plain string (`info`).

Tuples work too, for short code: `("heading", text[, level])`, `("paragraph", text)`,
`("code", text)`, `("table", df[, caption])`, `("figure", fig, caption[, name])`,
`("verdicts", items[, title])`; a bare string is a paragraph.

The page loads nothing from outside (no network, no external CSS or JS; a
Content-Security-Policy forbids it) and is valid HTML5. A tiny inline script sets
`data-rendered="1"` on `<body>` once the page and all its images have loaded, with
`data-images` (how many) and `data-broken-images` (how many failed to decode), so
a headless browser can check the page (tests/test_compare.py does).

Every file is written whole or not at all (temporary name, then rename): the PNGs
first, the HTML last.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import math
import re
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vmsched.api import write_atomic

#: Resolution of the PNGs made from matplotlib Figures.
PNG_DPI = 150
#: zlib level of the PNGs (lossless at any level). On the reproductions' figures, RGB at
#: level 3 took about a quarter less CPU to encode than RGBA at Pillow's default 6, for
#: files 8 % smaller (2 % larger than RGB at level 6); docs/reproduce.md, "Run times".
PNG_COMPRESS_LEVEL = 3
#: Statuses a Verdict may have, and the tag each shows (none for info).
VERDICT_TAGS = {"pass": "PASS", "fail": "FAIL", "warn": "WARN", "info": ""}


# ----- blocks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    """A section heading; `level` 2 (a section) to 6."""

    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    """Plain text; blank lines separate paragraphs. Never interpreted as HTML."""

    text: str


@dataclass(frozen=True)
class Code:
    """Preformatted text (a command, a file excerpt), shown as it is."""

    text: str


@dataclass(frozen=True)
class Table:
    """A pandas DataFrame. `index=True` also shows its index as the first column(s)."""

    df: Any
    caption: str | None = None
    index: bool = False


@dataclass(frozen=True)
class Figure:
    """A matplotlib Figure (or the bytes of a PNG) with its caption.

    It is embedded in the page and written as `name + ".png"` beside it; without a
    name, `figure-N.png` (N counts the report's figures from 1).
    """

    figure: Any
    caption: str
    name: str | None = None


@dataclass(frozen=True)
class Verdict:
    """One finding; `status` is "pass", "fail", "warn" or "info"."""

    text: str
    status: str = "info"


@dataclass(frozen=True)
class Verdicts:
    """A list of findings, under an optional small heading."""

    items: Sequence[Verdict | str] = field(default_factory=list)
    title: str | None = None


Block = Heading | Paragraph | Code | Table | Figure | Verdicts

_TUPLE_KINDS = {
    "heading": Heading,
    "paragraph": Paragraph,
    "code": Code,
    "table": Table,
    "figure": Figure,
    "verdicts": Verdicts,
}


def _as_block(item: Any, position: int) -> Block:
    if isinstance(item, Heading | Paragraph | Code | Table | Figure | Verdicts):
        return item
    if isinstance(item, str):
        return Paragraph(item)
    if isinstance(item, tuple) and item and item[0] in _TUPLE_KINDS:
        kind = _TUPLE_KINDS[item[0]]
        try:
            return kind(*item[1:])
        except TypeError as exc:
            raise TypeError(f"report block {position}: {item[0]!r} tuple: {exc}") from None
    kinds = ", ".join(_TUPLE_KINDS)
    raise TypeError(
        f"report block {position}: {type(item).__name__} is not a block; expected Heading, "
        f"Paragraph, Code, Table, Figure, Verdicts, a string, or a tuple whose first item is "
        f"one of {kinds}"
    )


# ----- formatting ------------------------------------------------------------------------


def format_number(x: Any) -> str:
    """A number as a report shows it: integers with thousands separators, other numbers
    with about four significant digits, missing values (None, NaN) as an em dash."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return "—"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v == 0:
        return "0"
    mag = abs(v)
    if mag >= 1e7 or mag < 1e-3:
        return f"{v:.3e}"
    if mag >= 100:
        return f"{v:,.0f}"
    if mag >= 10:
        return f"{v:.1f}"
    if mag >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def _is_number(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, int | float):
        return True
    return type(x).__module__ == "numpy" and hasattr(x, "dtype") and x.dtype.kind in "iuf"


def _cell(x: Any) -> str:
    # pd.NA and pd.NaT exist only once pandas is imported (a table without pandas has
    # neither): no import here for a table that does not need one.
    pd = sys.modules.get("pandas")
    if pd is not None and (x is pd.NA or x is pd.NaT):
        return "—"
    if _is_number(x) or x is None:
        return format_number(x.item() if hasattr(x, "item") else x)
    return str(x)


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


def _slug(text: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


# ----- figures ---------------------------------------------------------------------------


def png_bytes(fig: Any, dpi: int = PNG_DPI) -> bytes:
    """A matplotlib Figure as PNG bytes (PNG bytes are returned as they are)."""
    if isinstance(fig, bytes | bytearray):
        data = bytes(fig)
        if not data.startswith(b"\x89PNG\r\n\x1a\n"):
            raise ValueError("figure bytes are not a PNG image; expected PNG bytes or a Figure")
        return data
    if not hasattr(fig, "savefig"):
        raise TypeError(
            f"{type(fig).__name__} is not a figure; expected a matplotlib Figure or PNG bytes"
        )
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    # One draw, then the pixels encoded: the same image as `savefig`, which draws a
    # figure with a layout engine twice (once to lay it out, once to render it).
    fig.set_dpi(dpi)
    fig.canvas.draw()
    width, height = fig.canvas.get_width_height(physical=True)
    image = Image.frombuffer("RGBA", (width, height), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    # An opaque figure (every pixel's alpha 255, as with the default white face) is
    # written without its alpha channel: the same pixels, a quarter less to compress.
    if image.getchannel("A").getextrema() == (255, 255):
        image = image.convert("RGB")
    buf = io.BytesIO()
    image.save(buf, format="png", dpi=(dpi, dpi), compress_level=PNG_COMPRESS_LEVEL)
    return buf.getvalue()


def _png_size(data: bytes) -> tuple[int, int]:
    """(width, height) in pixels, from the PNG's header."""
    width, height = struct.unpack(">II", data[16:24])
    return width, height


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _figure_name(fig: Figure, n: int) -> str:
    if fig.name is None:
        return f"figure-{n}"
    name = fig.name.removesuffix(".png")
    if not _NAME.match(name):
        raise ValueError(
            f"figure name {fig.name!r} is not a plain file name; expected letters, digits, "
            "'.', '_' and '-' (it becomes NAME.png beside the report)"
        )
    return name


# ----- the page ----------------------------------------------------------------------------

_STYLE = """\
:root { color-scheme: light; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1b1b1b; background: #fff; max-width: 64rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.7rem; margin: 0 0 .25rem; }
h2 { font-size: 1.35rem; margin: 2rem 0 .5rem; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.1rem; margin: 1.4rem 0 .4rem; }
h4, h5, h6 { font-size: 1rem; margin: 1.2rem 0 .3rem; }
.generated { color: #555; font-size: .875rem; margin: 0 0 1rem; }
nav ol { margin: .25rem 0 1rem; padding-left: 1.5rem; }
pre { background: #f4f4f4; padding: .6rem .8rem; font-size: .875rem;
  white-space: pre-wrap; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: .5rem 0 1.25rem; font-size: .875rem; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { border: 1px solid #ccc; padding: .2rem .5rem; vertical-align: top; }
th { background: #f0f0f0; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0 1.5rem; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { font-size: .875rem; color: #333; margin-top: .3rem; }
ul.verdicts { list-style: none; padding-left: 0; }
ul.verdicts li { margin: .3rem 0; padding: .2rem .5rem; border-left: 4px solid #888; }
li.pass { border-left-color: #009e73 !important; }
li.fail { border-left-color: #d55e00 !important; }
li.warn { border-left-color: #e69f00 !important; }
.tag { font-weight: 700; font-size: .8rem; margin-right: .4rem; }
@media print { body { max-width: none; padding: 0; } h2 { break-after: avoid; } }
"""

# Marks the page rendered once it and every image have loaded, and counts the images
# that failed to decode (naturalWidth 0), for automated checks in a headless browser.
_SCRIPT = """\
(function () {
  "use strict";
  function finish() {
    var images = Array.prototype.slice.call(document.images);
    var broken = images.filter(function (img) {
      return !(img.complete && img.naturalWidth > 0);
    });
    document.body.dataset.images = String(images.length);
    document.body.dataset.brokenImages = String(broken.length);
    document.body.dataset.rendered = "1";
  }
  if (document.readyState === "complete") {
    finish();
  } else {
    window.addEventListener("load", finish);
  }
})();
"""


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


# Nothing may load from anywhere but the page itself: images are data: URIs, and the
# one style sheet and script are allowed by their hashes.
_CSP = (
    f"default-src 'none'; img-src data:; style-src {_csp_hash(_STYLE)}; "
    f"script-src {_csp_hash(_SCRIPT)}; base-uri 'none'; form-action 'none'"
)


def _render_table(t: Table) -> str:
    df = t.df
    if not hasattr(df, "columns") or not hasattr(df, "itertuples"):
        raise TypeError(f"Table needs a pandas DataFrame, got {type(df).__name__}")
    frame = df.reset_index() if t.index else df

    def label(col: Any) -> str:
        return " · ".join(str(c) for c in col) if isinstance(col, tuple) else str(col)

    out = ["<table>"]
    if t.caption:
        out.append(f"<caption>{_esc(t.caption)}</caption>")
    out.append(
        "<thead><tr>"
        + "".join(f"<th>{_esc(label(c))}</th>" for c in frame.columns)
        + "</tr></thead>"
    )
    out.append("<tbody>")
    for row in frame.itertuples(index=False, name=None):
        cells = []
        for v in row:
            cls = ' class="num"' if _is_number(v) else ""
            cells.append(f"<td{cls}>{_esc(_cell(v))}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _render_verdicts(v: Verdicts) -> str:
    out = []
    if v.title:
        out.append(f"<h3>{_esc(v.title)}</h3>")
    out.append('<ul class="verdicts">')
    for item in v.items:
        verdict = Verdict(item) if isinstance(item, str) else item
        if not isinstance(verdict, Verdict):
            raise TypeError(f"a verdict must be a Verdict or a string, got {type(item).__name__}")
        if verdict.status not in VERDICT_TAGS:
            raise ValueError(
                f"verdict status {verdict.status!r} is unknown; expected one of "
                + ", ".join(VERDICT_TAGS)
            )
        tag = VERDICT_TAGS[verdict.status]
        tag_html = f'<span class="tag">{tag}</span>' if tag else ""
        out.append(f'<li class="{verdict.status}">{tag_html}{_esc(verdict.text)}</li>')
    out.append("</ul>")
    return "\n".join(out)


def render(title: str, blocks: Iterable[Any]) -> tuple[str, dict[str, bytes]]:
    """The page and its figures without writing anything: (HTML text, {file name: PNG})."""
    from vmsched import __version__

    parts: list[str] = []
    pngs: dict[str, bytes] = {}
    toc: list[tuple[str, str]] = []
    ids: set[str] = set()
    figures = 0
    for position, item in enumerate(blocks):
        block = _as_block(item, position)
        if isinstance(block, Heading):
            if not 2 <= block.level <= 6:
                raise ValueError(f"heading level {block.level} is not allowed; expected 2..6")
            anchor = _slug(block.text, ids)
            if block.level == 2:
                toc.append((anchor, block.text))
            tag = f"h{block.level}"
            parts.append(f'<{tag} id="{anchor}">{_esc(block.text)}</{tag}>')
        elif isinstance(block, Paragraph):
            for para in re.split(r"\n\s*\n", block.text.strip()):
                if para:
                    parts.append(f"<p>{_esc(para)}</p>")
        elif isinstance(block, Code):
            parts.append(f"<pre><code>{_esc(block.text)}</code></pre>")
        elif isinstance(block, Table):
            parts.append(_render_table(block))
        elif isinstance(block, Figure):
            figures += 1
            name = _figure_name(block, figures)
            file = f"{name}.png"
            if file in pngs:
                raise ValueError(f"two figures are named {name!r}; expected distinct names")
            data = png_bytes(block.figure)
            pngs[file] = data
            width, height = _png_size(data)
            src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
            parts.append(
                f'<figure id="{_slug("fig-" + name, ids)}">'
                f'<img src="{src}" alt="{_esc(block.caption)}" width="{width}" '
                f'height="{height}">'
                f"<figcaption>{_esc(block.caption)} (<code>{_esc(file)}</code>)</figcaption>"
                "</figure>"
            )
        else:
            parts.append(_render_verdicts(block))

    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="vmsched">',
        f"<title>{_esc(title)}</title>",
        '<link rel="icon" href="data:,">',
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{_esc(title)}</h1>",
        f'<p class="generated">Generated by vmsched {_esc(__version__)} on {stamp}.</p>',
    ]
    if len(toc) >= 3:
        items = "".join(f'<li><a href="#{a}">{_esc(t)}</a></li>' for a, t in toc)
        head.append(f'<nav aria-label="Contents"><ol>{items}</ol></nav>')
    tail = ["</main>", f"<script>{_SCRIPT}</script>", "</body>", "</html>", ""]
    return "\n".join(head + parts + tail), pngs


def write_report(path: str | Path, title: str, blocks: Iterable[Any]) -> Path:
    """Write a self-contained HTML report to `path`, and each figure as a PNG beside it.

    `blocks` is a list of Heading, Paragraph, Code, Table, Figure and Verdicts (or the
    tuple and string shorthands in the module doc). The folder must exist. Returns the
    path of the HTML file. Raises TypeError/ValueError on a malformed block, before
    anything is written.
    """
    path = Path(path)
    page, pngs = render(title, blocks)
    for file, data in pngs.items():
        write_atomic(path.parent / file, data)
    write_atomic(path, page)
    return path
