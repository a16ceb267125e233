"""`vmsched top`: watch a simulation live, as `xentop` watches a Xen host.

The simulation runs paced to wall time (`--speed 1` = one simulated second
per wall second, `max` = as fast as it goes) and is sampled every
`--interval` simulated seconds. Each sample shows xentop's per-domain
columns and, per VCPU, the Mcredit2 monitor's utilisation bar with its
average and the VCPU's runnable ("CPU ready") time. Keys change the speed,
pause, sort, and change domains as `xl sched-*` would. `--batch` prints the
frames as plain text instead, as `xentop -b` does. `--xentop FILE|-` shows a
real Xen host from `xentop -b` output instead of a simulation
(vmsched.monitor.xentop). See docs/top.md.

    m = Monitor.start(vmsched.load("scenarios/credit-weights.toml"), interval_s=1)
    m.advance(10 * 10**9)            # simulate 10 s, sampling every second
    m.frame.domains[0].cpu_pct       # CPU(%) of the first domain over the last second
    m.adjust("vm-light", {"weight": 1024})
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

from vmsched.errors import ScenarioError
from vmsched.monitor.model import Frame, Monitor, parse_changes
from vmsched.monitor.text import frame_text
from vmsched.monitor.xentop import XentopFeed
from vmsched.scenario import read
from vmsched.scheduler import under

__all__ = ["Frame", "Monitor", "add_arguments", "main", "parse_changes", "parse_speed"]

HELP = "watch a simulation live, xentop-style (or print its frames with --batch)"


def parse_speed(text: str) -> float:
    """`1`, `10`, `100`, any positive number, or `max` (math.inf)."""
    if text.strip().lower() == "max":
        return math.inf
    try:
        speed = float(text)
    except ValueError:
        speed = math.nan
    if not (0 < speed < math.inf):
        raise ScenarioError(
            f'"{text}" is not a speed; expected simulated seconds per wall second '
            '(a positive number such as 1, 10 or 100) or "max"',
            path="--speed",
        )
    return speed


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`vmsched top`'s arguments."""
    p.add_argument("scenario", metavar="SCENARIO", nargs="?", help="scenario TOML file")
    p.add_argument(
        "--xentop",
        metavar="FILE|-",
        help="show a real Xen host instead: `xentop -b -d SECONDS` output, recorded or "
        "through a pipe (-); give --interval SECONDS (default 3, xentop's)",
    )
    p.add_argument(
        "--scheduler",
        metavar="NAME",
        help="watch it under another scheduler: a built-in, or yours (path/to/file.py:Class)",
    )
    p.add_argument(
        "--speed",
        default="1",
        metavar="1|10|100|max",
        help="simulated seconds per wall second, or max: as fast as possible (default 1)",
    )
    p.add_argument(
        "--interval",
        type=float,
        metavar="SECONDS",
        help="simulated seconds between samples (default: the scenario's run.sample_ms)",
    )
    p.add_argument(
        "--batch", action="store_true", help="print frames as plain text, like xentop -b"
    )
    p.add_argument(
        "--iterations",
        type=int,
        metavar="N",
        help="with --batch: print N frames (default: until the run ends)",
    )
    p.add_argument(
        "--delay",
        type=float,
        metavar="SECONDS",
        help="with --batch: wall seconds between frames (default: interval / speed; 0 at max)",
    )


def _check_batch_options(args: argparse.Namespace) -> None:
    for option, value in (("--iterations", args.iterations), ("--delay", args.delay)):
        if value is not None and not args.batch:
            raise ScenarioError(
                f"is for --batch output; expected it with --batch (or without {option})",
                path=option,
            )
    if args.iterations is not None and args.iterations < 1:
        raise ScenarioError(
            f"{args.iterations} is not a number of frames; expected 1 or more",
            path="--iterations",
        )
    if args.delay is not None and not (0 <= args.delay < math.inf):
        raise ScenarioError(
            f"{args.delay:g} is not a delay; expected 0 or more wall seconds", path="--delay"
        )


def run_batch(
    monitor: Monitor, speed: float, iterations: int | None, delay_s: float | None
) -> None:
    """Print a frame every interval of simulated time, `delay_s` wall seconds
    apart (interval ÷ speed by default), until `iterations` frames or the end."""
    if delay_s is None:
        delay_s = 0.0 if math.isinf(speed) else monitor.interval_s / speed
    start = time.monotonic()
    printed = 0
    while not monitor.finished and (iterations is None or printed < iterations):
        if printed:
            time.sleep(max(0.0, start + printed * delay_s - time.monotonic()))
        if not monitor.advance(monitor.next_sample_ns):
            continue  # a real host's feed ended without a new frame
        sys.stdout.write(frame_text(monitor.frame, speed, monitor.interval_s))
        sys.stdout.write("\n")
        sys.stdout.flush()
        printed += 1


def _keys_from_terminal() -> None:
    """`xentop -b | vmsched top --xentop -` on a screen: the frames arrive on
    standard input, so the keys are read from the terminal instead
    (/dev/tty), and the feed reads the pipe through a file of its own."""
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        return  # no terminal: the check below says so
    sys.stdin = os.fdopen(os.dup(0), encoding="utf-8", errors="replace")
    os.dup2(tty, 0)
    os.close(tty)


def main(args: argparse.Namespace) -> int:
    """`vmsched top`. Every input is checked before the simulation or the
    screen starts; bad input raises ScenarioError (status 2)."""
    speed = parse_speed(args.speed)
    _check_batch_options(args)
    if (args.scenario is None) == (args.xentop is None):
        raise ScenarioError(
            "needs one source; expected a SCENARIO file or --xentop FILE|- (not both)",
            path="vmsched top",
        )
    if args.xentop is not None:
        if args.interval is not None and not (0 < args.interval < math.inf):
            raise ScenarioError(
                f"{args.interval:g} is not a delay; expected the seconds xentop's -d was given",
                path="--interval",
            )
        if args.xentop == "-" and not args.batch and sys.stdout.isatty():
            _keys_from_terminal()
        monitor = XentopFeed.open(args.xentop, args.interval, blocking=args.batch)
    else:
        sc = read(args.scenario)
        if getattr(args, "scheduler", None):
            sc = under(sc, args.scheduler)
        monitor = Monitor.start(sc, args.interval)
    if args.batch:
        run_batch(monitor, speed, args.iterations, args.delay)
        return 0
    if not (os.isatty(0) and sys.stdout.isatty()):
        raise ScenarioError(
            "needs a terminal (standard input and output are not both one); "
            "expected a terminal, or --batch for plain-text frames",
            path="vmsched top",
        )
    try:
        from vmsched.monitor.app import TopApp
    except ModuleNotFoundError as exc:
        if exc.name != "textual":
            raise
        raise ScenarioError(
            "needs the textual package, which is not installed; expected "
            "`pip install textual` (or --batch, which does without it)",
            path="vmsched top",
        ) from None
    app = TopApp(monitor, speed=speed)
    app.run()
    if app.failure is not None:
        raise app.failure
    return 0
