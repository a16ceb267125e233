"""Calibrate a built-in profile's base costs on its named rows, and nothing else.

    python tools/calibrate.py cherkasova2007            # print the fit
    python tools/calibrate.py cherkasova2007 --write    # and write it into the profile
    python tools/calibrate.py thesis2015 [--write]
    python tools/calibrate.py thesis2015 --alternative "4 PCPUs (Hyper-Threading)"

The rule of the house (docs/calibration.md): each testbed's *base costs* are
fitted on named published rows only; every other published number is a
prediction the reproductions check.

- `cherkasova2007`: Cherkasova et al. 2007, Table 1, BVT C = 50 ms, Conf 1
  (934 req/s, Dom0 35 %, Dom1 64 %). The row gives the CPU per request of each
  domain: 35 % / 934 = 374.7 µs in Dom0 and 64 % / 934 = 685.2 µs in the guest.
  Fitted: `net_rx_ns` = `net_tx_ns` (Dom0's per-packet work) and
  `web_request_ns` (the guest's per-request work besides its packets), so that
  the simulated run of that very configuration (the reproduction's own run,
  `cherkasova2007-web-1cpu`, every seed) spends those two amounts per request.
- `thesis2015`: the thesis's native measurements in Dom0 (Appendix A): IOzone
  sequential read 54,073 KB/s fits `disk_transfer_mb_s`; sysbench OLTP
  1,013.7 transactions/s fits `oltp_txn_ns` (the reproductions' own native
  runs, `thesis2015-disk` and `thesis2015-oltp`).

`--alternative NAME` fits the same rows under one of the experiments' setup
alternatives (`Experiment.alternatives`, e.g. the thesis host with its four
Hyper-Threading PCPUs): a setup that changes the named row's own structure
needs its own base costs, which the alternative then carries (printed, never
written into the profile).

Each fitted number is updated by a secant step on its own target (the two are
nearly independent) until every target is within `TOLERANCE`; the other
numbers of the profile are left as they are. With `--write` the fitted values
replace the old ones in `crates/vmsched-core/profiles/NAME.toml` (nothing
else in the file changes); rebuild (`make setup`) for the engine to use them.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from vmsched.api import run as simulate
from vmsched.reproduce import experiment
from vmsched.reproduce.framework import FULL_REPLICATIONS, Run
from vmsched.reproduce.setups import workload_metric, xenmon

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ROOT / "crates" / "vmsched-core" / "profiles"
#: Relative distance of every target at which the fit stops.
TOLERANCE = 0.005
MAX_ROUNDS = 8


@dataclass
class Target:
    """One published number, the profile keys fitted to it, and how to measure it."""

    name: str
    published: float
    #: Keys set together to the fitted value (net_rx_ns and net_tx_ns).
    keys: tuple[str, ...]
    #: The configuration of the reproduction that is the named row.
    exp_id: str
    select: Callable[[Run], bool]
    measure: Callable[[dict], float]
    #: d(measured) / d(value) to start the secant with.
    slope: float
    integer: bool = True


def _per_request_us(dom: str) -> Callable[[dict], float]:
    def f(s: dict) -> float:
        tput = workload_metric(s, "dom1", "throughput_req_s")
        return xenmon(s, dom, "cpu_pct") / 100 / tput * 1e6

    return f


TARGETS: dict[str, list[Target]] = {
    "cherkasova2007": [
        Target(
            "Dom0 CPU per request, µs (Table 1, BVT C = 50 ms: 35 % at 934 req/s)",
            0.35 / 934 * 1e6,
            ("net_rx_ns", "net_tx_ns"),
            "cherkasova2007-web-1cpu",
            lambda r: (
                r.scheduler == "bvt"
                and r.params.get("ctx_allow_ms") == 50
                and r.params.get("dom0_weight_ratio") == 1
            ),
            _per_request_us("dom0"),
            # A 10 KiB request is about 17 packets through Dom0; ns -> µs.
            17 / 1000,
        ),
        Target(
            "Guest CPU per request, µs (Table 1, BVT C = 50 ms: 64 % at 934 req/s)",
            0.64 / 934 * 1e6,
            ("web_request_ns",),
            "cherkasova2007-web-1cpu",
            lambda r: (
                r.scheduler == "bvt"
                and r.params.get("ctx_allow_ms") == 50
                and r.params.get("dom0_weight_ratio") == 1
            ),
            _per_request_us("dom1"),
            1 / 1000,
        ),
    ],
    "thesis2015": [
        Target(
            "IOzone sequential read natively in Dom0, KB/s (Appendix A: 54,073)",
            54_073,
            ("disk_transfer_mb_s",),
            "thesis2015-disk",
            lambda r: (
                r.scheduler == "credit"
                and r.params.get("case") == "dom0-native"
                and r.params.get("mode") == "seq-read"
            ),
            lambda s: workload_metric(s, "dom0", "throughput_kb_s"),
            1000.0,
            integer=False,
        ),
        Target(
            "sysbench OLTP natively in Dom0, transactions/s (Appendix A: 1,013.7)",
            1013.7,
            ("oltp_txn_ns",),
            "thesis2015-oltp",
            lambda r: r.scheduler == "credit" and r.params.get("case") == "dom0-native",
            lambda s: workload_metric(s, "dom0", "transactions_s"),
            -5e-4,
        ),
    ],
}


def _alternative(exp_id: str, name: str | None):
    """The setup alternative `name` of experiment `exp_id` (None: the chosen setup)."""
    if name is None:
        return None
    for alt in experiment(exp_id).alternatives:
        if alt.name == name:
            return alt
    known = sorted({a.name for t in TARGETS.values() for x in t for a in _alts(x.exp_id)})
    raise SystemExit(f"calibrate: --alternative: {name!r} is not one of {', '.join(known)}")


def _alts(exp_id: str):
    return experiment(exp_id).alternatives


def _measure(target: Target, profile: dict, seeds: int, alternative: str | None = None) -> float:
    exp = experiment(target.exp_id)
    alt = _alternative(target.exp_id, alternative)
    values = []
    for i in range(seeds):
        timing = replace(exp.full, seed=exp.full.seed + i)
        [run] = [r for r in exp.grid(timing) if target.select(r)]
        data = run.scenario.data
        if alt is not None:
            alt.apply(data)
        data["host"]["profile"] = dict(profile)
        values.append(target.measure(simulate(data, progress=False).summary))
    return sum(values) / len(values)


def fit(
    name: str, seeds: int = FULL_REPLICATIONS, log=print, alternative: str | None = None
) -> dict[str, float]:
    """The fitted values of `name`'s base costs (key -> value), under the setup alternative
    `alternative` of the rows' experiments when given."""
    profile = tomllib.loads((PROFILES / f"{name}.toml").read_text())
    targets = TARGETS[name]
    state = {t.name: (float(profile[t.keys[0]]), None, None) for t in targets}
    for round_ in range(1, MAX_ROUNDS + 1):
        done = True
        for t in targets:
            value, prev_value, prev_measured = state[t.name]
            measured = _measure(t, profile, seeds, alternative)
            err = (measured - t.published) / t.published
            log(f"round {round_}: {'/'.join(t.keys)} = {value:g}: {measured:.2f} ({err:+.2%})")
            slope = t.slope
            if prev_value is not None and value != prev_value:
                slope = (measured - prev_measured) / (value - prev_value) or t.slope
            if abs(err) > TOLERANCE:
                done = False
                new = value + (t.published - measured) / slope
                new = float(round(new)) if t.integer else round(new, 2)
                state[t.name] = (new, value, measured)
                for k in t.keys:
                    profile[k] = int(new) if t.integer else new
        if done:
            break
    else:
        log(f"not converged in {MAX_ROUNDS} rounds")
    return {k: profile[k] for t in targets for k in t.keys}


def write(name: str, values: dict[str, float]) -> None:
    """Replace the fitted keys' values in the profile's TOML, nothing else."""
    path = PROFILES / f"{name}.toml"
    text = path.read_text()
    for k, v in values.items():
        text, n = re.subn(rf"(?m)^{re.escape(k)} = .*$", f"{k} = {v}", text)
        if n != 1:
            raise SystemExit(f"{path}: key {k} found {n} times; expected once")
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("profile", choices=sorted(TARGETS))
    p.add_argument("--write", action="store_true", help="write the fit into the profile")
    p.add_argument("--seeds", type=int, default=FULL_REPLICATIONS, help="seeds per measurement")
    p.add_argument(
        "--alternative",
        metavar="NAME",
        help="fit under this setup alternative of the rows' experiments (printed only)",
    )
    args = p.parse_args(argv)
    if args.seeds < 1:
        print("calibrate: --seeds: expected an integer >= 1", file=sys.stderr)
        return 2
    if args.alternative is not None and args.write:
        print(
            "calibrate: --write: not with --alternative (the fit is the alternative's own)",
            file=sys.stderr,
        )
        return 2
    if args.alternative is not None:
        known = sorted({a.name for t in TARGETS[args.profile] for a in _alts(t.exp_id)})
        if args.alternative not in known:
            print(
                f"calibrate: --alternative: {args.alternative!r} is not a setup alternative of "
                f"{args.profile}'s rows; expected one of: {', '.join(known) or '(none)'}",
                file=sys.stderr,
            )
            return 2
    values = fit(args.profile, args.seeds, alternative=args.alternative)
    print("fitted: " + ", ".join(f"{k} = {v:g}" for k, v in values.items()))
    if args.write:
        write(args.profile, values)
        print(f"wrote {PROFILES / (args.profile + '.toml')}; run `make setup` to rebuild")
    return 0


if __name__ == "__main__":
    sys.exit(main())
