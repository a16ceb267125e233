"""The scenarios shipped in scenarios/: each is valid, runs, and shows what
its comments say it shows."""

from __future__ import annotations

import pytest
import vmsched
from conftest import SCENARIOS, vmsched_cmd
from vmsched.scenario import Scenario, read

FILES = sorted(SCENARIOS.glob("*.toml"))


def test_the_shipped_scenarios_are_there():
    names = {p.name for p in FILES}
    assert {
        "credit-three-vms.toml",
        "credit-weights.toml",
        "credit-cap.toml",
        "three-hogs-2pcpu.toml",
        "sysbench-transient.toml",
    } <= names


def test_every_scenario_validates_from_the_command_line():
    proc = vmsched_cmd("validate", *map(str, FILES))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"{p}: OK" for p in FILES]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_scenario_runs(path):
    sc = read(path)
    warmup = sc.data["run"].get("warmup_s", 0)
    short = Scenario(sc.data, duration_s=warmup + 3, source=str(path))
    r = vmsched.run(short)
    assert r.summary["events"] > 0
    if sc.is_cluster:
        n_domains = sum(len(h["domain"]) for h in sc.data["host"])
    else:
        n_domains = len(sc.data["domain"])
    assert len(r.summary["domains"]) == n_domains


def shares(name: str) -> dict[str, float]:
    return vmsched.run(SCENARIOS / name).cpu_pct()


def test_weights_share_one_pcpu_2_to_1():
    cpu = shares("credit-weights.toml")
    assert cpu["vm-heavy"] / cpu["vm-light"] == pytest.approx(2, rel=0.02)
    assert cpu["vm-heavy"] + cpu["vm-light"] == pytest.approx(100, abs=0.1)


def test_cap_holds_with_a_pcpu_to_spare():
    cpu = shares("credit-cap.toml")
    assert cpu["vm-capped"] == pytest.approx(30, abs=1)
    assert cpu["vm-free"] == pytest.approx(100, abs=1)


def test_three_hogs_on_two_pcpus_get_two_thirds_each():
    for pct in shares("three-hogs-2pcpu.toml").values():
        assert pct == pytest.approx(200 / 3, abs=3)


def test_demo_shows_what_its_comments_say():
    r = vmsched.run(SCENARIOS / "credit-three-vms.toml")
    # dom0 and web get what they ask for, every period.
    for name, util in (("dom0", 4), ("web", 20)):
        d = r.domain(name)
        assert d["cpu_pct"] == pytest.approx(util, abs=0.5)
        assert d["workload"]["missed_periods"] == 0
    # The hogs share the rest, each on a PCPU with one light VM: gold with
    # dom0, bronze with web (as placed at creation, not by weight).
    hogs = [r.domain(n)["cpu_pct"] for n in ("batch-gold", "batch-bronze")]
    assert sum(hogs) == pytest.approx(200 - 24, abs=0.5)
    assert hogs[0] == pytest.approx(100 - 4, abs=0.5)
    assert hogs[1] == pytest.approx(100 - 20, abs=0.5)


def test_sysbench_slows_down_beside_the_noisy_neighbour():
    r = vmsched.run(SCENARIOS / "sysbench-transient.toml")
    bench = r.domain("bench")["workload"]
    alone_s = 2.0  # work_ms of each of the 2 threads, one PCPU each
    assert bench["runs_completed"] > 10
    assert alone_s < bench["mean_completion_s"] < 2 * alone_s
    assert r.domain("noisy")["workload"]["on_time_s"] == pytest.approx(30)
