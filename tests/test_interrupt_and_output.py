"""Interruption, full disks, pipes and bounded resources (docs/cli.md).

- SIGTERM and SIGINT alike stop a run and leave nothing: no temporary trace,
  no partial set of results (exit 143 and 130).
- A run's files appear together or not at all: a write that fails after
  simulating (a full disk) leaves nothing and exits 3, "could not write";
  exit 2 stays "bad input, nothing simulated".
- Piped output is not cut to 80 columns; a reader that goes away is not an
  error; `--out ''` is refused.
- A run whose time series would not fit the memory limit is refused before
  simulating, with the estimate and the knob.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import BASE, REPO, vmsched_cmd
from vmsched import cli

LONG = REPO / "scenarios" / "credit-three-vms.toml"


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_mid_run_leaves_nothing(tmp_path, sig, status):
    out = tmp_path / "out"
    # About 10 GB of traces at full length: admitted by the limit's knob.
    env = {**os.environ, "VMSCHED_MAX_TRACE_MB": "100000"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vmsched", "run", str(LONG), "--duration-s", "100000",
         "--out", str(out), "--trace", "--xentrace"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env,
    )  # fmt: skip
    try:
        # Wait until the traces are being written (into the staging folder).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            written = [p for p in out.rglob("*") if p.is_file() and p.stat().st_size > 100_000]
            if written:
                break
            time.sleep(0.05)
        assert written, "the run never started writing its traces"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == status, err
    assert err.splitlines() == [
        f"vmsched: error: interrupted ({signal.Signals(sig).name}); nothing of the run was kept"
    ]
    assert files_under(out) == [], "no temporary or partial file is left"


def test_a_full_disk_after_simulating_is_exit_3_and_leaves_nothing(
    scenario_file, tmp_path, monkeypatch, capsys
):
    """ENOSPC injected into the Parquet write (`api.write_series`, which
    writes the bytes the core encodes), after summary.json was staged."""
    from vmsched import api

    def full(_sim, _rows, path):
        Path(path).write_bytes(b"PAR1 half")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(api, "write_series", full)
    out = tmp_path / "out"
    assert cli.main(["run", str(scenario_file()), "--out", str(out), "--trace"]) == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"vmsched: error: {out / 'timeseries.parquet'}: could not be written (No space left "
        "on device); nothing of the run was kept; free some space or choose another --out"
    )
    assert files_under(out) == []


#: A run whose first seconds are quiet (vm2 paused) and whose traces grow fast
#: once vm2 runs (a 1-ms duty cycle from 150 s on): the pilot of the first
#: second predicts about 3.6 MB (the quiet second's switches and Credit's
#: counters, about 12 kB, times 300), the run writes far more.
QUIET_THEN_BUSY = (
    BASE.replace("duration_s = 2", "duration_s = 300").replace(
        "util_pct = 20", "util_pct = 20\nperiod_ms = 1"
    )
    + """
[[action]]
at_s = 0
domain = "vm2"
pause = true

[[action]]
at_s = 150
domain = "vm2"
pause = false
"""
)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_trace_that_fills_a_real_disk(scenario_file, tmp_path):
    """A 4 MB tmpfs that the traces overflow although the pilot's estimate
    fits: exit 3 (not 2: the run was simulated), and the disk is left as it
    was."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)],
                             capture_output=True, text=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        path = scenario_file(QUIET_THEN_BUSY)
        proc = vmsched_cmd("run", str(path), "--out", str(disk / "out"), "--trace", "--xentrace")
        assert proc.returncode == 3, proc.stderr
        (line,) = proc.stderr.splitlines()
        assert "could not be written (No space left on device); nothing of the run was kept" in line
        assert files_under(disk / "out") == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_piped_tables_are_not_cut_and_a_closed_pipe_is_quiet():
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.run([sys.executable, "-m", "vmsched", "schedulers"],
                          capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert proc.returncode == 0
    # Uncut: each parameter's description on one line, longer than 80 columns.
    assert max(len(line) for line in proc.stdout.splitlines()) > 120
    head = subprocess.run(
        f"{sys.executable} -m vmsched schedulers | head -1; exit ${{PIPESTATUS[0]}}",
        shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert head.returncode == 0, head.stderr
    assert head.stderr == ""
    assert len(head.stdout.splitlines()) == 1


def test_tables_as_csv_and_json(scenario_file):
    import csv
    import io
    import json

    proc = vmsched_cmd("schedulers", "credit", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert {r["name"] for r in rows} >= {"weight", "cap", "tslice_ms"}
    assert {r["scheduler"] for r in rows} == {"credit"}
    proc = vmsched_cmd("workloads", "duty-cycle", "--format", "json")
    assert json.loads(proc.stdout)[0]["kind"] == "duty-cycle"
    proc = vmsched_cmd("run", str(scenario_file()), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [r["domain"] for r in rows if r["vcpu"] == ""] == ["vm1", "vm2"]
    assert float(rows[0]["cpu_pct"]) > 90


def test_an_empty_out_is_refused(scenario_file, tmp_path):
    proc = vmsched_cmd("run", str(scenario_file()), "--out", "", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        'vmsched: error: --out: "" is empty; expected the path of an output folder '
        "(such as results/run1)"
    ]
    assert list(tmp_path.iterdir()) == [Path(tmp_path / "scenario.toml")]


def test_a_run_beyond_the_memory_limit_is_refused_before_simulating(scenario_file, monkeypatch):
    path = scenario_file(BASE.replace("duration_s = 2", "duration_s = 10000000\nsample_ms = 0.1"))
    for command in ("run", "validate"):
        proc = vmsched_cmd(command, str(path))
        assert proc.returncode == 2
        (line,) = proc.stderr.splitlines()
        assert line.startswith(f"vmsched: error: {path}: run.sample_ms: the run would keep ")
        assert "time-series rows, about 72,000,000 MB of memory, more than the limit" in line
        assert "VMSCHED_MAX_MEMORY_MB" in line
    # The knob: a limit that admits a modest run refuses it when set lower.
    monkeypatch.setenv("VMSCHED_MAX_MEMORY_MB", "0.001")
    assert cli.main(["validate", str(scenario_file())]) == 2


def test_traces_beyond_the_limit_are_refused_before_simulating(tmp_path, monkeypatch):
    """A pilot of the first simulated second estimates the traces' size:
    beyond VMSCHED_MAX_TRACE_MB the run stops with the estimate, writing
    nothing; within it, the run goes on."""
    scenario = str(REPO / "scenarios" / "credit-three-vms.toml")
    out = tmp_path / "out"
    monkeypatch.setenv("VMSCHED_MAX_TRACE_MB", "0.01")
    proc = vmsched_cmd("run", scenario, "--out", str(out), "--trace", "--xentrace")
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"vmsched: error: {scenario}: --trace: the traces would take about ")
    assert "scaled to 55 s), more than 10.0 kB (VMSCHED_MAX_TRACE_MB=0.01)" in line
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("VMSCHED_MAX_TRACE_MB", "100")
    proc = vmsched_cmd("run", scenario, "--out", str(out), "--xentrace")
    assert proc.returncode == 0, proc.stderr
    # The estimate (about 5 MB for both) holds the real size to a factor.
    size = (out / "trace.xentrace").stat().st_size
    assert 0.1e6 < size < 10e6


def test_top_beyond_the_memory_limit_is_refused_before_simulating(scenario_file):
    """`vmsched top` keeps a series row per VCPU at every sample in the core:
    a long run sampled finely is refused with the knob to change."""
    path = scenario_file(BASE.replace("duration_s = 2", "duration_s = 10000000"))
    proc = vmsched_cmd("top", str(path), "--batch", "--interval", "0.0001")
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"vmsched: error: {path}: --interval: the run would keep ")
    assert "expected a larger --interval than 0.0001 s" in line
    # Sampled coarsely, the same run is within the limit (and starts).
    proc = vmsched_cmd("top", str(path), "--batch", "--interval", "1", "--iterations", "1")
    assert proc.returncode == 0, proc.stderr


def test_progress_in_jupyter(monkeypatch):
    """In an IPython kernel without a terminal, a run's progress is one line
    of text updated in place (IPython.display), not a terminal bar."""
    import types

    from vmsched import api

    shown = []

    class Handle:
        def update(self, text):
            shown.append(("update", text))

    def display(text, display_id=False):
        assert display_id is True
        shown.append(("display", text))
        return Handle()

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: types.SimpleNamespace(kernel=object())
    ipython_display = types.ModuleType("IPython.display")
    ipython_display.display = display
    ipython.display = ipython_display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython_display)
    monkeypatch.setattr(api, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    bar = api.make_progress("run.toml")
    assert isinstance(bar, api._NotebookProgress)
    bar(1.0, 4.0)
    bar(2.0, 4.0)
    bar.close()
    assert shown[0] == ("display", "run.toml [#####---------------] 1.0/4.0 simulated s")
    assert shown[1] == ("update", "run.toml [##########----------] 2.0/4.0 simulated s")
    assert shown[-1] == ("update", "run.toml: done")


def test_paths_as_text_are_written_as_pathlib_writes_them():
    """vmsched.output works on paths as text (so that `vmsched run` does not
    load pathlib): `pure`, `join` and the parents must give what pathlib
    gives, on the forms a path can take (roots, `//`, `.`, `..`, empty parts,
    trailing slashes)."""
    import random

    from vmsched.output import _parents, join, pure

    rng = random.Random(5)
    cases = ["", ".", "./", "/", "//", "///", "a", "a/", "./a", "a//b", "/a", "//a", "///a"]
    cases += ["a/./b", "a/../b", ".//x/", "/a/b/c", "//a/b", "~/x"]
    cases += ["".join(rng.choice("ab/.") for _ in range(rng.randrange(1, 10))) for _ in range(5000)]
    for case in cases:
        assert pure(case) == str(Path(case)), case
        assert _parents(pure(case)) == [str(p) for p in Path(case).parents], case
        assert join(pure(case), ".name") == str(Path(case) / ".name"), case
