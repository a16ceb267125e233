"""Clusters of hosts from Python and the command line, and the scenarios of
Govindan et al.'s experiments (tiered, streaming, bsp workloads): results,
bad input, and the direction each experiment shows, on short runs."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import vmsched
from conftest import SCENARIOS, vmsched_cmd
from vmsched import api
from vmsched.scenario import Scenario, read

#: Two hosts, one bsp process each, exchanging every iteration.
CLUSTER = """\
title = "two processes"

[run]
duration_s = 2
warmup_s = 0

[[host]]
name = "a"
pcpus = 1
[host.scheduler]
name = "credit"
[[host.domain]]
name = "dom0"
[host.domain.workload]
kind = "idle"
[[host.domain]]
name = "p"
[host.domain.workload]
kind = "bsp"
peers = ["b/p"]
iterations = 40
compute_ms = 5
message_bytes = 20000

[[host]]
name = "b"
pcpus = 1
[host.scheduler]
name = "credit"
[[host.domain]]
name = "dom0"
[host.domain.workload]
kind = "idle"
[[host.domain]]
name = "p"
[host.domain.workload]
kind = "bsp"
peers = ["a/p"]
iterations = 40
compute_ms = 5
message_bytes = 20000
"""


def test_a_cluster_runs_from_python(scenario_file):
    r = vmsched.run(scenario_file(CLUSTER))
    s = r.summary
    assert r.is_cluster and s["cluster"] is True
    assert [h["name"] for h in s["hosts"]] == ["a", "b"]
    assert [(d["host"], d["name"]) for d in s["domains"]] == [
        ("a", "dom0"),
        ("a", "p"),
        ("b", "dom0"),
        ("b", "p"),
    ]
    # Each host's summary is a whole single-host summary.
    for h in s["hosts"]:
        assert h["scheduler"] == "credit"
        assert {d["name"] for d in h["domains"]} == {"dom0", "p"}
    job = s["jobs"][0]
    assert job["processes"] == ["a/p", "b/p"]
    assert job["iterations_done"] == 40
    done = [r.domain(f"{h}/p")["workload"]["completion_s"] for h in "ab"]
    assert job["completion_s"] == max(done)
    # 40 iterations of 5 ms of compute and an exchange.
    assert 0.2 < job["completion_s"] < 0.3
    assert set(r.cpu_pct()) == {"a/dom0", "a/p", "b/dom0", "b/p"}
    with pytest.raises(KeyError, match="several hosts"):
        r.domain("p")
    assert "cluster of 2 hosts" in repr(r)
    # One host of it, as a single-host result.
    b = r.host("b")
    assert b.summary is s["hosts"][1]
    assert b.domain("p") == {k: v for k, v in r.domain("b/p").items() if k != "host"}
    assert len(b.timeseries) == (r.timeseries["host"] == "b").sum()
    assert b.plot.cpu() is not None
    with pytest.raises(vmsched.ScenarioError, match=r"r.host\(NAME\).plot"):
        r.plot.cpu()
    with pytest.raises(KeyError, match="the hosts are a, b"):
        r.host("c")


def test_a_cluster_timeseries_has_a_host_column(scenario_file):
    r = vmsched.run(scenario_file(CLUSTER))
    df = r.timeseries
    assert list(df.columns) == [
        "time_s",
        "host",
        "domain",
        "vcpu",
        "cpu_pct",
        "runnable_pct",
        "blocked_pct",
        *api.COUNT_COLUMNS,
        *api.IO_COLUMNS,
    ]
    assert set(df["host"]) == {"a", "b"}
    # Each host's rows agree with its own summary.
    for h in ("a", "b"):
        rows = df[(df["host"] == h) & (df["domain"] == "p") & df["vcpu"].isna()]
        mean = (rows["cpu_pct"] * rows["time_s"].diff().fillna(rows["time_s"])).sum() / 2
        assert mean == pytest.approx(r.domain(f"{h}/p")["cpu_pct"], abs=0.01)


def test_a_cluster_is_deterministic_and_its_seed_matters_only_through_the_hosts(
    scenario_file,
):
    path = scenario_file(CLUSTER)
    a = vmsched.run(path).summary
    b = vmsched.run(path).summary
    assert {**a, "wall_s": 0, "hosts": None} == {**b, "wall_s": 0, "hosts": None}
    assert [{**h, "wall_s": 0} for h in a["hosts"]] == [{**h, "wall_s": 0} for h in b["hosts"]]
    assert a["seed"] == 1


def test_a_cluster_built_in_python(scenario_file):
    sc = Scenario(duration_s=2, seed=3)
    for me, other in (("a", "b"), ("b", "a")):
        sc.add_host(me, pcpus=1, scheduler="credit")
        sc.add_domain("dom0", host=me)
        sc.add_domain(
            "p",
            host=me,
            workload={
                "kind": "bsp",
                "peers": [f"{other}/p"],
                "iterations": 40,
                "compute_ms": 5,
                "message_bytes": 20000,
            },
        )
    assert sc.is_cluster
    assert "cluster" in repr(sc)
    built = vmsched.run(sc).summary
    from_file = vmsched.run(Scenario(read(scenario_file(CLUSTER)).data, seed=3)).summary
    assert built["jobs"] == from_file["jobs"]
    with pytest.raises(vmsched.ScenarioError, match="names no host"):
        sc.add_domain("x", host="c")
    single = Scenario(pcpus=1, scheduler="credit")
    with pytest.raises(vmsched.ScenarioError, match="one host"):
        single.add_domain("x", host="a")
    with pytest.raises(vmsched.ScenarioError, match="already has"):
        single.add_host("a", pcpus=1)


def test_run_and_validate_a_cluster_from_the_command_line(scenario_file, tmp_path):
    path = scenario_file(CLUSTER)
    ok = vmsched_cmd("validate", str(path))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == f"{path}: OK\n"
    out = tmp_path / "res"
    proc = vmsched_cmd("run", str(path), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "a cluster of 2 hosts, seed 1" in proc.stdout
    assert "host a: credit on 1 PCPU: 2 s measured" in proc.stdout
    assert "host b: credit on 1 PCPU" in proc.stdout
    assert re.search(r"bsp job a/p, b/p: completed in 0\.2\d* s \(40 iterations\)", proc.stdout)
    saved = json.loads((out / "summary.json").read_text())
    assert [h["name"] for h in saved["hosts"]] == ["a", "b"]
    assert all("host" in d for d in saved["domains"])
    assert saved["scenario"]["host"][1]["name"] == "b"
    df = pd.read_parquet(out / "timeseries.parquet")
    assert set(df["host"]) == {"a", "b"}
    js = vmsched_cmd("run", str(path), "--json", "--seed", "5")
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout)["seed"] == 5


def bad_cluster(scenario_file, tmp_path, old: str, new: str, count: int = 1) -> str:
    """`vmsched run` on CLUSTER with one change: exit 2, one line, no output."""
    assert old in CLUSTER
    path = scenario_file(CLUSTER.replace(old, new, count))
    out = tmp_path / "out"
    proc = vmsched_cmd("run", str(path), "--out", str(out))
    assert proc.returncode == 2, proc
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"vmsched: error: {path}: "), lines[0]
    assert not out.exists()
    return lines[0]


@pytest.mark.parametrize(
    ("old", "new", "fragments"),
    [
        (
            'peers = ["a/p"]',
            'peers = ["a/q"]',
            [
                "host[1].domain[1].workload.peers",
                '"q" is not a domain of host a',
                "did you mean 'p'",
            ],
        ),
        (
            'peers = ["b/p"]',
            'peers = ["c/p"]',
            ["host[0].domain[1].workload.peers", 'names host "c", which does not exist'],
        ),
        ('name = "b"', 'name = "a"', ["host[1].name", "used by an earlier host"]),
        ("pcpus = 1", "pcpu = 1", ["host[0].pcpu", "did you mean 'pcpus'"]),
        ("[run]", "[rnu]", ["rnu: is not a key of a cluster scenario", "did you mean 'run'"]),
        ("iterations = 40", "iterations = 1.5", ["host[0].domain[1].workload.iterations"]),
        ('kind = "bsp"', 'kind = "bps"', ["host[0].domain[1].workload.kind", "did you mean 'bsp'"]),
    ],
    ids=[
        "unknown-peer",
        "unknown-host",
        "duplicate-host",
        "host-key-typo",
        "top-key-typo",
        "wrong-type",
        "unknown-workload",
    ],
)
def test_bad_clusters_exit_2_naming_the_field(scenario_file, tmp_path, old, new, fragments):
    line = bad_cluster(scenario_file, tmp_path, old, new)
    for fragment in fragments:
        assert fragment in line, (fragment, line)


def test_a_cluster_profile_path_is_resolved_per_host(scenario_file, tmp_path):
    (tmp_path / "slow.toml").write_text(
        'name = "slow"\nctx_switch_ns = 50000\nipi_latency_ns = 1000\n'
    )
    text = CLUSTER.replace('name = "b"\npcpus = 1', 'name = "b"\npcpus = 1\nprofile = "slow.toml"')
    r = vmsched.run(scenario_file(text))
    assert [h["host"]["profile"] for h in r.summary["hosts"]] == ["default", "slow"]
    missing = bad_cluster(
        scenario_file,
        tmp_path,
        'name = "b"\npcpus = 1',
        'name = "b"\npcpus = 1\nprofile = "nope.toml"',
    )
    assert "host[1].profile" in missing


def test_single_host_commands_refuse_a_cluster(scenario_file, tmp_path):
    path = scenario_file(CLUSTER)
    top = vmsched_cmd("top", str(path), "--batch", "--iterations", "1")
    assert top.returncode == 2, top
    assert "host: is a list of [[host]] tables (a cluster)" in top.stderr
    cmp = vmsched_cmd("compare", str(path), "--out", str(tmp_path / "c"), "--quick")
    assert cmp.returncode == 2, cmp
    assert "a cluster" in cmp.stderr
    vmsched.run(path, out=tmp_path / "res")
    plot = vmsched_cmd("plot", str(tmp_path / "res"))
    assert plot.returncode == 2, plot
    assert "a cluster of hosts" in plot.stderr


def test_workloads_lists_the_new_kinds():
    proc = vmsched_cmd("workloads", "tiered")
    assert proc.returncode == 0, proc.stderr
    for word in ("role", "classes", "db_queries", "think_ms", "response_ms"):
        assert word in proc.stdout, word
    kinds = {w["kind"] for w in vmsched.catalogue()["workloads"]}
    assert {"tiered", "streaming", "bsp"} <= kinds


# -------------------------------------------------- the experiments' scenarios


def without(sc: Scenario, prefix: str, *, duration_s: float | None = None) -> Scenario:
    """A copy of a single-host scenario without the domains named prefix*."""
    data = json.loads(sc.to_json())
    data["domain"] = [d for d in data["domain"] if not d["name"].startswith(prefix)]
    return Scenario(data, duration_s=duration_s, source=sc.source)


def test_tpcw_consolidation_degrades_response_times():
    sc = read(SCENARIOS / "tpcw-consolidated.toml")
    short = Scenario(sc.data, duration_s=90, source=sc.source)
    crowded = vmsched.run(short).domain("jboss")["workload"]
    alone = vmsched.run(without(short, "cpu")).domain("jboss")["workload"]
    for cls in ("r1", "r2", "r3"):
        a, c = alone["classes"][cls], crowded["classes"][cls]
        assert c["response_ms"]["mean"] > 1.2 * a["response_ms"]["mean"], cls
    # The same clients and mix: the throughput is the offered load either way.
    assert crowded["throughput_req_s"] == pytest.approx(alone["throughput_req_s"], rel=0.1)


def test_streaming_45_clients_play_and_report_per_client():
    sc = read(SCENARIOS / "streaming-45.toml")
    # Playback starts once the 8 MB buffers fill: about 22 s at 3 Mbit/s.
    r = vmsched.run(Scenario(sc.data, duration_s=40, source=sc.source))
    w = r.domain("media")["workload"]
    assert len(w["underruns"]) == 45
    assert w["startup_s"] == pytest.approx(8 * 2**20 * 8 / 3e6, abs=0.5)
    assert w["throughput_mbit_s"] == pytest.approx(45 * 3.0, rel=0.02)
    # Starved of its reservation and of extra time, the server falls behind.
    data = json.loads(sc.to_json())
    media = next(d for d in data["domain"] if d["name"] == "media")
    media["sched"].update(slice=1.5, extratime=False)
    media["workload"]["buffer_mb"] = 1
    starved = vmsched.run(Scenario(data, duration_s=40)).domain("media")["workload"]
    assert starved["underruns_total"] > 0
    assert starved["clients_within_slo"] < 45


def test_nas_sp_job_is_slower_with_cpu_bound_neighbours():
    sc = read(SCENARIOS / "nas-sp-4hosts.toml")
    data = json.loads(sc.to_json())
    for h in data["host"]:
        for d in h["domain"]:
            if d["workload"]["kind"] == "bsp":
                d["workload"]["iterations"] = 20
    crowded = vmsched.run(Scenario(data, duration_s=30)).summary["jobs"][0]
    for h in data["host"]:
        h["domain"] = [d for d in h["domain"] if not d["name"].startswith("cpu")]
    alone = vmsched.run(Scenario(data, duration_s=30)).summary["jobs"][0]
    assert alone["processes"] == ["n1/sp", "n2/sp", "n3/sp", "n4/sp"]
    # Alone: 20 of the calibrated iterations of about 352 ms.
    assert alone["completion_s"] == pytest.approx(20 * 140.86 / 400, rel=0.02)
    assert crowded["completion_s"] > 1.05 * alone["completion_s"]
