"""The scorecard over every experiment: `claims.csv` and `scorecard.md` of
`vmsched reproduce --all`.

One row per verdict: the experiment, the claim, its verdict, what the claim
compared in the simulation and in the paper (the effect ratios where the claim
gives a size, otherwise the values it orders), their 95 % intervals, and the
reason: the measured evidence (which always says what was required) and, for
a claim not reproduced, the opening of its written explanation.

Counting: every verdict is one *judged* claim; a claim judged by two
experiments (the thesis's claims 44-48 are judged on the thesis's own grid and
again beside the Enhanced scheduler) is one *distinct* claim, reproduced only
if every verdict on it holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from vmsched.reproduce.checks import num
from vmsched.reproduce.framework import ClaimResult, Reproduction
from vmsched.reproduce.stats import Estimate

CLAIMS_CSV = "claims.csv"
SCORECARD_MD = "scorecard.md"
#: The columns of claims.csv, in order.
CLAIM_COLUMNS = (
    "experiment",
    "claim",
    "verdict",
    "simulated",
    "published",
    "interval",
    "reason",
)
#: At most this many compared quantities per claim in claims.csv (the evidence has all).
_MAX_COMPARED = 6


@dataclass(frozen=True)
class Counts:
    judged: int
    reproduced: int
    distinct: int
    distinct_reproduced: int


def counts(reps: Sequence[Reproduction]) -> Counts:
    """Verdicts judged and reproduced, and distinct claims (by claim ID) reproduced."""
    verdicts = [v for rep in reps for v in rep.verdicts]
    by_claim: dict[str, bool] = {}
    for v in verdicts:
        by_claim[v.claim.id] = by_claim.get(v.claim.id, True) and v.reproduced
    return Counts(
        judged=len(verdicts),
        reproduced=sum(v.reproduced for v in verdicts),
        distinct=len(by_claim),
        distinct_reproduced=sum(by_claim.values()),
    )


def _interval(x: float) -> str:
    if isinstance(x, Estimate) and x.n > 1 and math.isfinite(x.lo):
        return f"{num(x.lo)}-{num(x.hi)}"
    return ""


def compared(v: ClaimResult) -> tuple[str, str, str]:
    """(simulated, published, interval) of a verdict, `; `-separated per quantity."""
    effects = [e for e in v.compared if e[0] == "effect"]
    sims, pubs, ivals = [], [], []
    if effects:
        for _, measured, published in effects[:_MAX_COMPARED]:
            sims.append(num(measured))
            pubs.append(num(published))
            ivals.append(_interval(measured))
    else:
        values = [x for e in v.compared if e[0] == "order" for x in e[1]]
        for x in values[:_MAX_COMPARED]:
            sims.append(num(x))
            ivals.append(_interval(x))
    more = len(effects) if effects else sum(len(e[1]) for e in v.compared if e[0] == "order")
    if more > _MAX_COMPARED:
        sims.append(f"(+{more - _MAX_COMPARED} more)")
    interval = "; ".join(i or "—" for i in ivals) if any(ivals) else ""
    return "; ".join(sims), "; ".join(pubs), interval


def _first_sentences(text: str, limit: int = 320) -> str:
    text = re.sub(r"\s+", " ", text.replace("**", "")).strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = cut.rfind(". ")
    return cut[: end + 1] if end > 80 else cut.rstrip() + "…"


def reason(v: ClaimResult) -> str:
    """The measured evidence, and for a miss the opening of its explanation."""
    out = v.evidence
    if not v.reproduced and v.explanation:
        out += " Cause: " + _first_sentences(v.explanation)
    return out


def _csv_field(text: str) -> str:
    if any(c in text for c in ',"\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def claims_csv(reps: Sequence[Reproduction]) -> str:
    """claims.csv: CLAIM_COLUMNS, one row per verdict of every experiment."""
    lines = [",".join(CLAIM_COLUMNS)]
    for rep in reps:
        for v in rep.verdicts:
            sim, pub, ival = compared(v)
            fields = [
                rep.experiment.id,
                v.claim.id,
                "reproduced" if v.reproduced else "not reproduced",
                sim,
                pub,
                ival,
                reason(v),
            ]
            lines.append(",".join(_csv_field(f) for f in fields))
    return "\n".join(lines) + "\n"


#: Said of the verdicts of `--quick` runs (`vmsched.reproduce.framework.GRIDS`).
_SMOKE = (
    " `--quick` is a smoke check (short runs, one seed): its verdicts show that every claim "
    "can be judged, and may differ from the full-length runs' (`vmsched reproduce --all`), "
    "which are the scorecard."
)


def scorecard_md(reps: Sequence[Reproduction]) -> str:
    """The scorecard as Markdown: the counts, then one table row per verdict."""
    c = counts(reps)
    mode = "quick" if any(r.quick for r in reps) else "full-length"
    seeds = sorted({len(r.seeds) for r in reps})
    lines = [
        "## Scorecard",
        "",
        f"**{c.distinct_reproduced} of {c.distinct} distinct claims reproduced** "
        f"({c.reproduced} of {c.judged} verdicts; a claim judged by two experiments counts "
        f"once, reproduced only if both verdicts hold). From the {mode} runs with "
        f"{'/'.join(str(s) for s in seeds)} "
        f"replication{'' if seeds == [1] else 's'} per configuration."
        + (_SMOKE if mode == "quick" else ""),
        "",
        "| experiment | claim | verdict | simulated | published | 95 % interval |",
        "|:---|:---|:---|---:|---:|---:|",
    ]
    for rep in reps:
        for v in rep.verdicts:
            sim, pub, ival = compared(v)
            verdict = "**reproduced**" if v.reproduced else "not reproduced"
            cells = [rep.experiment.id, v.claim.id, verdict, sim, pub or "—", ival or "—"]
            lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    return "\n".join(lines) + "\n"
