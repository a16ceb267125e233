"""tools/sweep_bench.py prints the sweeps' speed figures, docs/sweep.md (what they are is
checked here, not how fast: speed is measured by the benchmark on a quiet machine, never
by a test)."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO


def test_sweep_bench_prints_every_figure_with_its_target():
    r = subprocess.run(
        [sys.executable, str(REPO / "tools" / "sweep_bench.py"), "--runs", "4"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    out = r.stdout
    number = r"(\d+\.\d+)"
    assert re.search(rf"the engine alone: {number} s", out)
    assert re.search(rf"local, 1 worker\(s\): {number} s \(CPU: main process {number} s", out)
    assert re.search(rf"local, 2 worker\(s\): {number} s", out)
    assert re.search(rf"2 local workers over 1 \(target >= 1.8x\): {number}x \[(NOT )?met\]", out)
    for kind in ("wall", "CPU time"):
        assert re.search(rf"1 worker, {kind} \(target < 20 ms\): -?{number} ms \[(NOT )?met\]", out)
