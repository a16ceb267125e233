"""`vmsched top --xentop FILE|-`: a real host's `xentop -b` output, written
here in xentop's own format (its header and printf widths, tools/xentop/
xentop.c), shown with the same tables and bars as a simulation; malformed
lines are skipped with a warning, never a crash."""

from __future__ import annotations

import subprocess
import sys

from conftest import vmsched_cmd
from vmsched.monitor.xentop import HEADER, XentopFeed, parse_frames

#: xentop's column widths (fields[] default_width) for the header line.
WIDTHS = [10, 6, 10, 6, 10, 6, 10, 9, 5, 4, 8, 8, 4, 8, 8, 8, 10, 10, 4]


def header() -> str:
    return " ".join(f"{h:>{w}}" for h, w in zip(HEADER, WIDTHS, strict=True))


def domain_line(name, state, cpu_s, cpu_pct, mem_kb, vcpus, nettx=0, netrx=0, rd=0, wr=0):
    """One domain as xentop -b prints it (print_name ... print_ssid)."""
    maxmem = f"{'no limit':>10} {'n/a':>9}" if name == "Domain-0" else f"{mem_kb:10d} {6.3:9.1f}"
    return (
        f"{name:>10.10} {state} {cpu_s:10d} {cpu_pct:6.1f} {mem_kb:10d} {6.2:6.1f} {maxmem} "
        f"{vcpus:5d} {1:4d} {nettx:8d} {netrx:8d} {1:4d} {0:8d} {rd:8d} {wr:8d} "
        f"{rd * 8:10d} {wr * 8:10d} {0:4d}"
    )


def vcpu_line(secs: list[int]) -> str:
    return "VCPUs(sec): " + "".join(f" {i:2d}: {s:10d}s" for i, s in enumerate(secs))


def recording(frames: int = 3) -> str:
    lines = []
    for k in range(frames):
        lines.append(header())
        lines.append(domain_line("Domain-0", "-----r", 100 + k, 50.0 * bool(k), 4194304, 2))
        lines.append(vcpu_line([60 + k, 40]))
        lines.append(
            domain_line(
                "web", "--b---", 7 + 2 * k, 100.0 * bool(k), 1048576, 1, 10 * k, 20 * k, k, 2 * k
            )
        )
        lines.append(vcpu_line([7 + 2 * k]))
    return "\n".join(lines) + "\n"


def test_frames_in_xentops_format_are_read_column_by_column():
    frames = list(parse_frames(recording().splitlines(), "rec", warn=lambda m: None))
    assert len(frames) == 3
    web = frames[2][1]
    assert (web.name, web.state, web.cpu_s, web.cpu_pct, web.mem_kb, web.vcpus) == (
        "web",
        "--b---",
        11.0,
        100.0,
        1048576,
        1,
    )
    assert web.io == {"nettx_kb": 20, "netrx_kb": 40, "vbd_rd": 2, "vbd_wr": 4,
                      "vbd_rsect": 16, "vbd_wsect": 32}  # fmt: skip
    assert web.vcpu_s == {0: 11}
    dom0 = frames[0][0]
    assert dom0.maxmem_kb is None and dom0.maxmem_pct is None  # "no limit", "n/a"
    assert dom0.vcpu_s == {0: 60, 1: 40}


def test_the_feed_gives_bars_from_the_vcpu_lines(tmp_path):
    path = tmp_path / "xentop.txt"
    path.write_text(recording())
    feed = XentopFeed.open(str(path), interval_s=2, blocking=True)
    taken = []
    while not feed.finished:
        if feed.advance(feed.next_sample_ns):
            taken.append(feed.frame)
    assert [f.time_s for f in taken] == [0, 2, 4]
    web = taken[1].domains[1]
    # 2 s of running in a 2 s interval: 100 %.
    assert web.vcpus[0].util_pct == 100.0
    dom0 = taken[2].domains[0]
    assert [v.util_pct for v in dom0.vcpus] == [50.0, 0.0]
    assert dom0.vcpus[0].avg_pct == 50.0  # 2 s of 4 since the first frame


def test_malformed_lines_are_skipped_with_a_warning(tmp_path):
    text = recording(2).splitlines()
    text.insert(1, "this is not a domain")
    text.insert(3, domain_line("web", "--x---", 1, 1.0, 1, 1))  # a state xentop never prints
    text.insert(4, text[3].replace(" 1048576 ", " lots "))
    text.append(domain_line("cut", "-----r", 1, 1.0, 1, 1)[:40])  # cut short
    text.append("\x00\x01 binary")
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(text) + "\n")
    proc = vmsched_cmd("top", "--xentop", str(path), "--batch", "--interval", "2")
    assert proc.returncode == 0, proc.stderr
    warnings = proc.stderr.splitlines()
    assert len(warnings) == 5, proc.stderr
    assert all(w.startswith(f"vmsched: warning: {path}:") and "skipped" in w for w in warnings)
    assert proc.stdout.count("NAME ") == 2  # both frames, with their good lines
    assert "\nweb " in proc.stdout.split("NAME ")[1]


def test_live_through_a_pipe():
    """`xentop -b ... | vmsched top --xentop - --batch`."""
    proc = subprocess.run(
        [sys.executable, "-m", "vmsched", "top", "--xentop", "-", "--batch", "--interval", "2"],
        input=recording(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    frames = proc.stdout.split("vmsched top - ")[1:]
    assert len(frames) == 3
    assert "4.000 s of <stdin>, a real host" in frames[2]
    rows = {
        line.split()[0]: line.split() for line in frames[2].splitlines() if line.startswith("web")
    }
    assert rows["web"][:4] == ["web", "--b---", "11.00", "100.0"]
    assert "web.v0" in frames[2]


def test_a_source_is_required_and_only_one():
    assert vmsched_cmd("top", "--batch").returncode == 2
    proc = vmsched_cmd("top", "x.toml", "--xentop", "-", "--batch")
    assert proc.returncode == 2
    assert "expected a SCENARIO file or --xentop FILE|- (not both)" in proc.stderr
    proc = vmsched_cmd("top", "--xentop", "/nonexistent/x", "--batch")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
