"""The command line end to end: `python -m vmsched` and the installed
`vmsched` script, as a user runs them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import vmsched
from conftest import BASE, REPO, SCENARIOS, vmsched_cmd
from vmsched import cli


def installed_script() -> str:
    """The `vmsched` console script of this environment."""
    here = Path(sys.executable).parent / "vmsched"
    found = str(here) if here.exists() else shutil.which("vmsched")
    assert found, "the vmsched script is not installed (pip install -e '.[dev]')"
    return found


def test_run_prints_the_table_and_writes_whole_results(tmp_path):
    out = tmp_path / "run1"
    proc = vmsched_cmd("run", str(SCENARIOS / "credit-three-vms.toml"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", "nothing on stderr (no progress bar off a terminal)"
    for name in ("dom0 (driver)", "batch-gold", "batch-bronze", "web", "CPU %", "wake p99"):
        assert name in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["summary.json", "timeseries.parquet"]
    saved = json.loads((out / "summary.json").read_text())
    direct = vmsched.run(SCENARIOS / "credit-three-vms.toml")
    assert {**saved, "wall_s": 0} == {**direct.summary, "wall_s": 0}
    pd.testing.assert_frame_equal(pd.read_parquet(out / "timeseries.parquet"), direct.timeseries)


def test_run_shows_the_io_view_when_there_is_io():
    proc = vmsched_cmd("run", str(SCENARIOS / "web-through-dom0.toml"), "--duration-s", "4")
    assert proc.returncode == 0, proc.stderr
    assert (
        "I/O (XenMon, xentop; NETTX/NETRX as the back end sees them: TX = to the guest)"
        in proc.stdout
    )
    sc = vmsched.load(SCENARIOS / "web-through-dom0.toml")
    sc.data["run"]["duration_s"] = 4
    direct = vmsched.run(sc)
    dom0 = direct.summary["domains"][0]["xenmon"]
    io_part = proc.stdout.split(
        "I/O (XenMon, xentop; NETTX/NETRX as the back end sees them: TX = to the guest)", 1
    )[1]
    row = next(line for line in io_part.splitlines() if line.startswith(" dom0"))
    cells = [c.strip() for c in row.split("│")]
    assert cells[1] == f"{dom0['exec_per_s']:,.0f}" and cells[2] == f"{dom0['io_per_exec']:.1f}"
    # A CPU-only run has no such table.
    proc = vmsched_cmd("run", str(SCENARIOS / "credit-three-vms.toml"), "--duration-s", "2")
    assert "I/O (XenMon" not in proc.stdout


def test_run_json_and_overrides(scenario_file):
    proc = vmsched_cmd("run", str(scenario_file()), "--json", "--seed", "7", "--duration-s", "3")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert (summary["seed"], summary["duration_s"]) == (7, 3.0)
    assert [d["name"] for d in summary["domains"]] == ["vm1", "vm2"]


def test_run_verbose_shows_vcpus_and_counters(scenario_file):
    text = BASE.replace('name = "vm1"', 'name = "vm1"\nvcpus = 2')
    proc = vmsched_cmd("run", str(scenario_file(text)), "-v")
    assert proc.returncode == 0, proc.stderr
    assert "  v1 " in proc.stdout
    assert "scheduler counters: accounting_periods=" in proc.stdout


def test_installed_script_runs(scenario_file):
    script = installed_script()
    version = subprocess.run([script, "--version"], capture_output=True, text=True)
    assert version.returncode == 0
    assert version.stdout.strip() == f"vmsched {vmsched.__version__}"
    ok = subprocess.run([script, "validate", str(scenario_file())], capture_output=True, text=True)
    assert ok.returncode == 0
    assert ok.stdout.strip().endswith(": OK")


def test_validate_reports_each_file(scenario_file):
    good = scenario_file(name="good.toml")
    bad = scenario_file(BASE.replace("pcpus = 2", "pcpus = 0"), name="bad.toml")
    proc = vmsched_cmd("validate", str(good), str(bad))
    assert proc.returncode == 2
    assert proc.stdout == f"{good}: OK\n"
    assert proc.stderr.splitlines() == [
        f"vmsched: error: {bad}: host.pcpus: 0 is out of range; expected an integer in 1..=512"
    ]


def test_schedulers_lists_every_parameter():
    proc = vmsched_cmd("schedulers")
    assert proc.returncode == 0, proc.stderr
    for s in vmsched.catalogue()["schedulers"]:
        assert s["name"] in proc.stdout
        for p in s["params"]:
            assert p["name"] in proc.stdout
    assert "[domain.sched]" in proc.stdout


def test_scheduler_details_include_its_docs_summary(tmp_path, monkeypatch, capsys):
    pages = tmp_path / "schedulers"
    pages.mkdir()
    (pages / "credit.md").write_text(
        "# Credit\n\nCredit shares CPU by *weight*.\n\nSecond paragraph.\n\n"
        "## Algorithm\n\nNot this.\n"
    )
    monkeypatch.setattr(cli, "DOCS_DIR", tmp_path)
    assert cli.main(["schedulers", "credit"]) == 0
    out = capsys.readouterr().out
    assert "Credit shares CPU by weight." in out
    assert "Second paragraph." in out
    assert "Not this." not in out
    assert "More in docs/schedulers/credit.md" in out
    # Without the page, the listing still works.
    (pages / "credit.md").unlink()
    assert cli.main(["schedulers", "credit"]) == 0
    assert "ratelimit_us" in capsys.readouterr().out


def test_docs_are_found_from_the_package():
    # A source checkout reaches docs/ through a link; a wheel carries the pages.
    assert (cli.DOCS_DIR / "cli.md").is_file()
    assert (cli.DOCS_DIR / "cli.md").read_text() == (REPO / "docs" / "cli.md").read_text()


def test_doc_summary_of_pages_without_one(tmp_path):
    assert cli.doc_summary(tmp_path / "missing.md") is None
    (tmp_path / "bare.md").write_text("# Title\n## Next\ntext\n")
    assert cli.doc_summary(tmp_path / "bare.md") is None


def test_unknown_scheduler_name(capsys):
    assert cli.main(["schedulers", "credti"]) == 2
    err = capsys.readouterr().err
    known = ", ".join(sch["name"] for sch in vmsched.catalogue()["schedulers"])
    assert err == (
        f'vmsched: error: NAME: unknown scheduler "credti"; expected one of {known}; '
        "did you mean 'credit'?\n"
    )


def test_workloads_lists_parameters_and_metrics():
    proc = vmsched_cmd("workloads")
    assert proc.returncode == 0, proc.stderr
    for w in vmsched.catalogue()["workloads"]:
        assert w["kind"] in proc.stdout
        for name in [p["name"] for p in w["params"]] + w["metrics"]:
            assert name in proc.stdout
    one = vmsched_cmd("workloads", "transient")
    assert "schedule_s" in one.stdout and "util_pct" not in one.stdout


def test_bench_quick_writes_its_measurements(tmp_path):
    proc = vmsched_cmd("bench", "--quick", "--repeat", "1", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "bench.json").read_text())
    assert (report["scheduler"], report["quick"], report["repeats"]) == ("credit", True, 1)
    names = [c["name"] for c in report["cases"]]
    assert names == [name for name, _, _ in vmsched._core.bench_cases("credit", True)]
    for c in report["cases"] + report["commands"]:
        assert c["events"] > 0 and c["simulated_s"] > 0 and c["bytes_per_vcpu"] > 0
        assert c["name"] in proc.stdout
    heap = report["heap"]
    assert heap["queue_size"] >= 1 and heap["ratio"] > 0
    assert [r["pcpus"] for r in report["scaling"]] == [2, 8, 32, 128, 512]
    assert all(r["events"] > 0 and r["cpu_us_per_pcpu_s"] > 0 for r in report["scaling"])
    assert "engine / bare heap loop" in proc.stdout and "P-scaling" in proc.stdout


def test_bench_measures_a_process_s_own_peak_not_the_bench_s():
    """A process the bench measures reports its own peak memory, however
    large the bench's own was (on Linux a process started by another reports
    at least the starter's peak: `bench._child` forks it from a launcher)."""
    from vmsched import bench

    held = bytearray(128 << 20)
    held[::4096] = b"\x01" * len(held[::4096])  # resident, not just reserved
    wall, cpu, peak_mib = bench._child(["-c", "pass"])
    assert peak_mib < 64 and wall > 0 and cpu >= 0
    big = bench._child(["-c", "x = bytearray(96 << 20); x[::4096] = b'1' * len(x[::4096])"])[2]
    assert big > 96
    del held
    with pytest.raises(RuntimeError, match="benchmark process failed"):
        bench._child(["-c", "import sys; sys.exit(3)"])


def test_bench_unknown_scheduler_is_bad_input():
    proc = vmsched_cmd("bench", "--scheduler", "credti", "--quick")
    assert proc.returncode == 2
    known = ", ".join(sch["name"] for sch in vmsched.catalogue()["schedulers"])
    assert proc.stderr == (
        f'vmsched: error: --scheduler: unknown scheduler "credti"; expected one of {known}; '
        "did you mean 'credit'?\n"
    )


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (vmsched.InternalError("internal error: boom (this is a bug in vmsched; ...)"), "boom"),
        (ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
    ],
    ids=["internal-error", "unexpected-exception"],
)
def test_internal_errors_exit_1_and_say_it_is_a_bug(
    monkeypatch, capsys, scenario_file, exc, expected
):
    def broken(*_args, **_kwargs):
        raise exc

    monkeypatch.setattr(vmsched, "run", broken)
    assert cli.main(["run", str(scenario_file())]) == 1
    err = capsys.readouterr().err
    assert err.startswith("vmsched: internal error: ")
    assert expected in err and "bug in vmsched" in err
    assert "Traceback" not in err
    assert cli.main(["-v", "run", str(scenario_file())]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_verbose_is_accepted_before_and_after_the_command():
    parser = cli.build_parser()
    assert parser.parse_args(["-v", "schedulers"]).verbose
    assert parser.parse_args(["schedulers", "-v"]).verbose
    assert not parser.parse_args(["schedulers"]).verbose


def test_alert_is_a_command_only_when_its_module_exists(monkeypatch):
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    has_module = (REPO / "python" / "vmsched" / "alert" / "__init__.py").exists()
    assert ("alert" in sub.choices) is has_module
    monkeypatch.setitem(sys.modules, "vmsched.alert", None)  # as if it did not exist
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert "alert" not in sub.choices
    assert parser.parse_args(["workloads"]).func is cli.cmd_workloads


def test_run_summarises_a_table_longer_than_a_screen(scenario_file):
    """Beyond cli.SHOWN_DOMAINS domains the table shows the first ones and one
    row for the rest; --json still has every domain."""
    n = cli.SHOWN_DOMAINS + 12
    doms = "".join(
        f'[[domain]]\nname = "vm{i}"\n[domain.workload]\nkind = "duty-cycle"\nutil_pct = 10\n'
        for i in range(n)
    )
    path = scenario_file(
        f'[host]\npcpus = 2\n[scheduler]\nname = "credit"\n[run]\nduration_s = 0.5\n{doms}'
    )
    proc = vmsched_cmd("run", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "12 more (mean)" in proc.stdout
    assert "12 more domains not listed" in proc.stdout
    assert f"vm{cli.SHOWN_DOMAINS - 1}" in proc.stdout
    assert f"vm{cli.SHOWN_DOMAINS}:" not in proc.stdout
    js = vmsched_cmd("run", str(path), "--json")
    assert len(json.loads(js.stdout)["domains"]) == n
