"""Run-time administration by `[[action]]` from Python and the command line:
`xl pause`/`unpause`, VCPU hotplug (`xl vcpu-set`), `xl vcpu-pin` and
scheduler parameters, from a scenario file, the builder, the CLI and a live
simulation; bad actions stop before anything is simulated (exit status 2)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import vmsched
from conftest import DOCS, vmsched_cmd
from vmsched import _core

IPI_NS = 1500  # the default profile's reschedule-IPI latency
S = 1_000_000_000

ADMIN = """\
[host]
pcpus = 2

[scheduler]
name = "credit"

[run]
duration_s = 2
sample_ms = 100

[[domain]]
name = "big"
vcpus = 2
[domain.workload]
kind = "cpu-hog"

[[domain]]
name = "vm2"
[domain.workload]
kind = "cpu-hog"

[[action]]
at_s = 0.5
domain = "vm2"
pause = true

[[action]]
at_s = 1.0
domain = "vm2"
pause = false

[[action]]
at_s = 1.2
domain = "big"
vcpus_online = 1

[[action]]
at_s = 1.6
domain = "big"
vcpus_online = 2
weight = 512
"""


def vcpu(summary: dict, dom: str, i: int) -> dict:
    return next(d for d in summary["domains"] if d["name"] == dom)["vcpus"][i]


def check_admin(summary: dict, series) -> None:
    """What the ADMIN scenario must give: vm2 off for exactly its paused
    half second (less at most one IPI while its PCPU reschedules), big.v1
    off for its 0.4 s offline, nobody else ever offline, every VCPU's states
    summing to the run."""
    off = vcpu(summary, "vm2", 0)["offline_ns"]
    assert S // 2 - IPI_NS <= off <= S // 2
    off = vcpu(summary, "big", 1)["offline_ns"]
    assert 2 * S // 5 - IPI_NS <= off <= 2 * S // 5
    assert vcpu(summary, "big", 0)["offline_ns"] == 0
    for d in summary["domains"]:
        for v in d["vcpus"]:
            total = sum(v[k] for k in ("running_ns", "runnable_ns", "blocked_ns", "offline_ns"))
            assert total == 2 * S, (d["name"], v)
    assert next(d for d in summary["domains"] if d["name"] == "big")["sched"]["weight"] == 512
    # The time series (domain rows have no VCPU number): vm2 runs 0 % in the
    # samples inside its pause (the first one may hold the IPI it ran on),
    # and big one PCPU's worth (plus that IPI) while v1 is down.
    vm2 = series[(series.domain == "vm2") & series.vcpu.isna()].set_index("time_s")
    big = series[(series.domain == "big") & series.vcpu.isna()].set_index("time_s")
    assert len(vm2) == len(big) == 20
    assert list(vm2.loc[0.65:1.0, "cpu_pct"]) == [0.0] * 4
    assert vm2.loc[0.6, "cpu_pct"] < 0.01
    assert (vm2.loc[0.1:0.5, "cpu_pct"] > 30).all()
    assert (vm2.loc[1.1:2.0, "cpu_pct"] > 0).all()
    during = big.loc[1.25:1.6, "cpu_pct"]
    assert len(during) == 4 and (during <= 100.01).all(), during
    after = big.loc[1.65:2.0, "cpu_pct"]
    assert len(after) == 4 and (after > 110).all(), after


def test_scenario_file_with_actions(scenario_file):
    r = vmsched.run(scenario_file(ADMIN), progress=False)
    check_admin(r.summary, r.timeseries)
    assert r.summary["scenario"]["action"][1]["pause"] is False


def test_cli_run_with_actions(scenario_file, tmp_path):
    out = tmp_path / "out"
    proc = vmsched_cmd("run", str(scenario_file(ADMIN)), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    check_admin(
        json.loads((out / "summary.json").read_text()),
        pd.read_parquet(out / "timeseries.parquet"),
    )


def test_builder_actions_with_parameters_and_affinity():
    sc = vmsched.Scenario(pcpus=2, scheduler="credit2", duration_s=2)
    sc.add_domain("vm1", workload="cpu-hog")
    sc.add_domain("vm2", workload="cpu-hog")
    sc.add_action(0.5, domain="vm1", affinity="0")
    sc.add_action(0.5, domain="vm2", affinity=[0])
    sc.add_action(1.0, domain="vm2", pause=True, weight=512)
    r = vmsched.run(sc, progress=False)
    pcpus = r.summary["host"]["pcpus_detail"]
    # PCPU 1 idles from 0.5 s on (an IPI after the pins), so it is busy for
    # about a quarter of the run.
    assert abs(pcpus[1]["busy_pct"] - 25.0) < 0.01
    assert S - IPI_NS <= vcpu(r.summary, "vm2", 0)["offline_ns"] <= S


def test_live_pause_through_the_bindings():
    sc = vmsched.Scenario(pcpus=1, scheduler="rtds", duration_s=2)
    sc.add_domain("vm1", workload="cpu-hog")
    sc.add_domain("vm2", workload="cpu-hog")
    sim = _core.Sim(sc.validate().to_json())
    sim.run_until(S // 2)
    sim.adjust_domain("vm1", json.dumps({"pause": True}))
    sim.run_until(S)
    sim.adjust_domain("vm1", json.dumps({"pause": False}))
    sim.run_until(2 * S)
    summary = json.loads(sim.summary(0.0))
    off = vcpu(summary, "vm1", 0)["offline_ns"]
    assert S // 2 - IPI_NS <= off <= S // 2
    with pytest.raises(_core.ScenarioError) as e:
        sim.adjust_domain("vm1", json.dumps({"pause": False}))
    path, message = e.value.args
    assert path == "adjust.pause"
    assert "vm1 is not paused" in message


BAD = [
    (
        "[[action]]\nat_s = 0.5\npause = true\n",
        "action[0].pause: acts on one domain (xl pause / xl unpause DOMAIN), "
        'but this action has no domain; expected domain = "NAME"',
    ),
    (
        '[[action]]\nat_s = 0.5\ndomain = "big"\nvcpus_online = 3\n',
        "action[0].vcpus_online: 3 is out of range; expected 1..=2 (big has 2 VCPUs",
    ),
    (
        '[[action]]\nat_s = 0.5\ndomain = "vm2"\npause = false\n',
        "action[0].pause: false (xl unpause) but vm2 is not paused then",
    ),
    (
        '[[action]]\nat_s = 0.5\ndomain = "vm2"\nafinity = "0"\n',
        "action[0].afinity: unknown key 'afinity'",
    ),
]


@pytest.mark.parametrize(("action", "message"), BAD)
def test_bad_action_exits_2_with_path_value_expected(scenario_file, tmp_path, action, message):
    base = ADMIN[: ADMIN.index("[[action]]")]
    path = scenario_file(base + action)
    out = tmp_path / "out"
    proc = vmsched_cmd("run", str(path), "--out", str(out))
    assert proc.returncode == 2, proc
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [proc.stderr.strip()], proc.stderr
    assert proc.stderr.startswith(f"vmsched: error: {path}: {message}"), proc.stderr
    assert not out.exists()


def test_action_reference_lists_the_keys_and_real_messages():
    """docs/scenarios.md documents exactly the keys a domain action takes
    besides scheduler parameters, and its example messages are the real ones."""
    text = (DOCS / "scenarios.md").read_text()
    section = text[text.index("## `[[action]]`") : text.index("## Python")]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE))
    sc = vmsched.Scenario(pcpus=1, scheduler="credit", duration_s=1)
    sc.add_domain("vm1", workload="cpu-hog", vcpus=2)
    sc.add_action(0.5, domain="vm1", zzz=1)
    with pytest.raises(vmsched.ScenarioError) as e:
        sc.validate()
    known = re.search(r"expected ([\w, ]+) or a per-domain parameter", e.value.message)[1]
    assert documented == set(known.split(", "))

    def message(*actions: dict) -> str:
        sc = vmsched.Scenario(pcpus=1, scheduler="credit", duration_s=1)
        sc.add_domain("vm1", workload="cpu-hog", vcpus=2)
        for a in actions:
            sc.add_action(**a)
        with pytest.raises(vmsched.ScenarioError) as e:
            sc.validate()
        return f"{e.value.path}: {e.value.message}"

    pair = [
        {"at_s": 0.1, "domain": "vm1", "pause": True},
        {"at_s": 0.2, "domain": "vm1", "pause": False},
    ]
    for m in (
        message(*pair, {"at_s": 0.3, "domain": "vm1", "pause": False}),
        message({"at_s": 0.1, "domain": "vm1", "vcpus_online": 3}),
        message({"at_s": 0.1, "domain": "vm1", "weight": 300}, {"at_s": 0.2, "pause": True}),
    ):
        assert f"vmsched: error: my.toml: {m}\n" in section, m
