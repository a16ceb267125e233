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


def test_every_claim_is_explained(quick_runs):
    """Every claim has an explanation that quotes numbers: as the report prints it, with
    a template's fields filled in from the run's results."""
    for exp_id in IDS:
        assert all(len(c.explanation) > 80 for c in reproduce.EXPERIMENTS[exp_id].claims)
        rep, _ = quick_runs[exp_id]
        for v in rep.verdicts:
            assert len(v.explanation) > 80, (exp_id, v.claim.id)
            assert re.search(r"\d", v.explanation), (exp_id, v.claim.id)
            assert "{" not in v.explanation, (exp_id, v.claim.id)


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


def _tier_needs(front_ms: float, db_ms: float) -> dict[str, tuple[float, float]]:
    """Each TPC-W tier's 90th-percentile CPU on its dedicated host, in ms of 20 (the mean
    over seeds 1-3 of each seed's 90th percentile of one-second samples, 300 s after 30 s):
    its own, and its own plus its Dom0's, with the tiers reserving `front_ms` and `db_ms`."""
    import numpy as np
    from vmsched.api import run
    from vmsched.reproduce.framework import Timing
    from vmsched.reproduce.govindan2009 import setups as g

    need: dict[str, list[tuple[float, float]]] = {"jboss": [], "mysql": []}
    for seed in (1, 2, 3):
        front, db = g.tiers(db="h2/mysql", front_ms=front_ms, db_ms=db_ms)
        sc = g.cluster(
            Timing(duration_s=300, warmup_s=30, seed=seed),
            g.SEDF,
            {"h1": [g.dom0(), front], "h2": [g.dom0(), db]},
            "test",
        )
        df = run(sc, progress=False).timeseries
        df = df[df["vcpu"].isna()]
        for name, host in (("jboss", "h1"), ("mysql", "h2")):
            h = df[df["host"] == host]
            own = h[h["domain"] == name].set_index("time_s")["cpu_pct"]
            dom0 = h[h["domain"] == "dom0"].set_index("time_s")["cpu_pct"]
            need[name].append((np.percentile(own, 90), np.percentile(own + dom0, 90)))
    return {
        name: tuple(float(x) * g.PERIOD_MS / 100 for x in np.mean(v, axis=0))
        for name, v in need.items()
    }


def test_the_govindan_reservations_are_the_applications_needs_on_their_profile():
    """The paper provisions each application "for [its] 90th percentile CPU requirement":
    the media server's reservations are its 90th-percentile need run alone with Dom0 on
    the `govindan2009` profile (its own CPU; with Dom0's work for it in the accounting
    test), rounded up to 10 µs, and so are the TPC-W tiers', each on its dedicated host
    with both at (2, 20), the reference the derivation fixes (setups.FRONT_SLICE_MS), so
    a change of the profile's costs that leaves them stale fails here (the tiers' values
    before TCP's timestamp option, 1.77/2.78 and 1.83/2.82, do); the neighbours share what
    the applications leave of the guests' (5, 20)."""
    import numpy as np
    from vmsched.api import run
    from vmsched.reproduce.framework import Timing
    from vmsched.reproduce.govindan2009 import setups as g

    sc = g.one_host(Timing(duration_s=60, warmup_s=0), g.SEDF, [g.dom0(), g.media()], "test")
    df = run(sc, progress=False).timeseries
    df = df[df["vcpu"].isna() & (df["time_s"] > 1)]
    own = df[df["domain"] == "media"].set_index("time_s")["cpu_pct"]
    dom0 = df[df["domain"] == "dom0"].set_index("time_s")["cpu_pct"]
    for need, slice_ms in (
        (np.percentile(own, 90), g.MEDIA_SLICE_MS),
        (np.percentile(own + dom0, 90), g.ACCOUNTED_MEDIA_SLICE_MS),
    ):
        assert slice_ms - 0.01 < need * g.PERIOD_MS / 100 <= slice_ms
    needs = _tier_needs(2.0, 2.0)
    for name, own_ms, accounted_ms in (
        ("jboss", g.FRONT_SLICE_MS, g.ACCOUNTED_FRONT_SLICE_MS),
        ("mysql", g.DB_SLICE_MS, g.ACCOUNTED_DB_SLICE_MS),
    ):
        own, accounted = needs[name]
        assert own_ms - 0.01 < own <= own_ms, (name, own)
        assert accounted_ms - 0.01 < accounted <= accounted_ms, (name, accounted)
    assert g.STREAM_HOGS * g.STREAM_HOG_SLICE_MS + g.MEDIA_SLICE_MS <= g.GUEST_BUDGET_MS
    assert g.GUEST_BUDGET_MS - g.MEDIA_SLICE_MS - g.STREAM_HOGS * g.STREAM_HOG_SLICE_MS < 0.007
    assert 5 * g.TPCW_HOG_SLICE_MS + g.TIERS_SLICE_MS == pytest.approx(g.GUEST_BUDGET_MS)
    assert g.MAX_HOGS * g.HOG_SLICE_MS + g.TIERS_SLICE_MS <= g.GUEST_BUDGET_MS


def test_the_tpcw_tiers_reserve_their_90th_percentile_need():
    """Run with their own reservations, the tiers still get what they reserve for: each
    tier's 90th-percentile CPU on its dedicated host (its own; with its Dom0's work for the
    accounting test) is at most its reservation. The percentile moves with the tiers' own
    reservations (measured with TCP's timestamp option at 30 pairs around these values:
    1.71-1.78 ms for the application tier, 2.69-2.86 ms for the database), which is why the
    derivation measures them at a fixed reference (the test above); here each need is also
    at most 0.10 ms of 20 below its reservation (measured: 0.02 and 0.08 ms; 0.08 was the
    bound before the option, when the database's need moved less)."""
    from vmsched.reproduce.govindan2009 import setups as g

    needs = _tier_needs(g.FRONT_SLICE_MS, g.DB_SLICE_MS)
    for name, own_ms, accounted_ms in (
        ("jboss", g.FRONT_SLICE_MS, g.ACCOUNTED_FRONT_SLICE_MS),
        ("mysql", g.DB_SLICE_MS, g.ACCOUNTED_DB_SLICE_MS),
    ):
        own, accounted = needs[name]
        assert own_ms - 0.10 <= own <= own_ms, (name, own)
        assert accounted_ms - 0.10 <= accounted <= accounted_ms, (name, accounted)


def test_every_govindan_run_is_on_xen_3_0_2():
    """The paper modified Xen 3.0.2: every run of every Govindan experiment (full and quick
    grids, every host of a cluster) names the 3.0.2 tree, so SEDF repays a short block's
    lost slice in penalty quanta until repaid (the rule before the change of 17 June 2006;
    `short_block_rule_by_tree` in sched_sedf.rs tests the two rules) and BVT exists."""
    seen = set()
    for e in govindan2009.EXPERIMENTS:
        for quick in (False, True):
            for r in e.runs(quick):
                data = r.scenario.data
                hosts = data["host"] if isinstance(data["host"], list) else [data]
                for h in hosts:
                    spec = h["scheduler"]
                    assert spec["xen_version"] == "3.0.2", (e.id, r.scheduler, spec)
                    seen.add(spec["name"])
    assert seen == {"sedf", "sedf-comm", "bvt"}
