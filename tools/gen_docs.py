"""Regenerate the parts of docs/ that come from the code.

Parameter tables are generated from `vmsched.catalogue()`, the same
declarations that drive validation and `vmsched schedulers`/`workloads`, so the
docs cannot drift from the code. A generated block sits between

    <!-- BEGIN GENERATED key -->
    <!-- END GENERATED -->

where `key` is `workload:KIND`, `scheduler:NAME` or `profiles`. Everything
outside the blocks is written by hand.

    python tools/gen_docs.py           rewrite the blocks in place
    python tools/gen_docs.py --check   exit 1 if a block is stale or missing
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import vmsched

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(
    r"(?P<begin><!-- BEGIN GENERATED (?P<key>[\w:.-]+) -->\n)"
    r"(?P<body>.*?)"
    r"(?P<end><!-- END GENERATED -->)",
    re.DOTALL,
)


def _cell(text: str) -> str:
    return text.replace("|", r"\|") if text else "—"


def params_table(params: list[dict[str, Any]], *, scope: bool) -> str:
    """A Markdown table of parameter declarations."""
    if not params:
        return "No parameters.\n"
    head = ["parameter"] + (["set in"] if scope else []) + ["unit", "default", "range", "meaning"]
    where = {"global": "`[scheduler]`", "domain": "`[domain.sched]`"}
    rows = [
        [f"`{p['name']}`"]
        + ([where.get(p["scope"], p["scope"])] if scope else [])
        + [_cell(p["unit"]), f"`{p['default']}`", _cell(p["range"]), _cell(p["doc"])]
        for p in params
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def render(key: str, catalogue: dict[str, Any]) -> str:
    """The body of the generated block `key`."""
    kind, _, name = key.partition(":")
    if kind == "workload":
        w = _find(catalogue["workloads"], "kind", name, key)
        metrics = ", ".join(f"`{m}`" for m in w["metrics"]) or "none"
        return f"{w['summary']}\n\n{params_table(w['params'], scope=False)}\nMetrics: {metrics}.\n"
    if kind == "scheduler":
        s = _find(catalogue["schedulers"], "name", name, key)
        return f"{s['summary']}\n\n{params_table(s['params'], scope=True)}"
    if key == "profiles":
        return "".join(f"- `{p}`\n" for p in catalogue["profiles"])
    raise KeyError(f"unknown generated block {key!r}")


def _find(items: list[dict[str, Any]], field: str, name: str, key: str) -> dict[str, Any]:
    for item in items:
        if item[field] == name:
            return item
    raise KeyError(f"generated block {key!r} names nothing in vmsched.catalogue()")


def required_blocks(catalogue: dict[str, Any]) -> dict[str, set[str]]:
    """Which page must hold a block for what: every workload and scheduler."""
    return {
        "workloads.md": {f"workload:{w['kind']}" for w in catalogue["workloads"]},
        # The built-in schedulers: one registered from Python has no block here.
        "scenarios.md": {f"scheduler:{s['name']}" for s in catalogue["schedulers"] if s["builtin"]}
        | {"profiles"},
    }


def regenerate(text: str, catalogue: dict[str, Any]) -> str:
    """`text` with every generated block rewritten."""
    return BLOCK.sub(
        lambda m: m["begin"] + render(m["key"], catalogue) + m["end"],
        text,
    )


def problems(catalogue: dict[str, Any]) -> list[str]:
    """What is stale or missing in docs/, in words; empty when all is current."""
    found = []
    for page, keys in required_blocks(catalogue).items():
        text = (DOCS / page).read_text(encoding="utf-8")
        present = {m["key"] for m in BLOCK.finditer(text)}
        found += [f"docs/{page}: no generated block for {k}" for k in sorted(keys - present)]
        if regenerate(text, catalogue) != text:
            found.append(f"docs/{page}: generated blocks are stale")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report; exit 1 if stale")
    args = parser.parse_args(argv)
    catalogue = vmsched.catalogue()
    if not args.check:
        for page in required_blocks(catalogue):
            path = DOCS / page
            path.write_text(
                regenerate(path.read_text(encoding="utf-8"), catalogue), encoding="utf-8"
            )
    found = problems(catalogue)
    for line in found:
        print(line, file=sys.stderr)
    if found and args.check:
        print("run: python tools/gen_docs.py", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
