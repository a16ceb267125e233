"""The command line: `vmsched run | validate | schedulers | workloads | bench | top | alert |
reproduce | plot | compare`.

Output is short by default and detailed with `-v`. Exit status (docs/cli.md):
0 success; 1 an internal error, which is a bug in vmsched; 2 bad input (a
scenario, option or output folder that is wrong), reported in one line that
names the file, the field, the value and what was expected, before anything
is simulated.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

import vmsched
from vmsched import compare as compare_cmd
from vmsched import monitor
from vmsched import plot as plot_cmd
from vmsched.api import TRACE_FILES, prepare_out_dir, write_atomic
from vmsched.bench import REPEATS, run_benchmarks
from vmsched.errors import InternalError, ScenarioError, unknown_name
from vmsched.scenario import Scenario, read

EXIT_OK = 0
EXIT_BUG = 1
EXIT_BAD_INPUT = 2

#: The repository's docs/ as the package sees it: in a source checkout (and an
#: editable install) `vmsched/docs` is a link to ../../docs; a wheel carries
#: the pages themselves there (pyproject.toml, [tool.maturin] include).
DOCS_DIR = Path(__file__).resolve().parent / "docs"

BUG_NOTE = "this is a bug in vmsched; please report it with the command that triggers it"


def _console() -> Console:
    """Standard output; names and docs are printed as they are ([domain.sched]
    is not rich markup), without rich's number highlighting."""
    return Console(markup=False, highlight=False)


def _fmt_pct(x: float) -> str:
    return f"{x:.1f}"


def _fmt_us(x: float) -> str:
    return f"{x:,.1f}"


def _fmt_metric(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _workload_text(w: dict[str, Any]) -> str:
    metrics = ", ".join(f"{k}={_fmt_metric(v)}" for k, v in w.items() if k != "kind")
    return f"{w['kind']}: {metrics}" if metrics else w["kind"]


# ---------------------------------------------------------------- vmsched run


def _with_overrides(args: argparse.Namespace) -> tuple[Scenario, dict[str, str]]:
    """The scenario file with the command-line overrides applied to its tree
    (before validation), and which field each option set."""
    options = {
        "run.seed": ("--seed", args.seed),
        "run.duration_s": ("--duration-s", args.duration_s),
    }
    given = {path: opt for path, (opt, val) in options.items() if val is not None}
    sc = read(args.scenario)
    sc = Scenario(sc.data, seed=args.seed, duration_s=args.duration_s, source=sc.source)
    return sc, given


def _run_table(domains: list[dict[str, Any]], measured_s: float, verbose: bool) -> Table:
    """One row per domain (and per VCPU of multi-VCPU domains, or with -v)."""
    measured_ns = measured_s * 1e9
    table = Table(show_edge=False, header_style="bold")
    table.add_column("domain", no_wrap=True)
    for col in ("CPU %", "runnable %", "blocked %", "ctx switches", "wake p50 µs", "wake p99 µs"):
        table.add_column(col, justify="right")
    for d in domains:
        vcpus = d["vcpus"]
        single = len(vcpus) == 1
        lat = vcpus[0]["wake_latency_us"] if single else None
        table.add_row(
            d["name"] + (" (driver)" if d["driver"] else ""),
            _fmt_pct(d["cpu_pct"]),
            _fmt_pct(d["runnable_pct"]),
            _fmt_pct(d["blocked_pct"]),
            str(sum(v["context_switches"] for v in vcpus)),
            _fmt_us(lat["p50"]) if lat else "",
            _fmt_us(lat["p99"]) if lat else "",
        )
        if single and not verbose:
            continue
        for v in vcpus:
            table.add_row(
                f"  v{v['vcpu']}",
                _fmt_pct(v["cpu_pct"]),
                _fmt_pct(v["runnable_ns"] * 100 / measured_ns),
                _fmt_pct(v["blocked_ns"] * 100 / measured_ns),
                str(v["context_switches"]),
                _fmt_us(v["wake_latency_us"]["p50"]),
                _fmt_us(v["wake_latency_us"]["p99"]),
            )
    return table


def _io_table(doms: list[dict[str, Any]]) -> Table | None:
    """XenMon's and xentop's I/O view of each domain, if the run did any I/O."""
    if not any(d.get("xenmon", {}).get("io_events") for d in doms):
        return None
    table = Table(show_edge=False, header_style="bold", title="I/O (XenMon, xentop)")
    table.add_column("domain", no_wrap=True)
    for col in ("exec/s", "flips per exec", "NETTX kB", "NETRX kB", "VBD_RD", "VBD_WR"):
        table.add_column(col, justify="right")
    for d in doms:
        xm, xt = d["xenmon"], d["xentop"]
        table.add_row(
            d["name"] + (" (driver)" if d["driver"] else ""),
            f"{xm['exec_per_s']:,.0f}",
            f"{xm['io_per_exec']:.1f}",
            f"{xt['nettx_kb']:,}",
            f"{xt['netrx_kb']:,}",
            f"{xt['vbd_rd']:,}",
            f"{xt['vbd_wr']:,}",
        )
    return table


def _print_host(
    out: Console, s: dict[str, Any], verbose: bool, label: str = "", note: str = ""
) -> None:
    """One host's line, `note` (if any), table and workload metrics (`label`
    prefixes a cluster host's line with its name)."""
    warm = f" after a {s['warmup_s']:g} s warm-up" if s["warmup_s"] else ""
    pcpus = s["host"]["pcpus"]
    # A cluster's hosts draw from streams derived from the cluster's seed.
    seed = "" if label else f", seed {s['seed']}"
    out.print(
        f"{label}{s['scheduler']} on {pcpus} PCPU{'s' if pcpus > 1 else ''}{seed}: "
        f"{s['measured_s']:g} s measured{warm}"
    )
    if note:
        out.print(note)
    out.print(_run_table(s["domains"], s["measured_s"], verbose))
    io = _io_table(s["domains"])
    if io is not None:
        out.print(io)
    for d in s["domains"]:
        out.print(f"{d['name']}: {_workload_text(d['workload'])}")
    if verbose:
        params = ", ".join(f"{k}={v}" for k, v in s["scheduler_params"].items())
        counters = ", ".join(f"{k}={v}" for k, v in s["scheduler_counters"].items())
        out.print(f"scheduler parameters: {params}")
        out.print(f"scheduler counters: {counters}")


def _print_jobs(out: Console, jobs: list[dict[str, Any]]) -> None:
    """The parallel jobs' completion times."""
    for j in jobs:
        done = j["completion_s"]
        when = f"completed in {done:.4g} s" if done is not None else "not completed"
        out.print(
            f"{j['kind']} job {', '.join(j['processes'])}: {when} "
            f"({j['iterations_done']} iterations)"
        )


def cmd_run(args: argparse.Namespace) -> int:
    """`vmsched run`: simulate, print the table (or the summary as JSON), save."""
    for option, wanted in (("--trace", args.trace), ("--xentrace", args.xentrace)):
        if wanted and args.out is None:
            name = TRACE_FILES[option.lstrip("-")]
            raise ScenarioError(
                f"needs an output folder; expected --out DIR as well (the trace is DIR/{name})",
                path=option,
            )
    sc, given = _with_overrides(args)
    try:
        result = vmsched.run(
            sc, out=args.out, progress=True, trace=args.trace, xentrace=args.xentrace
        )
    except ScenarioError as exc:
        if exc.path in given:
            raise ScenarioError(
                f"{exc.message} (set by {given[exc.path]})", file=exc.file, path=exc.path
            ) from None
        raise
    s = result.summary
    if args.json:
        print(json.dumps(s, indent=2))
        return EXIT_OK
    out = _console()
    if s["title"]:
        out.print(Text(s["title"], style="bold"))
    if result.is_cluster:
        out.print(f"a cluster of {len(s['hosts'])} hosts, seed {s['seed']}")
        out.print(f"{s['events']:,} events simulated in {s['wall_s']:.3f} s")
        for h in s["hosts"]:
            out.print()
            _print_host(out, h, args.verbose, label=f"host {h['name']}: ")
    else:
        events = f"{s['events']:,} events simulated in {s['wall_s']:.3f} s"
        _print_host(out, s, args.verbose, note=events)
    _print_jobs(out, s.get("jobs", []))
    if args.out is not None:
        files = ["summary.json", "timeseries.parquet"]
        files += [path.name for path in result.traces.values()]
        out.print(f"results in {args.out}/ ({', '.join(files)})")
    return EXIT_OK


# ----------------------------------------------------------- vmsched validate


def cmd_validate(args: argparse.Namespace) -> int:
    """`vmsched validate`: check each file; status 2 if any is bad."""
    failed = 0
    for path in args.scenarios:
        try:
            vmsched.load(path)
        except ScenarioError as exc:
            _error(str(exc))
            failed += 1
        else:
            print(f"{path}: OK")
    return EXIT_BAD_INPUT if failed else EXIT_OK


# ------------------------------------------------ vmsched schedulers/workloads


def _select(items: list[dict[str, Any]], key: str, name: str | None, what: str) -> list[dict]:
    if name is None:
        return items
    found = [it for it in items if it[key] == name]
    if not found:
        raise unknown_name(what, name, [it[key] for it in items], path="NAME")
    return found


def _params_table(params: list[dict[str, Any]], with_scope: bool) -> Table:
    table = Table(show_edge=False, header_style="bold")
    # Names are never cut; long defaults and ranges fold instead.
    widest = max((len(p["name"]) for p in params), default=9)
    table.add_column("parameter", no_wrap=True, min_width=max(widest, 9))
    for col in (["scope"] if with_scope else []) + ["unit"]:
        table.add_column(col, no_wrap=True)
    table.add_column("default", overflow="fold", max_width=16)
    table.add_column("range", overflow="fold", max_width=20)
    table.add_column("description", overflow="fold")
    for p in params:
        scope = [p["scope"]] if with_scope else []
        table.add_row(p["name"], *scope, p["unit"] or "—", p["default"], p["range"], p["doc"])
    return table


def doc_summary(page: Path) -> str | None:
    """The text between a Markdown page's title and its next heading, or None
    if the page does not exist or has no such text."""
    try:
        text = page.read_text(encoding="utf-8")
    except OSError:
        return None
    parts = re.split(r"^#{1,6} .*$", text, flags=re.MULTILINE)
    # parts[0] precedes the title, parts[1] is the summary section.
    summary = parts[1].strip() if len(parts) > 1 else ""
    return summary or None


def cmd_schedulers(args: argparse.Namespace) -> int:
    """`vmsched schedulers [NAME]`: parameter tables, and NAME's docs summary."""
    out = _console()
    for s in _select(vmsched.catalogue()["schedulers"], "name", args.name, "scheduler"):
        out.print(Text.assemble((s["name"], "bold"), f" — {s['summary']}"))
        cap = "can cap a domain" if s["can_cap"] else "cannot cap a domain"
        out.print(f"{s['origin']}; {cap}")
        out.print(_params_table(s["params"], with_scope=True))
        if args.name is not None:
            page = DOCS_DIR / "schedulers" / f"{s['name']}.md"
            summary = doc_summary(page)
            if summary is not None:
                out.print(Markdown(summary))
                out.print(f"More in docs/schedulers/{s['name']}.md")
        out.print()
    out.print(
        "scope: global = set in [scheduler]; domain = set in [domain.sched] "
        "(weight and cap may also be given directly in [[domain]])"
    )
    return EXIT_OK


def cmd_workloads(args: argparse.Namespace) -> int:
    """`vmsched workloads [NAME]`: parameter tables and metric names."""
    out = _console()
    for w in _select(vmsched.catalogue()["workloads"], "kind", args.name, "workload"):
        out.print(Text.assemble((w["kind"], "bold"), f" — {w['summary']}"))
        if w["params"]:
            out.print(_params_table(w["params"], with_scope=False))
        else:
            out.print("no parameters")
        out.print(f"metrics: {', '.join(w['metrics']) or 'none'}")
        out.print()
    return EXIT_OK


# -------------------------------------------------------------- vmsched bench


def cmd_bench(args: argparse.Namespace) -> int:
    """`vmsched bench`: measure the standard cases, print them, save bench.json."""
    if args.out is not None:
        prepare_out_dir(args.out)
    report = run_benchmarks(args.scheduler, quick=args.quick, repeats=args.repeat, trace=args.trace)
    table = Table(show_edge=False, header_style="bold")
    table.add_column("case", no_wrap=True)
    for col in ("events/s", "simulated s per wall s", "bytes per VCPU", "best wall s"):
        table.add_column(col, justify="right")
    for c in report["cases"]:
        table.add_row(
            c["name"],
            f"{c['events_per_s'] / 1e6:.2f} M",
            f"{c['realtime_factor']:,.0f}",
            f"{c['bytes_per_vcpu']:,.0f}",
            f"{c['wall_s']:.3f}",
        )
    out = _console()
    mode = "short" if args.quick else "full-length"
    out.print(f"{report['scheduler']}, {mode} runs, best of {report['repeats']}, on one core:")
    for c in report["cases"]:
        out.print(f"  {c['name']}: {c['about']}, {c['simulated_s']:g} simulated s")
    out.print(table)
    if args.trace:
        out.print("The same, writing trace.txt and trace.xentrace (docs/trace.md):")
        traced = Table(show_edge=False, header_style="bold")
        traced.add_column("case", no_wrap=True)
        for col in ("events/s", "simulated s per wall s", "trace MB", "cost vs off"):
            traced.add_column(col, justify="right")
        for c in report["cases"]:
            t = c["traced"]
            traced.add_row(
                c["name"],
                f"{t['events_per_s'] / 1e6:.2f} M",
                f"{t['realtime_factor']:,.0f}",
                f"{t['trace_bytes'] / 1e6:,.1f}",
                f"{t['cost_pct']:+.0f} %",
            )
        out.print(traced)
    if args.out is not None:
        write_atomic(Path(args.out) / "bench.json", json.dumps(report, indent=2) + "\n")
        out.print(f"results in {args.out}/bench.json")
    return EXIT_OK


# ------------------------------------------------------------------ the parser


def _add_alert(sub: argparse._SubParsersAction) -> None:
    """`vmsched alert`, when the vmsched.alert module exists (it registers its
    own options with `add_parser` and runs with `main(args) -> int`)."""
    try:
        import vmsched.alert as alert
    except ModuleNotFoundError as exc:
        if exc.name != "vmsched.alert":
            raise
        return
    alert.add_parser(sub)
    sub.choices["alert"].set_defaults(func=alert.main)


def _add_reproduce(sub: argparse._SubParsersAction) -> None:
    """`vmsched reproduce`, when the vmsched.reproduce package exists (it registers its
    own options with `add_parser` and runs with `main(args) -> int`)."""
    try:
        import vmsched.reproduce as reproduce
    except ModuleNotFoundError as exc:
        if exc.name != "vmsched.reproduce":
            raise
        return
    reproduce.add_parser(sub)


def build_parser() -> argparse.ArgumentParser:
    """The `vmsched` argument parser, with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="vmsched",
        description="A laboratory for CPU scheduling of virtual machines.",
        epilog="exit status: 0 success, 1 internal error (a bug), 2 bad input. Docs: docs/cli.md",
    )
    parser.add_argument("--version", action="version", version=f"vmsched {vmsched.__version__}")
    verbose_help = "more detail: per-VCPU rows, scheduler counters, tracebacks of internal errors"
    parser.add_argument("-v", "--verbose", action="store_true", help=verbose_help)
    # -v after the subcommand too; SUPPRESS keeps the value given before it.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=verbose_help
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, func: Callable[[argparse.Namespace], int], help: str) -> Any:
        p = sub.add_parser(name, parents=[common], help=help, description=help)
        p.set_defaults(func=func)
        return p

    p = add("run", cmd_run, "simulate a scenario; print a per-domain table; save the results")
    p.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    p.add_argument(
        "--out", metavar="DIR", help="write summary.json and timeseries.parquet into DIR"
    )
    p.add_argument("--seed", type=int, metavar="N", help="set run.seed")
    p.add_argument("--duration-s", type=float, metavar="X", help="set run.duration_s")
    p.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    p.add_argument(
        "--trace",
        action="store_true",
        help="also write DIR/trace.txt: the scheduler's events as ftrace text (Perfetto UI)",
    )
    p.add_argument(
        "--xentrace",
        action="store_true",
        help="also write DIR/trace.xentrace: the scheduler's events as Xen trace records",
    )

    p = add("validate", cmd_validate, "check scenario files without simulating")
    p.add_argument("scenarios", metavar="SCENARIO", nargs="+", help="scenario TOML files")

    p = add("schedulers", cmd_schedulers, "list the schedulers and their parameters")
    p.add_argument("name", metavar="NAME", nargs="?", help="one scheduler, with its docs summary")

    p = add("workloads", cmd_workloads, "list the workloads, their parameters and metrics")
    p.add_argument("name", metavar="NAME", nargs="?", help="one workload")

    p = add("bench", cmd_bench, "measure the engine's speed and memory on standard scenarios")
    p.add_argument("--scheduler", default="credit", metavar="NAME", help="default: credit")
    p.add_argument("--quick", action="store_true", help="short runs (seconds in all)")
    p.add_argument(
        "--repeat", type=int, default=REPEATS, metavar="N", help=f"best of N (default {REPEATS})"
    )
    p.add_argument("--out", metavar="DIR", help="also write bench.json into DIR")
    p.add_argument(
        "--trace",
        action="store_true",
        help="also measure each case writing trace.txt and trace.xentrace (the cost of tracing)",
    )

    p = add("top", monitor.main, monitor.HELP)
    monitor.add_arguments(p)

    _add_alert(sub)
    _add_reproduce(sub)
    # Each registers its own parser and `func`; matplotlib loads only when they run.
    plot_cmd.add_parser(sub, [common])
    compare_cmd.add_parser(sub, [common])
    return parser


def _error(message: str) -> None:
    print(f"vmsched: error: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ScenarioError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (`vmsched schedulers | head`): stop quietly, with
        # the status a shell gives a process that SIGPIPE ended.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - every other failure is a bug: say so
        if args.verbose:
            traceback.print_exc()
        if isinstance(exc, InternalError):
            print(f"vmsched: {exc}", file=sys.stderr)
        else:
            print(
                f"vmsched: internal error: {type(exc).__name__}: {exc} ({BUG_NOTE}; "
                "-v shows the traceback)",
                file=sys.stderr,
            )
        return EXIT_BUG
