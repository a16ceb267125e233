"""`vmsched run --trace --xentrace`: every line of trace.txt against the ftrace
text grammar, trace.xentrace decoded against the documented record layout,
both agreeing with summary.json, the files whole or absent, bad places
reported as bad input, and tracing streamed to disk (memory does not grow
with the length of the run)."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import vmsched
from conftest import REPO, vmsched_cmd

#: Credit on 3 PCPUs after a 1 s warm-up: a capped hog (parked: D), a 2-VCPU
#: hog paused for a while (T) and later one VCPU offline (P), a duty cycle
#: that blocks (S) and wakes. The 2-VCPU hog has PCPUs 1 and 2 to itself, so
#: the VCPU taken offline is running then (P); the others share PCPU 0.
SCENARIO = """\
[host]
pcpus = 3
[scheduler]
name = "credit"
[run]
duration_s = 4
warmup_s = 1
[[domain]]
name = "vm1"
cap = 50
affinity = [0]
[domain.workload]
kind = "cpu-hog"
[[domain]]
name = "vm2"
vcpus = 2
affinity = [1, 2]
[domain.workload]
kind = "cpu-hog"
[[domain]]
name = "web"
affinity = [0]
[domain.workload]
kind = "duty-cycle"
util_pct = 20
period_ms = 5
[[action]]
at_s = 1.5
domain = "vm2"
pause = true
[[action]]
at_s = 2
domain = "vm2"
pause = false
[[action]]
at_s = 2.5
domain = "vm2"
vcpus_online = 1
[[action]]
at_s = 3
domain = "vm2"
vcpus_online = 2
"""

WARMUP_S = 1
PCPUS = 3


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """`vmsched run SCENARIO --out DIR --trace --xentrace`, once for the module."""
    tmp = tmp_path_factory.mktemp("traced")
    path = tmp / "scenario.toml"
    path.write_text(SCENARIO)
    out = tmp / "out"
    proc = vmsched_cmd("run", str(path), "--out", str(out), "--trace", "--xentrace")
    assert proc.returncode == 0, proc.stderr
    assert "trace.txt, trace.xentrace" in " ".join(proc.stdout.split())
    summary = json.loads((out / "summary.json").read_text())
    return out, summary


def context_switches(summary: dict) -> int:
    return sum(v["context_switches"] for d in summary["domains"] for v in d["vcpus"])


# ------------------------------------------------------------ ftrace grammar

PREFIX = r"^ *(?P<comm>\S+)-(?P<pid>\d+) +\[(?P<cpu>\d{3})\] d\.\.2 +(?P<s>\d+)\.(?P<us>\d{6}): "
SWITCH = re.compile(
    PREFIX + r"sched_switch: prev_comm=(?P<pc>\S+) prev_pid=(?P<pp>\d+) prev_prio=120 "
    r"prev_state=(?P<state>[RSDTP]) ==> next_comm=(?P<nc>\S+) next_pid=(?P<np>\d+) next_prio=120$"
)
WAKE = re.compile(
    PREFIX + r"(?P<event>sched_waking|sched_wakeup): comm=(?P<wc>\S+) pid=(?P<wp>\d+) "
    r"prio=120 target_cpu=(?P<target>\d{3})$"
)
COUNTER = re.compile(PREFIX + r"tracing_mark_write: C\|1\|credit\.(?P<name>\w+)\|(?P<value>\d+)$")
HEADER = re.compile(r"^#( .*)?$")


def declared_counters(scheduler: str) -> list[str]:
    """The counters the scheduler declares in its registration, in order."""
    info = next(s for s in vmsched.catalogue()["schedulers"] if s["name"] == scheduler)
    return [c["name"] for c in info["counters"]]


TASK = re.compile(r"^(?P<dom>[^\s=]+)\.v(?P<n>\d+)$")


def test_every_line_of_trace_txt_follows_the_ftrace_grammar(traced):
    out, summary = traced
    lines = (out / "trace.txt").read_text().splitlines()
    assert lines[0] == "# tracer: nop"
    body = 0
    while body < len(lines) and lines[body].startswith("#"):
        assert HEADER.match(lines[body]), lines[body]
        body += 1
    assert any("TASK-PID" in h for h in lines[:body])
    assert f"#P:{PCPUS}" in "\n".join(lines[:body])

    domains = {d["name"]: len(d["vcpus"]) for d in summary["domains"]}
    on_cpu: dict[int, tuple[str, int]] = {}  # cpu -> (comm, pid) it runs
    running: dict[int, int] = {}  # pid -> cpu
    last_ts: dict[int, int] = {}
    names: dict[int, str] = {}
    switches, states, events = 0, Counter(), Counter()
    pending_waking = None
    counters: dict[str, int] = {}
    for line in lines[body:]:
        m = SWITCH.match(line) or WAKE.match(line) or COUNTER.match(line)
        assert m, f"not an ftrace sched_switch/sched_waking/sched_wakeup/counter line: {line!r}"
        cpu, ts = int(m["cpu"]), int(m["s"]) * 1_000_000 + int(m["us"])
        assert cpu < PCPUS, line
        assert ts >= WARMUP_S * 1_000_000, "traced from the start of measurement"
        assert ts >= last_ts.get(cpu, 0), f"time goes back on CPU {cpu}: {line}"
        last_ts[cpu] = ts
        task = (m["comm"], int(m["pid"]))
        if cpu in on_cpu:
            assert task == on_cpu[cpu], f"the task column is what CPU {cpu} runs: {line}"
        if m.re is COUNTER:
            assert counters.get(m["name"]) != int(m["value"]), f"written only on a change: {line}"
            counters[m["name"]] = int(m["value"])
            continue
        if m.re is SWITCH:
            prev, nxt = (m["pc"], int(m["pp"])), (m["nc"], int(m["np"]))
            assert prev == task and prev != nxt, line
            if cpu in on_cpu:
                # The chain: this switch's prev is the previous switch's next.
                assert prev == on_cpu[cpu], line
            for comm, pid in (prev, nxt):
                assert (pid == 0) == (comm == "<idle>"), line
                if pid:
                    t = TASK.match(comm)
                    assert t and int(t["n"]) < domains[t["dom"]], comm
                    assert names.setdefault(pid, comm) == comm, "one name per pid"
            if prev[1]:
                was = running.pop(prev[1], None)
                # The first switch on a CPU may take off a VCPU running there
                # since before the trace started.
                assert was == cpu or (was is None and cpu not in on_cpu), line
            if nxt[1]:
                assert nxt[1] not in running, f"a VCPU on two CPUs at once: {line}"
                running[nxt[1]] = cpu
                switches += 1
            on_cpu[cpu] = nxt
            states[m["state"]] += 1
            assert pending_waking is None
        else:
            assert int(m["target"]) < PCPUS
            assert int(m["wp"]) not in running, f"a running VCPU woken: {line}"
            assert names.setdefault(int(m["wp"]), m["wc"]) == m["wc"]
            if m["event"] == "sched_waking":
                assert pending_waking is None
                pending_waking = (m["wp"], ts, cpu)
            else:
                assert pending_waking == (m["wp"], ts, cpu), "sched_wakeup follows its waking"
                pending_waking = None
            events[m["event"]] += 1
    assert pending_waking is None
    assert switches == context_switches(summary) > 0
    assert events["sched_waking"] == events["sched_wakeup"] > 100
    assert set(states) == set("RSDTP"), states
    assert sorted(names.values()) == ["vm1.v0", "vm2.v0", "vm2.v1", "web.v0"]
    # The scheduler's declared counters: each named in the header, each written, and the
    # last value of each is the summary's.
    declared = declared_counters("credit")
    for name in declared:
        assert any(h.startswith(f"# counter credit.{name} ") for h in lines[:body]), name
    assert counters == summary["scheduler_counters"]
    assert sorted(counters) == sorted(declared)


# ---------------------------------------------------------- xentrace layout

TRC_TRACE_CPU_CHANGE = 0x0001F003
IDLE_DOMID = 0x7FFF
TSC_HZ = 2_400_000_000
#: The host's power-on, one second before simulated time 0 (docs/trace.md).
TSC_BOOT_S = 1
DOM_ADD = 0x00028001
SLEEP = 0x00028003
WAKE_ID = 0x00028004
BLOCK = 0x00028006
SWITCH_ID = 0x0002800A
INFPREV = 0x0002800E
INFNEXT = 0x0002800F
INFCONT = 0x00028011
CONTINUE = 0x00021002
#: The scheduler's counters: scheduler class 7, plus the counter's declared position.
COUNTER_ID = 0x00022E00
#: Payload words of each event id (runstate changes are 0x00021001 + old<<8 + new<<4).
PAYLOAD = {
    DOM_ADD: 1,
    SLEEP: 2,
    WAKE_ID: 2,
    BLOCK: 2,
    SWITCH_ID: 4,
    INFPREV: 3,
    INFNEXT: 4,
    INFCONT: 4,
    CONTINUE: 1,
}


def is_runstate_change(event: int) -> bool:
    old, new = (event >> 8) & 0xF, (event >> 4) & 0xF
    return event & 0xFFFFF00F == 0x00021001 and old < 4 and new < 4 and old != new


def decode(data: bytes) -> list[tuple[int, int, int, tuple[int, ...]]]:
    """(cpu, event, tsc, payload) of every record, per the layout in docs/trace.md."""
    records, pos = [], 0
    while pos < len(data):
        header, cpu, size = struct.unpack_from("<III", data, pos)
        assert header == TRC_TRACE_CPU_CHANGE | 2 << 28, f"a CPU-change record at {pos}"
        pos += 12
        end = pos + size
        assert 0 < size and end <= len(data)
        while pos < end:
            (header,) = struct.unpack_from("<I", data, pos)
            event, extra, has_tsc = header & 0x0FFFFFFF, (header >> 28) & 7, header >> 31
            assert has_tsc == 1
            lo, hi = struct.unpack_from("<II", data, pos + 4)
            payload = struct.unpack_from(f"<{extra}I", data, pos + 12)
            records.append((cpu, event, hi << 32 | lo, payload))
            pos += 12 + 4 * extra
        assert pos == end, "the window size is exact"
    return records


def test_trace_xentrace_decodes_to_xens_records(traced):
    out, summary = traced
    records = decode((out / "trace.xentrace").read_bytes())
    start_tsc = (TSC_BOOT_S + WARMUP_S) * TSC_HZ
    end_tsc = int((TSC_BOOT_S + summary["duration_s"]) * TSC_HZ)
    last: dict[int, int] = {}
    counters: dict[int, int] = {}
    for cpu, event, tsc, payload in records:
        assert cpu < PCPUS
        if is_runstate_change(event):
            assert len(payload) == 1
        elif event & ~0x1FF == COUNTER_ID:
            assert len(payload) == 2
            counters[event & 0x1FF] = payload[0] | payload[1] << 32
        else:
            assert PAYLOAD[event] == len(payload), hex(event)
        assert start_tsc <= tsc <= end_tsc
        assert tsc >= last.get(cpu, 0), "TSC goes back on a PCPU"
        last[cpu] = tsc
    assert set(last) == set(range(PCPUS))
    first = [(e, p) for _, e, _, p in records[:3]]
    assert first == [(DOM_ADD, (0,)), (DOM_ADD, (1,)), (DOM_ADD, (2,))], "each domain first"
    to_vcpu = [p for _, e, _, p in records if e == SWITCH_ID and p[2] != IDLE_DOMID]
    assert len(to_vcpu) == context_switches(summary) > 0
    # Around each SWITCH: INFPREV and INFNEXT naming the same VCPUs.
    for i, (_, event, tsc, p) in enumerate(records):
        if event == SWITCH_ID:
            assert records[i - 4][1] == INFPREV and records[i - 4][3][:2] == p[:2]
            assert records[i - 3][1] == INFNEXT and records[i - 3][3][:2] == p[2:]
            assert all(r[2] == tsc for r in records[i - 4 : i])
    declared = declared_counters("credit")
    assert counters == {i: summary["scheduler_counters"][n] for i, n in enumerate(declared)}
    seen = Counter(e if not is_runstate_change(e) else "runstate" for _, e, _, _ in records)
    for event in (WAKE_ID, BLOCK, SLEEP, INFCONT, CONTINUE, "runstate"):
        assert seen[event] > 0, event


def test_a_run_traced_gives_the_same_results_as_one_not_traced(traced, tmp_path):
    _, summary = traced
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    plain = vmsched.run(path, progress=False).summary
    for s in (summary, plain):
        s.pop("wall_s")
    assert summary == json.loads(json.dumps(plain))


# ------------------------------------------------------------- API and CLI


def test_the_api_writes_the_traces_into_out_or_to_paths(tmp_path):
    base = vmsched.Scenario(pcpus=1, scheduler="credit", duration_s=1)
    base.add_domain("a", workload="cpu-hog")
    base.add_domain("b", workload="cpu-hog")
    r = vmsched.run(base, out=tmp_path / "o", trace=True, progress=False)
    assert r.traces == {"trace": tmp_path / "o" / "trace.txt"}
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
        "summary.json",
        "timeseries.parquet",
        "trace.txt",
    ]
    r = vmsched.run(base, xentrace=tmp_path / "x.bin", progress=False)
    assert decode((tmp_path / "x.bin").read_bytes())
    with pytest.raises(vmsched.ScenarioError, match="needs an output folder"):
        vmsched.run(base, trace=True)
    with pytest.raises(vmsched.ScenarioError, match="expected True, False or a file path"):
        vmsched.run(base, trace=3)


def test_trace_without_out_is_bad_input(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    proc = vmsched_cmd("run", str(path), "--xentrace")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "vmsched: error: --xentrace: needs an output folder; expected --out DIR as well "
        "(the trace is DIR/trace.xentrace)"
    ]


def test_an_unwritable_trace_is_bad_input_and_leaves_nothing(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    out = tmp_path / "out"
    (out / "trace.txt").mkdir(parents=True)  # a folder where the file must go
    proc = vmsched_cmd("run", str(path), "--out", str(out), "--trace", "--xentrace")
    assert proc.returncode == 2, proc
    (line,) = proc.stderr.splitlines()
    assert line == (
        f"vmsched: error: {out / 'trace.txt'}: cannot be written (it is a folder); "
        "expected a writable place for the trace"
    )
    assert sorted(p.name for p in out.iterdir()) == ["trace.txt"], "nothing else written"


def test_a_failed_run_leaves_no_trace_file(tmp_path, monkeypatch):
    """An error during the run (here: a failing progress callback) removes the
    temporary files at once: no partial trace appears, none lingers."""

    def fail(now_s, end_s):
        if now_s > 2:
            raise RuntimeError("stop")

    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    with pytest.raises(RuntimeError):
        vmsched.run(path, out=tmp_path / "o", trace=True, xentrace=True, progress=fail)
    assert list((tmp_path / "o").iterdir()) == []


# ---------------------------------------------------------------- streaming

MEASURE = """
import resource, sys, vmsched
sc = vmsched.load(sys.argv[1])
sc = vmsched.Scenario(sc.data, duration_s=float(sys.argv[2]))
vmsched.run(sc, out=sys.argv[3], trace=True, xentrace=True, progress=False)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_rss_kib(duration_s: float, out: Path) -> int:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            MEASURE,
            str(REPO / "scenarios" / "credit-three-vms.toml"),
            str(duration_s),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split()[-1])


def trace_bytes(out: Path) -> int:
    return sum((out / name).stat().st_size for name in ("trace.txt", "trace.xentrace"))


def test_traces_stream_to_disk_memory_does_not_grow_with_the_run(tmp_path):
    """A 10-minute run writes ten times the trace of a 1-minute run (over
    60 MB more) in about the same peak memory (less than 20 MB more)."""
    short = peak_rss_kib(60, tmp_path / "short")
    long = peak_rss_kib(600, tmp_path / "long")
    grown = trace_bytes(tmp_path / "long") - trace_bytes(tmp_path / "short")
    assert grown > 60e6, "the long run must write much more trace for this test to mean anything"
    assert long - short < 20 * 1024, f"peak RSS grew by {(long - short) / 1024:.1f} MiB"


def test_bench_trace_measures_each_case_with_tracing_too(tmp_path):
    proc = vmsched_cmd("bench", "--quick", "--repeat", "1", "--trace", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["trace"] is True
    for case in report["cases"]:
        traced = case["traced"]
        assert traced["events"] == case["events"], "the same run, traced"
        assert traced["trace_bytes"] > 0
        assert traced["cost_pct"] == pytest.approx((traced["wall_s"] / case["wall_s"] - 1) * 100)
    assert "trace MB" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.json"]
