"""Schedulers of your own (docs/write-a-scheduler.md): the tutorial's scheduler, copied
from the page as written, in every front end; the property tests on it; faults in user
code; and the claim that a scheduler is one file plus one line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import vmsched
from vmsched import cli
from vmsched.testing import check_scheduler

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "write-a-scheduler.md"
CORE = ROOT / "crates" / "vmsched-core" / "src"


def code_block(lang: str, n: int = 0) -> str:
    """The n-th ```lang block of the tutorial, as written."""
    blocks = re.findall(rf"^```{lang}\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    return blocks[n]


@pytest.fixture
def wrr(tmp_path, monkeypatch) -> str:
    """The tutorial's Python scheduler saved as wrr.py in a fresh working folder."""
    (tmp_path / "wrr.py").write_text(code_block("python"))
    monkeypatch.chdir(tmp_path)
    return "wrr.py:WeightedRR"


def scenario(tmp_path: Path, name: str = "credit") -> Path:
    text = (ROOT / "scenarios" / "credit-three-vms.toml").read_text()
    text = re.sub(r"duration_s = \d+", "duration_s = 3", text)
    text = re.sub(r"warmup_s = \d+", "warmup_s = 1", text)
    out = tmp_path / "s.toml"
    out.write_text(text)
    return out


def test_the_tutorial_files_are_the_page(tmp_path):
    assert code_block("python") == (ROOT / "docs" / "tutorial" / "wrr.py").read_text()
    assert code_block("rust") == (ROOT / "docs" / "tutorial" / "wrr.rs").read_text()


@pytest.mark.parametrize("cls", ["WeightedRR", "CappedWRR"])
def test_run(wrr, cls, tmp_path, capsys):
    name = wrr.replace("WeightedRR", cls)
    s = scenario(tmp_path)
    assert cli.main(["run", str(s), "--scheduler", name, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["scheduler"] == name
    cpu = {d["name"]: d["cpu_pct"] for d in summary["domains"]}
    # dom0 and web ask for 4 % and 20 %; the hogs share the rest of the 200 %.
    assert abs(sum(cpu.values()) - 200) < 1
    assert cpu["web"] > 15


def test_in_a_scenario_file_relative_to_it(wrr, tmp_path):
    sub = tmp_path / "exp"
    sub.mkdir()
    (sub / "mine.py").write_text(code_block("python"))
    text = scenario(tmp_path).read_text()
    text = re.sub(
        r"\[scheduler\].*?\n\n", '[scheduler]\nname = "mine.py:WeightedRR"\n\n', text, flags=re.S
    )
    (sub / "s.toml").write_text(text)
    r = vmsched.run(sub / "s.toml", progress=False)
    assert r.summary["scheduler"] == "exp/mine.py:WeightedRR"


def test_compare(wrr, tmp_path):
    s = scenario(tmp_path)
    code = cli.main(
        [
            "compare",
            str(s),
            "--schedulers",
            f"credit,credit2,{wrr}",
            "--quick",
            "--jobs",
            "2",
            "--out",
            str(tmp_path / "cmp"),
        ]
    )
    assert code == 0
    rows = (tmp_path / "cmp" / "results.csv").read_text()
    assert wrr in rows and "credit2" in rows


def test_alert(wrr, tmp_path):
    capped = wrr.replace("WeightedRR", "CappedWRR")
    code = cli.main(
        [
            "alert",
            "--scheduler",
            capped,
            "--targets",
            "10,50",
            "--duration-s",
            "2",
            "--jobs",
            "1",
            "--out",
            str(tmp_path / "alert"),
        ]
    )
    assert code == 0
    summary = json.loads((tmp_path / "alert" / "summary.json").read_text())
    assert summary["setup"]["allocation_rule"] == "cap = A"
    assert summary["scheduler"] == capped


def test_alert_refuses_the_uncapped_class_naming_what_is_missing(wrr, tmp_path, capsys):
    args = ["alert", "--scheduler", wrr, "--quick", "--out", str(tmp_path / "a")]
    assert cli.main(args) == 2
    assert wrr in capsys.readouterr().err
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("cls", ["WeightedRR", "CappedWRR"])
def test_property_tests_pass(wrr, cls):
    assert check_scheduler(wrr.replace("WeightedRR", cls), cases=8) == 8


# ----- faults in user code ----------------------------------------------------------------


BROKEN = """
import vmsched

class Bad(vmsched.Scheduler):
    def init(self):
        self.q = []
    def wake(self, vcpu):
        if vcpu not in self.q:
            self.q.append(vcpu)
            self.host.tickle(0)
    def sleep(self, vcpu):
        pass
    def do_schedule(self, pcpu):
        return MODE(self, pcpu)

def raises(self, pcpu):
    return 1 / 0

def negative(self, pcpu):
    return (self.q[0] if self.q else None), -5

def blocked(self, pcpu):
    return 0, 1_000_000

def spins(self, pcpu):
    while True:
        pass
"""


def broken(tmp_path: Path, mode: str, timeout_s: float = 10.0) -> str:
    path = tmp_path / f"bad_{mode}.py"
    path.write_text(BROKEN.replace("MODE", mode) + f"\nBad.hook_timeout_s = {timeout_s}\n")
    return f"{path}:Bad"


def hogs(spec: str) -> vmsched.Scenario:
    sc = vmsched.Scenario(pcpus=1, scheduler=spec, duration_s=1)
    sc.add_domain("a", workload={"kind": "duty-cycle", "util_pct": 30})
    sc.add_domain("b", workload="cpu-hog")
    return sc


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("raises", r"hook do_schedule raised ZeroDivisionError[\s\S]*1 / 0"),
        ("negative", r"do_schedule\(0\) returned \(\d, -5\); expected"),
        ("blocked", r"do_schedule\(0\) chose vcpu 0 \(a\.v0\), which is not runnable"),
    ],
)
def test_a_fault_stops_the_run_and_says_where(tmp_path, mode, said, capsys):
    spec = broken(tmp_path, mode)
    with pytest.raises(vmsched.SchedulerError, match=said):
        vmsched.run(hogs(spec), progress=False)
    s = tmp_path / "s.toml"
    s.write_text(
        f'[host]\npcpus = 1\n[scheduler]\nname = "{spec}"\n[run]\nduration_s = 1\n'
        '[[domain]]\nname = "a"\n[domain.workload]\nkind = "duty-cycle"\nutil_pct = 30\n'
        '[[domain]]\nname = "b"\n[domain.workload]\nkind = "cpu-hog"\n'
    )
    assert cli.main(["run", str(s)]) == 2
    assert re.search(said, capsys.readouterr().err)


ELSEWHERE = """
import vmsched

class Elsewhere(vmsched.Scheduler):
    def wake(self, vcpu):
        for pcpu in range(self.host.npcpus):
            self.host.tickle(pcpu)
    def sleep(self, vcpu):
        pass
    def do_schedule(self, pcpu):
        for v in range(self.host.nvcpus):  # wrong: a VCPU another PCPU runs
            if self.host.running_on(v) not in (None, pcpu):
                return v, 1_000_000
        for v in range(self.host.nvcpus):
            if self.host.runnable(v) and self.host.running_on(v) is None:
                return v, 1_000_000
        return None
"""


def test_a_vcpu_running_on_another_pcpu_is_refused(tmp_path, capsys):
    (tmp_path / "elsewhere.py").write_text(ELSEWHERE)
    s = tmp_path / "s.toml"
    s.write_text(
        f'[host]\npcpus = 2\n[scheduler]\nname = "{tmp_path}/elsewhere.py:Elsewhere"\n'
        "[run]\nduration_s = 1\n"
        '[[domain]]\nname = "a"\n[domain.workload]\nkind = "cpu-hog"\n'
        '[[domain]]\nname = "b"\n[domain.workload]\nkind = "cpu-hog"\n'
    )
    said = r"do_schedule\(\d\) chose vcpu \d \([ab]\.v0\), which runs on pcpu \d"
    assert cli.main(["run", str(s)]) == 2
    assert re.search(said, capsys.readouterr().err)


def test_a_hook_that_never_returns_is_stopped(tmp_path):
    spec = broken(tmp_path, "spins", timeout_s=0.3)
    with pytest.raises(vmsched.SchedulerError, match="did not return within 0.3 s"):
        vmsched.run(hogs(spec), progress=False)


def test_bad_names_and_declarations_are_bad_input(tmp_path):
    with pytest.raises(vmsched.ScenarioError, match="does not exist"):
        vmsched.run(hogs("nowhere.py:X"), progress=False)
    (tmp_path / "x.py").write_text("import vmsched\nclass A(vmsched.Scheduler):\n    pass\n")
    with pytest.raises(vmsched.ScenarioError, match=r"has no B; expected .*\(A\)"):
        vmsched.run(hogs(f"{tmp_path}/x.py:B"), progress=False)
    (tmp_path / "y.py").write_text("raise RuntimeError('at import')\n")
    with pytest.raises(vmsched.SchedulerError, match="at import"):
        vmsched.run(hogs(f"{tmp_path}/y.py:A"), progress=False)


def test_declared_parameters_are_validated_like_built_ins(wrr, tmp_path):
    sc = vmsched.Scenario(pcpus=1, scheduler=wrr, duration_s=1)
    sc.add_domain("a", workload="cpu-hog", weight=0)
    with pytest.raises(
        vmsched.ScenarioError, match=r"domain\[0\]\.(sched\.)?weight: 0 is out of range"
    ):
        vmsched.run(sc, progress=False)


# ----- one file plus one line ---------------------------------------------------------------


def test_no_code_outside_a_component_dispatches_on_its_name():
    """Nothing in the core outside a scheduler's (workload's) own file dispatches on its
    name, so a new one is its file plus its name in the one list of schedulers."""
    cat = vmsched.catalogue()
    names = [s["name"] for s in cat["schedulers"]] + [w["kind"] for w in cat["workloads"]]
    own = {"sched", "workload"}
    offenders = []
    for path in CORE.rglob("*.rs"):
        if own & set(path.relative_to(CORE).parts[:-1]) or path.name == "bench.rs":
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            for n in names:
                if re.search(rf'(==\s*"{re.escape(n)}"|"{re.escape(n)}"\s*(=>|\|))', line):
                    offenders.append(f"{path.relative_to(CORE)}:{i}: {line.strip()}")
    assert not offenders, offenders


def _copy_workspace(dest: Path) -> None:
    """The Rust workspace (sources only) at dest, and the build so far hard-linked into
    dest/target, so that only the changed crate is compiled again."""
    shutil.copy(ROOT / "Cargo.toml", dest)
    shutil.copy(ROOT / "Cargo.lock", dest)
    shutil.copytree(ROOT / "crates", dest / "crates", ignore=shutil.ignore_patterns("target"))
    # The crate includes the tutorial's file in its own unit tests.
    shutil.copytree(ROOT / "docs" / "tutorial", dest / "docs" / "tutorial")
    built = ROOT / "target" / "release"
    if built.is_dir():
        (dest / "target").mkdir()
        subprocess.run(["cp", "-al", str(built), str(dest / "target")], check=True)
        # The copy's own lock, not a link to the checkout's (another cargo may hold that).
        (dest / "target" / "release" / ".cargo-lock").unlink(missing_ok=True)


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (the Rust toolchain)")
def test_the_rust_scheduler_is_one_file_plus_one_line_as_the_page_says(tmp_path):
    """The page's steps 1 and 2 done literally on a copy of the workspace: the page's Rust
    code saved as src/sched/wrr.rs, `wrr` added to the first list of `schedulers!`, and
    nothing else. The copy builds, and a scenario naming `wrr` runs under it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _copy_workspace(ws)
    sched = ws / "crates" / "vmsched-core" / "src" / "sched"
    (sched / "wrr.rs").write_text(code_block("rust"))
    mod = (sched / "mod.rs").read_text()
    listed = re.sub(r"(\nschedulers! \{\n\s*[\w, ]*?)(;)", r"\1, wrr\2", mod, count=1)
    assert listed != mod, "the page's list `schedulers!` is in src/sched/mod.rs"
    (sched / "mod.rs").write_text(listed)
    s = tmp_path / "wrr.toml"
    s.write_text(
        '[host]\npcpus = 1\n[scheduler]\nname = "wrr"\n[run]\nduration_s = 3\n'
        '[[domain]]\nname = "big"\nweight = 512\n[domain.workload]\nkind = "cpu-hog"\n'
        '[[domain]]\nname = "small"\n[domain.workload]\nkind = "cpu-hog"\n'
    )
    run = subprocess.run(
        ["cargo", "run", "--release", "--quiet", "--offline", "-p", "vmsched-core"]
        + ["--example", "run", "--", str(s)],
        cwd=ws,
        env={**os.environ, "CARGO_TARGET_DIR": str(ws / "target")},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout)
    assert summary["scheduler"] == "wrr"
    cpu = [d["cpu_pct"] for d in summary["domains"]]
    # Turns of 20 ms and 10 ms on one PCPU: two thirds and one third.
    assert cpu == pytest.approx([200 / 3, 100 / 3], abs=0.5)


def test_top_and_traces(wrr, tmp_path, capsys):
    s = scenario(tmp_path)
    args = ["top", str(s), "--scheduler", wrr, "--batch", "--iterations", "1", "--speed", "max"]
    assert cli.main(args) == 0
    assert f"scheduler {wrr}" in capsys.readouterr().out
    out = tmp_path / "r"
    args = ["run", str(s), "--scheduler", wrr, "--out", str(out), "--trace", "--xentrace"]
    assert cli.main(args) == 0
    assert f"scheduler {wrr}" in (out / "trace.txt").read_text()
    assert (out / "trace.xentrace").stat().st_size > 0


def test_a_python_schedulers_counters_are_in_the_traces(tmp_path):
    mine = tmp_path / "counting.py"
    mine.write_text(
        (ROOT / "docs" / "tutorial" / "rr.py").read_text()
        + "\n\nclass Counting(RoundRobin):\n"
        + "    n = 0\n\n"
        + "    def do_schedule(self, pcpu):\n"
        + "        self.n += 1\n"
        + "        return super().do_schedule(pcpu)\n\n"
        + "    def counters(self):\n"
        + '        return {"decisions": self.n}\n'
    )
    r = vmsched.run(hogs(f"{mine}:Counting"), out=tmp_path / "o", trace=True, progress=False)
    values = re.findall(
        r"tracing_mark_write: C\|1\|\S+\.decisions\|(\d+)$", r.traces["trace"].read_text(), re.M
    )
    assert len(values) > 10
    assert int(values[-1]) == r.summary["scheduler_counters"]["decisions"] > 0


def test_the_round_robin_of_the_cost_table_passes_the_property_tests():
    assert check_scheduler(f"{ROOT}/docs/tutorial/rr.py:RoundRobin", cases=5) == 5


# ----- state as data, and registration scoped to a test ------------------------------------


def test_state_as_data_for_built_ins_and_python_schedulers(tmp_path):
    from vmsched import _core
    from vmsched.scheduler import register
    from vmsched.testing import sched_state

    sim = _core.Sim(hogs("credit").to_json())
    sim.run_until(50_000_000)
    st = sched_state(sim)
    # Credit's record of each VCPU and PCPU, as its dump() shows them in words.
    assert all(v["pri"] in {"BOOST", "UNDER", "OVER"} for v in st["vcpus"])
    assert len(st["vcpus"]) == 2 and isinstance(st["vcpus"][1]["credit"], int)
    assert len(st["pcpus"]) == 1 and set(st["pcpus"][0]["runq"]) <= {0, 1}
    assert {"weight", "credit", "balance"} <= set(st["global"])
    mine = tmp_path / "fifo.py"
    mine.write_text(
        (ROOT / "docs" / "tutorial" / "rr.py").read_text()
        + "\n    def state(self):\n"
        + "        return {'pcpus': [{'runq': list(q)} for q in self.queues]}\n"
    )
    spec = register(f"{mine}:RoundRobin")
    sim = _core.Sim(hogs(spec).to_json())
    sim.run_until(50_000_000)
    queued = [p["runq"] for p in sched_state(sim)["pcpus"]]
    assert len(queued) == 1 and set(queued[0]) <= {0, 1}


def test_unregister_and_scope_keep_the_catalogue_clean(wrr):
    from vmsched.scheduler import register, registered, scope, unregister

    names = lambda: {s["name"] for s in vmsched.catalogue()["schedulers"]}  # noqa: E731
    with scope():
        register(wrr)
        assert wrr in names() and wrr in registered()
    assert wrr not in names() and wrr not in registered()
    register(wrr)
    assert unregister(wrr) and not unregister(wrr) and wrr not in names()
    assert not unregister("credit") and "credit" in names()
