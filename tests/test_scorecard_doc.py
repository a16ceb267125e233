"""tools/scorecard_doc.py: the docs' verdict tables come from a run's claims.csv."""

from __future__ import annotations

import csv
import importlib.util

from conftest import REPO


def load_tool():
    spec = importlib.util.spec_from_file_location(
        "scorecard_doc", REPO / "tools" / "scorecard_doc.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def write_claims(path, rows):
    with path.open("w", newline="") as f:
        w = csv.DictWriter(
            f, ["experiment", "claim", "verdict", "simulated", "published", "interval", "reason"]
        )
        w.writeheader()
        for exp, claim, verdict, reason in rows:
            w.writerow({"experiment": exp, "claim": claim, "verdict": verdict, "reason": reason})


def test_the_proposals_table_keeps_the_proposals_and_their_measurements(tmp_path):
    tool = load_tool()
    claims = tmp_path / "claims.csv"
    write_claims(
        claims,
        [
            ("cherkasova2007-web-1cpu", "16", "reproduced", "ratio 1.48. Cause: not a proposal"),
            (
                "govindan2009-tpcw",
                "54",
                "reproduced",
                "mean 16.5 vs 12.2 ms | x1.36. Cause: the tiers wait",
            ),
            (
                "thesis2015-enhanced",
                "44",
                "not reproduced",
                "rate 90.5 %. Decisions of Enhanced that differ from Credit's in the "
                "contended runs: netperf 12. Cause: none",
            ),
            (
                "thesis2015-enhanced",
                "45",
                "not reproduced",
                "loss 0.02 %. Decisions of Enhanced that "
                "differ from Credit's in the contended runs: netperf 12. Cause: none",
            ),
        ],
    )
    table = tool.proposals_table(claims, "a test run")
    lines = table.splitlines()
    assert lines[0] == "**1 of 3 verdicts reproduced**, from a test run."
    rows = [line for line in lines if line.startswith("| `")]
    assert rows == [
        "| `govindan2009-tpcw` | 54 | **reproduced** | mean 16.5 vs 12.2 ms / x1.36. |",
        "| `thesis2015-enhanced` | 44 | not reproduced | rate 90.5 %. |",
        "| `thesis2015-enhanced` | 45 | not reproduced | loss 0.02 %. |",
    ]
    # The clause every Enhanced reason repeats is kept once, after the table.
    assert (
        lines[-1]
        == "Decisions of Enhanced that differ from Credit's in the contended runs: netperf 12."
    )
    assert "cherkasova" not in table


def test_missing_markers_are_refused(tmp_path):
    tool = load_tool()
    doc = tmp_path / "doc.md"
    doc.write_text("no markers here\n")
    assert tool.replace_between(doc, "<!-- B -->", "<!-- E -->", "body") is False
    assert doc.read_text() == "no markers here\n"
    doc.write_text("head\n<!-- B -->\nold\n<!-- E -->\ntail\n")
    assert tool.replace_between(doc, "<!-- B -->", "<!-- E -->", "new") is True
    assert doc.read_text() == "head\n<!-- B -->\nnew\n<!-- E -->\ntail\n"
