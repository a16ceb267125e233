"""Paper reproductions: `vmsched reproduce ID`.

Each published experiment the project reproduces is defined as data in the
module of its paper (`cherkasova2007`, `thesis2015`, `dynweight`): the grid of
runs, how each run is measured, the paper's numbers and its claims (see
`vmsched.reproduce.framework`). Running one writes

- `results.csv`: scheduler, params, metric, simulated, published, unit
  (`simulated` is the mean over the replications' seeds);
- `replications.csv`: every seed's value and the 95 % interval of each row;
- `report.md` and `report.html`: the paper's table beside ours, each claim
  marked reproduced or not reproduced with the measured evidence;
- the figures, in the paper's layout (PNG).

::

    from vmsched import reproduce
    rep = reproduce.run("cherkasova2007-web-1cpu", quick=True)
    rep.table.frame()            # results.csv as a DataFrame
    [(v.claim.id, v.reproduced) for v in rep.verdicts]
    rep.save("results/web-1cpu")

The command line is `vmsched reproduce` (docs/reproduce.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from vmsched.api import prepare_out_dir, write_atomic
from vmsched.batch import RunStore, add_backend_options, check_backend, interrupted
from vmsched.errors import ScenarioError, unknown_name
from vmsched.reproduce import (
    cherkasova2007,
    dynweight,
    dynweight_credit,
    enhanced2015,
    extra,
    govindan2009,
    mcredit2,
    thesis2015,
)
from vmsched.reproduce.framework import (
    FULL_REPLICATIONS,
    QUICK_REPLICATIONS,
    Experiment,
    Reproduction,
    check_replications,
    default_jobs,
    run_experiments,
)
from vmsched.reproduce.pipeline import run_and_draw
from vmsched.reproduce.report import files
from vmsched.reproduce.scorecard import CLAIMS_CSV, SCORECARD_MD, claims_csv, counts, scorecard_md
from vmsched.reproduce.sensitivity import sensitivity

#: Every experiment, by ID, in the order `--list` shows them.
EXPERIMENTS: dict[str, Experiment] = {
    e.id: e
    for e in (
        *cherkasova2007.EXPERIMENTS,
        *thesis2015.EXPERIMENTS,
        *dynweight.EXPERIMENTS,
        # The proposed schedulers' experiments (docs/reproduce-proposals.md).
        *enhanced2015.EXPERIMENTS,
        *govindan2009.EXPERIMENTS,
        *dynweight_credit.EXPERIMENTS,
        *mcredit2.EXPERIMENTS,
    )
}

__all__ = ["EXPERIMENTS", "Experiment", "Reproduction", "experiment", "run", "run_many"]


def experiment(exp_id: str) -> Experiment:
    """The experiment `exp_id`; ScenarioError (with a did-you-mean) if there is none."""
    try:
        return EXPERIMENTS[exp_id]
    except KeyError:
        raise unknown_name("experiment", exp_id, list(EXPERIMENTS), path="ID") from None


def run(
    exp_id: str,
    *,
    quick: bool = False,
    jobs: int | None = None,
    progress: bool = True,
    replications: int | None = None,
    with_schedulers: Sequence[str] = (),
    backend: str = "local",
    address: str | None = None,
) -> Reproduction:
    """Run one experiment (its `--quick` version with `quick`) on `jobs` processes (or a
    Ray cluster: `backend="ray"`, `address`), each configuration with `replications`
    seeds (default: 3 full, 1 quick); `with_schedulers` adds schedulers (yours:
    `file.py:Class`) as columns."""
    exp = experiment(exp_id)
    if with_schedulers:
        exp = extra.with_schedulers(exp, with_schedulers)
    return run_experiments(
        [exp],
        quick=quick,
        jobs=jobs,
        progress=progress,
        replications=replications,
        backend=check_backend(backend, address),
        address=address,
    )[0]


def run_many(
    ids: list[str],
    *,
    quick: bool = False,
    jobs: int | None = None,
    progress: bool = True,
    replications: int | None = None,
    backend: str = "local",
    address: str | None = None,
) -> list[Reproduction]:
    """Run several experiments through the batch layer at once (arguments as `run`)."""
    return run_experiments(
        [experiment(i) for i in ids],
        quick=quick,
        jobs=jobs,
        progress=progress,
        replications=replications,
        backend=check_backend(backend, address),
        address=address,
    )


# ----- the command line ------------------------------------------------------------------------


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register `vmsched reproduce` on an argparse subparsers object; returns its parser."""
    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a published experiment: results.csv, report.md/.html, figures",
        description=(
            "Run a paper's experiment and compare it with the published numbers and claims. "
            "`--list` shows the experiments. Exit status: 0 done, 2 bad input."
        ),
    )
    p.add_argument("id", metavar="ID", nargs="?", help="the experiment (see --list)")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument(
        "--all",
        action="store_true",
        help="run every experiment, each into DIR/ID, plus DIR/index.md",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a smoke check: short runs with one seed (seconds in all) instead of the "
        "full-length ones; its verdicts are not the scorecard's",
    )
    p.add_argument(
        "--replications",
        type=int,
        default=None,
        metavar="N",
        help=(
            f"seeds per configuration (default {FULL_REPLICATIONS}, "
            f"{QUICK_REPLICATIONS} with --quick); results are means with 95 %% intervals"
        ),
    )
    p.add_argument(
        "--sensitivity",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=(
            "rerun each experiment's sensitivity grid (short runs, one seed) with every "
            "estimated number halved and "
            "doubled, and report which verdicts hold (default: on for full runs, off with "
            "--quick)"
        ),
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="output folder (default results/reproduce/ID; with --all, results/reproduce)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="complete an interrupted run into the same --out: the simulations done are "
        "not run again (kept in DIR/.vmsched-runs/ until the command ends)",
    )
    add_backend_options(p)
    p.add_argument(
        "--with",
        dest="with_schedulers",
        action="append",
        default=[],
        metavar="SCHED",
        help="add a scheduler as a column (yours: path/to/file.py:Class); it repeats the "
        "reference scheduler's runs (docs/write-a-scheduler.md)",
    )
    p.set_defaults(func=main)
    return p


def _print_list() -> None:
    width = max(len(i) for i in EXPERIMENTS)
    for exp in EXPERIMENTS.values():
        n_full, n_quick = len(exp.runs(False)), len(exp.runs(True))
        print(f"{exp.id:<{width}}  {exp.title}")
        print(
            f"{'':<{width}}  {exp.paper}, {exp.source}; {n_full} runs of "
            f"{exp.full.duration_s:g} s ({n_quick} of {exp.quick.duration_s:g} s with --quick)"
        )


def _print_verdicts(rep: Reproduction, out: Path, figures: bool = True) -> None:
    exp = rep.experiment
    mode = "quick" if rep.quick else "full"
    print(f"{exp.id} ({mode}): {len(rep.runs)} runs")
    for v in rep.verdicts:
        verdict = "reproduced" if v.reproduced else "NOT reproduced"
        print(f"  claim {v.claim.id}: {verdict}")
    if rep.verdicts:
        n_ok = sum(v.reproduced for v in rep.verdicts)
        print(f"  {n_ok} of {len(rep.verdicts)} claims reproduced")
    if len(rep.seeds) > 1:
        first, last = rep.seeds[0], rep.seeds[-1]
        print(f"  {len(rep.seeds)} replications per configuration (seeds {first}-{last})")
    print(f"  wrote {out}/ ({', '.join(files(exp, figures))})")


def _index(reps: list[Reproduction]) -> str:
    """DIR/index.md of `--all`: every experiment's verdicts, linked to its report."""
    lines = ["# Reproductions", ""]
    for rep in reps:
        exp = rep.experiment
        n_ok = sum(v.reproduced for v in rep.verdicts)
        claims = f"{n_ok} of {len(rep.verdicts)} claims reproduced" if rep.verdicts else "no claims"
        lines += [f"## [{exp.id}]({exp.id}/report.md)", "", f"{exp.title}. {claims}.", ""]
        lines += [
            f"- Claim {v.claim.id}: {'reproduced' if v.reproduced else 'not reproduced'}"
            for v in rep.verdicts
        ]
        lines.append("")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """`vmsched reproduce`: list, or run experiments and write their outputs."""
    if args.list:
        _print_list()
        return 0
    try:
        if args.all:
            if args.id is not None:
                raise ScenarioError(
                    f'"{args.id}" and --all were both given; expected one of them', path="ID"
                )
            exps = list(EXPERIMENTS.values())
            root = Path(args.out) if args.out is not None else Path("results/reproduce")
            outs = [root / e.id for e in exps]
        else:
            if args.id is None:
                raise ScenarioError(
                    "no experiment given; expected an ID (one of "
                    + ", ".join(EXPERIMENTS)
                    + "), --all or --list",
                    path="ID",
                )
            exps = [experiment(args.id)]
            root = Path(args.out) if args.out is not None else Path("results/reproduce") / args.id
            outs = [root]
        with_schedulers = getattr(args, "with_schedulers", [])
        if with_schedulers:
            exps = [extra.with_schedulers(e, with_schedulers) for e in exps]
        n_jobs = default_jobs(args.jobs)
        n_reps = check_replications(args.replications)
        check_backend(args.backend, args.address)
        prepare_out_dir(root)
        store = RunStore(root, resume=args.resume)
    except ScenarioError as exc:
        print(f"vmsched: error: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    where = {"backend": args.backend, "jobs": n_jobs, "address": args.address}
    phases: list[str] = []
    figures = not args.no_figures
    with_sensitivity = args.sensitivity if args.sensitivity is not None else not args.quick

    def save_now(k: int, rep: Reproduction, png: dict[str, bytes]) -> None:
        # Without a sensitivity table to wait for, an experiment's report is written as
        # soon as its runs and figures are back, while the workers go on.
        rep.save(outs[k], png, figures=figures)

    try:
        reps, pngs = run_and_draw(
            exps,
            quick=args.quick,
            replications=n_reps,
            figures=figures,
            on_done=None if with_sensitivity else save_now,
            progress=True,
            store=store,
            **where,
        )
        phases.append(
            f"simulations{' and figures' if figures else ''} {time.perf_counter() - t0:.1f} s"
        )
        if with_sensitivity:
            t1 = time.perf_counter()
            tables = sensitivity(exps, progress=True, **where)
            for rep in reps:
                rep.sensitivity = tables.get(rep.experiment.id)
            phases.append(f"sensitivity {time.perf_counter() - t1:.1f} s")
    except KeyboardInterrupt as exc:
        return interrupted(exc, store, sys.argv[1:])
    if store.reused:
        print(f"{store.reused} simulations done before were not run again (--resume)")
    t1 = time.perf_counter()
    for rep, out, png in zip(reps, outs, pngs, strict=True):
        if with_sensitivity:
            rep.save(out, png, figures=figures)
        _print_verdicts(rep, out, figures)
    if args.all:
        write_atomic(root / "index.md", _index(reps))
        write_atomic(root / CLAIMS_CSV, claims_csv(reps))
        write_atomic(root / SCORECARD_MD, scorecard_md(reps))
        c = counts(reps)
        print(
            f"scorecard: {c.reproduced} of {c.judged} verdicts reproduced; "
            f"{c.distinct_reproduced} of {c.distinct} distinct claims"
        )
        print(f"wrote {root}/index.md, {root}/{CLAIMS_CSV}, {root}/{SCORECARD_MD}")
    store.remove()
    phases.append(f"reports {time.perf_counter() - t1:.1f} s")
    print(f"{time.perf_counter() - t0:.1f} s ({', '.join(phases)})")
    return 0
