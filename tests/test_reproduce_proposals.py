"""The reproductions of the proposed schedulers' experiments: `thesis2015-enhanced`, the
`govindan2009-*` experiments, `dynweight-credit` and `mcredit2-sysbench`.

Every registered one runs once in its `--quick` version (all on one pool of two
processes) and its four outputs are checked: results.csv with exactly its
columns, report.md with a verdict per claim, report.html, the figures. The
published numbers are checked against docs/reference/published-numbers.md, where they
are written down once from the papers.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from conftest import published_numbers, vmsched_cmd
from vmsched import reproduce
from vmsched.reproduce import dynweight_credit, enhanced2015, govindan2009, mcredit2
from vmsched.reproduce.framework import RESULT_COLUMNS, params_key
from vmsched.reproduce.report import files

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
VERDICT_LINE = re.compile(r"^- \*\*Claim (\S+)\*\*: (reproduced|not reproduced) — ", re.M)
MODULES = (enhanced2015, govindan2009, dynweight_credit, mcredit2)
MINE = [e.id for m in MODULES for e in m.EXPERIMENTS]
IDS = [i for i in MINE if i in reproduce.EXPERIMENTS]


def test_every_proposal_experiment_is_registered_once():
    assert IDS == MINE
    assert len(set(reproduce.EXPERIMENTS)) == len(reproduce.EXPERIMENTS)
    for m in MODULES:
        for e in m.EXPERIMENTS:
            assert reproduce.EXPERIMENTS[e.id] is e


def test_list_shows_them():
    r = vmsched_cmd("reproduce", "--list")
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.splitlines() if line and not line[0].isspace()]
    assert [i for i in listed if i in MINE] == IDS


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    reps = reproduce.run_many(IDS, quick=True, jobs=2, progress=False)
    out = {}
    for rep in reps:
        folder = tmp_path_factory.mktemp(rep.experiment.id)
        out[rep.experiment.id] = (rep, rep.save(folder))
    return out


@pytest.mark.parametrize("exp_id", IDS)
def test_quick_run_writes_the_four_outputs(quick_runs, exp_id):
    rep, out = quick_runs[exp_id]
    exp = rep.experiment
    assert sorted(p.name for p in out.iterdir()) == sorted(files(exp))
    df = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert tuple(df.columns) == RESULT_COLUMNS
    assert len(df) > 0
    assert not df.duplicated(["scheduler", "params", "metric"]).any()
    for key in df.params:
        names = [p.split("=")[0] for p in key.split(";")] if key else []
        assert names == sorted(names)
    assert set(df.metric) <= set(exp.units)
    assert set(df.unit) <= set(exp.units.values())
    text = (out / "report.md").read_text()
    verdicts = dict(VERDICT_LINE.findall(text))
    assert list(verdicts) == [c.id for c in exp.claims]
    assert text.count("**Verdict: ") == len(exp.claims)
    assert all(v.evidence for v in rep.verdicts)
    for fig in exp.figures:
        assert (out / fig.file).read_bytes()[:8] == PNG_MAGIC, fig.file
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("exp_id", IDS)
def test_every_run_measures_every_metric(quick_runs, exp_id):
    rep, _ = quick_runs[exp_id]
    for run, summary in zip(rep.runs, rep.summaries, strict=True):
        values = rep.experiment.measure(run, summary)
        assert values
        missing = {m for m, v in values.items() if v != v}
        # sysbench or a NAS job may not finish in a quick run; nothing else may be missing
        # (a TPC-W that completes no request reports no response time at all).
        allowed = {"completion_s", "sysbench_time_s"}
        assert missing <= allowed, (run.scheduler, run.key, missing)


def test_every_claim_is_explained():
    for exp_id in IDS:
        for claim in reproduce.EXPERIMENTS[exp_id].claims:
            assert len(claim.explanation) > 80, (exp_id, claim.id)
            assert re.search(r"\d", claim.explanation), (exp_id, claim.id)


def test_the_enhanced_experiment_reuses_the_thesis_setups():
    from vmsched.reproduce import thesis2015

    timing = thesis2015.QUICK
    runs = enhanced2015.ENHANCED_EXP.runs(True)
    base = [
        *thesis2015.DISK.runs(True),
        *thesis2015.NET.runs(True),
        *thesis2015.OLTP_EXP.runs(True),
        *thesis2015.CONSOLIDATED.runs(True),
    ]
    assert timing.quick
    assert len(runs) == len(base) + sum(r.scheduler == "credit" for r in base)
    for r in runs:
        twin = [
            b
            for b in base
            if {**b.params, "setup": r.params["setup"]} == dict(r.params)
            and b.scheduler == ("credit" if r.scheduler == "credit-enhanced" else r.scheduler)
        ]
        assert len(twin) == 1
        mine, theirs = dict(r.scenario.data), dict(twin[0].scenario.data)
        assert mine.pop("scheduler")["name"] == r.scheduler
        theirs.pop("scheduler")
        assert mine == theirs


# ----- the published numbers are docs/reference/published-numbers.md's ----------------------


def test_published_numbers_are_the_reference_pages():
    got = {
        (e.id, p.scheduler, params_key(p.params), p.metric): p.text()
        for m in MODULES
        for e in m.EXPERIMENTS
        for p in e.published
    }
    ids = {e.id for m in MODULES for e in m.EXPERIMENTS}
    want = {k: v for k, v in published_numbers().items() if k[0] in ids}
    assert got == want


def test_held_back_experiments_publish_nothing_and_claim_nothing():
    held_back = {
        "govindan2009-streaming",
        "govindan2009-context-switches",
        "dynweight-credit",
        "mcredit2-sysbench",
    }
    for m in MODULES:
        for e in m.EXPERIMENTS:
            if e.id in held_back:
                assert not e.published and not e.claims and e.note, e.id


#: The counter by which each proposed scheduler shows it acted, in its experiments' reports.
DECISION_COUNTER = {"sedf-comm": "comm_preferred", "credit-enhanced": "supersedes"}


@pytest.mark.parametrize("exp_id", IDS)
def test_reports_count_the_proposals_decisions(quick_runs, exp_id):
    rep, out = quick_runs[exp_id]
    text = (out / "report.md").read_text()
    ran = {r.scheduler for r in rep.runs} & set(DECISION_COUNTER)
    if not ran:
        return
    assert "## What the proposed schedulers decided" in text
    section = text.split("## What the proposed schedulers decided", 1)[1].split("\n## ", 1)[0]
    for sched in ran:
        assert f"`{DECISION_COUNTER[sched]}`" in section
        runs = [r for r in rep.runs if r.scheduler == sched]
        rows = [line for line in section.splitlines() if line.startswith(f"| {sched} |")]
        assert len(rows) == len(runs), sched
        # Every row carries a count (a number, not an empty cell) for its scheduler.
        col = section.splitlines()[4].split("|").index(f" {DECISION_COUNTER[sched]} ")
        assert all(line.split("|")[col].strip().replace(",", "").isdigit() for line in rows)
