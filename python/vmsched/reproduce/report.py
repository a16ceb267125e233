"""A reproduction's outputs: results.csv, report.md, report.html and the figures.

The report is built once as a list of blocks (headings, paragraphs, tables,
images); report.md and report.html are two renderings of the same blocks, so
they always say the same thing. Every file is written whole or not at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vmsched.api import prepare_out_dir, write_atomic
from vmsched.errors import InternalError
from vmsched.reproduce.binding import FLAT_REL, bindings, sweeps
from vmsched.reproduce.checks import num
from vmsched.reproduce.framework import (
    REPLICATION_COLUMNS,
    RESULT_COLUMNS,
    Experiment,
    Reproduction,
    Row,
    flat_misses,
    params_key,
)
from vmsched.reproduce.stats import with_interval

REPORT_MD = "report.md"
REPORT_HTML = "report.html"
RESULTS_CSV = "results.csv"
REPLICATIONS_CSV = "replications.csv"

PLACEHOLDER = (
    "*Explanation not written yet.* A person who has looked at these results writes it in "
    "this claim's `explanation` in `{module}`."
)


# ----- blocks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Text:
    """A paragraph in Markdown."""

    markdown: str


@dataclass(frozen=True)
class TableBlock:
    header: list[str]
    rows: list[list[str]]
    #: Column alignment: "l" or "r" per column.
    align: str = ""


@dataclass(frozen=True)
class Bullets:
    """A list; `statuses` ("pass"/"fail"/"info" per item) mark verdicts in HTML."""

    items: list[str]
    statuses: list[str] | None = None


@dataclass(frozen=True)
class Image:
    file: str
    alt: str
    png: bytes


Block = Heading | Text | Bullets | TableBlock | Image


# ----- results.csv --------------------------------------------------------------------------


def _csv_number(x: float) -> str:
    if not math.isfinite(x):
        return ""
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _csv_field(text: str) -> str:
    if any(c in text for c in ',"\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def results_csv(rows: list[Row]) -> str:
    """results.csv: the columns of RESULT_COLUMNS, one row per (scheduler, params, metric)."""
    lines = [",".join(RESULT_COLUMNS)]
    for r in rows:
        fields = [r.scheduler, r.key, r.metric, _csv_number(r.simulated), r.published, r.unit]
        lines.append(",".join(_csv_field(f) for f in fields))
    return "\n".join(lines) + "\n"


def replications_csv(rows: list[Row]) -> str:
    """replications.csv: REPLICATION_COLUMNS, one row per results.csv row (same order)."""
    lines = [",".join(REPLICATION_COLUMNS)]
    for r in rows:
        est = r.estimate
        fields = [
            r.scheduler,
            r.key,
            r.metric,
            str(len(r.values)),
            _csv_number(r.simulated),
            _csv_number(est.lo),
            _csv_number(est.hi),
            ";".join(str(s) for s in r.seeds),
            ";".join(_csv_number(v) for v in r.values),
        ]
        lines.append(",".join(_csv_field(f) for f in fields))
    return "\n".join(lines) + "\n"


def cell(row: Row | None) -> str:
    """A simulated number for a report table: `934 ± 12` with replications."""
    if row is None or not math.isfinite(row.simulated):
        return ""
    return with_interval(row.estimate, num)


# ----- the report's content ----------------------------------------------------------------


def _module(exp: Experiment) -> str:
    """The source file of the experiment's grid (a module of a package included)."""
    return "python/" + exp.grid.__module__.replace(".", "/") + ".py"


def _unit_label(unit: str) -> str:
    return f" ({unit})" if unit else ""


def _published_tables(rep: Reproduction) -> list[Block]:
    exp = rep.experiment
    if not exp.published:
        return [
            Text(
                exp.note
                or "No published numbers are compared for this experiment, so only the "
                "simulated results are shown."
            )
        ]
    blocks: list[Block] = []
    tables: dict[str, list] = {}
    for p in exp.published:
        tables.setdefault(p.table, []).append(p)
    for name, entries in tables.items():
        metrics = list(dict.fromkeys(p.metric for p in entries))
        variants = list(dict.fromkeys((p.scheduler, params_key(p.params)) for p in entries))
        params_of = {(p.scheduler, params_key(p.params)): p.params for p in entries}
        header = ["variant"]
        for m in metrics:
            unit = _unit_label(exp.units.get(m, ""))
            header += [f"{m}{unit} paper", f"{m} simulated"]
        rows = []
        for sched, key in variants:
            cells = [exp.label(sched, params_of[(sched, key)])]
            for m in metrics:
                pub = next(
                    (
                        p.text()
                        for p in entries
                        if p.scheduler == sched and params_key(p.params) == key and p.metric == m
                    ),
                    "",
                )
                sim = rep.table._index.get((sched, key, m))
                cells += [pub or "—", cell(sim) or "—"]
            rows.append(cells)
        blocks += [
            Heading(3, f"{exp.paper}, {name}"),
            TableBlock(header, rows, "l" + "r" * (len(header) - 1)),
        ]
    if exp.note:
        blocks.append(Text(exp.note))
    return blocks


def _explanation_note(rep: Reproduction) -> list[Block]:
    """Where the explanations' numbers come from, when any claim has one."""
    if not any(v.explanation for v in rep.verdicts):
        return []
    source = rep.experiment.explained_from or "an earlier run"
    if rep.experiment.explain is not None:
        return [
            Text(
                "Each verdict, its measured evidence and the numbers its explanation quotes are "
                "this run's: the explanations were written by a person from "
                f"{source}, and every number in them that measures this experiment's "
                "configurations is computed from this run's results when the report is made. "
                "A number from another run (a targeted diagnostic with other settings) says "
                "which run and command it comes from."
            )
        ]
    quick = " This is a `--quick` run, so its numbers differ from theirs." if rep.quick else ""
    return [
        Text(
            "Each verdict and its measured evidence are this run's. The explanations under them "
            f"were written by a person from {source}; the numbers they quote come from there, "
            f"and a later model may change them.{quick}"
        )
    ]


def _claims(rep: Reproduction) -> list[Block]:
    exp = rep.experiment
    if not rep.verdicts:
        return [
            Text(
                "No claims are checked for this experiment"
                + (" (its results are kept for independent validation)." if exp.note else ".")
            )
        ]
    blocks: list[Block] = []
    for v in rep.verdicts:
        c = v.claim
        verdict = "reproduced" if v.reproduced else "not reproduced"
        blocks += [
            Heading(3, f"Claim {c.id}: {verdict}"),
            Text(f"> {c.statement} ({c.source})"),
            Text(f"**Verdict: {verdict}.** Measured: {v.evidence}"),
        ]
        if v.explanation:
            blocks.append(Text(f"**Explanation:** {v.explanation}"))
        elif not v.reproduced:
            blocks.append(
                Text("**Explanation:** " + PLACEHOLDER.format(module=_module(rep.experiment)))
            )
    return blocks


def _all_results(rep: Reproduction) -> TableBlock:
    exp = rep.experiment
    metrics = list(dict.fromkeys(r.metric for r in rep.table.rows))
    variants: dict[tuple[str, str], dict[str, str]] = {}
    for r in rep.table.rows:
        variants.setdefault((r.scheduler, r.key), r.params)
    by = {(r.scheduler, r.key, r.metric): r for r in rep.table.rows}
    header = ["scheduler", "params", *(f"{m}{_unit_label(exp.units.get(m, ''))}" for m in metrics)]
    rows = []
    order = {s: i for i, s in enumerate(dict.fromkeys(s for s, _ in variants))}
    keyed = sorted(variants.items(), key=lambda kv: (order[kv[0][0]], _param_sort(kv[1])))
    for (sched, key), _params in keyed:
        cells = [sched, key.replace(";", "; ")]
        for m in metrics:
            cells.append(cell(by.get((sched, key, m))))
        rows.append(cells)
    return TableBlock(header, rows, "ll" + "r" * len(metrics))


def _param_sort(p: Mapping[str, str]):
    out = []
    for k in sorted(p):
        v = p[k]
        try:
            out.append((k, 0, float(v), ""))
        except ValueError:
            out.append((k, 1, 0.0, v))
    return out


def _binding_blocks(rep: Reproduction) -> list[Block]:
    """Which resource limits each configuration, and the swept parameters that change
    nothing (see `vmsched.reproduce.binding`)."""
    exp = rep.experiment
    found = bindings(rep.runs, rep.summaries)
    counts: dict[str, int] = {}
    for b in found:
        counts[b.resource] = counts.get(b.resource, 0) + 1
    blocks: list[Block] = [
        Heading(2, "What limits each run"),
        Text(
            "The binding resource of every configuration, measured from its first "
            "replication's summary (rules in `vmsched.reproduce.binding`): "
            + ", ".join(f"{n} × {res}" for res, n in counts.items())
            + "."
        ),
        TableBlock(
            ["scheduler", "params", "binding resource", "measured"],
            [[b.scheduler, b.key.replace(";", "; "), b.resource, b.evidence] for b in found],
            "llll",
        ),
    ]
    sw = sweeps(rep.table.rows)
    if not sw:
        return blocks
    flat = [s for s in sw if s.flat]
    explained = [s for s in flat if s.param in exp.flat_explained]
    missed = [
        s
        for s in flat
        if s not in explained
        and s.param in exp.flat_missed
        and exp.flat_missed[s.param][0] in s.where
    ]
    to_find = [s for s in flat if s not in explained and s not in missed]
    limit = f"{FLAT_REL * 100:g} %"
    summary = (
        f"{len(sw)} sweeps of a numeric parameter with everything else fixed; {len(flat)} change "
        f"no metric by more than {limit}."
    )
    if missed:
        summary += (
            f" **{len(missed)} flat sweep(s) are misses: the paper's text says the parameter "
            "moves the results and the model's do not** (the measured cause below; they stay "
            "flagged): " + "; ".join(f"{s.param} ({s.where})" for s in missed) + "."
        )
    if to_find:
        summary += (
            f" **{len(to_find)} flat sweep(s) are setup defects to be found against the "
            "paper's text**: " + "; ".join(f"{s.param} ({s.where})" for s in to_find) + "."
        )
    blocks += [Heading(3, "Swept parameters"), Text(summary)]
    for param, why in exp.flat_explained.items():
        if any(s.param == param for s in flat):
            blocks.append(Text(f"Flat along `{param}`, as the paper's text explains: {why}"))
    causes = flat_misses(exp, rep.table) if missed else {}
    for param, cause in causes.items():
        if any(s.param == param for s in missed):
            blocks.append(
                Text(f"Flat along `{param}` where the paper's text says it moves (a miss): {cause}")
            )
    blocks.append(
        TableBlock(
            ["parameter", "with", "values", "largest change", "of metric", "flat"],
            [
                [
                    s.param,
                    s.where.replace(";", "; "),
                    ", ".join(s.values),
                    f"{s.largest_change * 100:.1f} %",
                    s.metric,
                    ("**flat (miss)**" if s in missed else "**flat**") if s.flat else "",
                ]
                for s in sw
            ],
            "lllrll",
        )
    )
    return blocks


#: The counters by which the proposed schedulers show that they acted: counter -> what it
#: counts (docs/schedulers/*.md).
DECISION_COUNTERS = {
    "comm_preferred": "sedf-comm: decisions that ran another VCPU than SEDF would have",
    "comm_preferred_penalty": "sedf-comm: of those, a penalty-queue VCPU (owed a lost slice)",
    "comm_no_slack": "sedf-comm: a more intensive VCPU passed over (no slack)",
    "comm_not_eligible": "sedf-comm: decisions at which a more network-intensive VCPU than "
    "any the rule may prefer waited for its next period (it had received its slice in the "
    "current one; a diagnosis, not a decision)",
    "differs_from_credit": "credit-enhanced: decisions whose choice was not Credit's from the "
    "same state (the running VCPU where Credit's rate limit would keep it, else the "
    "run-queue head)",
    "ratelimit_overrides": "credit-enhanced: of those, decisions Credit's rate limit would "
    "have deferred",
    "supersedes": "credit-enhanced: decisions whose choice was not Credit's run-queue head",
    "moves_to_empty_pcpu": "credit-enhanced: queued VCPUs moved to an idle PCPU",
    "boost_promotions": "mcredit2: promotions of a domain to the boost",
    "boost_changes": "mcredit2: promotions of another domain than the boosted one",
    "weight_updates": "credit-dynweight: weight-update windows ended",
}


def _counter_total(summary: Mapping[str, Any], key: str) -> float | None:
    hosts = summary.get("hosts") if isinstance(summary.get("hosts"), list) else [summary]
    values = [
        h.get("scheduler_counters", {}).get(key)
        for h in hosts
        if isinstance(h.get("scheduler_counters", {}).get(key), int | float)
    ]
    return float(sum(values)) if values else None


def _decision_blocks(rep: Reproduction) -> list[Block]:
    """Per run, how often a proposed scheduler decided differently from its base."""
    keys = [
        k for k in DECISION_COUNTERS if any(_counter_total(s, k) is not None for s in rep.summaries)
    ]
    if not keys:
        return []
    rows = []
    for run, summary in zip(rep.runs, rep.summaries, strict=True):
        values = [_counter_total(summary, k) for k in keys]
        if all(v is None for v in values):
            continue
        rows.append(
            [run.scheduler, run.key.replace(";", "; "), str(run.seed)]
            + ["" if v is None else f"{v:,.0f}" for v in values]
        )
    return [
        Heading(2, "What the proposed schedulers decided"),
        Text(
            "Per run (every seed), the scheduler's own count of the decisions by which it "
            "differs from the scheduler it extends (whole run, warm-up included): "
            + "; ".join(f"`{k}` = {DECISION_COUNTERS[k]}" for k in keys)
            + "."
        ),
        TableBlock(["scheduler", "params", "seed", *keys], rows, "lll" + "r" * len(keys)),
    ]


def _sensitivity_blocks(rep: Reproduction) -> list[Block]:
    """The verdicts with each estimated number halved and doubled."""
    table = rep.sensitivity
    if table is None:
        return []
    blocks: list[Block] = [Heading(2, "Sensitivity to the estimates")]
    if table.missing:
        return [*blocks, Text(f"No sensitivity table: {table.missing}.")]
    blocks.append(
        Text(
            "Each number marked *estimate* in docs/calibration.md that this experiment uses, "
            "and each setup number the paper leaves open, halved and doubled in turn; the "
            "sensitivity grid (short runs) with one seed is rerun for each and every verdict "
            "compared with the "
            f"same grid's at the profiled values ({table.baseline_reproduced} of {table.judged} "
            "reproduced there). A verdict that flips hinges on that estimate "
            "(`vmsched.reproduce.sensitivity`)."
        )
    )
    rows = [
        [
            r.variant,
            "setup" if r.alternative else f"×{r.factor:g}",
            f"{r.reproduced} of {r.judged}",
            ", ".join(r.flipped) if r.flipped else "all hold",
        ]
        for r in table.rows
    ]
    held = sum(not r.flipped for r in table.rows)
    blocks += [
        Text(f"All verdicts hold under {held} of the {len(table.rows)} variations."),
        TableBlock(["estimate", "factor", "reproduced", "verdicts that flip"], rows, "lrrl"),
    ]
    alts = [r for r in table.rows if r.alternative]
    if alts:
        blocks += [
            Heading(3, "Setups the paper leaves open: the alternatives"),
            Text(
                "Each setup the paper's text leaves open, other than the one chosen above "
                "(see the decisions), run the same way (sensitivity grid, one seed). The "
                "verdicts and simulated numbers under it, beside the chosen setup's in the same "
                f"sensitivity grid ({table.baseline_reproduced} of {table.judged} reproduced "
                "there)."
            ),
        ]
        for r in alts:
            blocks.append(
                Text(
                    f"**{r.variant.removeprefix('setup: ')}** ({r.reproduced} of {r.judged} "
                    f"reproduced). {r.evidence}"
                )
            )
            blocks.append(
                Bullets(
                    [
                        f"Claim {cid}: {'reproduced' if ok else 'not reproduced'} — {text}"
                        for cid, ok, text in r.texts
                    ],
                    ["pass" if ok else "fail" for _, ok, _ in r.texts],
                )
            )
    return blocks


def _setup_line(rep: Reproduction) -> str:
    t = rep.timing
    mode = (
        "Quick run (`--quick`, a smoke check: its verdicts may differ from the full-length run's)"
        if rep.quick
        else "Full run"
    )
    seeds = rep.seeds
    if len(seeds) > 1:
        reps = (
            f"{len(seeds)} replications per configuration (seeds {seeds[0]}-{seeds[-1]}); every "
            "number is the mean over the seeds, ± the half-width of its 95 % Student-t interval"
        )
    else:
        reps = f"one replication (seed {seeds[0]}), so no intervals"
    return (
        f"{mode}: {len(rep.runs)} simulations of {t.duration_s:g} simulated s each, measured "
        f"after {t.warmup_s:g} s of warm-up; {reps}; {rep.events:,} events, "
        f"{rep.sim_wall_s:.1f} s of simulation on {rep.jobs} process"
        f"{'es' if rep.jobs > 1 else ''}."
    )


def blocks(rep: Reproduction, pngs: Mapping[str, bytes]) -> list[Block]:
    """The whole report, as blocks."""
    exp = rep.experiment
    n_ok = sum(v.reproduced for v in rep.verdicts)
    out: list[Block] = [
        Heading(1, f"{exp.id}: {exp.title}"),
        Text(f"Reproduces **{exp.paper}**, {exp.source}."),
        Text(_setup_line(rep)),
    ]
    if rep.verdicts:
        out.append(Text(f"**{n_ok} of {len(rep.verdicts)} claims reproduced.**"))
        out.append(
            Bullets(
                [
                    f"**Claim {v.claim.id}**: "
                    f"{'reproduced' if v.reproduced else 'not reproduced'} — {v.claim.statement}"
                    for v in rep.verdicts
                ],
                ["pass" if v.reproduced else "fail" for v in rep.verdicts],
            )
        )
    out += [Heading(2, "Setup"), Text(exp.setup)]
    if exp.decisions:
        out += [Heading(3, "Decisions where the paper is silent"), Bullets(list(exp.decisions))]
    out += _binding_blocks(rep)
    out += _decision_blocks(rep)
    out += [Heading(2, "The paper's numbers beside ours"), *_published_tables(rep)]
    out += [
        Heading(2, "Claims"),
        Text(
            "Simulations are judged on direction, ordering and approximate ratios, not on "
            "absolute values (the numbers come from 2007–2015 hardware). An ordering needs "
            "each step to exceed a tie (0.5 % of the values, or 0.5 points for a percentage of "
            "change), and with replications a difference counts only when the two 95 % "
            "intervals separate. Where a claim gives the size of an effect as a ratio r, the "
            "simulated ratio must lie between r^(1/2) and r^2 (its logarithm within a factor "
            "of two of the paper's) and its interval must exclude 1. The rules are in "
            "`vmsched.reproduce.checks`."
        ),
        *_explanation_note(rep),
        *_claims(rep),
    ]
    out += _sensitivity_blocks(rep)
    if exp.figures:
        out.append(Heading(2, "Figures"))
        if not pngs:
            out.append(Text("Not drawn (`--no-figures`)."))
        for f in exp.figures if pngs else ():
            out += [Text(f"**{f.title}** (`{f.file}`)"), Image(f.file, f.title, pngs[f.file])]
    out += [
        Heading(2, "All results"),
        Text(
            f"Every simulated number (also in `{RESULTS_CSV}`: columns "
            + ", ".join(f"`{c}`" for c in RESULT_COLUMNS)
            + "; `published` is empty where the paper gives no number; every seed's value and "
            f"the 95 % interval in `{REPLICATIONS_CSV}`)."
        ),
        _all_results(rep),
    ]
    return out


# ----- Markdown and HTML ------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(blocks_: list[Block]) -> str:
    """The blocks as Markdown."""
    parts = []
    for b in blocks_:
        if isinstance(b, Heading):
            parts.append("#" * b.level + " " + b.text)
        elif isinstance(b, Text):
            parts.append(b.markdown)
        elif isinstance(b, Bullets):
            parts.append("\n".join(f"- {item}" for item in b.items))
        elif isinstance(b, TableBlock):
            align = b.align or "l" * len(b.header)
            lines = [
                "| " + " | ".join(_md_cell(h) for h in b.header) + " |",
                "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|",
            ]
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows]
            parts.append("\n".join(lines))
        elif isinstance(b, Image):
            parts.append(f"![{b.alt}]({b.file})")
    return "\n\n".join(parts) + "\n"


def _plain(markdown_text: str) -> str:
    """Markdown emphasis, code marks and quote marks removed, for HTML's plain paragraphs."""
    text = re.sub(r"^> ", "", markdown_text, flags=re.MULTILINE)
    return text.replace("**", "").replace("`", "").replace("*", "")


class _Rows:
    """A table of text cells in the two parts of a DataFrame that vmsched.htmlreport's
    Table reads (`columns`, `itertuples`): the reports' tables are text already (a
    DataFrame of text gives the same cells), and a report written without pandas spares
    the main process its import (about 0.7 CPU seconds), which `vmsched reproduce` paid
    while the workers simulate."""

    def __init__(self, rows: list[list[str]], columns: list[str]) -> None:
        self.rows = rows
        self.columns = columns

    def itertuples(self, index: bool = False, name: str | None = None) -> Any:
        if index or name is not None:
            raise InternalError("report table: only itertuples(index=False, name=None)")
        return (tuple(row) for row in self.rows)


def html_blocks(blocks_: list[Block]) -> list[Any]:
    """The blocks as vmsched.htmlreport blocks (the level-1 heading is the page title)."""
    from vmsched import htmlreport as h

    out: list[Any] = []
    for b in blocks_:
        if isinstance(b, Heading):
            if b.level > 1:
                out.append(h.Heading(b.text, level=b.level))
        elif isinstance(b, Text):
            out.append(h.Paragraph(_plain(b.markdown)))
        elif isinstance(b, Bullets):
            statuses = b.statuses or ["info"] * len(b.items)
            out.append(
                h.Verdicts(
                    [h.Verdict(_plain(i), st) for i, st in zip(b.items, statuses, strict=True)]
                )
            )
        elif isinstance(b, TableBlock):
            if all(isinstance(c, str) for row in b.rows for c in row):
                out.append(h.Table(_Rows(b.rows, b.header)))
            else:  # not text: pandas' types, as the table always had
                import pandas as pd

                out.append(h.Table(pd.DataFrame(b.rows, columns=b.header)))
        elif isinstance(b, Image):
            out.append(h.Figure(b.png, b.alt, name=b.file.removesuffix(".png")))
    return out


def write_html(path: Path, title: str, blocks_: list[Block]) -> None:
    """report.html, with vmsched.htmlreport (which also writes each figure beside it)."""
    from vmsched import htmlreport

    htmlreport.write_report(path, title, html_blocks(blocks_))


# ----- saving -------------------------------------------------------------------------------------


def files(exp: Experiment, figures: bool = True) -> list[str]:
    """Every file `save` writes (without the figures' PNGs when `figures` is False)."""
    pngs = [f.file for f in exp.figures] if figures else []
    return [RESULTS_CSV, REPLICATIONS_CSV, REPORT_MD, REPORT_HTML, *pngs]


def save(
    rep: Reproduction,
    out: str | Path,
    pngs: Mapping[str, bytes] | None = None,
    *,
    figures: bool = True,
) -> Path:
    """Write results.csv, the figures, report.md and report.html into `out`. `pngs` are the
    figures already drawn (by file name; `vmsched.reproduce.figures`, in the batch layer's
    workers); without them they are drawn here, unless `figures` is False (no PNGs, and
    the reports say so)."""
    out_dir = prepare_out_dir(out)
    if not figures:
        pngs = {}
    elif pngs is None:
        from vmsched.reproduce.figures import draw, figure_data

        pngs = {f.file: draw(figure_data(rep, f)) for f in rep.experiment.figures}
    content = blocks(rep, pngs)
    write_atomic(out_dir / RESULTS_CSV, results_csv(rep.table.rows))
    write_atomic(out_dir / REPLICATIONS_CSV, replications_csv(rep.table.rows))
    for file, data in pngs.items():
        write_atomic(out_dir / file, data)
    write_atomic(out_dir / REPORT_MD, markdown(content))
    write_html(out_dir / REPORT_HTML, f"{rep.experiment.id}: {rep.experiment.title}", content)
    return out_dir
