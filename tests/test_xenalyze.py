"""Xen's own trace analyser reads `--xentrace` output and agrees with
summary.json: the running, runnable and blocked time of every VCPU, as
`xenalyze --summary` totals them from the runstate records, equal the
summary's, less what xenalyze cannot see (before a VCPU's first record and
after the trace's last), to its printed precision (10 ms).

Needs `xenalyze`; where it is not installed the test skips with a notice.
(Debian's xen-utils-common has it; `make xenalyze` installs it.)"""

from __future__ import annotations

import glob
import json
import re
import shutil
import subprocess

import pytest
from conftest import BASE, vmsched_cmd


def find_xenalyze() -> str | None:
    found = shutil.which("xenalyze")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/lib/xen-*/bin/xenalyze"))
    return candidates[-1] if candidates else None


#: `|-- Domain 1 --|`, then per VCPU `-- v0 --`, ` Runstates:` and lines
#: `   running:  COUNT  SECONDSs  PCT% ...` (print_cycle_summary).
DOMAIN = re.compile(r"^\|-- Domain (\d+) --\|")
VCPU = re.compile(r"^-- v(\d+) --")
STATE = re.compile(r"^\s+(running|runnable|blocked):\s+\d+\s+([\d.]+)s")


def runstate_seconds(text: str) -> dict[tuple[int, int, str], float]:
    out: dict[tuple[int, int, str], float] = {}
    dom = vcpu = None
    for line in text.splitlines():
        if m := DOMAIN.match(line):
            dom, vcpu = int(m[1]), None
        elif m := VCPU.match(line):
            vcpu = int(m[1])
        elif (m := STATE.match(line)) and dom is not None and vcpu is not None:
            out.setdefault((dom, vcpu, m[1]), float(m[2]))
    return out


@pytest.mark.parametrize("warmup", ["\nwarmup_s = 1", ""], ids=["warm-up", "no-warm-up"])
def test_xenalyze_agrees_with_the_summary(scenario_file, tmp_path, warmup):
    xenalyze = find_xenalyze()
    if xenalyze is None:
        pytest.skip("xenalyze is not installed (`make xenalyze`); nothing to compare with")
    out = tmp_path / "out"
    # Without a warm-up the trace starts at simulated time 0, whose TSC is
    # one second after the host's power-on (xenalyze refuses a first TSC of 0).
    path = scenario_file(BASE.replace("duration_s = 2", "duration_s = 20" + warmup))
    proc = vmsched_cmd("run", str(path), "--out", str(out), "--xentrace")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    # The trace's TSC runs at xenalyze's default --cpu-hz (docs/trace.md).
    analysed = subprocess.run(
        [xenalyze, "--summary", str(out / "trace.xentrace")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert analysed.returncode == 0, analysed.stderr
    seconds = runstate_seconds(analysed.stdout)
    assert seconds, f"no runstate totals found in xenalyze's output:\n{analysed.stdout[:3000]}"
    total = float(re.search(r"Total time: ([\d.]+) seconds", analysed.stdout)[1])
    # xenalyze counts from the first record to the last: a VCPU's state
    # before its first record and after the trace's last one is not in its
    # totals. Here that is at most one period of the duty-cycle VM (100 ms).
    slack = 0.1
    assert summary["measured_s"] - slack <= total <= summary["measured_s"]
    for d in summary["domains"]:
        for v in d["vcpus"]:
            for state in ("running", "runnable", "blocked"):
                got = seconds.get((d["id"], v["vcpu"], state), 0.0)
                want = v[f"{state}_ns"] / 1e9
                assert want - slack - 0.01 <= got <= want + 0.01, (d["name"], v["vcpu"], state)
