"""The Python API: run(), Result, the Scenario builder, determinism, saving."""

from __future__ import annotations

import io
import json
import sys

import pandas as pd
import pytest
import vmsched
from conftest import BASE, SCENARIOS
from vmsched import api

# The results' contract (docs/metrics.md): these keys, spelled so, at these places.
SUMMARY_KEYS = {"scheduler", "seed", "duration_s", "events", "wall_s", "domains"}
DOMAIN_KEYS = {"name", "cpu_pct", "workload", "vcpus"}
VCPU_KEYS = {
    "running_ns",
    "runnable_ns",
    "blocked_ns",
    "context_switches",
    "migrations",
    "wake_latency_us",
}
LATENCY_KEYS = {"p50", "p95", "p99", "max"}
SERIES_COLUMNS = ["time_s", "domain", "vcpu", "cpu_pct", "runnable_pct", "blocked_pct"]
#: After them: executions on every row, the domain's I/O counters on domain rows.
COUNT_COLUMNS = ["executions"]
IO_COLUMNS = [
    "io_count",
    "nettx_pkts",
    "nettx_bytes",
    "netrx_pkts",
    "netrx_bytes",
    "vbd_rd",
    "vbd_wr",
]


def two_hogs(**run) -> vmsched.Scenario:
    """Two CPU hogs, weights 512 and 256, on one PCPU."""
    sc = vmsched.Scenario(pcpus=1, scheduler="credit", **run)
    sc.add_domain("heavy", weight=512, workload="cpu-hog")
    return sc.add_domain("light", weight=256, workload="cpu-hog")


def without_wall(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "wall_s"}


@pytest.fixture(scope="module")
def demo() -> vmsched.Result:
    return vmsched.run(SCENARIOS / "credit-three-vms.toml")


def test_summary_echoes_the_scenario(demo):
    assert demo.summary["scenario"] == demo.scenario.data
    assert demo.summary["scenario"]["scheduler"]["name"] == demo.summary["scheduler"]


def test_summary_has_the_contract_keys(demo):
    s = demo.summary
    assert SUMMARY_KEYS <= s.keys()
    assert s["scheduler"] == "credit"
    assert isinstance(s["seed"], int) and isinstance(s["events"], int)
    assert s["duration_s"] == 60.0
    assert s["wall_s"] > 0
    assert [d["name"] for d in s["domains"]] == ["dom0", "batch-gold", "batch-bronze", "web"]
    for d in s["domains"]:
        assert DOMAIN_KEYS <= d.keys()
        assert d["workload"]["kind"] in {"duty-cycle", "cpu-hog"}
        for v in d["vcpus"]:
            assert VCPU_KEYS <= v.keys()
            assert LATENCY_KEYS <= v["wake_latency_us"].keys()
            for k in ("running_ns", "runnable_ns", "blocked_ns", "context_switches", "migrations"):
                assert isinstance(v[k], int) and v[k] >= 0


def test_every_vcpu_nanosecond_is_accounted_once(demo):
    s = demo.summary
    measured_ns = round((s["duration_s"] - s["warmup_s"]) * 1e9)
    for d in s["domains"]:
        for v in d["vcpus"]:
            states = v["running_ns"] + v["runnable_ns"] + v["blocked_ns"] + v["offline_ns"]
            assert states == measured_ns, (d["name"], v)


def test_summary_is_json_and_cpu_pct_helpers_agree(demo):
    assert json.loads(json.dumps(demo.summary)) == demo.summary
    assert demo.cpu_pct() == {d["name"]: d["cpu_pct"] for d in demo.summary["domains"]}
    assert demo.domain("web")["name"] == "web"
    with pytest.raises(KeyError, match="the domains are dom0, batch-gold"):
        demo.domain("nope")


def test_timeseries_columns_and_types(demo):
    ts = demo.timeseries
    assert list(ts.columns) == SERIES_COLUMNS + COUNT_COLUMNS + IO_COLUMNS
    assert ts["executions"].dtype == "uint64"
    for col in IO_COLUMNS:
        assert ts[col].dtype == "UInt64", col
        assert ts[col].isna().equals(ts["vcpu"].notna()), col
    assert ts["time_s"].dtype == "float64"
    assert pd.api.types.is_string_dtype(ts["domain"])
    assert ts["vcpu"].dtype == "Int32"
    for col in ("cpu_pct", "runnable_pct", "blocked_pct"):
        assert ts[col].dtype == "float64"
        assert ts[col].between(0, 100.0001).all(), col
    domain_rows = ts[ts["vcpu"].isna()]
    vcpu_rows = ts[ts["vcpu"].notna()]
    # Every domain here has one VCPU: one domain row and one VCPU row per sample.
    assert len(domain_rows) == len(vcpu_rows) > 0
    assert set(ts["domain"]) == set(demo.cpu_pct())
    # Samples start after the warm-up (5 s) and come every sample_ms (0.5 s).
    times = sorted(ts["time_s"].unique())
    assert times[0] == pytest.approx(5.5)
    assert all(b - a == pytest.approx(0.5) for a, b in zip(times, times[1:], strict=False))


def test_timeseries_covers_the_whole_measured_run(demo):
    times = sorted(demo.timeseries["time_s"].unique())
    assert times[-1] == pytest.approx(60.0)
    assert len(times) == (60 - 5) / 0.5


def test_a_shorter_last_interval_is_sampled_on_its_own_length():
    r = vmsched.run(two_hogs(duration_s=2.5, sample_ms=1000))
    heavy = r.timeseries[(r.timeseries["domain"] == "heavy") & r.timeseries["vcpu"].isna()]
    assert list(heavy["time_s"]) == [1.0, 2.0, 2.5]
    assert heavy["cpu_pct"].iloc[-1] + heavy["runnable_pct"].iloc[-1] == pytest.approx(100)


def test_timeseries_agrees_with_the_summary():
    """With samples covering whole seconds of a steady load, the mean of the
    domain rows is the summary's CPU %."""
    r = vmsched.run(two_hogs(duration_s=20, warmup_s=1, sample_ms=1000))
    rows = r.timeseries[r.timeseries["vcpu"].isna()]
    for name, pct in r.cpu_pct().items():
        assert rows[rows["domain"] == name]["cpu_pct"].mean() == pytest.approx(pct, abs=0.5)


def test_builder_equals_the_same_scenario_from_toml():
    built = two_hogs(duration_s=60, warmup_s=1)
    built.data["domain"][0]["name"] = "vm-heavy"
    built.data["domain"][1]["name"] = "vm-light"
    from_file = vmsched.run(SCENARIOS / "credit-weights.toml").summary
    from_objects = vmsched.run(built).summary
    # The echoed scenarios differ (the file has a title and comments); the results may not.
    assert from_objects.pop("scenario") != from_file.pop("scenario")
    assert without_wall(from_objects) == without_wall(from_file) | {"title": ""}


def test_builder_dict_and_actions():
    sc = two_hogs(duration_s=20, sample_ms=1000)
    sc.add_action(10, domain="light", weight=512)
    as_dict = vmsched.run(sc.data)
    ts = as_dict.timeseries
    light = ts[(ts["domain"] == "light") & ts["vcpu"].isna()]
    before = light[light["time_s"] <= 10]["cpu_pct"].mean()
    after = light[light["time_s"] > 11]["cpu_pct"].mean()
    assert before == pytest.approx(100 / 3, abs=2)
    assert after == pytest.approx(50, abs=2)
    assert without_wall(as_dict.summary) == without_wall(vmsched.run(sc).summary)


def test_builder_other_scheduler_copy_is_independent():
    sc = two_hogs(duration_s=1)
    other = sc.with_scheduler("credit", tslice_ms=10)
    assert other.data["scheduler"] == {"name": "credit", "tslice_ms": 10}
    assert sc.data["scheduler"] == {"name": "credit"}
    assert vmsched.run(other).summary["scheduler_params"]["tslice_ms"] == 10


def test_invalid_objects_raise_scenario_error_with_path():
    sc = two_hogs(duration_s=1).add_domain("x", workload={"kind": "duty-cycle", "util_pct": -1})
    with pytest.raises(vmsched.ScenarioError) as e:
        vmsched.run(sc)
    assert e.value.path == "domain[2].workload.util_pct"
    assert "-1 is out of range" in e.value.message


def test_same_scenario_and_seed_give_the_same_summary():
    path = SCENARIOS / "credit-three-vms.toml"
    a, b = vmsched.run(path), vmsched.run(path)
    assert a.summary["wall_s"] != 0
    assert without_wall(a.summary) == without_wall(b.summary)
    pd.testing.assert_frame_equal(a.timeseries, b.timeseries)


def test_the_seed_reaches_random_workloads():
    """duty-cycle draws its start phase from the domain's seeded stream."""

    def run(seed: int) -> dict:
        sc = vmsched.Scenario(pcpus=1, scheduler="credit", duration_s=5, seed=seed)
        sc.add_domain("a", workload={"kind": "duty-cycle", "util_pct": 60, "period_ms": 10})
        sc.add_domain("b", workload={"kind": "duty-cycle", "util_pct": 60, "period_ms": 10})
        return without_wall(vmsched.run(sc).summary)

    assert run(1) == run(1)
    assert run(1)["domains"] != run(2)["domains"]


def test_series_counters_add_up_to_the_summary():
    """Each window's executions and I/O counters are that window's share of
    the summary's totals: summed over the measured run, they are the totals."""
    r = vmsched.run(SCENARIOS / "web-through-dom0.toml", progress=False)
    ts = r.timeseries
    assert ts["netrx_pkts"].sum() > 0
    for d in r.summary["domains"]:
        rows = ts[ts["domain"] == d["name"]]
        dom = rows[rows["vcpu"].isna()]
        switches = sum(v["context_switches"] for v in d["vcpus"])
        assert dom["executions"].sum() == switches, d["name"]
        assert rows[rows["vcpu"].notna()]["executions"].sum() == switches, d["name"]
        assert dom["io_count"].sum() == d["xenmon"]["io_count"], d["name"]
        assert dom["nettx_bytes"].sum() // 1024 == d["xentop"]["nettx_kb"], d["name"]
        assert dom["netrx_bytes"].sum() // 1024 == d["xentop"]["netrx_kb"], d["name"]
        assert dom["vbd_rd"].sum() == d["xentop"]["vbd_rd"], d["name"]
        assert dom["vbd_wr"].sum() == d["xentop"]["vbd_wr"], d["name"]


def test_save_writes_complete_files(tmp_path, demo):
    out = demo.save(tmp_path / "a" / "b")
    assert sorted(p.name for p in out.iterdir()) == ["summary.json", "timeseries.parquet"]
    assert json.loads((out / "summary.json").read_text()) == demo.summary
    pd.testing.assert_frame_equal(pd.read_parquet(out / "timeseries.parquet"), demo.timeseries)


def test_a_failed_write_leaves_no_partial_file(tmp_path, demo, monkeypatch):
    def broken(self, path, **_kwargs):
        with open(path, "wb") as f:
            f.write(b"PAR1 half a file")
        raise OSError(28, "No space left on device")

    import pyarrow.parquet as pq

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(OSError, match="No space left"):
        demo.save(tmp_path)
    # The files of a result appear together or not at all (docs/cli.md): the
    # summary written before the failure is not left without its series.
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_progress_is_drawn_only_on_a_terminal(monkeypatch):
    """On a terminal the bar appears (here at once) on stderr, never stdout;
    elsewhere nothing is drawn."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(api, "PROGRESS_AFTER_S", 0.0)
    for tty in (False, True):
        err, out = (Terminal() if tty else io.StringIO()), io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        monkeypatch.setattr(sys, "stdout", out)
        vmsched.run(two_hogs(duration_s=5))
        assert out.getvalue() == ""
        assert ("simulated s" in err.getvalue()) is tty, err.getvalue()


def test_progress_callback_sees_the_whole_run():
    seen = []
    vmsched.run(two_hogs(duration_s=3), progress=lambda now, end: seen.append((now, end)))
    assert seen[-1] == (3.0, 3.0)
    assert [now for now, _ in seen] == sorted(now for now, _ in seen)


def test_catalogue_lists_every_scheduler_and_workload():
    cat = vmsched.catalogue()
    # Schedulers a test registered from Python (`builtin` false) may follow.
    assert [s["name"] for s in cat["schedulers"] if s["builtin"]] == [
        "credit",
        "credit2",
        "rtds",
        "null",
        "arinc653",
        "sedf",
        "sedf-comm",
        "bvt",
        "atropos",
        "rrobin",
        "credit-enhanced",
        "credit-dynweight",
        "mcredit2",
    ]
    kinds = {w["kind"] for w in cat["workloads"]}
    assert {"idle", "cpu-hog", "duty-cycle", "sysbench-cpu", "transient"} <= kinds
    assert "default" in cat["profiles"]


def test_base_scenario_of_the_tests_is_valid(scenario_file):
    assert vmsched.load(scenario_file(BASE)).duration_s == 2
