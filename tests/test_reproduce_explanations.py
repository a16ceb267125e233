"""The claims' explanations quote this run's numbers (Cherkasova 2007 and the
dynamic-weight chapter): each experiment's `explain` fills its templates from
the results table, so a number written down from an earlier run would differ
from the table here.

No simulation: the results tables are synthetic, every configuration of the
experiment's grid with made-up values, judged and explained as a run's would be;
the report is then rendered from them.
"""

from __future__ import annotations

import random
import re

import pytest
from vmsched.reproduce import cherkasova2007 as c07
from vmsched.reproduce import dynweight as dw
from vmsched.reproduce.checks import num
from vmsched.reproduce.framework import (
    Reproduction,
    Row,
    Table,
    explain_claims,
    fmt_value,
    judge,
)
from vmsched.reproduce.report import save

#: The metrics every run of each experiment measures (as its `measure` returns them).
WEB_METRICS = (
    "throughput_req_s",
    "dom0_cpu_pct",
    "dom1_cpu_pct",
    "dom0_exec_per_s",
    "dom0_io_per_exec",
    "dom0_waited_pct",
    "dom0_wake_p95_ms",
    "dom0_wake_p99_ms",
    "dom0_wake_max_ms",
    "reply_transfer_p50_ms",
    "reply_transfer_p99_ms",
    "reply_transfer_max_ms",
)


#: BVT's wake-up outcomes, measured in web-1cpu's BVT runs only.
BVT_METRICS = ("wake_preempt_per_s", "wake_deferred_per_s")


def _metrics(exp, run) -> tuple[str, ...]:
    if exp is c07.WEB_1CPU:
        return WEB_METRICS + (BVT_METRICS if run.scheduler == "bvt" else ())
    wl = str(run.params["workload"])
    throughput = (dw.THROUGHPUT if exp is dw.DOM0_RATIO else c07.THROUGHPUT)[wl]
    guest = "domu_cpu_pct" if exp is dw.DOM0_RATIO else "dom1_cpu_pct"
    return (throughput, "dom0_cpu_pct", guest) + (("disk_busy_pct",) if wl == "disk" else ())


def synthetic_table(exp, seed: int, scale: dict[tuple[str, str, str], float] | None = None):
    """Every configuration of the grid with made-up values (`scale` multiplies some)."""
    rng = random.Random(seed)
    rows = []
    for run in exp.grid(exp.quick):
        params = {k: fmt_value(v) for k, v in run.params.items()}
        for metric in _metrics(exp, run):
            value = rng.uniform(1, 1000) if "cpu_pct" not in metric else rng.uniform(1, 60)
            value *= (scale or {}).get((run.scheduler, run.key, metric), 1.0)
            rows.append(Row(run.scheduler, params, metric, value, "", exp.units[metric], (value,)))
    return Table(rows)


def explained(exp, table: Table) -> dict[str, str]:
    verdicts = [judge(c, table) for c in exp.claims]
    explain_claims(exp, table, verdicts)
    return {v.claim.id: v.explanation for v in verdicts}


@pytest.mark.parametrize(
    "exp", [c07.WEB_1CPU, c07.WORKLOADS_EXP, dw.DOM0_RATIO], ids=lambda e: e.id
)
def test_every_explanation_is_filled_in_from_the_table(exp):
    assert exp.explain is not None
    texts = explained(exp, synthetic_table(exp, 1))
    assert set(texts) == {c.id for c in exp.claims}
    for claim_id, text in texts.items():
        assert text and not re.search(r"[{}]", text), claim_id
    # Another table, other numbers: no explanation of these experiments is a fixed text.
    again = explained(exp, synthetic_table(exp, 2))
    assert all(again[k] != texts[k] for k in texts)


def test_web_1cpu_quotes_the_table():
    t = synthetic_table(c07.WEB_1CPU, 3)
    texts = explained(c07.WEB_1CPU, t)

    def at1(sched, metric, **v):
        return t.get(sched, metric, dom0_weight_ratio=1, **v)

    bvt = [at1("bvt", "throughput_req_s", ctx_allow_ms=c) for c in (1, 5, 50)]
    assert (
        f"{num(bvt[0])} / {num(bvt[1])} / {num(bvt[2])} req/s at C = 1 / 5 / 50 ms" in (texts["16"])
    )
    assert f"ratio {bvt[2] / bvt[0]:.2f} (paper 1.83)" in texts["16"]
    wc = {"mode": "wc", "period_ms": 1000}
    d0 = at1("sedf", "dom0_cpu_pct", **wc)
    us = d0 / 100 / at1("sedf", "throughput_req_s", **wc) * 1e6
    assert f"{d0:.1f} % of the CPU ({num(us)} µs per request)" in texts["20"]
    nwc = [at1("sedf", "dom1_cpu_pct", mode="nwc", period_ms=p) for p in (10, 100, 1000)]
    assert "Dom1 at {:.1f} / {:.1f} / {:.1f} %".format(*nwc) in texts["4"]
    p99 = at1("sedf", "dom0_wake_p99_ms", mode="wc", period_ms=10)
    assert f"wake latency p99 {c07._ms(p99)} ms" in texts["17"]
    # The verdict word is the claim's own.
    for claim in c07.WEB_1CPU.claims:
        word = "Not reproduced" if not judge(claim, t).reproduced else "Reproduced"
        assert word in texts[claim.id], claim.id


def test_a_changed_result_changes_the_quoted_number():
    key = ("bvt", "ctx_allow_ms=50;dom0_weight_ratio=1", "throughput_req_s")
    t = synthetic_table(c07.WEB_1CPU, 3)
    changed = synthetic_table(c07.WEB_1CPU, 3, {key: 1.5})
    before, after = explained(c07.WEB_1CPU, t)["16"], explained(c07.WEB_1CPU, changed)["16"]
    old = t.get("bvt", "throughput_req_s", ctx_allow_ms=50, dom0_weight_ratio=1)
    new = changed.get("bvt", "throughput_req_s", ctx_allow_ms=50, dom0_weight_ratio=1)
    assert f" / {num(old)} req/s" in before and f" / {num(new)} req/s" in after


def test_dynweight_quotes_the_table():
    t = synthetic_table(dw.DOM0_RATIO, 4)
    texts = explained(dw.DOM0_RATIO, t)
    credit = [
        t.get("credit", "throughput_mbit_s", workload="iperf", mode="wc", dom0_weight_ratio=r)
        for r in dw.RATIOS
    ]
    assert "Credit: " + " → ".join(num(v) for v in credit) + " Mbit/s" in texts["34"]


def test_the_report_prints_the_filled_in_explanations(tmp_path):
    exp = c07.WEB_1CPU
    t = synthetic_table(exp, 5)
    verdicts = [judge(c, t) for c in exp.claims]
    explain_claims(exp, t, verdicts)
    rep = Reproduction(
        experiment=exp,
        quick=True,
        timing=exp.quick,
        runs=[],
        summaries=[],
        table=t,
        verdicts=verdicts,
        wall_s=0.0,
        jobs=1,
    )
    text = (save(rep, tmp_path, figures=False) / "report.md").read_text()
    for v in verdicts:
        assert f"**Explanation:** {v.explanation}" in text, v.claim.id
    assert "computed from this run's results" in text
    bvt50 = t.get("bvt", "throughput_req_s", ctx_allow_ms=50, dom0_weight_ratio=1)
    assert f"/ {num(bvt50)} req/s at C = 1 / 5 / 50 ms" in text
