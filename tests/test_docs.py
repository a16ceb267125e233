"""The docs say what the code does: generated tables are current, every key
the validator accepts is documented with its range and default, every number
of summary.json and timeseries.parquet is defined, every command and option
is described, and the README starts with its two commands."""

from __future__ import annotations

import copy
import importlib.util
import re

import pytest
import vmsched
from conftest import DOCS, REPO
from vmsched import cli

SCENARIO = {
    "host": {"pcpus": 2},
    "scheduler": {"name": "credit"},
    "run": {"duration_s": 1},
    "domain": [{"name": "vm1", "workload": {"kind": "cpu-hog"}}],
}


def section(page: str, heading: str) -> str:
    """The text under `heading` up to the next heading of any level."""
    text = (DOCS / page).read_text()
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    following = re.search(r"^#{1,6} ", text[start:], flags=re.MULTILINE)
    return text[start : start + following.start()] if following else text[start:]


def table_rows(text: str) -> dict[str, list[str]]:
    """The rows of the first table whose first column is a `key`."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\| `([a-z0-9_]+)` \|(.*)\|$", line)
        if m:
            rows[m[1]] = [c.strip() for c in m[2].split(" | ")]
    return rows


def validation_error(tree: dict) -> vmsched.ScenarioError:
    with pytest.raises(vmsched.ScenarioError) as e:
        vmsched.Scenario(tree).validate()
    return e.value


def topology(tree: dict) -> dict:
    tree["host"] = {"topology": {"cores": 2}}
    return tree["host"]["topology"]


# Each documented table, and where it lives in a scenario tree.
TABLES = {
    "## Top level": lambda t: t,
    "## `[host]`": lambda t: t["host"],
    "### `[host.topology]`": topology,
    "## `[run]`": lambda t: t["run"],
    "## `[[domain]]`": lambda t: t["domain"][0],
}


def with_key(heading: str, key: str, value) -> dict:
    """The valid scenario with `key = value` added to the table of `heading`."""
    tree = copy.deepcopy(SCENARIO)
    TABLES[heading](tree)[key] = value
    return tree


def test_generated_tables_are_current():
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "tools" / "gen_docs.py")
    gen_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_docs)
    assert gen_docs.problems(vmsched.catalogue()) == [], "run: python tools/gen_docs.py"


@pytest.mark.parametrize("heading", list(TABLES))
def test_scenario_reference_lists_exactly_the_keys_the_validator_knows(heading):
    message = validation_error(with_key(heading, "zzz", 1)).message
    known = set(re.search(r"expected one of ([\w, ]+)", message)[1].split(", "))
    assert set(table_rows(section("scenarios.md", heading))) == known


def test_profile_keys_are_documented():
    tree = copy.deepcopy(SCENARIO)
    tree["host"]["profile"] = {"zzz": 1}
    message = validation_error(tree).message
    numbers = set(re.search(r"a platform profile takes ([\w, ]+)", message)[1].split(", "))
    documented = set(table_rows(section("scenarios.md", "### Profiles")))
    assert documented == numbers | {"name", "description"}


RANGE = re.compile(r"^(integer|number), ([\d.]+)\.\.=([\d.]+)")


@pytest.mark.parametrize("heading", [*TABLES, "### Profiles"])
def test_documented_ranges_are_the_validators(heading):
    rows = table_rows(section("scenarios.md", heading))
    checked = 0
    for key, (type_, *_rest) in rows.items():
        m = RANGE.match(type_)
        if not m:
            continue
        if heading == "### Profiles":
            tree = with_key("## `[host]`", "profile", {"ctx_switch_ns": 1, "ipi_latency_ns": 1})
            tree["host"]["profile"][key] = "x"
        else:
            tree = with_key(heading, key, "x")
        message = validation_error(tree).message
        kind = "an integer" if m[1] == "integer" else "a number"
        bounds = rf"{re.escape(m[2])}\.\.={re.escape(m[3])}(?![\d.])"
        assert re.search(rf"expected {kind} in {bounds}", message), (key, message)
        checked += 1
    assert checked or heading == "## Top level"


def test_documented_run_defaults_are_the_validators():
    rows = table_rows(section("scenarios.md", "## `[run]`"))
    default = {key: float(cells[1].strip("`")) for key, cells in rows.items()}
    tree = copy.deepcopy(SCENARIO)
    del tree["run"]
    r = vmsched.run(tree)
    assert r.summary["duration_s"] == default["duration_s"]
    assert r.summary["warmup_s"] == default["warmup_s"]
    assert r.summary["seed"] == default["seed"]
    times = sorted(r.timeseries["time_s"].unique())
    assert (times[1] - times[0]) * 1000 == pytest.approx(default["sample_ms"])


def key_paths(value, prefix: str = "") -> set[str]:
    """`domains.vcpus.wake_latency_us.p50`-style paths of every key."""
    opaque = {"scheduler_params", "scheduler_counters", "sched", "workload"}
    paths = set()
    if isinstance(value, dict):
        for k, v in value.items():
            paths.add(f"{prefix}{k}")
            if k not in opaque:
                paths |= key_paths(v, f"{prefix}{k}.")
    elif isinstance(value, list):
        for item in value:
            paths |= key_paths(item, prefix)
    return paths


def test_metrics_reference_defines_every_key_and_column():
    r = vmsched.run(REPO / "scenarios" / "credit-three-vms.toml")
    text = (DOCS / "metrics.md").read_text()
    documented = set(re.findall(r"^(?:\| |#+ )`(\w+)`", text, flags=re.MULTILINE))
    for path in key_paths(r.summary):
        if path.startswith("scenario."):
            continue  # the echoed scenario: its keys are the scenario reference's (scenarios.md)
        *_, key = path.split(".")
        if path.endswith(("wake_latency_us.p50", "p95", "p99", "max", "mean")):
            assert f"`{key}`" in section("metrics.md", "### `domains[i].vcpus`")
        else:
            assert key in documented, f"{path} is not defined in docs/metrics.md"
    for column in r.timeseries.columns:
        assert column in table_rows(section("metrics.md", "## `timeseries.parquet`"))


def test_workload_metrics_are_defined():
    text = (DOCS / "workloads.md").read_text()
    for w in vmsched.catalogue()["workloads"]:
        for metric in w["metrics"]:
            assert f"| `{metric}` |" in text, metric


def test_cli_reference_describes_every_command_and_option():
    text = (DOCS / "cli.md").read_text()
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name, sub in commands.items():
        assert f"## `vmsched {name}`" in text, name
        if name == "alert":  # its options are its module's, listed by --help
            continue
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in text or f"{option} " in text, (name, option)
    for status in ("| 0 |", "| 1 |", "| 2 |"):
        assert status in text


def test_readme_starts_with_its_two_commands():
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```\w*\n(.*?)```", text, flags=re.DOTALL)
    assert blocks[0].split("#")[0].strip() == "make demo"
    assert blocks[1].split("#")[0].strip() == "make test"
    before = text[: text.index("```")].strip()
    assert before == "# vmsched", "nothing but the title before the two commands"
    ci = (REPO / ".ci" / "run").read_text()
    assert ci.rstrip().endswith("exec make test")
    assert (REPO / ".ci" / "run").stat().st_mode & 0o111


def test_readme_links_resolve():
    text = (REPO / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        assert (REPO / target).exists(), target
