"""The command line: `vmsched run | validate | schedulers | workloads | bench | top | alert |
reproduce | plot | compare | sweep`.

Output is short by default and detailed with `-v`. Exit status (docs/cli.md):
0 success; 1 an internal error, which is a bug in vmsched (or a lost worker process,
which is not, and says so); 2 bad input (a scenario, option or output folder that is
wrong), reported in one line that names the file, the field, the value and what was
expected, before anything
is simulated; 3 the results could not be written (a full disk), nothing kept;
130 and 143 interrupted by SIGINT or SIGTERM, nothing kept.
"""

from __future__ import annotations

import gc

# As the package does (vmsched/__init__.py): no cyclic collection while the
# modules load, which make lasting objects and no garbage.
_collecting = gc.isenabled()
gc.disable()
try:
    import argparse
    import json
    import os
    import re
    import signal
    import sys
    from collections.abc import Callable, Sequence

    import vmsched
    from vmsched import api, budget, tabular
    from vmsched.api import TRACE_FILES, prepare_out_dir, write_atomic
    from vmsched.errors import (
        InternalError,
        Interrupted,
        OutputError,
        ScenarioError,
        WorkerLost,
        one_line,
        unknown_name,
    )
    from vmsched.output import install_signal_handlers, pure
    from vmsched.scenario import Scenario, _put, read
    from vmsched.tabular import Grid, Output
finally:
    if _collecting:
        gc.enable()

# `typing` is not loaded at run time (it is a tenth of `vmsched run`'s start-up):
# annotations are not evaluated (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, NoReturn

    from rich.console import Console
    from rich.table import Table

# rich is loaded by the commands that draw with it, not here: `vmsched run`
# on a pipe or into a file prints its plain tables without it (tabular.Output).

EXIT_OK = 0
EXIT_BUG = 1
EXIT_BAD_INPUT = 2
#: The run was simulated but its results could not be written (a full disk).
EXIT_UNWRITABLE = 3

#: The repository's docs/ as the package sees it: in a source checkout (and an
#: editable install) `vmsched/docs` is a link to ../../docs; a wheel carries
#: the pages themselves there (pyproject.toml, [tool.maturin] include).
#: (Made when first used, `_docs_dir`: `vmsched run` does not load pathlib.)


def _docs_dir() -> Path:
    """DOCS_DIR (which a test may set)."""
    docs = globals().get("DOCS_DIR")
    if docs is None:
        from pathlib import Path

        docs = Path(__file__).resolve().parent / "docs"
    return docs


def __getattr__(name: str) -> Any:
    if name == "DOCS_DIR":
        return _docs_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


BUG_NOTE = "this is a bug in vmsched; please report it with the command that triggers it"

#: A screen's worth of domains: `vmsched run` on a host with more shows the
#: first ones and one line for the rest (summary.json has every domain).
SHOWN_DOMAINS = api.SHOWN_DOMAINS


def _console() -> Console:
    """Standard output; names and docs are printed as they are ([domain.sched]
    is not rich markup), without rich's number highlighting, uncut when piped
    (vmsched.tabular)."""
    return tabular.console()


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
    # The tree just read is this command's own: the overrides go into it, in
    # the order Scenario(tree, duration_s=..., seed=...) would put them.
    sc = read(args.scenario)
    _put(sc.data, "run", "duration_s", args.duration_s)
    _put(sc.data, "run", "seed", args.seed)
    if getattr(args, "scheduler", None):
        from vmsched.scheduler import under

        sc = under(sc, args.scheduler, where="--scheduler")
        given["scheduler.name"] = "--scheduler"
    return sc, given


def _beyond(
    domains: list[dict[str, Any]], rest: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """What the tables say of the domains after the first SHOWN_DOMAINS (None
    if there are none): their number (`count`), their CPU, runnable and
    blocked shares (lists, in order), their VCPUs' context switches and
    whether any did I/O (`io`). `rest` is the same from the core (the `_rest`
    of a summary it cut short, `Result._summary_head`), else it is taken
    from `domains`."""
    if rest is not None:
        return rest
    others = domains[SHOWN_DOMAINS:]
    if not others:
        return None
    return {
        "count": len(others),
        **{k: [d[k] for d in others] for k in _SHARES},
        "context_switches": sum(v["context_switches"] for d in others for v in d["vcpus"]),
        "io": any(d.get("xenmon", {}).get("io_events") for d in others),
    }


def _run_table(
    domains: list[dict[str, Any]],
    measured_s: float,
    verbose: bool,
    rest: dict[str, Any] | None = None,
) -> Grid:
    """One row per domain (and per VCPU of multi-VCPU domains, or with -v);
    beyond SHOWN_DOMAINS domains, one row averages the rest (`rest` as
    `_beyond` takes it)."""
    measured_ns = measured_s * 1e9
    table = Grid()
    table.add_column("domain", no_wrap=True)
    for col in ("CPU %", "runnable %", "blocked %", "ctx switches", "wake p50 µs", "wake p99 µs"):
        table.add_column(col, justify="right")
    beyond = _beyond(domains, rest)
    for d in domains[:SHOWN_DOMAINS]:
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
    if beyond is not None:
        n = beyond["count"]
        mean = {k: sum(beyond[k]) / n for k in _SHARES}
        table.add_row(
            f"{n:,} more (mean)",
            *(_fmt_pct(mean[k]) for k in _SHARES),
            str(beyond["context_switches"]),
            "",
            "",
        )
    return table


_SHARES = ("cpu_pct", "runnable_pct", "blocked_pct")


def _io_table(doms: list[dict[str, Any]], rest: dict[str, Any] | None = None) -> Grid | None:
    """XenMon's and xentop's I/O view of each domain, if the run did any I/O
    (`rest` as `_beyond` takes it)."""
    beyond = _beyond(doms, rest)
    shown = doms[:SHOWN_DOMAINS]
    if not (
        any(d.get("xenmon", {}).get("io_events") for d in shown)
        or (beyond is not None and beyond["io"])
    ):
        return None
    # As in xentop, NETTX/NETRX are the back end's view: NETTX is what the
    # back end sent to the guest (the guest received it).
    title = "I/O (XenMon, xentop; NETTX/NETRX as the back end sees them: TX = to the guest)"
    table = Grid(title=title)
    table.add_column("domain", no_wrap=True)
    for col in ("exec/s", "flips per exec", "NETTX kB", "NETRX kB", "VBD_RD", "VBD_WR"):
        table.add_column(col, justify="right")
    for d in doms[:SHOWN_DOMAINS]:
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
    out: Output, s: dict[str, Any], verbose: bool, label: str = "", note: str = ""
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
    rest = s.get("_rest")
    out.print(_run_table(s["domains"], s["measured_s"], verbose, rest))
    io = _io_table(s["domains"], rest)
    if io is not None:
        out.print(io)
    for d in s["domains"][:SHOWN_DOMAINS]:
        out.print(f"{d['name']}: {_workload_text(d['workload'])}")
    hidden = len(s["domains"]) + (rest["count"] if rest else 0) - SHOWN_DOMAINS
    if hidden > 0:
        out.print(
            f"{hidden:,} more domains not listed: every domain is in summary.json "
            "(--out DIR, or --json)"
        )
    if verbose:
        params = ", ".join(f"{k}={v}" for k, v in s["scheduler_params"].items())
        counters = ", ".join(f"{k}={v}" for k, v in s["scheduler_counters"].items())
        out.print(f"scheduler parameters: {params}")
        out.print(f"scheduler counters: {counters}")


def _print_jobs(out: Output, jobs: list[dict[str, Any]]) -> None:
    """The parallel jobs' completion times."""
    for j in jobs:
        done = j["completion_s"]
        when = f"completed in {done:.4g} s" if done is not None else "not completed"
        out.print(
            f"{j['kind']} job {', '.join(j['processes'])}: {when} "
            f"({j['iterations_done']} iterations)"
        )


#: `vmsched run --format csv`: one row per domain (vcpu empty) and per VCPU.
RUN_COLUMNS = (
    "host",
    "domain",
    "vcpu",
    "cpu_pct",
    "runnable_pct",
    "blocked_pct",
    "context_switches",
    "wake_p50_us",
    "wake_p99_us",
)


def _run_rows(s: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for h in s["hosts"] if s.get("cluster") else [s]:
        measured_ns = h["measured_s"] * 1e9
        for d in h["domains"]:
            vcpus = d["vcpus"]
            lat = vcpus[0]["wake_latency_us"] if len(vcpus) == 1 else {}
            host = h.get("name", "")
            switches = sum(v["context_switches"] for v in vcpus)
            rows.append(
                [host, d["name"], "", d["cpu_pct"], d["runnable_pct"], d["blocked_pct"],
                 switches, lat.get("p50", ""), lat.get("p99", "")]
            )  # fmt: skip
            for v in vcpus:
                rows.append(
                    [host, d["name"], v["vcpu"], v["cpu_pct"],
                     v["runnable_ns"] * 100 / measured_ns, v["blocked_ns"] * 100 / measured_ns,
                     v["context_switches"], v["wake_latency_us"]["p50"],
                     v["wake_latency_us"]["p99"]]
                )  # fmt: skip
    return rows


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
        # Lazy: the files are written from the engine, and only what is
        # printed becomes Python objects (a large host's summary is millions).
        result = vmsched.run(
            sc, out=args.out, progress=True, trace=args.trace, xentrace=args.xentrace, lazy=True
        )
    except ScenarioError as exc:
        if exc.path in given:
            raise ScenarioError(
                f"{exc.message} (set by {given[exc.path]})", file=exc.file, path=exc.path
            ) from None
        raise
    if args.json or args.format == "json":
        print(result._summary_text())
        return EXIT_OK
    if args.format == "csv":
        tabular.print_rows("csv", RUN_COLUMNS, _run_rows(result.summary))
        return EXIT_OK
    s = result._summary_head()
    out = Output()
    if s["title"]:
        out.print(s["title"], bold=True)
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
        out.print(f"results in {pure(args.out)}/ ({', '.join(files)})")
    out.flush()
    return EXIT_OK


# ----------------------------------------------------------- vmsched validate


def cmd_validate(args: argparse.Namespace) -> int:
    """`vmsched validate`: check each file; status 2 if any is bad."""
    failed = 0
    for path in args.scenarios:
        try:
            sc = vmsched.load(path)
            # What run would refuse before simulating: more memory than the limit.
            budget.check(sc.data, sc.source)
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
    from rich.table import Table

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


#: The columns of a parameter in `--format csv`.
PARAM_KEYS = ("name", "scope", "unit", "default", "range", "doc")


def cmd_schedulers(args: argparse.Namespace) -> int:
    """`vmsched schedulers [NAME]`: parameter tables, and NAME's docs summary
    (NAME may be your own scheduler, `file.py:Class`)."""
    from vmsched.scheduler import is_spec, register

    if args.name is not None and is_spec(args.name):
        register(args.name, where="NAME")
    scheds = _select(vmsched.catalogue()["schedulers"], "name", args.name, "scheduler")
    if args.format == "json":
        print(json.dumps(scheds, indent=2))
        return EXIT_OK
    if args.format == "csv":
        rows = [[s["name"], *(p[k] for k in PARAM_KEYS)] for s in scheds for p in s["params"]]
        tabular.print_rows("csv", ["scheduler", *PARAM_KEYS], rows)
        return EXIT_OK
    from rich.text import Text

    out = _console()
    for s in scheds:
        out.print(Text.assemble((s["name"], "bold"), f" — {s['summary']}"))
        alloc = s.get("allocation")
        cap = f"can cap a domain ({alloc['rule']})" if alloc else "cannot cap a domain"
        out.print(f"{s['origin']}; {cap}")
        out.print(_params_table(s["params"], with_scope=True))
        if args.name is not None:
            page = _docs_dir() / "schedulers" / f"{s['name']}.md"
            summary = doc_summary(page)
            if summary is not None:
                from rich.markdown import Markdown  # markdown-it: only here

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
    loads = _select(vmsched.catalogue()["workloads"], "kind", args.name, "workload")
    if args.format == "json":
        print(json.dumps(loads, indent=2))
        return EXIT_OK
    if args.format == "csv":
        rows = [[w["kind"], *(p[k] for k in PARAM_KEYS)] for w in loads for p in w["params"]]
        tabular.print_rows("csv", ["workload", *PARAM_KEYS], rows)
        return EXIT_OK
    from rich.text import Text

    out = _console()
    for w in loads:
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
    from vmsched.bench import run_benchmarks

    if args.out is not None:
        prepare_out_dir(args.out)
    report = run_benchmarks(args.scheduler, quick=args.quick, repeats=args.repeat, trace=args.trace)
    from rich.table import Table

    table = Table(show_edge=False, header_style="bold")
    table.add_column("case", no_wrap=True)
    for col in (
        "events/s",
        "simulated s per wall s",
        "per CPU s",
        "bytes per VCPU",
        "peak MiB",
        "best wall s",
    ):
        table.add_column(col, justify="right")
    for c in report["cases"]:
        table.add_row(
            c["name"],
            f"{c['events_per_s'] / 1e6:.2f} M",
            f"{c['realtime_factor']:,.0f}",
            f"{c['cpu_realtime_factor']:,.0f}",
            f"{c['bytes_per_vcpu']:,.0f}",
            f"{c['peak_mib']:,.0f}",
            f"{c['wall_s']:.3f}",
        )
    out = _console()
    mode = "short" if args.quick else "full-length"
    out.print(f"{report['scheduler']}, {mode} runs, best of {report['repeats']}, on one core:")
    for c in report["cases"] + report["commands"]:
        out.print(f"  {c['name']}: {c['about']}, {c['simulated_s']:g} simulated s")
    out.print(table)
    commands = Table(show_edge=False, header_style="bold")
    commands.add_column("whole command", no_wrap=True)
    for col in (
        "events/s",
        "simulated s per wall s",
        "per CPU s",
        "bytes per VCPU",
        "peak MiB",
        "engine MiB",
        "ratio",
        "wall s",
    ):
        commands.add_column(col, justify="right")
    for c in report["commands"]:
        commands.add_row(
            c["name"],
            f"{c['events_per_s'] / 1e6:.2f} M",
            f"{c['realtime_factor']:,.0f}",
            f"{c['cpu_realtime_factor']:,.0f}",
            f"{c['bytes_per_vcpu']:,.0f}",
            f"{c['peak_mib']:,.0f}",
            f"{c['engine_peak_mib']:,.0f}",
            f"{c['peak_ratio']:.2f}",
            f"{c['wall_s']:.3f}",
        )
    out.print(commands)
    out.print(
        f"per CPU s: simulated s per CPU second (the wall clock also counts waiting for a "
        f"processor); peak MiB: a process running just that; ratio: the command's peak over "
        f"the engine's, less the {report['baseline_mib']:,.0f} MiB of a process that only "
        "imports what vmsched run does"
    )
    heap = report["heap"]
    out.print(
        f"engine / bare heap loop ({heap['case']}, queue of {heap['queue_size']}): "
        f"{heap['engine_events_per_cpu_s'] / 1e6:.1f} M / "
        f"{heap['heap_events_per_cpu_s'] / 1e6:.1f} M events per CPU s = {heap['ratio']:.2f}"
    )
    scaling = Table(show_edge=False, header_style="bold")
    for col in ("PCPUs", "events", "per CPU s", "CPU µs per PCPU-s", "÷ log2 P"):
        scaling.add_column(col, justify="right")
    for r in report["scaling"]:
        scaling.add_row(
            str(r["pcpus"]),
            f"{r['events']:,}",
            f"{r['cpu_realtime_factor']:,.0f}",
            f"{r['cpu_us_per_pcpu_s']:.2f}",
            f"{r['per_log2_p']:.2f}",
        )
    out.print("P-scaling, the mixed host (4 domains per PCPU):")
    out.print(scaling)
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
        from pathlib import Path

        write_atomic(Path(args.out) / "bench.json", json.dumps(report, indent=2) + "\n")
        out.print(f"results in {args.out}/bench.json")
    return EXIT_OK


# ------------------------------------------------------------------ the parser


class Command:
    """One sub-command, as the parser lists it before loading it: `help`, one
    line for `vmsched --help`; `register`, "module:function", where
    `function(subparsers, parents)` adds the command's full parser (options,
    `func`) and the module is imported only when the command is the one run
    (or the full parser is built); `needs`, a module without which the
    command does not exist ("" for none). (A plain class: a NamedTuple would
    load `typing`.)"""

    __slots__ = ("help", "needs", "register")

    def __init__(self, help: str, register: str, needs: str = "") -> None:  # noqa: A002
        self.help = help
        self.register = register
        self.needs = needs


#: Every sub-command, in `vmsched --help` order. A new command is one row
#: here, plus its module's `add_parser(subparsers, parents)`.
COMMANDS: dict[str, Command] = {
    "run": Command(
        "simulate a scenario; print a per-domain table; save the results", "vmsched.cli:_add_run"
    ),
    "validate": Command("check scenario files without simulating", "vmsched.cli:_add_validate"),
    "schedulers": Command(
        "list the schedulers and their parameters", "vmsched.cli:_add_schedulers"
    ),
    "workloads": Command(
        "list the workloads, their parameters and metrics", "vmsched.cli:_add_workloads"
    ),
    "bench": Command(
        "measure the engine's speed and memory on standard scenarios", "vmsched.cli:_add_bench"
    ),
    "top": Command(
        "watch a simulation live, xentop-style (or print its frames with --batch)",
        "vmsched.cli:_add_top",
    ),
    "alert": Command(
        "the ALERT allocation-error benchmark (Cherkasova et al. 2007)",
        "vmsched.cli:_add_alert",
        needs="vmsched.alert",
    ),
    "reproduce": Command(
        "reproduce a published experiment: results.csv, report.md/.html, figures",
        "vmsched.cli:_add_reproduce",
        needs="vmsched.reproduce",
    ),
    "plot": Command(
        "draw cpu.png and latency.png from a `vmsched run --out` folder",
        "vmsched.plot:add_parser",
    ),
    "compare": Command(
        "run one scenario under several schedulers and parameter variants; write a report",
        "vmsched.compare:add_parser",
    ),
    "examples": Command(
        "list the example scenarios that come with vmsched, or copy them",
        "vmsched.examples:add_parser",
    ),
    "sweep": Command(
        "run a scenario over axes of parameters and seeds; tidy Parquet results and a report",
        "vmsched.cli:_add_sweep",
    ),
}


def _add_sweep(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    """`vmsched sweep`: its options are declared here so that building the parser
    imports nothing heavy; vmsched.sweeps loads when the command runs."""
    about = "run a scenario over axes of parameters and seeds; tidy Parquet results and a report"
    p = sub.add_parser(
        "sweep",
        parents=parents,
        help=about,
        description=about + ". `vmsched sweep report DIR` redraws DIR's report. "
        "Docs: docs/sweep.md",
    )
    p.add_argument("spec", metavar="SPEC", nargs="+", help="sweep spec TOML (or: report DIR)")
    p.add_argument("--out", metavar="DIR", help="results folder (required to run a sweep)")
    p.add_argument("--backend", default="local", help="local (default) or ray")
    p.add_argument("--address", metavar="HOST:PORT", help="a Ray cluster (with --backend ray)")
    p.add_argument("--jobs", type=int, metavar="N", help="parallel workers (default: CPUs)")
    p.add_argument("--batch-size", type=int, metavar="N", help="runs per task (default: auto)")
    p.add_argument("--resume", action="store_true", help="complete an interrupted sweep in DIR")
    p.add_argument("--no-figures", action="store_true", help="skip report.html")
    p.add_argument("--dry-run", action="store_true", help="check the spec, count runs, stop")

    def run_sweep(args: argparse.Namespace) -> int:
        from vmsched import sweeps

        return sweeps.main(args)

    p.set_defaults(func=run_sweep)


def _terminal_columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` gives it: $COLUMNS if it is a
    positive integer, else the width of the terminal on standard output, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, its width found without importing `shutil` (and with it
    zlib, bz2 and lzma: about 7 M instructions), which argparse's own does at every
    `add_argument`. The same width, so the same help text."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


class _Parser(argparse.ArgumentParser):
    """argparse, with a mistake in the command line reported in one line
    (`vmsched run: error: ...; see vmsched run --help`), status 2, as every
    other bad input is; subcommands' parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_BAD_INPUT, f"{self.prog}: error: {one_line(message)}; see {self.prog} --help\n"
        )


def _add(
    sub: argparse._SubParsersAction,
    parents: Sequence[argparse.ArgumentParser],
    name: str,
    func: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """A built-in command's parser, with its help from COMMANDS."""
    about = COMMANDS[name].help
    p = sub.add_parser(name, parents=list(parents), help=about, description=about)
    p.set_defaults(func=func)
    return p


def _add_run(sub: argparse._SubParsersAction, parents: Sequence[argparse.ArgumentParser]) -> None:
    p = _add(sub, parents, "run", cmd_run)
    p.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    p.add_argument(
        "--out", metavar="DIR", help="write summary.json and timeseries.parquet into DIR"
    )
    p.add_argument("--seed", type=int, metavar="N", help="set run.seed")
    p.add_argument("--duration-s", type=float, metavar="X", help="set run.duration_s")
    p.add_argument(
        "--scheduler",
        metavar="NAME",
        help="run under another scheduler: a built-in name, or your own, "
        "path/to/file.py:Class or package.module:Class (docs/write-a-scheduler.md)",
    )
    p.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    tabular.add_format_option(p)
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


def _add_validate(sub: argparse._SubParsersAction, parents: Sequence[argparse.ArgumentParser]):
    p = _add(sub, parents, "validate", cmd_validate)
    p.add_argument("scenarios", metavar="SCENARIO", nargs="+", help="scenario TOML files")


def _add_schedulers(sub: argparse._SubParsersAction, parents: Sequence[argparse.ArgumentParser]):
    p = _add(sub, parents, "schedulers", cmd_schedulers)
    p.add_argument("name", metavar="NAME", nargs="?", help="one scheduler, with its docs summary")
    tabular.add_format_option(p)


def _add_workloads(sub: argparse._SubParsersAction, parents: Sequence[argparse.ArgumentParser]):
    p = _add(sub, parents, "workloads", cmd_workloads)
    p.add_argument("name", metavar="NAME", nargs="?", help="one workload")
    tabular.add_format_option(p)


def _add_bench(sub: argparse._SubParsersAction, parents: Sequence[argparse.ArgumentParser]):
    from vmsched.bench import REPEATS

    p = _add(sub, parents, "bench", cmd_bench)
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


def _add_top(sub: argparse._SubParsersAction, parents: Sequence[argparse.ArgumentParser]):
    from vmsched import monitor

    p = _add(sub, parents, "top", monitor.main)
    monitor.add_arguments(p)


def _add_alert(sub: argparse._SubParsersAction, parents: Sequence[argparse.ArgumentParser]):
    """`vmsched alert` registers its own options with `add_parser` and runs
    with `main(args) -> int`."""
    import vmsched.alert as alert

    alert.add_parser(sub)
    sub.choices["alert"].set_defaults(func=alert.main)


def _add_reproduce(sub: argparse._SubParsersAction, parents: Sequence[argparse.ArgumentParser]):
    """`vmsched reproduce` registers its own options (and `func`) with `add_parser`."""
    import vmsched.reproduce as reproduce

    reproduce.add_parser(sub)


def _exists(module: str) -> bool:
    """Is there such a module (found without importing it)?"""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _command_in(argv: Sequence[str]) -> str | None:
    """The sub-command `argv` runs: its first word that is not an option (the
    global options take no value)."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `vmsched` argument parser. With `argv`, only the command it runs is
    loaded in full (its module imported, its options added); the others are
    listed by name and help alone. Without, every command is loaded."""
    parser = _Parser(
        prog="vmsched",
        description="A laboratory for CPU scheduling of virtual machines.",
        epilog="exit status: 0 success, 1 internal error (a bug), 2 bad input, 3 results "
        "could not be written, 130/143 interrupted. Docs: docs/cli.md",
    )
    parser.add_argument("--version", action="version", version=f"vmsched {vmsched.__version__}")
    verbose_help = "more detail: per-VCPU rows, scheduler counters, tracebacks of internal errors"
    parser.add_argument("-v", "--verbose", action="store_true", help=verbose_help)
    # -v after the subcommand too; SUPPRESS keeps the value given before it.
    common = argparse.ArgumentParser(add_help=False, formatter_class=_HelpFormatter)
    common.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=verbose_help
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = None if argv is None else _command_in(argv)
    # Whether the optional commands' modules exist matters where the list of
    # commands is printed (`vmsched --help`, an unknown command): a known
    # command's line is parsed without looking for them.
    listing = argv is None or wanted not in COMMANDS
    for name, command in COMMANDS.items():
        if command.needs and (listing or name == wanted) and not _exists(command.needs):
            continue
        if argv is None or name == wanted:
            module, function = command.register.split(":")
            # (`__import__` and sys.modules: importlib.import_module would load importlib.)
            __import__(module)
            getattr(sys.modules[module], function)(sub, [common])
        else:
            sub.add_parser(name, help=command.help, add_help=False)
    return parser


def _error(message: str) -> None:
    print(f"vmsched: error: {message}", file=sys.stderr)


#: Commands after which the `vmsched` process may end without the
#: interpreter's teardown (`entry`): they write and close every file they
#: make, and start no thread or process.
QUICK_EXIT = frozenset({"run", "validate"})


def entry() -> int:
    """The `vmsched` program (the installed script and `python -m vmsched`):
    `main` on this process's command line, and its exit status.

    After a command of QUICK_EXIT the process ends at once (`os._exit`), once
    the exit handlers have run and standard output and error are flushed: the
    interpreter's teardown would free every object one by one (a large run's
    summary is millions), which writes nothing. It ends the normal way
    instead when code other than vmsched's ran (a scheduler written in
    Python), when a thread is still running, or when flushing the output
    fails (which the normal way reports)."""
    argv = sys.argv[1:]
    # What is loaded by now (the package, this module, the standard library
    # they use) lasts as long as the process: the cyclic collector need not
    # walk it again at each later collection (it would, while the command
    # loads its own modules and reads its scenario).
    gc.freeze()
    status = main(argv)
    threads = sys.modules.get("threading")
    if (
        _command_in(argv) in QUICK_EXIT
        and "vmsched.scheduler" not in sys.modules
        and (threads is None or threads.active_count() == 1)
    ):
        import atexit

        atexit._run_exitfuncs()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            return status
        os._exit(status)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    restore_signals = install_signal_handlers()
    try:
        return args.func(args)
    except ScenarioError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except OutputError as exc:
        _error(str(exc))
        return EXIT_UNWRITABLE
    except KeyboardInterrupt as exc:
        # Ctrl-C or SIGTERM (Interrupted): what the run had begun to write is
        # already removed.
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        _error(f"interrupted ({signal.Signals(signum).name}); nothing of the run was kept")
        return 128 + signum
    except WorkerLost as exc:
        # A worker killed or out of memory: not a bug, so not labelled as one.
        _error(one_line(str(exc)))
        return EXIT_BUG
    except BrokenPipeError:
        # The reader went away (`vmsched schedulers | head`): it had what it
        # wanted, so stop quietly, successfully, writing nothing more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - every other failure is a bug: say so
        if args.verbose:
            import traceback

            traceback.print_exc()
        if isinstance(exc, InternalError):
            print(f"vmsched: {one_line(str(exc))}", file=sys.stderr)
        else:
            print(
                f"vmsched: internal error: {type(exc).__name__}: {one_line(str(exc))} "
                f"({BUG_NOTE}; -v shows the traceback)",
                file=sys.stderr,
            )
        return EXIT_BUG
    finally:
        restore_signals()
