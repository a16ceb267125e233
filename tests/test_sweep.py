"""`vmsched sweep`: spec checks, results, interruption and resume, the Ray backend."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from vmsched import sweeps
from vmsched.batch import Failure, run_all
from vmsched.cli import main
from vmsched.errors import ScenarioError
from vmsched.intervals import mean_ci95, separated, t975

BASE = """
[base]
title = "tiny"
[base.host]
pcpus = 1
[base.scheduler]
name = "credit"
[base.run]
duration_s = {duration}
[[base.domain]]
name = "a"
workload = {{ kind = "cpu-hog" }}
[[base.domain]]
name = "b"
workload = {{ kind = "duty-cycle", util_pct = 30 }}
"""

AXES = """
replications = 2
[report]
metrics = ["a:cpu_pct", "b:wake_p99_us"]
[[axis]]
path = "scheduler.name"
values = ["credit", "credit2"]
[[axis]]
name = "cap"
path = "domain.a.cap"
range = [20, 60, 20]
"""


def spec_file(tmp_path: Path, axes: str = AXES, duration: float = 1, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(axes) + BASE.format(duration=duration))
    return p


def test_plan_counts_every_combination_and_seed(tmp_path):
    spec = sweeps.load_spec(spec_file(tmp_path))
    runs = sweeps.plan(spec)
    assert len(runs) == sweeps.n_runs(spec) == 2 * 3 * 2
    assert [r.seed for r in runs[:4]] == [1, 2, 1, 2]
    assert {(r.values["scheduler.name"], r.values["cap"]) for r in runs} == {
        (s, c) for s in ("credit", "credit2") for c in (20, 40, 60)
    }
    first = runs[0].scenario
    assert first["domain"][0]["cap"] == 20 and first["run"]["seed"] == 1
    assert runs[-1].scenario["scheduler"]["name"] == "credit2"
    # Every run is its own scenario: the hash tells them apart, seeds included.
    assert len({r.scenario_hash for r in runs}) == len(runs)


def test_sampled_axes_latin_hypercube(tmp_path):
    axes = """
    [sample]
    n = 8
    seed = 3
    [[axis]]
    path = "domain.a.cap"
    low = 10
    high = 90
    integer = true
    [[axis]]
    path = "domain.b.workload.util_pct"
    low = 5.0
    high = 45.0
    """
    spec = sweeps.load_spec(spec_file(tmp_path, axes))
    pts = sweeps.points(spec)
    assert len(pts) == 8
    caps = sorted(p["domain.a.cap"] for p in pts)
    # One point in each eighth of [10, 90): a Latin hypercube.
    assert [int((c - 10) // 10) for c in caps] == list(range(8))
    utils = sorted(p["domain.b.workload.util_pct"] for p in pts)
    assert [int((u - 5) // 5) for u in utils] == list(range(8))
    assert pts == sweeps.points(sweeps.load_spec(spec_file(tmp_path, axes)))


@pytest.mark.parametrize(
    ("axes", "field", "words"),
    [
        ('[[axis]]\npath = "domain.c.cap"\nvalues = [1]', "axis[0].path", 'no domain "c"'),
        ('[[axis]]\npath = "domain.a.cap"\nvalues = []', "axis[0].values", "non-empty"),
        ('[[axis]]\npath = "domain.a.cap"\nrange = [5, 1, 1]', "axis[0].range", "is empty"),
        ('[[axis]]\npath = "nowhere.x"\nvalues = [1]', "axis[0].path", "not a place"),
        ('[[axis]]\npath = "domain.a.cap"\nvalues = [1]\nstep = 2', "axis[0].step", "unknown"),
        ('[[axis]]\npath = "domain.a.cap"\nvalues = [30, -5]', "axis[0] (domain.a.cap)", "-5"),
        ('[[axis]]\npath = "scheduler.name"\nvalues = ["x"]', "axis[0] (scheduler.name)", "x"),
        ("replications = 0", "replications", ">= 1"),
    ],
)
def test_a_bad_axis_is_one_line_exit_2(tmp_path, capsys, axes, field, words):
    p = spec_file(tmp_path, axes)
    with pytest.raises(ScenarioError) as info:
        sweeps.plan(sweeps.load_spec(p))
    assert info.value.file == str(p) and info.value.path == field
    assert words in info.value.message
    assert main(["sweep", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(p) in err and field in err
    assert not (tmp_path / "o").exists()


def test_sweep_results_tidy_and_summaries(tmp_path, capsys):
    p = spec_file(tmp_path)
    out = tmp_path / "o"
    assert main(["sweep", str(p), "--out", str(out), "--jobs", "2"]) == 0
    assert "12 runs" in capsys.readouterr().err
    df = pd.read_parquet(out / "results.parquet")
    assert list(df.columns) == [
        "run", "point", "scheduler.name", "cap", "seed", "scenario_hash",
        "domain", "vcpu", "metric", "value", "unit", "error",
    ]  # fmt: skip
    assert sorted(df["run"].unique()) == list(range(12))
    assert df["error"].isna().all()
    cpu = df[(df["metric"] == "cpu_pct") & (df["domain"] == "a")]
    # The cap holds the hog under it (a 1-s run: within 10 %); a higher cap gives it more.
    for cap, g in cpu.groupby("cap"):
        assert (g["value"] <= cap * 1.1).all()
    means = cpu.groupby("cap")["value"].mean()
    assert means.is_monotonic_increasing and means[20] < 25 < means[40]
    # A run's numbers are those of `vmsched run` of its scenario.
    import vmsched

    run0 = sweeps.plan(sweeps.load_spec(p))[0]
    direct = vmsched.run(run0.scenario, progress=False).summary
    assert cpu[cpu["run"] == 0]["value"].item() == direct["domains"][0]["cpu_pct"]
    summ = pd.read_parquet(out / "summary.parquet")
    row = summ[(summ["metric"] == "cpu_pct") & (summ["domain"] == "b")].iloc[0]
    values = df[(df["point"] == row["point"]) & (df["metric"] == "cpu_pct") & (df["domain"] == "b")]
    mean, lo, hi, n = mean_ci95(values["value"])
    assert row["n"] == n == 2 and row["mean"] == pytest.approx(mean, rel=1e-12)
    assert row["ci95_low"] == pytest.approx(lo, nan_ok=True)
    html = (out / "report.html").read_text()
    assert "95 % interval" in html and "<img" in html
    assert not (out / "parts").exists()
    # A finished sweep is not overwritten.
    assert main(["sweep", str(p), "--out", str(out)]) == 2
    assert "--resume" in capsys.readouterr().err
    # The report can be drawn again.
    (out / "report.html").unlink()
    assert main(["sweep", "report", str(out)]) == 0
    assert (out / "report.html").exists()


def test_a_failed_run_is_recorded_and_the_rest_go_on():
    out = run_all(_fail_on_two, [1, 2, 3], fail_fast=False, jobs=2, batch_size=1)
    assert out[0] == 1 and out[2] == 3
    assert isinstance(out[1], Failure) and "two is bad" in str(out[1])
    with pytest.raises(ValueError, match="two is bad"):
        run_all(_fail_on_two, [1, 2, 3], fail_fast=True, jobs=1)


def test_a_worker_that_dies_stops_the_batch_with_an_error_naming_it():
    """A local worker killed mid-batch (out of memory, say) is an error that names it, not
    a wait for a batch that will never come."""
    with pytest.raises(RuntimeError, match="ended before returning its batch.*SIGKILL"):
        run_all(_die_on_two, [1, 2, 3, 4], fail_fast=False, jobs=2, batch_size=1)


def test_a_lost_worker_says_where_the_runs_are_and_is_not_called_a_bug(tmp_path, capsys):
    """With a store, the error names it and --resume; the CLI reports it as an error in one
    line (exit 1), not as an internal error of vmsched."""
    from vmsched import cli as cli_module
    from vmsched.batch import RunStore
    from vmsched.errors import WorkerLost

    store = RunStore(tmp_path)
    with pytest.raises(WorkerLost, match=r"SIGKILL.*kept in .*--resume"):
        run_all(_die_on_two, [1, 2, 3, 4], jobs=2, batch_size=1, store=store)

    def lost(args):
        raise WorkerLost("worker process 7 ended before returning its batch (killed by SIGKILL)")

    parser = cli_module.build_parser
    try:
        cli_module.build_parser = lambda argv: _with_func(parser(argv), lost)
        assert main(["schedulers"]) == 1
    finally:
        cli_module.build_parser = parser
    err = capsys.readouterr().err
    assert err.startswith("vmsched: error: worker process 7") and "internal error" not in err
    assert len(err.strip().splitlines()) == 1


def _with_func(parser, func):
    parse = parser.parse_args

    def parse_args(argv):
        args = parse(argv)
        args.func = func
        return args

    parser.parse_args = parse_args
    return parser


def _die_on_two(x: int) -> int:
    if x == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def test_batches_shrink_towards_the_end_and_cover_every_run():
    from vmsched.batch import MAX_AUTO_BATCH, batch_sizes

    for n, workers in ((1000, 2), (37, 2), (5, 8), (1, 1), (200, 1)):
        sizes = batch_sizes(n, workers)
        assert sum(sizes) == n and min(sizes) >= 1 and max(sizes) <= MAX_AUTO_BATCH
        assert sizes == sorted(sizes, reverse=True)
    sizes = batch_sizes(1000, 2)
    # Full batches while much is left, then down to an eighth of the full size (6 runs).
    assert sizes[0] == 50 and sizes[-2] == 6 and len(sizes) < 40
    assert batch_sizes(10, 2, batch_size=4) == [4, 4, 2]  # given: even


def _fail_on_two(x: int) -> int:
    if x == 2:
        raise ValueError("two is bad")
    return x


def test_intervals():
    assert t975(1) == 12.706 and abs(t975(100) - 1.984) < 1e-3
    mean, lo, hi, n = mean_ci95([1.0, 2.0, 3.0])
    assert (mean, n) == (2.0, 3) and lo == pytest.approx(2 - 4.303 / 3**0.5)
    assert separated((0, 1), (1.5, 2)) and not separated((0, 1), (0.5, 2))
    assert not separated((float("nan"),) * 2, (5, 6))


def _interrupt_and_resume(tmp_path: Path, sig: int) -> None:
    p = spec_file(tmp_path, AXES.replace("replications = 2", "replications = 6"), duration=1500)
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "vmsched", "sweep", str(p), "--out", str(out)]
    proc = subprocess.Popen(
        [*cmd, "--jobs", "2", "--batch-size", "1", "--no-figures"],
        stderr=subprocess.PIPE,
        text=True,
    )
    parts = out / "parts"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if parts.is_dir() and len(list(parts.glob("part-*.parquet"))) >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(sig)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130, err
    assert "--resume" in err
    done = sorted(parts.glob("part-*.parquet"))
    assert done and not (out / "results.parquet").exists()
    # Every file left is whole, and no temporary file is left behind (each run of 1,500
    # simulated seconds takes tens of ms, so the signal lands while runs are pending).
    assert not [f for f in parts.iterdir() if f.name.startswith(".")]
    n_done = sum(len(pd.read_parquet(f)["run"].unique()) for f in done)
    assert 2 <= n_done < 36
    subprocess.run([*cmd, "--resume", "--no-figures"], check=True, capture_output=True)
    resumed = pd.read_parquet(out / "results.parquet")
    whole = tmp_path / "whole"
    subprocess.run(
        [sys.executable, "-m", "vmsched", "sweep", str(p), "--out", str(whole), "--no-figures"],
        check=True,
        capture_output=True,
    )
    pd.testing.assert_frame_equal(resumed, pd.read_parquet(whole / "results.parquet"))
    pd.testing.assert_frame_equal(
        pd.read_parquet(out / "summary.parquet"), pd.read_parquet(whole / "summary.parquet")
    )
    # The files themselves, byte for byte.
    for name in ("results.parquet", "summary.parquet", "summary.csv"):
        assert (out / name).read_bytes() == (whole / name).read_bytes(), name


def test_sigint_midway_then_resume_equals_an_uninterrupted_sweep(tmp_path):
    _interrupt_and_resume(tmp_path, signal.SIGINT)


def test_sigterm_midway_then_resume_equals_an_uninterrupted_sweep(tmp_path):
    _interrupt_and_resume(tmp_path, signal.SIGTERM)


def test_ray_backend_equals_local_bit_for_bit(tmp_path):
    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
    p = spec_file(tmp_path)
    local = sweeps.sweep(p, tmp_path / "local", figures=False, progress=False)
    # A real local Ray cluster, started here and shut down at the end.
    ray.init(
        num_cpus=2,
        object_store_memory=80 * 1024 * 1024,
        include_dashboard=False,
        log_to_driver=False,
    )
    try:
        assert ray.cluster_resources()["CPU"] == 2
        remote = sweeps.sweep(p, tmp_path / "ray", backend="ray", batch_size=2, progress=False)
    finally:
        ray.shutdown()
    assert remote.n_runs == local.n_runs == 12 and remote.n_failed == 0
    a = (tmp_path / "local" / "results.parquet").read_bytes()
    b = (tmp_path / "ray" / "results.parquet").read_bytes()
    pd.testing.assert_frame_equal(local.results(), remote.results(), check_exact=True)
    assert a == b
    assert (tmp_path / "ray" / "report.html").exists()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_cli_backend_ray_on_a_cluster_started_by_the_test_equals_local(tmp_path):
    """`vmsched sweep --backend ray --address` on a real Ray cluster that this test starts
    (`ray start --head`, its own processes, stopped at the end) and reaches as any user's
    cluster: the files equal the local backend's byte for byte."""
    pytest.importorskip("ray")
    ray_cli = Path(sys.executable).with_name("ray")
    if not ray_cli.exists():
        pytest.skip("the ray command is not installed beside this Python")
    import secrets
    import socket
    import tempfile

    p = spec_file(tmp_path)
    local = tmp_path / "local"
    subprocess.run(
        [sys.executable, "-m", "vmsched", "sweep", str(p), "--out", str(local), "--no-figures"],
        check=True,
        capture_output=True,
    )
    port = _free_port()
    # Token authentication, the token in the environment (not in ~/.ray, which other
    # Ray users of this account share); Ray's files in a short folder of its own.
    env = os.environ | {
        "RAY_DISABLE_USAGE_STATS": "1",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
    }
    ray_tmp = tempfile.mkdtemp(prefix="vmsched-ray-", dir="/tmp")
    head = subprocess.Popen(
        [
            str(ray_cli),
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--node-ip-address=127.0.0.1",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={ray_tmp}",
            f"--object-store-memory={80 * 1024 * 1024}",
        ],  # fmt: skip
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert head.poll() is None, "ray start --head ended"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the Ray head did not come up in 120 s"
                time.sleep(0.5)
        out = tmp_path / "ray"
        cmd = [sys.executable, "-m", "vmsched", "sweep", str(p), "--out", str(out)]
        cmd += ["--backend", "ray", "--address", f"127.0.0.1:{port}", "--no-figures"]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        assert "12 runs; 12 to run on ray" in r.stderr
    finally:
        # The whole cluster is the head's process group: stop it, then make sure.
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(head.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        head.wait()
        import shutil

        shutil.rmtree(ray_tmp, ignore_errors=True)
    for name in ("results.parquet", "summary.parquet", "summary.csv"):
        assert (out / name).read_bytes() == (local / name).read_bytes(), name


def test_a_failed_run_is_a_row_with_its_error_and_the_sweep_goes_on(tmp_path, monkeypatch):
    """A run that raises in a worker: its row holds the error, every other run's rows are
    there, the summary has the other replications, the report lists the failure."""
    real = sweeps.simulate_metrics

    def fails_at_cap_40_seed_2(tree, keep=()):
        if tree["run"]["seed"] == 2 and tree["domain"][0].get("cap") == 40:
            raise RuntimeError("this run fails on purpose")
        return real(tree, keep)

    # The local workers are forked from this process: they run the replacement too.
    monkeypatch.setattr(sweeps, "simulate_metrics", fails_at_cap_40_seed_2)
    r = sweeps.sweep(spec_file(tmp_path), tmp_path / "o", jobs=2, batch_size=2, progress=False)
    assert (r.n_runs, r.n_failed) == (12, 2)  # cap 40 x 2 schedulers, seed 2
    df = r.results()
    bad = df[df["error"].notna()]
    assert sorted(bad["run"]) == sorted(df[(df["cap"] == 40) & (df["seed"] == 2)]["run"])
    assert (bad["error"] == "RuntimeError: this run fails on purpose").all()
    assert bad["metric"].isna().all() and bad["value"].isna().all()
    assert sorted(df["run"].unique()) == list(range(12))
    summ = r.summary()
    cpu = summ[(summ["metric"] == "cpu_pct") & (summ["domain"] == "a")]
    assert sorted(cpu["n"]) == [1, 1, 2, 2, 2, 2]
    html = (tmp_path / "o" / "report.html").read_text()
    assert "Failed runs" in html and "this run fails on purpose" in html


def test_the_docs_example_spec_plans_its_runs():
    from conftest import DOCS

    spec = sweeps.load_spec(DOCS / "examples" / "web-batch-caps.toml")
    runs = sweeps.plan(spec)
    assert len(runs) == 2 * 3 * 4 * 5 == 120
    last = runs[-1].scenario
    assert last["scheduler"] == {"name": "credit2", "ratelimit_us": 2000}
    assert [d.get("cap") for d in last["domain"]] == [None, None, 70, 70]


def test_results_query_with_duckdb(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    p = spec_file(tmp_path, AXES.replace("replications = 2", "replications = 3"))
    r = sweeps.sweep(p, tmp_path / "o", figures=False, progress=False, jobs=1)
    got = duckdb.sql(
        f"""SELECT "scheduler.name", cap, n, mean, ci95_low, ci95_high
            FROM '{r.out / "summary.parquet"}'
            WHERE domain = 'a' AND metric = 'cpu_pct' ORDER BY ALL"""
    ).fetchall()
    assert len(got) == 6 and all(n == 3 for _, _, n, *_ in got)
    runs = duckdb.sql(
        f"""SELECT count(DISTINCT run), count(DISTINCT scenario_hash)
            FROM '{r.out / "results.parquet"}'"""
    ).fetchall()
    assert runs == [(18, 18)]
    for _, _, _, mean, lo, hi in got:
        assert lo <= mean <= hi


def test_sampled_sweep_runs_and_reports(tmp_path):
    axes = """
    replications = 2
    [sample]
    n = 4
    [[axis]]
    path = "domain.a.cap"
    low = 10
    high = 90
    integer = true
    """
    r = sweeps.sweep(spec_file(tmp_path, axes), tmp_path / "o", jobs=1, progress=False)
    summ = r.summary()
    assert summ["point"].nunique() == 4 and (summ["n"] == 2).all()
    assert (tmp_path / "o" / "report.html").exists()
    assert not list((tmp_path / "o").glob("*-heat.png"))  # one numeric axis: no heat map


def test_compare_and_alert_skip_figures(tmp_path):
    from vmsched import alert, compare

    p = spec_file(tmp_path)
    base = sweeps.load_spec(p).base
    c = compare.compare(base, schedulers=["credit", "credit2"], replications=1, jobs=1)
    c.save(tmp_path / "c", figures=False)
    assert sorted(f.name for f in (tmp_path / "c").iterdir()) == ["report.html", "results.csv"]
    a = alert.run_alert(targets=[20], duration_s=2, replications=1, jobs=1, progress=False)
    a.save(tmp_path / "a", figures=False)
    assert not list((tmp_path / "a").glob("*.png"))
    assert (tmp_path / "a" / "report.md").exists()


def test_the_docs_example_answers_are_what_the_sweep_gives(tmp_path):
    """docs/sweep.md's worked example: its spec swept for real, then each
    DuckDB query the page shows is run on the results, and its printed table
    must be the one the page shows (a change of results shows here)."""
    duckdb = pytest.importorskip("duckdb")
    from conftest import DOCS

    text = (DOCS / "sweep.md").read_text()
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M)
    pairs = [
        (code, blocks[k + 1][1])
        for k, (lang, code) in enumerate(blocks)
        if lang == "python" and "duckdb.sql(" in code
    ]
    assert len(pairs) == 2, "the page's two query/answer pairs"
    r = sweeps.sweep(
        DOCS / "examples" / "web-batch-caps.toml",
        tmp_path / "o",
        figures=False,
        progress=False,
        jobs=2,
    )
    for code, shown in pairs:
        query = re.search(r'duckdb\.sql\("""(.*?)"""\)', code, re.S)[1]
        query = query.replace("results/web-caps/", f"{r.out}/")
        assert str(duckdb.sql(query)).strip() == shown.strip(), query
