"""`vmsched reproduce` through the batch layer: figures drawn in the workers, --no-figures,
--resume after an interrupt, a configuration shared by two experiments simulated once;
and the run store every command resumes with."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from vmsched import reproduce
from vmsched.batch import STORE_DIR, RunStore, run_all
from vmsched.reproduce import framework
from vmsched.reproduce.figures import draw, draw_all, figure_data
from vmsched.reproduce.pipeline import run_and_draw
from vmsched.reproduce.report import results_csv

#: A quick experiment of cheap runs, with figures.
SMALL = "govindan2009-accounting"
#: One whose runs take long enough (tens of ms each) to interrupt midway.
INTERRUPTED = "thesis2015-net"


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "vmsched", "reproduce", *args]


def test_figures_drawn_in_workers_equal_those_drawn_here():
    rep = reproduce.run(SMALL, quick=True, jobs=1, progress=False, replications=1)
    assert rep.experiment.figures
    here = {f.file: draw(figure_data(rep, f)) for f in rep.experiment.figures}
    (workers,) = draw_all([rep], jobs=2)
    assert workers == here


def test_no_figures_writes_no_png_and_says_so(tmp_path):
    out = tmp_path / "o"
    r = subprocess.run(
        _cmd(SMALL, "--quick", "--replications", "1", "--no-figures", "--out", str(out)),
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert not list(out.glob("*.png"))
    assert "Not drawn (`--no-figures`)." in (out / "report.md").read_text()
    assert ".png" not in r.stdout
    assert not (out / STORE_DIR).exists()  # the store goes when the command ends


def _interrupt_then_resume(
    tmp_path: Path, command: list[str], compared: list[str], out_flag: str = "--out"
) -> str:
    """Start `command`, SIGINT it once two runs are kept, resume it; the files `compared`
    equal those of an uninterrupted command's, byte for byte. The resumed command's
    output."""
    out, whole = tmp_path / "o", tmp_path / "whole"
    cmd = [sys.executable, "-m", "vmsched", *command]
    proc = subprocess.Popen([*cmd, out_flag, str(out)], stderr=subprocess.PIPE, text=True)
    store = out / STORE_DIR
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if store.is_dir() and len(list(store.glob("*.pkl"))) >= 2:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130, err
    assert "--resume" in err
    kept = list(store.glob("*.pkl"))
    # Whole files only, no temporary one, and no results yet.
    assert len(kept) >= 2
    assert not [f for f in store.iterdir() if f.name.startswith(".")]
    assert not [f for f in out.iterdir() if f.name in compared]
    r = subprocess.run(
        [*cmd, out_flag, str(out), "--resume"], capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    subprocess.run([*cmd, out_flag, str(whole)], check=True, capture_output=True)
    for name in compared:
        assert (out / name).read_bytes() == (whole / name).read_bytes(), name
    assert not store.exists()
    return r.stdout


def test_reproduce_sigint_midway_then_resume_equals_an_uninterrupted_run(tmp_path):
    args = ["reproduce", INTERRUPTED, "--quick", "--replications", "6", "--no-figures"]
    stdout = _interrupt_then_resume(
        tmp_path, [*args, "--jobs", "2"], ["results.csv", "replications.csv"]
    )
    assert "simulations done before were not run again" in stdout


def test_compare_sigint_midway_then_resume_equals_an_uninterrupted_run(tmp_path):
    # Runs long enough (tens of ms each) that the signal lands while some are pending.
    text = (REPO / "scenarios" / "credit-three-vms.toml").read_text()
    assert "duration_s = 60 " in text
    scenario = tmp_path / "long.toml"
    scenario.write_text(text.replace("duration_s = 60 ", "duration_s = 1200 "))
    args = ["compare", str(scenario), "--schedulers", "credit,credit2,sedf"]
    args += ["--replications", "4"]
    _interrupt_then_resume(tmp_path, [*args, "--jobs", "1", "--no-figures"], ["results.csv"])


def test_alert_sigint_midway_then_resume_equals_an_uninterrupted_run(tmp_path):
    args = ["alert", "--targets", "10,20,30,40,50,60,70,80,90", "--duration-s", "1200"]
    _interrupt_then_resume(
        tmp_path,
        [*args, "--replications", "2", "--jobs", "1", "--no-figures"],
        ["alert.csv", "targets.csv"],
    )


def test_a_configuration_shared_by_two_experiments_is_simulated_once(monkeypatch):
    sizes = []

    def counting(fn, items, **kwargs):
        sizes.append(len(items))
        return run_all(fn, items, **kwargs)

    monkeypatch.setattr(framework, "run_all", counting)
    exp = reproduce.experiment(SMALL)
    one, two = framework.run_experiments([exp, exp], quick=True, jobs=1, progress=False)
    assert sizes == [len(one.runs)]
    assert one.summaries == two.summaries
    assert results_csv(one.table.rows) == results_csv(two.table.rows)


def _square(x: int) -> int:
    return x * x


def _never(x: int) -> int:
    raise AssertionError(f"run {x} ran again")


def test_run_store_skips_the_runs_done_and_starts_afresh_without_resume(tmp_path: Path):
    store = RunStore(tmp_path, resume=False)
    assert run_all(_square, [1, 2, 3], jobs=1, store=store) == [1, 4, 9]
    assert store.reused == 0
    # The same function and items: nothing runs (the key is the function's name and the
    # item, so give the store the original function's key).
    again = RunStore(tmp_path, resume=True)
    keys = [again.key(_square, x) for x in (1, 2, 3)]
    assert [again.load(k) for k in keys] == [(True, 1), (True, 4), (True, 9)]
    assert run_all(_square, [1, 2, 3, 4], jobs=1, store=again) == [1, 4, 9, 16]
    assert again.reused == 3
    # Without resume the store is emptied first.
    fresh = RunStore(tmp_path, resume=False)
    assert fresh.load(keys[0]) == (False, None)
    with pytest.raises(AssertionError, match="ran again"):
        run_all(_never, [1], jobs=1, store=RunStore(tmp_path, resume=True))


def test_ray_backend_runs_and_draws_as_the_local_one():
    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
    local = reproduce.run(SMALL, quick=True, jobs=1, progress=False, replications=1)
    (local_pngs,) = draw_all([local], jobs=1)
    # A real local Ray cluster, started here and shut down at the end.
    ray.init(
        num_cpus=2,
        object_store_memory=80 * 1024 * 1024,
        include_dashboard=False,
        log_to_driver=False,
    )
    try:
        remote = reproduce.run(SMALL, quick=True, progress=False, replications=1, backend="ray")
        (remote_pngs,) = draw_all([remote], backend="ray")
    finally:
        ray.shutdown()
    assert results_csv(remote.table.rows) == results_csv(local.table.rows)
    assert remote_pngs == local_pngs


def _no_wall(value):
    """Summaries less their wall times (the only part that differs from run to run)."""
    if isinstance(value, dict):
        return {k: _no_wall(v) for k, v in value.items() if k != "wall_s"}
    if isinstance(value, list):
        return [_no_wall(v) for v in value]
    return value


def test_pipeline_equals_simulating_then_drawing_and_reports_each_experiment_once():
    # Two experiments (one of them twice: its runs shared) through the pipeline on two
    # workers: the same tables, verdicts and PNGs as simulating everything in this
    # process and then drawing, and on_done once per experiment with its figures.
    exps = [reproduce.experiment(SMALL), reproduce.experiment(INTERRUPTED)]
    exps.append(exps[0])
    done = []
    reps, pngs = run_and_draw(
        exps,
        quick=True,
        replications=1,
        jobs=2,
        progress=False,
        on_done=lambda k, rep, png: done.append((k, rep.experiment.id, dict(png))),
    )
    alone = framework.run_experiments(exps, quick=True, jobs=1, progress=False, replications=1)
    assert [r.experiment.id for r in reps] == [e.id for e in exps]
    for rep, ref in zip(reps, alone, strict=True):
        assert _no_wall(rep.summaries) == _no_wall(ref.summaries)
        assert results_csv(rep.table.rows) == results_csv(ref.table.rows)
        assert [(v.claim.id, v.reproduced) for v in rep.verdicts] == [
            (v.claim.id, v.reproduced) for v in ref.verdicts
        ]
    assert pngs == draw_all(alone, jobs=1)
    assert sorted(k for k, _, _ in done) == [0, 1, 2]
    for k, exp_id, png in done:
        assert exp_id == exps[k].id
        assert list(png) == [f.file for f in exps[k].figures]
        assert png == pngs[k]


def test_pipeline_without_figures_draws_none():
    reps, pngs = run_and_draw(
        [reproduce.experiment(SMALL)],
        quick=True,
        replications=1,
        jobs=2,
        progress=False,
        figures=False,
    )
    assert pngs == [{}]
    assert reps[0].verdicts


def test_the_main_process_of_reproduce_imports_neither_pandas_nor_matplotlib(tmp_path):
    # The runs and the figures go to the workers and the reports are written without
    # pandas: the main process pays for neither import (issue 14).
    code = (
        "import sys\n"
        "from vmsched.cli import main\n"
        f"code = main(['reproduce', '{SMALL}', '--quick', '--replications', '1', "
        f"'--jobs', '2', '--out', {str(tmp_path / 'o')!r}])\n"
        "assert code == 0, code\n"
        "print(sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout
    assert (tmp_path / "o" / "report.html").is_file()
    assert list((tmp_path / "o").glob("*.png"))


def test_a_report_table_of_text_renders_as_its_dataframe_did():
    import pandas as pd
    from vmsched import htmlreport
    from vmsched.reproduce.report import TableBlock, html_blocks

    header = ["scheduler", "params", "tput (req/s)"]
    rows = [["credit", "w=1; x=2", "1,234 ± 5"], ["sedf", "<&>", "—"], ["bvt", "", "0.5"]]
    (table,) = html_blocks([TableBlock(header, rows, "llr")])
    assert not hasattr(table.df, "dtypes")  # not a DataFrame: no pandas needed
    old = htmlreport.Table(pd.DataFrame(rows, columns=header))
    assert htmlreport._render_table(table) == htmlreport._render_table(old)


def test_an_interrupt_leaves_no_temporary_file_in_the_store(tmp_path):
    """An interrupt can land after `save` has created its temporary file and before the
    handler that removes it: the interrupt's report removes any left, and so does a
    resumed command (once seen in CI as a `.part-` file after SIGINT)."""
    from vmsched.batch import interrupted

    store = RunStore(tmp_path)
    store.save({"a" * 32: 1})
    stale = store.dir / ".part-left"
    stale.write_bytes(b"half")
    assert interrupted(KeyboardInterrupt(), store, ["reproduce", "x"]) == 130
    assert not stale.exists()
    assert len(list(store.dir.glob("*.pkl"))) == 1
    stale.write_bytes(b"half")
    resumed = RunStore(tmp_path, resume=True)
    assert not stale.exists()
    assert resumed.load("a" * 32) == (True, 1)
