"""The core's reading of a scenario's TOML (`_core.toml_json`) gives the tree
`tomllib` gives, with its keys in the same order, or declines the file.

`vmsched.scenario.parse_toml` takes the core's tree where there is one and
reads the file with `tomllib` otherwise (docs/cli.md, what the command
costs). A tree the core gives must be `tomllib`'s exactly: the same values and
types, and the keys in the same order (summary.json carries the scenario as
read). Where the two readers could differ (TOML 1.1's additions, which
`tomllib` refuses; dates; numbers JSON cannot carry; a table reopened after a
deeper header) the core must decline.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from vmsched import _core
from vmsched.scenario import MAX_DEPTH, parse_toml

ROOT = Path(__file__).resolve().parent.parent


def _same_tree(text: str) -> None:
    """The core's tree, if it gives one, is tomllib's, key order included."""
    got = _core.toml_json(text, MAX_DEPTH)
    if got is None:
        return
    want = tomllib.loads(text)  # must not raise: the core read it
    tree = json.loads(got)
    assert tree == want
    assert json.dumps(tree) == json.dumps(want)
    # Integers stay integers, floats floats (== would take 1 == 1.0).
    assert repr(tree) == repr(want)


def _toml_files() -> list[Path]:
    files = [p for d in ("scenarios", "docs", "tests") for p in (ROOT / d).rglob("*.toml")]
    return sorted(p for p in files if "target" not in p.parts)


def test_every_toml_file_of_the_repository_reads_the_same():
    files = _toml_files()
    assert len(files) >= 10
    read_by_core = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        _same_tree(text)
        read_by_core += _core.toml_json(text, MAX_DEPTH) is not None
    # The fast path is the common one: the standard scenarios take it.
    assert read_by_core >= len(list((ROOT / "scenarios").glob("*.toml")))


@pytest.mark.parametrize(
    "text",
    [
        "a = {x = 1,\n y = 2}\n",  # an inline table over lines (1.1)
        "a = {x = 1, }\n",  # a trailing comma in an inline table (1.1)
        'a = "\\e"\n',  # 1.1's escape character
        'a = "\\x41"\n',  # 1.1's \xHH
        "a = 07:32\n",  # a time without seconds (1.1)
        "a = 1979-05-27\n",  # a date: tomllib gives a Python date
        "a = 1979-05-27T07:32:00Z\n",
        "a = nan\n",
        "a = -inf\n",
        "a = 18446744073709551615\n",  # beyond i64: tomllib reads it
        'a = "é"\n',  # not ASCII
        "a = 1\r\nb = 2\r\n",  # carriage returns
        "[a.b]\nx = 1\n[c]\ny = 2\n[a]\nz = 3\n",  # [a] reopened after [a.b]
        "a = [" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n",
        "a = = 1\n",  # not TOML at all
    ],
)
def test_the_core_declines_what_tomllib_could_read_otherwise(text):
    assert _core.toml_json(text, MAX_DEPTH) is None


def test_a_reopened_table_keeps_the_place_of_its_first_key():
    text = "[a.b]\nx = 1\n[c]\ny = 2\n[a]\nz = 3\n"
    tree = parse_toml(text, "f.toml")
    assert list(tree) == ["a", "c"]
    assert list(tree["a"]) == ["b", "z"]


_KEYS = ["a", "b", "c", "name", "x-y", "k_1", '"quoted key"', "'lit'", '"a.b"']
_STRINGS = ['"plain"', '""', '"tab\\tnew\\nline \\u00e9 \\U0001F600 \\\\ \\""', "'C:\\xen'",
            '"""multi\nline"""', "'''raw\nlines'''", '"""\\\n  folded"""']  # fmt: skip
_NUMBERS = ["0", "-17", "+3", "1_000", "0x1F", "0o17", "0b101", "9223372036854775807",
            "-9223372036854775808", "9223372036854775808", "1.5", "-0.0", "6.02e23", "1e-7",
            "3_141.5_9", "inf", "nan", "1e400", "0.1", "5e-324"]  # fmt: skip


def _scalar(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.35:
        return rng.choice(_STRINGS)
    if kind < 0.8:
        return rng.choice(_NUMBERS)
    if kind < 0.9:
        return rng.choice(["true", "false"])
    return rng.choice(["1979-05-27", "07:32:00", "1979-05-27T00:32:00-07:00"])


def _value(rng: random.Random, depth: int) -> str:
    kind = rng.random()
    if depth > 3 or kind < 0.6:
        return _scalar(rng)
    if kind < 0.8:
        items = [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
        sep = rng.choice([", ", ",\n  "])
        tail = rng.choice(["", ",", "\n"])
        return "[" + sep.join(items) + tail + "]"
    pairs = [f"{rng.choice(_KEYS)} = {_value(rng, depth + 1)}" for _ in range(rng.randrange(3))]
    return "{" + ", ".join(pairs) + rng.choice(["", ","]) + "}"


def _document(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randrange(1, 12)):
        kind = rng.random()
        key = ".".join(rng.choice(_KEYS) for _ in range(rng.randrange(1, 3)))
        if kind < 0.2:
            lines.append(f"[{key}]")
        elif kind < 0.3:
            lines.append(f"[[{key}]]")
        elif kind < 0.35:
            lines.append("# a comment")
        else:
            lines.append(f"{key} = {_value(rng, 0)}" + rng.choice(["", "  # note"]))
    return "\n".join(lines) + "\n"


def _mutate(rng: random.Random, text: str) -> str:
    i = rng.randrange(len(text) + 1)
    op = rng.random()
    if op < 0.4 and text:
        return text[:i] + text[i + 1 :]
    if op < 0.8:
        return text[:i] + rng.choice("[]{}=,.\"'\n #\\x0e") + text[i:]
    j = rng.randrange(len(text) + 1)
    return text[: min(i, j)] + text[max(i, j) :]


def test_random_documents_read_the_same_or_are_declined():
    """Random documents (valid and not: reopened tables, dotted keys, arrays
    of tables, every kind of value, then random edits): wherever the core
    gives a tree, it is tomllib's. Many are read by the core, so the
    comparison is not empty."""
    rng = random.Random(20261127)
    compared = 0
    for _ in range(4000):
        text = _document(rng)
        for _ in range(rng.randrange(3)):
            text = _mutate(rng, text)
        _same_tree(text)
        compared += _core.toml_json(text, MAX_DEPTH) is not None
    assert compared > 400


def test_run_loads_neither_tomllib_nor_typing_nor_pathlib(tmp_path):
    """`vmsched run --out` of a standard scenario reads it without tomllib,
    and loads neither `typing` nor `pathlib` (the start-up this saves is in
    docs/cli.md); its files are written all the same."""
    code = (
        "import sys; from vmsched import cli\n"
        "status = cli.main(sys.argv[1:])\n"
        "print(status, sorted(m for m in ('tomllib', 'typing', 'datetime', 'pathlib') "
        "if m in sys.modules))\n"
    )
    scenario = ROOT / "scenarios" / "credit-three-vms.toml"
    out = tmp_path / "out"
    argv = ["run", str(scenario), "--duration-s", "6", "--out", f"{out}/"]
    # As a user's pipe has it: no COLUMNS or FORCE_COLOR, which hand the
    # table to rich (and rich loads typing).
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True, env=env
    )
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "0 []"
    assert lines[-2] == f"results in {out}/ (summary.json, timeseries.parquet)"
    assert sorted(p.name for p in out.iterdir()) == ["summary.json", "timeseries.parquet"]
