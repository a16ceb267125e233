"""Hypothesis on the Python loader and the command line: whatever the
scenario holds (any tree of tables, lists, strings, numbers with NaN and
infinities, huge integers, dates, deep nesting; or TOML text with bytes
changed), the answer is a scenario or a ScenarioError of one line, and the
command line exits 0 or 2 with at most one error line, never 1 (a bug).

A short run here (derandomized, so CI sees the same inputs every time);
`VMSCHED_FUZZ_EXAMPLES=N` makes it as long as wanted (`make fuzz`)."""

from __future__ import annotations

import datetime
import io
import math
import os
import tomllib
from contextlib import redirect_stderr, redirect_stdout

import pytest
import vmsched
from conftest import BASE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vmsched import cli
from vmsched.errors import ScenarioError

EXAMPLES = int(os.environ.get("VMSCHED_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize="VMSCHED_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)

BASE_TREE = tomllib.loads(BASE)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e400, -0.0, 1e-320]),
    st.text(max_size=12),
    st.sampled_from(["credit", "cpu-hog", "duty-cycle", "/", "/dev/zero", "0-1", "all", ""]),
    st.dates(),
    st.times(),
)
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


def paths(tree, prefix=()):
    """Every (path, value) in a tree."""
    yield prefix, tree
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from paths(v, (*prefix, i))


BASE_PATHS = [p for p, _ in paths(BASE_TREE) if p]


def replaced(tree, path, value):
    import copy

    out = copy.deepcopy(tree)
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def nest(value, depth: int):
    for _ in range(depth):
        value = [value]
    return value


def accepts_or_refuses_in_one_line(data) -> None:
    try:
        vmsched.Scenario(data, source="fuzz.toml").validate()
    except ScenarioError as exc:
        text = str(exc)
        assert text and "\n" not in text and "\r" not in text, text
        assert "bug" not in text, text


@SETTINGS
@given(st.sampled_from(BASE_PATHS), trees)
def test_any_value_anywhere_in_a_scenario(path, value):
    accepts_or_refuses_in_one_line(replaced(BASE_TREE, path, value))


@SETTINGS
@given(trees)
def test_any_tree_as_a_scenario(tree):
    accepts_or_refuses_in_one_line(tree if isinstance(tree, dict) else {"host": tree})


@SETTINGS
@given(st.sampled_from(BASE_PATHS), st.integers(min_value=50, max_value=3000))
def test_deep_nesting(path, depth):
    accepts_or_refuses_in_one_line(replaced(BASE_TREE, path, nest(1, depth)))


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@settings(SETTINGS, max_examples=max(EXAMPLES // 3, 10))
@given(
    st.binary(max_size=8).map(lambda b: b.decode("latin-1")),
    st.integers(min_value=0, max_value=len(BASE)),
    st.integers(min_value=0, max_value=8),
)
def test_validate_mutated_toml_text(tmp_path, insert, at, cut):
    """`vmsched validate` on the base scenario's text with bytes inserted and cut."""
    text = BASE[:at] + insert + BASE[at + cut :]
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    code, out, err = run_cli("validate", str(path))
    assert code in (0, 2), err
    assert len(err.splitlines()) == (code == 2), err
    if code == 2:
        assert err.startswith(f"vmsched: error: {path}: "), err


@settings(SETTINGS, max_examples=max(EXAMPLES // 5, 10))
@given(
    st.one_of(
        st.sampled_from(["nan", "inf", "-inf", "1e400", "0", "-1", "1e-9", "0.01"]),
        st.floats().map(repr),
    )
)
def test_run_with_any_duration(tmp_path, duration):
    code, _out, err = run_cli("run", str(_base_file(tmp_path)), "--duration-s", duration)
    assert code in (0, 2), err
    assert len(err.splitlines()) == (code == 2), err


def _base_file(tmp_path):
    path = tmp_path / "base.toml"
    path.write_text(BASE.replace("duration_s = 2", "duration_s = 0.05"))
    return path


@pytest.mark.parametrize(
    "value",
    [datetime.date(1979, 5, 27), math.nan, -math.inf, 2**80, "\ud800", object()],
    ids=["date", "nan", "-inf", "2**80", "surrogate", "object"],
)
def test_values_json_cannot_carry(value):
    with pytest.raises(ScenarioError, match=r"^fuzz\.toml: run\.duration_s: "):
        vmsched.Scenario(
            replaced(BASE_TREE, ("run", "duration_s"), value), source="fuzz.toml"
        ).validate()
