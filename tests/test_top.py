"""`vmsched top`: the live monitor driven through Textual's pilot (keys
pressed, the screen read back), through a real terminal (tmux), and its
`--batch` frames checked against `vmsched run` of the same scenario."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import time

import pytest
import vmsched
from conftest import BASE, REPO, SCENARIOS, vmsched_cmd
from vmsched import cli
from vmsched.errors import InternalError
from vmsched.monitor import Monitor
from vmsched.monitor.app import TopApp
from vmsched.monitor.model import IO_COLUMNS, sort_keys
from vmsched.monitor.text import frame_text

NS = 1_000_000_000


def two_hogs(duration_s: float = 1000, **run) -> vmsched.Scenario:
    """Two CPU-bound domains of equal weight on one PCPU under Credit."""
    sc = vmsched.Scenario(pcpus=1, scheduler="credit", duration_s=duration_s, **run)
    sc.add_domain("dom1", workload="cpu-hog")
    sc.add_domain("dom2", workload="cpu-hog")
    return sc


def drive(app: TopApp, script, size=(120, 40)) -> None:
    """Run `app` headless and `await script(pilot)` against it."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            # On a loaded machine the first frame may not be composed yet
            # when the pilot is handed over: wait for it (at most 20 s).
            for _ in range(400):
                if app.query("#header"):
                    break
                await pilot.pause(0.05)
            await script(pilot)
            assert app.is_running, "the app is still up after the script"

    asyncio.run(main())


def screen(app: TopApp) -> str:
    """What the app's widgets show, line by line, as plain text."""
    lines = []
    for wid in ("#header", "#message", "#domains", "#vcpus"):
        w = app.query_one(wid)
        lines += [w.render_line(y).text.rstrip() for y in range(w.size.height)]
        lines.append("")
    return "\n".join(lines)


def domain_rows(text: str) -> dict[str, list[str]]:
    """The domain table's rows on a screen or in a batch frame, by NAME."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["NAME"])
    rows = {}
    for line in lines[start + 1 :]:
        cells = line.split()
        if not cells:
            break
        rows[cells[0]] = cells
    return rows


async def step(pilot, n: int = 1) -> None:
    for _ in range(n):
        await pilot.press("n")


async def prompt(pilot, key: str, domain: str, value: str) -> None:
    """Press `key` (w or a), answer the domain and the value questions."""
    await pilot.press(key, *domain, "enter", *value, "enter")


# ---------------------------------------------------------------- the screen


def test_screen_shows_header_domains_and_vcpu_bars():
    m = Monitor.start(vmsched.load(SCENARIOS / "credit-three-vms.toml"), 0.5)
    app = TopApp(m, speed=100)

    async def script(pilot):
        while m.frame.time_s < 2:
            await pilot.pause(0.02)
        await pilot.press("space")
        text = screen(app)
        frame = m.frame
        assert f"vmsched top - {frame.time_s:.3f} s of 60 s simulated" in text
        assert "scheduler credit" in text and "CPUs: 2" in text
        assert re.search(r"4 domains: \d running, \d blocked, 0 paused", text)
        rows = domain_rows(text)
        assert set(rows) == {"dom0", "batch-gold", "batch-bronze", "web"}
        for d in frame.domains:
            name, state, cpu_s, cpu_pct, vcpus, *_ = rows[d.name]
            assert (state, float(cpu_s), float(cpu_pct), int(vcpus)) == (
                d.state,
                round(d.cpu_s, 2),
                round(d.cpu_pct, 1),
                1,
            )
        bars = {line.split()[0]: line for line in text.splitlines() if ".v0 " in line}
        assert set(bars) == {"dom0.v0", "batch-gold.v0", "batch-bronze.v0", "web.v0"}
        # batch-bronze gets about 80 % of a PCPU (it shares its PCPU with
        # web): 15 of 20 bar cells and the mark.
        assert re.search(r"\[#{14,15}\|?-*\]", bars["batch-bronze.v0"])
        assert "PAUSED" in text

    drive(app, script)


# ---------------------------------------------------------------- keys


def test_space_and_p_pause_and_resume_the_simulation():
    m = Monitor.start(two_hogs(), 0.1)
    app = TopApp(m, speed=10)

    async def script(pilot):
        await pilot.pause(0.2)
        await pilot.press("space")
        assert app.paused
        frozen = m.now_ns
        await pilot.pause(0.3)
        assert m.now_ns == frozen, "no simulated time passes while paused"
        assert "PAUSED" in screen(app)
        await pilot.press("space")
        assert not app.paused
        await pilot.pause(0.3)
        assert m.now_ns > frozen
        await pilot.press("p")
        assert app.paused
        frozen = m.now_ns
        await pilot.pause(0.2)
        assert m.now_ns == frozen

    drive(app, script)


def test_speed_keys_change_the_pace():
    m = Monitor.start(two_hogs(duration_s=1_000_000), 0.1)
    app = TopApp(m, speed=1)

    async def advanced(pilot, sim0: int, at_least_ns: float, limit_s: float = 60.0) -> float:
        """Wall seconds until the simulation is `at_least_ns` past `sim0`:
        progress is waited for, not timed, so a loaded machine only slows
        the test (a stalled pace still fails it, at `limit_s`)."""
        wall0 = time.perf_counter()
        while m.now_ns - sim0 < at_least_ns:
            assert time.perf_counter() - wall0 < limit_s, "the simulation stalled"
            await pilot.pause(0.05)
        return time.perf_counter() - wall0

    async def script(pilot):
        await pilot.press("plus")
        assert app.speed == 10
        assert "speed 10x" in screen(app)
        # Paced: never ahead of 10 simulated s per wall s since the pace was
        # set (at the key), and not stalled.
        await advanced(pilot, m.now_ns, 1 * NS)
        assert m.now_ns <= app.pace_sim_ns + 10 * (time.perf_counter() - app.pace_wall) * NS
        # The keys step through 1, 10, 100, max and stop at both ends (paused
        # meanwhile: Textual's pilot waits for a busy app to go idle).
        await pilot.press("space", "plus", "plus")
        assert app.speed == float("inf") and "speed max" in screen(app)
        await pilot.press("plus")
        assert app.speed == float("inf")
        await pilot.press("minus")
        assert app.speed == 100 and "speed 100x" in screen(app)
        await pilot.press("minus", "minus", "minus")
        assert app.speed == 1 and "speed 1x" in screen(app)
        await pilot.press("plus", "plus", "plus", "space")
        # At max the pace sets no bound: 50 simulated s come faster than
        # 10x's pace would give them.
        wall = await advanced(pilot, m.now_ns, 50 * NS)
        assert wall < 5.0, "max runs faster than 10x"

    drive(app, script)


def test_weight_key_changes_the_shares_from_then_on():
    m = Monitor.start(two_hogs(), 1.0)
    app = TopApp(m, speed=1)

    async def script(pilot):
        await pilot.press("space")
        await step(pilot, 5)
        before = m.shares()
        assert before["dom1"] / before["dom2"] == pytest.approx(1, abs=0.05)
        other = m.frame.domains[1].sched["weight"]
        await prompt(pilot, "w", "dom1", str(3 * other))
        assert not app.is_error(), app.message
        changed_at = m.shares()
        await step(pilot, 10)
        after = m.shares()
        weights = {d.name: d.sched["weight"] for d in m.frame.domains}
        assert weights == {"dom1": 3 * other, "dom2": other}
        gained = {k: after[k] - changed_at[k] for k in after}
        assert gained["dom1"] / gained["dom2"] == pytest.approx(3, rel=0.05)
        # What the screen says over the last interval agrees.
        rows = domain_rows(screen(app))
        assert float(rows["dom1"][3]) == pytest.approx(75, abs=2)
        assert float(rows["dom2"][3]) == pytest.approx(25, abs=2)
        assert f"weight={3 * other}" in rows["dom1"][-1]

    drive(app, script)


def test_adjust_key_applies_xl_style_changes():
    m = Monitor.start(two_hogs(), 1.0)
    app = TopApp(m, speed=1)

    async def script(pilot):
        await pilot.press("space")
        await prompt(pilot, "a", "dom1", "cap=50")
        assert not app.is_error(), app.message
        assert "dom1: cap=50" in screen(app)
        await step(pilot, 3)
        caps = {d.name: (d.sched["cap"], d.cpu_pct) for d in m.frame.domains}
        assert caps["dom1"][0] == 50 and caps["dom1"][1] <= 50.5
        await prompt(pilot, "a", "dom1", "pause=true")
        await step(pilot, 2)
        rows = domain_rows(screen(app))
        assert rows["dom1"][1][4] == "p" and float(rows["dom1"][3]) == 0
        assert rows["dom2"][1] == "-----r" and float(rows["dom2"][3]) == 100
        assert "1 paused" in screen(app)
        await prompt(pilot, "a", "dom1", "pause=false")
        await step(pilot, 2)
        rows = domain_rows(screen(app))
        assert rows["dom1"][1][4] == "-" and float(rows["dom1"][3]) > 0

    drive(app, script)


BAD_PROMPT_INPUT = [
    # key, domain answer, value answer (None: never asked), what the error says
    ("w", "vm9", None, 'unknown domain "vm9"'),
    ("w", "dom1", "x", '"x" is not a weight'),
    ("w", "dom1", "0", "adjust.weight"),
    ("a", "dom1", "cap", '"cap" is not key=value'),
    ("a", "dom1", "wieght=3", "did you mean 'weight'"),
    ("a", "dom1", "", "nothing to change"),
]


def test_bad_prompt_input_shows_an_error_line_and_changes_nothing():
    m = Monitor.start(two_hogs(), 1.0)
    app = TopApp(m, speed=1)

    async def script(pilot):
        await pilot.press("space")
        sched = [dict(d.sched) for d in m.frame.domains]
        for key, domain, value, expected in BAD_PROMPT_INPUT:
            case = (key, domain, value)
            await pilot.press(key, *domain, "enter")
            assert (app.prompt is not None) == (value is not None), case
            if value is not None:
                await pilot.press(*value, "enter")
            assert app.prompt is None, case
            assert app.is_error() and expected in app.message, (case, app.message)
            assert app.message[:40] in screen(app), case
            assert [d.sched for d in m.frame.domains] == sched, case
        await step(pilot)  # and it still works
        assert m.frame.time_s >= 1 and not app.is_error()

    drive(app, script)


def test_escape_cancels_the_prompt_and_keys_work_again():
    m = Monitor.start(two_hogs(), 1.0)
    app = TopApp(m, speed=1)

    async def script(pilot):
        await pilot.press("space", "w", "d", "o")
        assert app.prompt == ("weight", None)
        await pilot.press("escape")
        assert app.prompt is None
        await pilot.press("space")
        assert not app.paused, "space reaches the app again"

    drive(app, script)


def test_sort_key_cycles_the_columns():
    m = Monitor.start(vmsched.load(SCENARIOS / "credit-three-vms.toml"), 0.5)
    app = TopApp(m, speed=1)

    async def script(pilot):
        await pilot.press("space")
        await step(pilot, 2)
        order = list(domain_rows(screen(app)))
        assert order == ["dom0", "batch-gold", "batch-bronze", "web"]
        await pilot.press("s")
        assert "sort: NAME" in screen(app)
        assert list(domain_rows(screen(app))) == sorted(order)
        await pilot.press("s", "s", "s")
        assert "sort: CPU(%)" in screen(app)
        rows = domain_rows(screen(app))
        pcts = [float(r[3]) for r in rows.values()]
        assert pcts == sorted(pcts, reverse=True) and list(rows)[0] == "batch-gold"
        await pilot.press(*"s" * (len(sort_keys(m.frame)) - 4))
        assert "sort: domain id" in screen(app), "back to the start"

    drive(app, script)


def test_step_key_needs_a_pause():
    m = Monitor.start(two_hogs(), 1.0)
    app = TopApp(m, speed=1)

    async def script(pilot):
        await pilot.press("n")
        assert app.is_error() and "while paused" in app.message

    drive(app, script)


def test_a_failing_simulation_ends_the_screen_with_the_error(monkeypatch):
    def broken(self, until_ns):
        raise InternalError("internal error: boom (this is a bug in vmsched)")

    m = Monitor.start(two_hogs(), 1.0)
    monkeypatch.setattr(Monitor, "advance", broken)
    app = TopApp(m, speed=1)

    async def main():
        async with app.run_test() as pilot:
            await pilot.pause(0.3)
            assert not app.is_running

    asyncio.run(main())
    assert isinstance(app.failure, InternalError) and app.return_code == 1


# ---------------------------------------------------------------- the model


def test_state_flags_and_counts_follow_the_vcpus():
    sc = two_hogs(duration_s=10)
    sc.add_domain("idle", workload="idle")
    sc.add_action(2.0, "dom1", pause=True).add_action(4.0, "dom1", pause=False)
    m = Monitor.start(sc, 1.0)
    seen_paused = False
    while not m.finished:
        m.advance(m.next_sample_ns)
        f = m.frame
        states = {d.name: d.state for d in f.domains}
        assert states["idle"] == "--b---"
        # One PCPU: exactly one VCPU is on it at any instant.
        assert f.count("r") == 1 and sum(d.running for d in f.domains) == 1
        paused = 2 < f.time_s <= 4
        assert (states["dom1"][4] == "p") == paused
        if paused:
            seen_paused = True
            assert states["dom2"] == "-----r"
            # dom1 runs on until its PCPU reschedules, an IPI (µs) after the pause.
            assert f.domains[0].cpu_pct == pytest.approx(0, abs=0.01)
            assert f.domains[1].cpu_pct == pytest.approx(100, abs=0.01)
        for d in f.domains:
            for v in d.vcpus:
                assert (v.state == "running") == d.running or len(d.vcpus) > 1
    assert seen_paused


def test_frames_add_up_to_the_cumulative_cpu_time():
    m = Monitor.start(vmsched.load(SCENARIOS / "credit-three-vms.toml"), 0.25)
    total = {name: 0.0 for name in m.names}
    while m.frame.time_s < 10:
        m.advance(m.next_sample_ns)
        for d in m.frame.domains:
            total[d.name] += d.cpu_pct / 100 * m.frame.interval_ns / NS
            assert sum(v.util_pct for v in d.vcpus) == pytest.approx(d.cpu_pct)
    for d in m.frame.domains:
        assert total[d.name] == pytest.approx(d.cpu_s, abs=1e-9)
        assert d.vcpus[0].avg_pct == pytest.approx(d.cpu_s * 100 / m.frame.time_s)


def test_io_columns_show_the_summarys_counters():
    sc = vmsched.Scenario(pcpus=2, scheduler="credit", duration_s=3)
    sc.add_domain("dom0", workload="idle")
    sc.add_domain("reader", workload="disk-read")
    sc.add_domain("net", workload="tcp-stream")
    m = Monitor.start(sc, 1.0)
    seen = []
    while not m.finished:
        m.advance(m.next_sample_ns)
        seen.append({d.name: dict(d.io) for d in m.frame.domains})
    assert [label for _, label in m.frame.io_columns] == [label for _, label in IO_COLUMNS]
    # Cumulative, as xentop's: at the end they are the whole run's.
    run = vmsched.run(sc)
    for d in run.summary["domains"]:
        for key, _ in IO_COLUMNS:
            assert seen[-1][d["name"]][key] == d["xentop"][key], (d["name"], key)
    assert 0 < seen[0]["reader"]["vbd_rd"] < seen[-1]["reader"]["vbd_rd"]
    rows = domain_rows(frame_text(m.frame, 1, 1))
    assert rows["reader"][14] == str(seen[-1]["reader"]["vbd_rd"])  # the VBD_RD column
    assert rows["reader"][12] == "1" and rows["dom0"][12] == "0"  # VBDS


def test_io_columns_are_left_out_when_the_summary_has_none(monkeypatch):
    real = Monitor._summary

    def without_io(self):
        summary = real(self)
        for d in summary["domains"]:
            d.pop("xentop", None)
        return summary

    monkeypatch.setattr(Monitor, "_summary", without_io)
    m = Monitor.start(two_hogs(), 1.0)
    m.advance(2 * NS)
    assert m.frame.io_columns == []
    text = frame_text(m.frame, 1, 1)
    # xentop's columns stay, in its order; the counters the core lacks are "-".
    rows = domain_rows(text)
    assert [len(r) for r in rows.values()] == [20, 20]
    assert all(r[10:12] == ["-", "-"] and r[14:18] == ["-"] * 4 for r in rows.values())
    assert [k for k, _ in sort_keys(m.frame)][-1] == "vcpus"


# ---------------------------------------------------------------- --batch


def parse_frames(text: str) -> list[dict]:
    """Each `--batch` frame: its time, its domain rows and its VCPU rows."""
    frames = []
    for block in re.split(r"\n(?=vmsched top - )", text.strip()):
        t = float(re.match(r"vmsched top - ([\d.]+) s of", block)[1])
        lines = block.splitlines()
        dom_head = next(i for i, line in enumerate(lines) if line.startswith("NAME "))
        vcpu_head = next(i for i, line in enumerate(lines) if line.startswith("VCPU "))
        dom_cols = lines[dom_head].split()
        vcpu_cols = lines[vcpu_head].split()
        domains = {}
        for line in lines[dom_head + 1 : vcpu_head - 1]:
            domains[line.split()[0]] = dict(zip(dom_cols, line.split(), strict=True))
        vcpus = {}
        for line in lines[vcpu_head + 1 :]:
            vcpus[line.split()[0]] = dict(zip(vcpu_cols, line.split(), strict=True))
        frames.append({"time_s": t, "header": lines[:3], "domains": domains, "vcpus": vcpus})
    return frames


def test_batch_frames_agree_with_vmsched_run():
    scenario = str(SCENARIOS / "credit-three-vms.toml")
    top = vmsched_cmd(
        "top", scenario, "--batch", "--iterations", "3", "--speed", "max", "--interval", "2.5"
    )
    assert top.returncode == 0, top.stderr
    frames = parse_frames(top.stdout)
    assert [f["time_s"] for f in frames] == [2.5, 5.0, 7.5]
    run = vmsched_cmd("run", scenario, "--duration-s", "7.5", "--json")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    # The I/O columns are there exactly when the summary has those counters.
    io = [
        (key, label) for key, label in IO_COLUMNS if key in summary["domains"][0].get("xentop", {})
    ]
    # xentop's full column set, in its order (tools/xentop/xentop.c), then SCHED.
    columns = [
        "NAME", "STATE", "CPU(sec)", "CPU(%)", "MEM(k)", "MEM(%)", "MAXMEM(k)", "MAXMEM(%)",
        "VCPUS", "NETS", "NETTX(k)", "NETRX(k)", "VBDS", "VBD_OO", "VBD_RD", "VBD_WR",
        "VBD_RSECT", "VBD_WSECT", "SSID", "SCHED",
    ]  # fmt: skip
    for f in frames:
        assert f["header"][1].startswith("4 domains: ")
        assert f["header"][2].startswith("CPUs: 2")
        assert all(list(row) == columns for row in f["domains"].values())
        assert list(next(iter(f["vcpus"].values()))) == [
            "VCPU",
            "STATE",
            "UTIL(%)",
            "AVG(%)",
            "READY(%)",
            "UTILISATION",
        ]
    # The scenario warms up for 5 s, so `vmsched run --duration-s 7.5`
    # measures (5, 7.5]: the third frame's interval.
    assert summary["measured_s"] == 2.5
    second, third = frames[1], frames[2]
    for d in summary["domains"]:
        row, name = third["domains"][d["name"]], d["name"]
        assert float(row["CPU(%)"]) == pytest.approx(d["cpu_pct"], abs=0.051)
        gained = float(row["CPU(sec)"]) - float(second["domains"][name]["CPU(sec)"])
        assert gained == pytest.approx(d["cpu_s"], abs=0.0101)
        assert int(row["VCPUS"]) == len(d["vcpus"])
        assert row["SCHED"] == ",".join(f"{k}={v}" for k, v in d["sched"].items())
        for key, label in io:
            # Cumulative counters: their growth over (5, 7.5] is the run's count
            # (kilobytes are whole, so each reading may have lost up to 1 k).
            grown = int(row[label]) - int(second["domains"][name][label])
            assert abs(grown - d["xentop"][key]) <= (1 if key.endswith("_kb") else 0)
        v = d["vcpus"][0]
        vrow = third["vcpus"][f"{name}.v0"]
        assert float(vrow["UTIL(%)"]) == pytest.approx(v["running_ns"] / 2.5e7, abs=0.051)
        assert float(vrow["READY(%)"]) == pytest.approx(v["runnable_ns"] / 2.5e7, abs=0.051)


def test_batch_paces_frames_with_delay(scenario_file, capsys):
    path = str(scenario_file(BASE.replace("duration_s = 2", "duration_s = 5")))
    t0 = time.perf_counter()
    assert cli.main(["top", path, "--batch", "--iterations", "3", "--delay", "0.2"]) == 0
    assert time.perf_counter() - t0 >= 0.4, "two delays of 0.2 s between three frames"
    assert len(parse_frames(capsys.readouterr().out)) == 3
    # Without --iterations: every interval to the end of the run.
    assert cli.main(["top", path, "--batch", "--speed", "max"]) == 0
    frames = parse_frames(capsys.readouterr().out)
    assert [f["time_s"] for f in frames] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert "finished" in frames[-1]["header"][0]
    assert all("speed max" in f["header"][0] for f in frames[:-1])


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["{missing}"], ["no such file"]),
        (["{bad}"], ["run.duraton_s", "did you mean 'duration_s'"]),
        (["{good}", "--speed", "fast"], ["--speed", '"fast" is not a speed', "max"]),
        (["{good}", "--speed", "0"], ["--speed", '"0" is not a speed']),
        (["{good}", "--speed", "-10"], ["--speed"]),
        (["{good}", "--interval", "0"], ["run.sample_ms", "(set by --interval 0"]),
        (["{good}", "--batch", "--iterations", "0"], ["--iterations", "expected 1 or more"]),
        (["{good}", "--batch", "--delay", "-1"], ["--delay", "expected 0 or more"]),
        (["{good}", "--iterations", "3"], ["--iterations", "expected it with --batch"]),
        (["{good}"], ["needs a terminal", "--batch"]),
    ],
)
def test_bad_input_exits_2_with_one_line(scenario_file, tmp_path, capsys, args, fragments):
    files = {
        "missing": str(tmp_path / "nope.toml"),
        "bad": str(scenario_file(BASE.replace("duration_s", "duraton_s"), name="bad.toml")),
        "good": str(scenario_file()),
    }
    # In-process (pytest's standard input is no terminal, as in a pipe).
    assert cli.main(["top", *(a.format(**files) for a in args)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vmsched: error: "), err
    for fragment in fragments:
        assert fragment in lines[0]


def test_bad_speed_from_the_command_line_exits_2():
    proc = vmsched_cmd("top", str(SCENARIOS / "credit-weights.toml"), "--speed", "warp")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith('vmsched: error: --speed: "warp" is not a speed')


# ---------------------------------------------------------------- a real terminal


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_in_a_real_terminal(tmp_path):
    """`vmsched top` in a detached tmux session: the screen appears, keys
    reach it, q ends it with status 0."""
    socket = f"vmsched-test-{tmp_path.name}"
    status = tmp_path / "status"
    command = (
        f"{sys.executable} -m vmsched top {SCENARIOS / 'credit-three-vms.toml'} --speed max; "
        f"echo $? > {status}"
    )

    def tmux(*args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", socket, *args], capture_output=True, text=True, check=True, timeout=10
        ).stdout

    def wait_for(test, what: str, timeout_s: float = 20) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = tmux("capture-pane", "-p", "-t", "top")
            if test(text):
                return text
            time.sleep(0.2)
        raise AssertionError(f"{what} within {timeout_s} s; the screen shows:\n{text}")

    # The pane runs bash whatever the user's login shell: under dash (a
    # login shell of /bin/sh) the app came up at 80 columns in this test.
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "top", "-x", "120", "-y", "40",
         "bash --noprofile --norc")  # fmt: skip
    try:
        tmux("send-keys", "-t", "top", f"cd {REPO} && {command}", "Enter")
        # The last frame, laid out whole (a table may first be drawn before
        # its columns are sized to their contents).
        text = wait_for(
            lambda t: "60.000 s of 60 s simulated, finished" in t and "batch-bronze " in t,
            "the last frame",
        )
        assert "4 domains: " in text and "CPUs: 2" in text
        rows = domain_rows("\n".join(line.strip() for line in text.splitlines()))
        assert set(rows) == {"dom0", "batch-gold", "batch-bronze", "web"}
        # batch-bronze shares its PCPU with web (20 %): 80 %.
        assert float(rows["batch-bronze"][3]) == pytest.approx(80, abs=1)
        tmux("send-keys", "-t", "top", "s")
        wait_for(lambda t: "sort: NAME" in t, "s to change the sort")
        tmux("send-keys", "-t", "top", "q")
        deadline = time.monotonic() + 10
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status.exists(), "q ends vmsched top"
        time.sleep(0.1)
        assert status.read_text().strip() == "0"
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)


def test_docs_describe_every_key():
    text = (REPO / "docs" / "top.md").read_text()
    shown = {"plus": "+", "equals_sign": "=", "minus": "-", "escape": "Esc"}
    for binding in TopApp.BINDINGS:
        for key in binding.key.split(","):
            assert f"| `{shown.get(key, key)}`" in text, key


def test_memory_columns_come_from_memory_mb():
    """MEM(k) and MAXMEM(k) are the scenario's `memory_mb` (not simulated),
    MEM(%) its share of `host.memory_mb`, as xentop shows them."""
    sc = vmsched.Scenario(pcpus=2, scheduler="credit", duration_s=2)
    sc.data["host"]["memory_mb"] = 4096
    sc.add_domain("vm1", workload="cpu-hog")
    sc.data["domain"][0]["memory_mb"] = 1024
    sc.add_domain("vm2", workload="idle")
    m = Monitor.start(sc, 1.0)
    m.advance(NS)
    rows = domain_rows(frame_text(m.frame, 1, 1))
    assert rows["vm1"][4:8] == ["1048576", "25.0", "1048576", "25.0"]
    assert rows["vm2"][4:8] == ["0", "0.0", "0", "0.0"]
