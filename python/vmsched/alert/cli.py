"""`vmsched alert`: the command line."""

from __future__ import annotations

import argparse
import sys

from vmsched.alert.experiment import CompareResult, _compare_entries, _experiment
from vmsched.alert.report import _f
from vmsched.alert.results import AlertResult
from vmsched.alert.setup import (
    DOM0_LOADS,
    DOM0_XENMON_UTIL_PCT,
    QUICK_REPLICATIONS,
    REPLICATIONS,
    SAMPLE_MS,
    WARMUP_S,
    _fmt_pct,
)
from vmsched.api import prepare_out_dir
from vmsched.batch import RunStore, add_backend_options, interrupted
from vmsched.errors import ScenarioError

# ----- command line ----------------------------------------------------------------------------


def _number_list(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a list of numbers; expected e.g. 1,2,3"
        ) from None


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register `vmsched alert` on an argparse subparsers object; returns its parser.

    The parser's default `func` is `main`, so a CLI can dispatch with `args.func(args)`.
    """
    p = subparsers.add_parser(
        "alert",
        help="the ALERT allocation-error benchmark (Cherkasova et al. 2007)",
        description=(
            "ALERT: hold a CPU-hungry Dom1 to an allocation A on one PCPU (Dom0 allocated 6 %), "
            "sample its usage U every second and report Er = (U - A)/A per target, with the "
            "paper's plots. Exit status: 0 done, 2 bad input."
        ),
    )
    p.add_argument("--scheduler", default=None, help="scheduler to test (default: credit)")
    p.add_argument(
        "--compare",
        default=None,
        metavar="S1,S2[,...]",
        help='run several schedulers and plot them together, e.g. "credit,sedf" or '
        '"credit@3.0,credit@4.22"',
    )
    p.add_argument(
        "--xen-version",
        default=None,
        metavar="V",
        help='Xen release whose behaviour to reproduce (default: "3.0.3", the paper\'s, where '
        "the scheduler has it)",
    )
    p.add_argument(
        "--targets",
        type=_number_list,
        default=None,
        metavar="A1,A2,...",
        help="allocation targets in %% of one PCPU (default: 1..10,20..90)",
    )
    p.add_argument(
        "--duration-s",
        type=float,
        default=None,
        metavar="S",
        help="measured seconds per target (default 180; 600 with --smp; 10 with --quick)",
    )
    p.add_argument(
        "--quick", action="store_true", help="targets 1,5,10,50,90 and 10 s each: a run of seconds"
    )
    p.add_argument(
        "--smp",
        action="store_true",
        help="the SMP variant: 2 PCPUs, Dom0/Dom1/Dom2 each a CPU hog allocated 66 %%",
    )
    p.add_argument(
        "--dom0-load",
        choices=DOM0_LOADS,
        default=None,
        help="what Dom0 runs under its 6 %% allocation (default: xenmon)",
    )
    p.add_argument(
        "--dom0-util-pct",
        type=float,
        default=None,
        metavar="P",
        help=f"CPU demand of the xenmon Dom0 load (default {DOM0_XENMON_UTIL_PCT:g})",
    )
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument(
        "--replications",
        type=int,
        default=None,
        metavar="N",
        help=f"seeds per target: SEED, SEED+1, ... (default {REPLICATIONS}; "
        f"{QUICK_REPLICATIONS} with --quick)",
    )
    p.add_argument(
        "--out",
        default="results/alert",
        metavar="DIR",
        help="output folder (default results/alert)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="complete an interrupted run into the same --out: the runs done are not run again",
    )
    add_backend_options(p)
    p.set_defaults(func=main)
    return p


def _print_summary(r: AlertResult) -> None:
    print(
        f"ALERT {r.label}{' SMP' if r.smp else ''}: Er = (U - A)/A, % (positive = over-allocation)"
    )
    head = (
        f"{'A %':>6} {'domain':>6} {'mean U':>8} {'mean Er':>8} {'p5 Er':>8} {'p95 Er':>8} "
        f"{'run Er':>8} {'±2 %':>6}"
    )
    print(head)
    for row in r.targets.to_dict(orient="records"):
        print(
            f"{_fmt_pct(row['target_pct']):>6} {row['domain']:>6} "
            f"{_f(row['mean_usage_pct'], 2):>8} "
            f"{_f(row['mean_error_pct']):>8} {_f(row['p5_error_pct']):>8} "
            f"{_f(row['p95_error_pct']):>8} {_f(row['run_error_pct']):>8} "
            f"{100 * row['within_2pct']:>5.0f}%"
        )


def main(args: argparse.Namespace) -> int:
    """`vmsched alert`: run, write the outputs, print a short table. Returns the exit status.

    Every input (including the output folder) is checked before anything is simulated.
    """
    options = dict(
        targets=args.targets,
        duration_s=args.duration_s,
        quick=args.quick,
        seed=args.seed,
        dom0_load=args.dom0_load,
        dom0_util_pct=args.dom0_util_pct,
        warmup_s=WARMUP_S,
        sample_ms=SAMPLE_MS,
        replications=args.replications,
    )
    try:
        if args.compare is not None:
            if args.scheduler is not None:
                raise ScenarioError(
                    "--scheduler and --compare were both given; expected one of them",
                    path="alert.scheduler",
                )
            entries = _compare_entries(
                [e for e in args.compare.split(",") if e.strip()], args.xen_version
            )
        else:
            entries = [(args.scheduler or "credit", args.xen_version)]
        exp = _experiment(
            entries,
            smp=args.smp,
            jobs=args.jobs,
            backend=args.backend,
            address=args.address,
            **options,
        )
        prepare_out_dir(args.out)
    except ScenarioError as exc:
        print(f"vmsched: error: {exc}", file=sys.stderr)
        return 2
    store = RunStore(args.out, resume=args.resume)
    try:
        results = exp.execute(progress=True, store=store)
    except KeyboardInterrupt as exc:
        return interrupted(exc, store, sys.argv[1:])
    if args.compare is not None:
        out = CompareResult(results, results[0].wall_s).save(args.out, not args.no_figures)
    else:
        out = results[0].save(args.out, not args.no_figures)
    store.remove()
    for r in results:
        _print_summary(r)
    plots = "" if args.no_figures else ", plots"
    print(f"wrote {out}/ (report.md, alert.csv, targets.csv, summary.json{plots})")
    return 0


def _standalone(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vmsched")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)
