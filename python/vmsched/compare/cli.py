"""`vmsched compare`: the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vmsched.api import prepare_out_dir
from vmsched.batch import RunStore, add_backend_options, interrupted
from vmsched.compare.metrics import differs, verdict_sentence
from vmsched.compare.running import prepare
from vmsched.compare.spec import (
    QUICK_DURATION_S,
    QUICK_REPLICATIONS,
    REPLICATIONS,
    REPORT_HTML,
    RESULTS_CSV,
)

if TYPE_CHECKING:
    from vmsched.compare.comparison import Comparison


# ----- `vmsched compare` ---------------------------------------------------------------------


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def add_parser(subparsers: Any, parents: Sequence[argparse.ArgumentParser] = ()) -> Any:
    """Register `vmsched compare` on an argparse subparsers object."""
    about = "run one scenario under several schedulers and parameter variants; write a report"
    p = subparsers.add_parser(
        "compare",
        parents=list(parents),
        help=about,
        description=about + ". Docs: docs/compare.md",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    p.add_argument(
        "--schedulers",
        type=_names,
        default=[],
        metavar="S1,S2,...",
        help="schedulers to run the scenario under, e.g. credit,credit2,sedf",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="SCHED:SETTINGS",
        help="one more run: SCHED:PARAM=VALUE,DOMAIN.PARAM=VALUE,... "
        "(e.g. 'credit:tslice_ms=5' or 'credit:web.cap=50'); repeatable",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="folder for report.html etc.")
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"compress each run to {QUICK_DURATION_S:g} simulated seconds",
    )
    p.add_argument(
        "--replications",
        type=int,
        default=None,
        metavar="N",
        help=f"seeds per run (default {REPLICATIONS}; {QUICK_REPLICATIONS} with --quick); "
        "verdicts count a difference only when the 95 %% intervals separate",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="complete an interrupted comparison into the same --out: the runs done are not "
        "run again",
    )
    add_backend_options(p)
    p.set_defaults(func=main)
    return p


def main(args: argparse.Namespace) -> int:
    """`vmsched compare`: check everything, run, write, print a short summary."""
    prepared = prepare(
        args.scenario,
        schedulers=args.schedulers,
        variants=args.variant,
        quick=args.quick,
        jobs=args.jobs,
        backend=args.backend,
        address=args.address,
        replications=args.replications,
    )
    prepare_out_dir(args.out)
    prepared.store = store = RunStore(args.out, resume=args.resume)
    try:
        c = prepared.execute(progress=True)
    except KeyboardInterrupt as exc:
        return interrupted(exc, store, sys.argv[1:])
    out = c.save(args.out, figures=not args.no_figures)
    store.remove()
    _print_summary(c)
    pngs = "" if args.no_figures else ", PNGs"
    print(f"report: {out / REPORT_HTML} (and {RESULTS_CSV}{pngs}) in {out}/")
    return 0


def _print_summary(c: Comparison) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(markup=False, highlight=False)
    table = Table(show_edge=False, header_style="bold", title="CPU % per domain")
    table.add_column("domain", no_wrap=True)
    for lab in c.labels:
        table.add_column(lab, justify="right")
    for i, name in enumerate(c._domain_names()):
        table.add_row(name, *(f"{r.summary['domains'][i]['cpu_pct']:.1f}" for r in c.runs))
    console.print(table)
    for r in c.runs:
        dropped = sum(1 for n in r.notes if " dropped:" in n)
        if dropped:
            console.print(f"{r.label}: {dropped} scenario parameter(s) dropped (see the report)")
    same = 0
    for m, bounds in zip(c.verdict_inputs(), c.intervals(), strict=True):
        differing = [
            (n, v, iv) for (n, v), iv in zip(m.items, bounds, strict=True) if differs(v, m.unit, iv)
        ]
        same += len(m.items) - len(differing)
        if differing:
            console.print(m.title, style="bold")
        for n, v, iv in differing:
            console.print("  " + verdict_sentence(n, c.labels, v, m.unit, m.better, iv))
    if same:
        console.print(f"{same} more metric(s) the same under every run (see the report)")
