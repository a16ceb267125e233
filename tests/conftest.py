"""Shared helpers for the tests: the repository's paths, scenario files written
on the fly, and the command line run as a user runs it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"
DOCS = REPO / "docs"


def published_numbers() -> dict[tuple[str, str, str, str], str]:
    """docs/reference/published-numbers.md as {(experiment, scheduler, setting, metric):
    number}: the numbers the papers publish, written down once in the repository."""
    out: dict[tuple[str, str, str, str], str] = {}
    exp = None
    for line in (DOCS / "reference" / "published-numbers.md").read_text().splitlines():
        if m := re.match(r"^### `([\w-]+)`$", line):
            exp = m[1]
        elif exp and line.startswith("| ") and not line.startswith("| scheduler "):
            sched, setting, metric, number, _ = (c.strip() for c in line.strip("|").split("|"))
            key = (exp, sched, "" if setting == "—" else setting, metric)
            assert key not in out, key
            out[key] = number
    return out


#: A small valid scenario; tests change one thing in it.
BASE = """\
[host]
pcpus = 2

[scheduler]
name = "credit"

[run]
duration_s = 2

[[domain]]
name = "vm1"
weight = 512
[domain.workload]
kind = "cpu-hog"

[[domain]]
name = "vm2"
[domain.workload]
kind = "duty-cycle"
util_pct = 20
"""


def vmsched_cmd(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m vmsched ARGS`, with stdin closed and output captured."""
    return subprocess.run(
        [sys.executable, "-m", "vmsched", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def scenario_file(tmp_path: Path):
    """Write scenario text to a file; returns its path."""

    def write(text: str = BASE, name: str = "scenario.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture(autouse=True)
def _user_schedulers_scoped():
    """A user scheduler a test registers is unregistered when the test ends, so
    that no test sees another's in the catalogue (`vmsched.scheduler.scope`)."""
    from vmsched.scheduler import scope

    with scope():
        yield
