"""Put the scorecard of a `vmsched reproduce --all` run into the docs.

    vmsched reproduce --all --out results/reproduce
    python tools/scorecard_doc.py results/reproduce "the full-length runs at commit abc1234"

Replaces what lies between `<!-- BEGIN SCORECARD -->` and `<!-- END SCORECARD -->`
in docs/reproduce.md with DIR/scorecard.md and a line naming the run it came
from, and what lies between `<!-- BEGIN PROPOSALS VERDICTS -->` and
`<!-- END PROPOSALS VERDICTS -->` in docs/reproduce-proposals.md with the
verdicts of the proposals' experiments from DIR/claims.csv, each with the
measurement its reason quotes (the text before the reason's "Cause:").
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "reproduce.md"
BEGIN, END = "<!-- BEGIN SCORECARD -->", "<!-- END SCORECARD -->"
PROPOSALS = ROOT / "docs" / "reproduce-proposals.md"
P_BEGIN, P_END = "<!-- BEGIN PROPOSALS VERDICTS -->", "<!-- END PROPOSALS VERDICTS -->"
#: The experiments of the papers' proposed schedulers that judge claims.
PROPOSAL_PREFIXES = ("thesis2015-enhanced", "govindan2009-", "dynweight-credit", "mcredit2-")
#: A clause every Enhanced reason repeats; the table keeps it once, below.
REPEATED = " Decisions of Enhanced that differ from Credit's in the contended runs:"


def replace_between(doc: Path, begin: str, end: str, body: str) -> bool:
    """Put `body` between the markers of `doc`; False if they are missing."""
    text = doc.read_text()
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        print(f"{doc}: the markers {begin} ... {end} are missing", file=sys.stderr)
        return False
    doc.write_text(f"{head}{begin}\n{body}\n{end}{tail}")
    return True


def proposals_table(claims_csv: Path, which: str) -> str:
    """The proposals' verdicts as a Markdown table with their measurements."""
    with claims_csv.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["experiment"].startswith(PROPOSAL_PREFIXES)]
    lines = ["| experiment | claim | verdict | measured in this run |", "|---|---|---|---|"]
    repeated = ""
    for r in rows:
        measured = r["reason"].split(" Cause:")[0]
        if REPEATED in measured:
            measured, _, rest = measured.partition(REPEATED)
            repeated = repeated or REPEATED.strip() + rest
        verdict = f"**{r['verdict']}**" if r["verdict"] == "reproduced" else r["verdict"]
        cell = measured.replace("|", "/").strip()
        lines.append(f"| `{r['experiment']}` | {r['claim']} | {verdict} | {cell} |")
    won = sum(r["verdict"] == "reproduced" for r in rows)
    out = [f"**{won} of {len(rows)} verdicts reproduced**, from {which}.", "", *lines]
    if repeated:
        out += ["", repeated]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: scorecard_doc.py DIR WHICH-RUN", file=sys.stderr)
        return 2
    card = (Path(argv[0]) / "scorecard.md").read_text().strip()
    note = f"The scorecard of {argv[1]} (`claims.csv` of `vmsched reproduce --all`)."
    if not replace_between(DOC, BEGIN, END, f"{card}\n\n{note}"):
        return 2
    table = proposals_table(Path(argv[0]) / "claims.csv", argv[1])
    if not replace_between(PROPOSALS, P_BEGIN, P_END, table):
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
