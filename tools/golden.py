"""Reference results of the standard scenarios, to prove a change keeps them.

    python tools/golden.py write     # (re)write tests/golden/*.json from this tree
    python tools/golden.py check     # compare this tree's results with them

Each scenario in scenarios/ is run for at most `CAP_S` simulated seconds; what
is kept is its summary.json (without wall time) and a digest of its time
series. `tests/test_golden.py` runs `check`. `OVERRIDES` are profile keys
that a model change has added: the references were written before them, so
the check runs with each set to the value that switches its mechanism off.
A change that alters results on purpose rewrites the references in the same
commit and says why.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
CAP_S = 30.0

#: Profile keys added after the references were written, with the value that
#: switches each one's mechanism off (fidelity work adds to this table).
OVERRIDES: dict[str, object] = {
    # The indirect cost of a switch and the scheduler's run time
    # (docs/switch-cost.md).
    "lazy_idle_switch": False,
    "switch_refill_ns": 0,
    "l2_lines": 0,
    "l2_fill_ns": 0,
    "l3_lines": 0,
    "l3_fill_ns": 0,
    "sched_invoke_ns": 0,
    "sched_queue_op_ns": 0,
    # The I/O path's fidelity (docs/io.md): the guest front end's per-batch
    # work, NIC interrupt moderation, cost variability.
    "guest_batch_ns": 0,
    "nic_rx_irq": "per-message",
    "nic_irq_interval_us": 0.0,
    "request_cpu_cv": 0.0,
    "io_cost_cv": 0.0,
    "disk_service_cv": 0.0,
    # TCP's timestamp option on every segment (docs/io.md#the-nic): 0 is
    # the 40-byte TCP/IP header (MSS = MTU - 40) the references were
    # written with.
    "tcp_options_bytes": 0,
    # The driver domain's block layer merging adjacent queued disk requests
    # (docs/io.md#the-disk): 0 is no merging, as the references were written.
    "disk_max_request_kb": 0.0,
}

#: Base costs of a built-in profile recalibrated on its named row after the
#: references were written (docs/calibration.md, `tools/calibrate.py`), with
#: the values the references were written with: the check runs a scenario of
#: that profile with these, so what it proves is that everything else is
#: unchanged bit for bit.
RECALIBRATED: dict[str, dict[str, object]] = {
    # Recalibrated with the switch-cost model and the I/O path's fidelity
    # keys on (their off values above).
    "cherkasova2007": {"net_rx_ns": 18000, "net_tx_ns": 18000, "web_request_ns": 480000},
}

#: Summary fields added after the references were written (paths as
#: `domains.switch_cost`: a key inside every element of a list counts as the
#: list's). They are new reports, not changed results: the check drops them
#: and compares everything the references hold, bit for bit.
ADDED_SUMMARY_KEYS: set[str] = {
    "domains.switch_cost",
    "host.io.tcp_options_bytes",
    "host.io.disk_busy_pct",
}


#: The time-series columns the references' digest covers, in the frame's order.
DIGESTED_COLUMNS = (
    "time_s",
    "host",
    "domain",
    "vcpu",
    "cpu_pct",
    "runnable_pct",
    "blocked_pct",
)


def scenario_dicts() -> dict[str, dict]:
    out = {}
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        doc = tomllib.loads(path.read_text())
        run = doc.setdefault("run", {})
        run["duration_s"] = min(float(run.get("duration_s", CAP_S)), CAP_S)
        run["warmup_s"] = min(float(run.get("warmup_s", 0.0)), run["duration_s"] / 4)
        out[path.stem] = doc
    return out


def _with_overrides(doc: dict) -> dict:
    if not OVERRIDES:
        return doc
    hosts = doc.get("host")
    for host in hosts if isinstance(hosts, list) else [doc.setdefault("host", {})]:
        profile = host.get("profile", "default")
        pinned: dict[str, object] = {}
        if isinstance(profile, str):
            pinned = RECALIBRATED.get(profile, {})
            profile = _builtin(profile)
        host["profile"] = {**profile, **OVERRIDES, **pinned}
    return doc


def _builtin(name: str) -> dict:
    path = ROOT / "crates" / "vmsched-core" / "profiles" / f"{name}.toml"
    return tomllib.loads(path.read_text())


def _without_wall_time(value):
    """The summary less `wall_s` (also inside a cluster's hosts): the only
    field that depends on the machine."""
    if isinstance(value, dict):
        return {k: _without_wall_time(v) for k, v in value.items() if k != "wall_s"}
    if isinstance(value, list):
        return [_without_wall_time(v) for v in value]
    return value


def _without_added(value, prefix: str = ""):
    """`value` less the `ADDED_SUMMARY_KEYS` (also inside a cluster's hosts)."""
    if isinstance(value, dict):
        return {
            k: _without_added(v, f"{prefix}{k}.")
            for k, v in value.items()
            if f"{prefix}{k}" not in ADDED_SUMMARY_KEYS
            and not f"{prefix}{k}".endswith(tuple(f".{a}" for a in ADDED_SUMMARY_KEYS))
        }
    if isinstance(value, list):
        return [_without_added(v, prefix) for v in value]
    return value


def result_of(name: str, doc: dict) -> dict:
    import vmsched

    doc = _with_overrides(json.loads(json.dumps(doc)))
    r = vmsched.run(doc, progress=False)
    summary = _without_added(_without_wall_time(dict(r.summary)))
    summary.pop("scenario", None)
    # The columns the references were written with (later columns, such as
    # the I/O counters, are new and not part of the digest).
    frame = r.timeseries
    frame = frame[[c for c in frame.columns if c in DIGESTED_COLUMNS]]
    digest = hashlib.sha256(frame.to_csv(index=False).encode()).hexdigest()
    return {"summary": summary, "timeseries_sha256": digest}


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "check"
    failed = []
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name, doc in scenario_dicts().items():
        got = json.loads(json.dumps(result_of(name, doc)))
        path = GOLDEN / f"{name}.json"
        if mode == "write":
            path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
            print(f"wrote {path.relative_to(ROOT)}")
        elif json.loads(path.read_text()) != got:
            failed.append(name)
    if failed:
        print("differ from tests/golden:", ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
