"""Put the scorecard of a `vmsched reproduce --all` run at the top of docs/reproduce.md.

    vmsched reproduce --all --out results/reproduce
    python tools/scorecard_doc.py results/reproduce "the full-length runs at commit abc1234"

Replaces what lies between `<!-- BEGIN SCORECARD -->` and `<!-- END SCORECARD -->`
with DIR/scorecard.md and a line naming the run it came from.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "reproduce.md"
BEGIN, END = "<!-- BEGIN SCORECARD -->", "<!-- END SCORECARD -->"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: scorecard_doc.py DIR WHICH-RUN", file=sys.stderr)
        return 2
    card = (Path(argv[0]) / "scorecard.md").read_text().strip()
    text = DOC.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    if not rest or not tail and END not in rest:
        print(f"{DOC}: the scorecard markers are missing", file=sys.stderr)
        return 2
    note = f"The scorecard of {argv[1]} (`claims.csv` of `vmsched reproduce --all`)."
    DOC.write_text(f"{head}{BEGIN}\n{card}\n\n{note}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
