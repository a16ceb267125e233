"""`vmsched examples`: the example scenarios come with the package (a link
in a checkout, the files themselves in a wheel) and can be copied to where
the docs' commands expect them."""

from __future__ import annotations

import tomllib

from conftest import REPO, SCENARIOS, vmsched_cmd
from vmsched.examples import EXAMPLES_DIR, examples


def test_the_package_reaches_every_example_scenario():
    assert sorted(p.name for p in examples().values()) == sorted(
        p.name for p in SCENARIOS.glob("*.toml")
    )
    # The wheel carries what the link points at (pyproject.toml's include).
    include = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["maturin"]["include"]
    assert {"path": "python/vmsched/scenarios/*.toml", "format": ["wheel", "sdist"]} in include
    assert EXAMPLES_DIR.resolve() == SCENARIOS.resolve()


def test_list_and_copy(tmp_path):
    proc = vmsched_cmd("examples")
    assert proc.returncode == 0
    assert "credit-three-vms: Credit: two weighted CPU hogs" in proc.stdout
    proc = vmsched_cmd("examples", "credit-cap", "--copy", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in (tmp_path / "scenarios").iterdir()] == ["credit-cap.toml"]
    run = vmsched_cmd("validate", "scenarios/credit-cap.toml", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    proc = vmsched_cmd("examples", "credit-capp")
    assert proc.returncode == 2
    assert "did you mean 'credit-cap'?" in proc.stderr
