"""Paper reproductions (vmsched.reproduce, `vmsched reproduce`).

The framework is checked on a small CPU-only stand-in experiment (defined here,
not registered); every registered experiment runs once in its `--quick`
version, all of them on one pool of two processes, and its files are checked;
the published numbers are checked against docs/reference/published-numbers.md,
where they are written down once from the papers.
"""

from __future__ import annotations

import dataclasses
import re

import pandas as pd
import pytest
from conftest import DOCS, published_numbers, vmsched_cmd
from vmsched import reproduce
from vmsched.reproduce.checks import above, decreasing, effect_close, increasing
from vmsched.reproduce.framework import (
    RESULT_COLUMNS,
    Claim,
    Experiment,
    Figure,
    Panel,
    Published,
    Run,
    Timing,
    params_key,
    run_experiments,
)
from vmsched.reproduce.report import PLACEHOLDER, files
from vmsched.reproduce.setups import label, shares, xenmon

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
IDS = list(reproduce.EXPERIMENTS)
#: The I/O issue's experiments, whose published numbers this file lists; the
#: proposals' experiments are checked the same way in test_reproduce_proposals.py.
IO_IDS = [
    e.id
    for m in (reproduce.cherkasova2007, reproduce.thesis2015, reproduce.dynweight)
    for e in m.EXPERIMENTS
]
VERDICT_LINE = re.compile(r"^- \*\*Claim (\S+)\*\*: (reproduced|not reproduced) — ", re.M)

# ----- a CPU-only stand-in experiment ------------------------------------------------------


def _standin_grid(timing: Timing) -> list[Run]:
    runs = []
    for sched in ("credit", "sedf", "bvt"):
        for r in (0.5, 1, 2):
            sc = timing.scenario(pcpus=1, scheduler=sched, source="standin")
            dom0, dom1 = shares(sched, [r, 1.0], period_ms=10)
            sc.add_domain("dom0", sched=dom0, workload="cpu-hog")
            sc.add_domain("dom1", sched=dom1, workload="cpu-hog")
            runs.append(Run(sched, {"dom0_weight_ratio": r, "pcpus": 1}, sc))
    return runs


def _standin_measure(run: Run, summary: dict) -> dict[str, float]:
    return {
        "dom0_cpu_pct": xenmon(summary, "dom0", "cpu_pct"),
        "dom1_cpu_pct": xenmon(summary, "dom1", "cpu_pct"),
    }


def _share_follows_weight(t) -> tuple[bool, str]:
    values = t.series("credit", "dom0_cpu_pct", "dom0_weight_ratio", pcpus=1)
    return values == sorted(values), f"{values}"


STANDIN = Experiment(
    id="standin-cpu-shares",
    title="two CPU hogs, weights 0.5-2",
    paper="no paper",
    source="a test",
    setup="Two CPU hogs on one PCPU.",
    decisions=("Weights as `setups.shares`.",),
    units={"dom0_cpu_pct": "%", "dom1_cpu_pct": "%"},
    grid=_standin_grid,
    measure=_standin_measure,
    full=Timing(duration_s=4, warmup_s=0.5),
    quick=Timing(duration_s=1, warmup_s=0.2, quick=True),
    published=(
        Published("Table X", "credit", {"dom0_weight_ratio": 1, "pcpus": 1}, "dom0_cpu_pct", 50),
        Published(
            "Table X", "sedf", {"dom0_weight_ratio": 2, "pcpus": 1}, "dom0_cpu_pct", (60, 70)
        ),
        # A number the grid does not produce keeps its row, with no simulated value.
        Published("Table X", "credit", {"dom0_weight_ratio": 8, "pcpus": 1}, "dom0_cpu_pct", 88),
    ),
    claims=(
        Claim("1", "Dom0's share follows its weight", "Table X", _share_follows_weight),
        Claim("2", "needs a result that is not there", "Table X", lambda t: (t.get("x", "y"), "")),
        Claim("3", "a false claim, explained", "Table X", lambda t: (False, "no"), "Because."),
    ),
    figures=(
        Figure(
            "shares.png",
            "Shares",
            "dom0_weight_ratio",
            "ratio",
            (Panel("Dom0", "dom0_cpu_pct"), Panel("Dom1", "dom1_cpu_pct")),
            log_x=True,
        ),
        Figure(
            "bars.png",
            "Bars",
            "dom0_weight_ratio",
            "ratio",
            (Panel("Dom0", "dom0_cpu_pct"),),
            kind="bar",
        ),
    ),
    label=label,
)


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    [rep] = run_experiments([STANDIN], quick=True, jobs=1, progress=False)
    out = rep.save(tmp_path_factory.mktemp("standin"))
    return rep, out


def test_params_are_key_value_pairs_sorted_by_key():
    assert params_key({"period_ms": 10, "mode": "wc", "dom0_weight_ratio": 0.25}) == (
        "dom0_weight_ratio=0.25;mode=wc;period_ms=10"
    )
    assert params_key({"b": True, "a": 1.0}) == "a=1;b=true"
    assert params_key({}) == ""


def test_results_csv_has_exactly_the_columns_and_the_published_numbers(standin):
    rep, out = standin
    df = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert (
        tuple(df.columns)
        == RESULT_COLUMNS
        == (
            "scheduler",
            "params",
            "metric",
            "simulated",
            "published",
            "unit",
        )
    )
    assert len(df) == 9 * 2 + 1
    row = df[(df.scheduler == "credit") & (df.params == "dom0_weight_ratio=1;pcpus=1")]
    assert dict(zip(row.metric, row.published, strict=True)) == {
        "dom0_cpu_pct": "50",
        "dom1_cpu_pct": "",
    }
    assert float(row[row.metric == "dom0_cpu_pct"].simulated.iloc[0]) == pytest.approx(50, abs=1)
    ranged = df[(df.scheduler == "sedf") & (df.params == "dom0_weight_ratio=2;pcpus=1")]
    assert list(ranged[ranged.metric == "dom0_cpu_pct"].published) == ["60-70"]
    lone = df[df.params == "dom0_weight_ratio=8;pcpus=1"]
    assert list(lone.simulated) == [""] and list(lone.published) == ["88"]
    assert set(df.unit) == {"%"}


def test_report_has_a_verdict_per_claim_evidence_and_explanations(standin):
    rep, out = standin
    text = (out / "report.md").read_text()
    verdicts = dict(VERDICT_LINE.findall(text))
    assert verdicts == {"1": "reproduced", "2": "not reproduced", "3": "not reproduced"}
    assert "could not be evaluated: no result for x" in text
    # Not reproduced and not explained yet: the marked placeholder; explained: the text.
    assert text.count("*Explanation not written yet.*") == 1
    assert "**Explanation:** Because." in text
    assert "### no paper, Table X" in text and "| 60-70 |" in text
    assert "![Shares](shares.png)" in text


def test_every_file_is_written_whole(standin):
    rep, out = standin
    for name in files(STANDIN):
        assert (out / name).stat().st_size > 0, name
    for fig in STANDIN.figures:
        assert (out / fig.file).read_bytes()[:8] == PNG_MAGIC
    html = (out / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "Claim 1" in html
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


def test_results_do_not_depend_on_the_number_of_jobs(standin):
    rep, _ = standin
    [again] = run_experiments([STANDIN], quick=True, jobs=2, progress=False)
    assert again.table.frame().equals(rep.table.frame())


def test_effect_size_rule():
    # The logarithm of the simulated ratio within a factor of two of the paper's.
    assert effect_close(1.5, 1.83)
    assert effect_close(3.3, 1.83) and not effect_close(3.4, 1.83)
    assert not effect_close(1.3, 1.83)  # less than half the paper's effect
    assert not effect_close(0.9, 1.83)  # the wrong way
    assert effect_close(0.45, 0.25)  # a 55 % drop for a published 75 % drop
    assert not effect_close(0.6, 0.25)


def test_ties_are_not_orderings():
    assert increasing([100, 101, 102])
    assert not increasing([100, 100.4, 102])  # within 0.5 %: a tie
    assert decreasing([934, 817, 510])
    assert increasing([0.0, 0.6, 1.2], points=True)
    assert not increasing([0.0, 0.04, 0.86], points=True)  # 0.04 points is a tie
    assert above(10.1, 10) and not above(10.01, 10)


# ----- the command line -----------------------------------------------------------------------


def test_list_names_every_experiment():
    r = vmsched_cmd("reproduce", "--list")
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.splitlines() if line and not line[0].isspace()]
    assert listed == IDS
    # The I/O issue's experiments are all there (the proposals' own
    # experiments, registered beside them, are checked in
    # test_reproduce_proposals.py).
    assert set(IDS) >= {
        "cherkasova2007-web-1cpu",
        "cherkasova2007-workloads",
        "cherkasova2007-smp",
        "cherkasova2007-smp-scaling",
        "thesis2015-disk",
        "thesis2015-net",
        "thesis2015-oltp",
        "thesis2015-consolidated",
        "dynweight-dom0-ratio",
    }


def test_bad_id_exits_2_with_a_suggestion(tmp_path):
    r = vmsched_cmd("reproduce", "cherkasova2007-web1cpu", "--out", str(tmp_path / "x"))
    assert r.returncode == 2
    assert "unknown experiment" in r.stderr
    assert "did you mean 'cherkasova2007-web-1cpu'?" in r.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "no experiment given"),
        (("thesis2015-oltp", "--jobs", "0"), "expected an integer >= 1"),
    ],
)
def test_other_bad_input_exits_2(args, message):
    r = vmsched_cmd("reproduce", *args)
    assert r.returncode == 2
    assert message in r.stderr


def test_cli_writes_the_outputs(tmp_path):
    r = vmsched_cmd(
        "reproduce", "thesis2015-consolidated", "--quick", "--jobs", "2", "--out", str(tmp_path)
    )
    assert r.returncode == 0, r.stderr
    for name in files(reproduce.experiment("thesis2015-consolidated")):
        assert (tmp_path / name).is_file(), name


# ----- every registered experiment, quick ------------------------------------------------------


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """Every experiment's --quick run, on one pool of two processes, saved."""
    reps = reproduce.run_many(IDS, quick=True, jobs=2, progress=False)
    out = {}
    for rep in reps:
        folder = tmp_path_factory.mktemp(rep.experiment.id)
        out[rep.experiment.id] = (rep, rep.save(folder))
    return out


@pytest.mark.parametrize("exp_id", IDS)
def test_every_quick_verdict_is_computable(quick_runs, exp_id):
    """`--quick` is a smoke check: its grid may be smaller and shorter than the full
    one, but every claim must still find every result it asks for."""
    rep, _ = quick_runs[exp_id]
    assert len(rep.verdicts) == len(rep.experiment.claims)
    for v in rep.verdicts:
        assert not v.evidence.startswith("could not be evaluated"), (v.claim.id, v.evidence)


def test_quick_outputs_say_they_are_a_smoke_check(quick_runs):
    """A --quick scorecard and report say their verdicts are a smoke check, not the
    scorecard; a full-length scorecard says nothing of the kind."""
    from vmsched.reproduce.scorecard import scorecard_md

    reps = [rep for rep, _ in quick_runs.values()]
    assert "`--quick` is a smoke check" in scorecard_md(reps)
    full = [dataclasses.replace(rep, quick=False) for rep in reps]
    assert "smoke check" not in scorecard_md(full)
    for _rep, out in quick_runs.values():
        assert "a smoke check: its verdicts may differ" in (out / "report.md").read_text()


@pytest.mark.parametrize("exp_id", IDS)
def test_quick_run_writes_every_output(quick_runs, exp_id):
    rep, out = quick_runs[exp_id]
    exp = rep.experiment
    df = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    assert tuple(df.columns) == RESULT_COLUMNS
    assert len(df) > 0
    assert not df.duplicated(["scheduler", "params", "metric"]).any()
    for key in df.params:
        pairs = key.split(";")
        assert [p.split("=")[0] for p in pairs] == sorted(p.split("=")[0] for p in pairs)
    assert set(df.metric) <= set(exp.units)
    text = (out / "report.md").read_text()
    verdicts = dict(VERDICT_LINE.findall(text))
    assert list(verdicts) == [c.id for c in exp.claims]
    assert text.count("**Verdict: ") == len(exp.claims)
    for fig in exp.figures:
        assert (out / fig.file).read_bytes()[:8] == PNG_MAGIC, fig.file
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    # Every run produced its metrics (NaN would mean a metric name the summary lacks).
    measured = [r for r in rep.table.rows if r.simulated == r.simulated]
    assert len(measured) >= len(rep.runs)
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("exp_id", IDS)
def test_every_run_measures_every_metric(quick_runs, exp_id):
    rep, _ = quick_runs[exp_id]
    for run, summary in zip(rep.runs, rep.summaries, strict=True):
        values = rep.experiment.measure(run, summary)
        missing = [m for m, v in values.items() if v != v]
        assert not missing, (run.scheduler, run.key, missing)


def test_every_claim_has_an_explanation():
    """Every claim of every registered experiment, reproduced or not, says why."""
    missing = [
        (exp.id, claim.id)
        for exp in reproduce.EXPERIMENTS.values()
        for claim in exp.claims
        if not (isinstance(claim.explanation, str) and claim.explanation.strip())
    ]
    assert not missing
    assert "explanation" in PLACEHOLDER


@pytest.mark.parametrize("exp_id", [i for i in IDS if reproduce.experiment(i).claims])
def test_report_prints_every_explanation(quick_runs, exp_id):
    rep, out = quick_runs[exp_id]
    text = (out / "report.md").read_text()
    for v in rep.verdicts:
        assert v.explanation.strip(), v.claim.id
        assert f"**Explanation:** {v.explanation}" in text, v.claim.id
    assert "*Explanation not written yet.*" not in text
    if rep.experiment.explain is None:
        # The explanations quote the full-length runs; a quick report says so.
        assert "`--quick` run, so its numbers differ" in text
        assert all(v.explanation == v.claim.explanation for v in rep.verdicts)
    else:
        # Every field is filled in with this run's numbers.
        assert "computed from this run's results" in text
        assert not any("{" in v.explanation for v in rep.verdicts)
        # ... and the run has every result the explanations quote.
        assert not any(
            "lacks a result the explanation quotes" in v.explanation for v in rep.verdicts
        )


def test_an_explanation_quotes_this_runs_results(quick_runs):
    """thesis2015-oltp's explanation of claim 52a quotes Credit's rates and loss as this
    run's results table has them, and a table with other numbers gives another text: a
    number written down from an earlier run would fail here."""
    from vmsched.reproduce.framework import Row, Table, explain_claims, judge

    rep, out = quick_runs["thesis2015-oltp"]
    t = rep.table
    native = t.get("credit", "transactions_s", case="dom0-native")
    domu = t.get("credit", "transactions_s", case="domu")
    expl = next(v.explanation for v in rep.verdicts if v.claim.id == "52a")
    assert f"Dom0-native ({native:,.0f} tx/s)".replace(",", " ") in expl
    assert f"DomU loses {100 * (1 - domu / native):.2f} % ({domu:,.0f})".replace(",", " ") in expl
    assert f"**Explanation:** {expl}" in (out / "report.md").read_text()
    # The same experiment judged on a table whose Credit DomU rate is 10 % lower.
    other = Table(
        Row(r.scheduler, r.params, r.metric, r.simulated * 0.9, r.published, r.unit)
        if (r.scheduler, r.key, r.metric) == ("credit", "case=domu", "transactions_s")
        else r
        for r in t.rows
    )
    verdicts = [judge(c, other) for c in rep.experiment.claims]
    explain_claims(rep.experiment, other, verdicts)
    changed = next(v.explanation for v in verdicts if v.claim.id == "52a")
    assert f"({0.9 * domu:,.0f})".replace(",", " ") in changed
    assert changed != expl


# ----- the published numbers are docs/reference/published-numbers.md's ----------------------


def _expected() -> dict[tuple[str, str, str, str], str]:
    """The page's numbers for the experiments of this file."""
    return {k: v for k, v in published_numbers().items() if k[0] in IO_IDS}


def test_published_numbers_are_the_reference_pages():
    got = {
        (exp.id, p.scheduler, params_key(p.params), p.metric): p.text()
        for exp in reproduce.EXPERIMENTS.values()
        if exp.id in IO_IDS
        for p in exp.published
    }
    assert got == _expected()


@pytest.mark.parametrize("exp_id", IO_IDS)
def test_published_column_of_results_csv_is_the_reference_pages(quick_runs, exp_id):
    _, out = quick_runs[exp_id]
    df = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    got = {
        (exp_id, r.scheduler, r.params, r.metric): r.published
        for r in df.itertuples()
        if r.published
    }
    want = {k: v for k, v in _expected().items() if k[0] == exp_id}
    assert got == want


def test_docs_describe_every_experiment():
    text = (DOCS / "reproduce.md").read_text() + (DOCS / "reproduce-proposals.md").read_text()
    for exp_id in IDS:
        headings = re.findall(r"^### (.*)$", text, flags=re.M)
        assert any(f"`{exp_id}`" in h for h in headings), exp_id


def test_held_back_experiments_publish_nothing():
    for exp_id in (
        "cherkasova2007-smp",
        "cherkasova2007-smp-scaling",
        "thesis2015-consolidated",
        "cherkasova2007-workloads",
    ):
        exp = reproduce.experiment(exp_id)
        assert exp.published == ()
        assert exp.note


@pytest.mark.parametrize("exp_id", IDS)
def test_report_names_the_binding_resource_of_every_configuration(quick_runs, exp_id):
    rep, out = quick_runs[exp_id]
    text = (out / "report.md").read_text()
    assert "## What limits each run" in text
    section = text.split("## What limits each run", 1)[1].split("\n## ", 1)[0]
    configs = {(r.scheduler, r.key) for r in rep.runs}
    rows = [
        line for line in section.splitlines() if line.startswith("| ") and "binding" not in line
    ]
    table_rows = [line for line in rows if line.count("|") == 5]
    assert len(table_rows) >= len(configs)
    resources = {"cap/reservation", "link", "disk", "TCP window", "CPU", "Dom0's share"}
    resources |= {"latency/load", "mixed"}
    assert all(line.split("|")[3].strip() in resources for line in table_rows[: len(configs)])
