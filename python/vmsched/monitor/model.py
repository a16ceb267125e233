"""What `vmsched top` shows, computed from a running simulation.

A `Monitor` owns one simulation and takes a *sample* every `interval` of
simulated time: the VCPUs' cumulative state times (running, runnable,
blocked, offline) at that instant. Each sample becomes a `Frame`, a snapshot
with xentop's per-domain columns and the Mcredit2 monitor's per-VCPU
utilisation, computed from the difference with the sample before.

Two things make samples exact rather than approximate:

- The monitored copy of the scenario has `run.sample_ms` set to the
  interval, so the core has an event at every sample instant and its clock
  stops there (the clock only ever stands on event times).
- It has no warm-up, so state times count from time 0, as a real host's
  counters count from the domain's creation. A warm-up only decides what a
  run's results leave out; it changes nothing the scheduler does.

A domain's STATE flags are instantaneous in xentop. Here they are the
VCPUs' states just before the sample instant: the monitor reads the state
times one nanosecond of simulated time before the sample too (the core's
clock then stands on the last event before it), and the state that grew
in between is the state the VCPU was in.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from vmsched import _core, budget
from vmsched.errors import ScenarioError, from_core, unknown_name
from vmsched.scenario import Scenario

NS_PER_S = 1_000_000_000

#: Run states, in the order the core reports state times.
RUNNING, RUNNABLE, BLOCKED, OFFLINE = "running", "runnable", "blocked", "offline"
STATES = (RUNNING, RUNNABLE, BLOCKED, OFFLINE)

#: Keys of a domain's `xentop` dict in the summary (when the core has an I/O
#: path), with the column each is shown in.
IO_COLUMNS = (
    ("nettx_kb", "NETTX(k)"),
    ("netrx_kb", "NETRX(k)"),
    ("vbd_rd", "VBD_RD"),
    ("vbd_wr", "VBD_WR"),
    ("vbd_rsect", "VBD_RSECT"),
    ("vbd_wsect", "VBD_WSECT"),
)

#: Sort orders `s` cycles through: (key, label). "id" is the scenario's order.
SORT_KEYS = (
    ("id", "domain id"),
    ("name", "NAME"),
    ("state", "STATE"),
    ("cpu_s", "CPU(sec)"),
    ("cpu_pct", "CPU(%)"),
    ("vcpus", "VCPUS"),
)


@dataclass
class VcpuRow:
    """One VCPU in a frame."""

    index: int
    #: The state it was in just before the sample (one of STATES), or "" at time 0.
    state: str
    #: Running time over the last interval ÷ the interval × 100 (0..100).
    util_pct: float
    #: Running time since time 0 ÷ time since 0 × 100 (0..100).
    avg_pct: float
    #: Runnable ("CPU ready") time over the last interval ÷ the interval × 100.
    ready_pct: float


@dataclass
class DomainRow:
    """One domain in a frame: xentop's columns plus its VCPUs."""

    id: int
    name: str
    #: xentop's six flags `dsbcpr`, `-` where unset.
    state: str
    #: Running time of all its VCPUs since time 0, seconds.
    cpu_s: float
    #: Running time of all its VCPUs over the last interval ÷ the interval ×
    #: 100: percent of one PCPU, up to 100 × VCPUS.
    cpu_pct: float
    vcpus: list[VcpuRow]
    #: Its scheduler parameters now (weight, cap, ...).
    sched: dict[str, Any]
    #: The summary's `xentop` I/O counters (keys of IO_COLUMNS), if the core has them.
    io: dict[str, Any]
    #: Its memory (the scenario's `memory_mb`, not simulated), kB; 0 if not given.
    mem_kb: int = 0
    #: mem_kb ÷ the host's memory × 100.
    mem_pct: float = 0.0
    #: Its memory limit (MAXMEM, kB) and its share of the host's, None for
    #: "no limit"; a simulated domain's is its memory (no ballooning).
    maxmem_kb: int | None = 0
    maxmem_pct: float | None = 0.0

    @property
    def nets(self) -> int:
        """xentop's NETS: the domain's vifs, here 1 once network traffic
        has passed through its back end, else 0."""
        return int(bool(self.io.get("nettx_kb") or self.io.get("netrx_kb")))

    @property
    def vbds(self) -> int:
        """xentop's VBDS: 1 once the domain has read or written its disk, else 0."""
        return int(bool(self.io.get("vbd_rd") or self.io.get("vbd_wr")))

    @property
    def running(self) -> bool:
        return self.state[5] == "r"

    @property
    def blocked(self) -> bool:
        return self.state[2] == "b"

    @property
    def paused(self) -> bool:
        return self.state[4] == "p"


@dataclass
class Frame:
    """What the monitor shows at one sample instant."""

    time_ns: int
    #: Length of the interval the percentages cover (0 on the first frame).
    interval_ns: int
    end_ns: int
    scheduler: str
    pcpus: int
    domains: list[DomainRow]
    #: Which IO_COLUMNS any domain has (in IO_COLUMNS order).
    io_columns: list[tuple[str, str]]
    #: For a real host, where its frames come from (`xentop -b` output); "" for a simulation.
    source: str = ""

    @property
    def time_s(self) -> float:
        return self.time_ns / NS_PER_S

    @property
    def finished(self) -> bool:
        return self.time_ns >= self.end_ns

    def count(self, flag: str) -> int:
        """How many domains have the STATE flag `flag` (one of `dsbcpr`)."""
        pos = "dsbcpr".index(flag)
        return sum(1 for d in self.domains if d.state[pos] == flag)

    def sorted_domains(self, key: str) -> list[DomainRow]:
        """The domains in a SORT_KEYS order: names and ids ascending, numbers
        (and flags set) descending, ties in id order, as xentop sorts."""
        if key == "id":
            return list(self.domains)
        if key == "name":
            return sorted(self.domains, key=lambda d: (d.name, d.id))
        if key == "state":
            return sorted(self.domains, key=lambda d: (d.state.count("-"), d.state, d.id))
        if key == "vcpus":
            return sorted(self.domains, key=lambda d: (-len(d.vcpus), d.id))
        if key in ("cpu_s", "cpu_pct"):
            return sorted(self.domains, key=lambda d: (-getattr(d, key), d.id))
        return sorted(self.domains, key=lambda d: (-_number(d.io.get(key)), d.id))


def sort_keys(frame: Frame) -> list[tuple[str, str]]:
    """The sort orders available for a frame (the I/O columns when shown)."""
    return [*SORT_KEYS, *frame.io_columns]


def _number(v: Any) -> float:
    return float(v) if isinstance(v, int | float) else float("-inf")


def monitored_scenario(sc: Scenario, interval_s: float | None) -> Scenario:
    """The copy of `sc` the monitor runs, validated: sampled every interval
    (the scenario's own `run.sample_ms` by default), with no warm-up. Raises
    ScenarioError."""
    data = json.loads(sc.to_json())
    run = data.setdefault("run", {})
    if not isinstance(run, dict):
        sc.validate()  # reports that [run] is not a table
    if interval_s is not None:
        run["sample_ms"] = interval_s * 1000
    run.pop("warmup_s", None)
    out = Scenario(data, source=sc.source)
    try:
        out.validate()
    except ScenarioError as exc:
        if exc.path == "run.sample_ms" and interval_s is not None:
            raise ScenarioError(
                f"{exc.message} (set by --interval {interval_s:g}, in seconds)",
                file=exc.file,
                path=exc.path,
            ) from None
        raise
    # The core keeps a series row per VCPU at every sample until the run
    # ends: a long run sampled finely is refused here, as `vmsched run`
    # refuses it, before anything is simulated.
    if interval_s is None:
        budget.check(out.data, sc.source, bytes_per_row=budget.CORE_BYTES_PER_ROW)
    else:
        budget.check(
            out.data,
            sc.source,
            bytes_per_row=budget.CORE_BYTES_PER_ROW,
            path="--interval",
            interval=f"a larger --interval than {interval_s:g} s",
        )
    return out


def _round_ns(x: float) -> int:
    """As the core turns seconds into ns (round half away from zero)."""
    return int(x + 0.5)


class Monitor:
    """One simulation, sampled every `interval_ns` of simulated time.

    Build it with `Monitor.start(scenario, interval_s)`; then `advance(t_ns)`
    moves the simulation forward, `frame` is the latest sample and `adjust`
    changes a domain as `xl` would.
    """

    def __init__(self, sc: Scenario) -> None:
        """`sc` must come from `monitored_scenario`."""
        self.scenario = sc
        sample_ms = float(sc.data["run"].get("sample_ms", 1000))
        self.interval_ns = max(_round_ns(sample_ms * 1e6), 1)
        try:
            self.sim = _core.Sim(sc.to_json())
            self._now_ns, self.end_ns, _, _ = self.sim.run_until(0)
        except Exception as exc:  # noqa: BLE001 - translated
            raise from_core(exc, sc.source) from None
        self._wall0 = time.perf_counter()
        summary = self._summary()
        self.scheduler = summary["scheduler"]
        self.pcpus = summary["host"]["pcpus"]
        self.names = [d["name"] for d in summary["domains"]]
        self.nvcpus = [len(d["vcpus"]) for d in summary["domains"]]
        self._sched = [d["sched"] for d in summary["domains"]]
        self._io = [d.get("xentop") for d in summary["domains"]]
        self.mem_kb, self.host_mem_kb = _memory_kb(sc.data)
        # What the toolstack has done to each domain (xentop's "p" flag and
        # which VCPUs are online): from the scenario's actions as their time
        # comes, and from `adjust`.
        self._pauses = [0] * len(self.names)
        self._online = list(self.nvcpus)
        self._actions = self._domain_actions(sc)
        self._next_action = 0
        self._last_states = self.sim.vcpu_states()
        self._last_ns = 0
        self._last_flags: list[str] = [""] * len(self._last_states)
        self.frame = self._frame(0, 0)

    @classmethod
    def start(cls, sc: Scenario, interval_s: float | None = None) -> Monitor:
        """Validate and start monitoring `sc`, sampled every `interval_s`
        simulated seconds (default: its `run.sample_ms`)."""
        return cls(monitored_scenario(sc, interval_s))

    # ------------------------------------------------------------ time

    @property
    def now_ns(self) -> int:
        """Where the simulation's clock stands (the last event it processed)."""
        return self._now_ns

    @property
    def interval_s(self) -> float:
        return self.interval_ns / NS_PER_S

    @property
    def next_sample_ns(self) -> int:
        return min(self._last_ns + self.interval_ns, self.end_ns)

    @property
    def finished(self) -> bool:
        return self._last_ns >= self.end_ns

    def advance(self, until_ns: int | float) -> bool:
        """Simulate up to `until_ns` (at most the end), taking every sample on
        the way; returns whether a new frame was taken."""
        took = False
        until = min(until_ns, self.end_ns)
        while not self.finished:
            sample_ns = self.next_sample_ns
            if until < sample_ns:
                if until > self._now_ns:
                    self._run_until(int(until))
                break
            # One nanosecond before, then at the sample: what grew in between
            # is each VCPU's state just before the sample instant.
            self._run_until(sample_ns - 1)
            before = self.sim.vcpu_states()
            self._run_until(sample_ns)
            self._catch_up_actions(sample_ns)
            self.frame = self._take_sample(sample_ns, before)
            took = True
        return took

    def _run_until(self, t_ns: int) -> None:
        try:
            self._now_ns = self.sim.run_until(t_ns)[0]
        except Exception as exc:  # noqa: BLE001 - translated
            raise from_core(exc, self.scenario.source) from None

    # ------------------------------------------------------------ samples

    def _summary(self) -> dict[str, Any]:
        return json.loads(self.sim.summary(time.perf_counter() - self._wall0))

    def _take_sample(self, t_ns: int, before: list[tuple]) -> Frame:
        states = self.sim.vcpu_states()
        flags = []
        for b, s in zip(before, states, strict=True):
            grew = [s[2 + k] - b[2 + k] for k in range(4)]
            flags.append(STATES[grew.index(max(grew))] if max(grew) > 0 else "")
        if any(self._io):
            summary = self._summary()
            self._io = [d.get("xentop") for d in summary["domains"]]
        prev_states, prev_ns = self._last_states, self._last_ns
        self._last_states, self._last_ns, self._last_flags = states, t_ns, flags
        return self._frame(t_ns, t_ns - prev_ns, prev_states)

    def _frame(self, t_ns: int, dt_ns: int, prev: list[tuple] | None = None) -> Frame:
        prev = prev if prev is not None else self._last_states
        rows: dict[int, list[VcpuRow]] = {d: [] for d in range(len(self.names))}
        running_ns = [0] * len(self.names)
        running_dt = [0] * len(self.names)
        for cur, old, state in zip(self._last_states, prev, self._last_flags, strict=True):
            dom, index, run_ns, ready_ns = cur[0], cur[1], cur[2], cur[3]
            d_run, d_ready = run_ns - old[2], ready_ns - old[3]
            running_ns[dom] += run_ns
            running_dt[dom] += d_run
            rows[dom].append(
                VcpuRow(
                    index=index,
                    state=state,
                    util_pct=_pct(d_run, dt_ns),
                    avg_pct=_pct(run_ns, t_ns),
                    ready_pct=_pct(d_ready, dt_ns),
                )
            )
        domains = [
            DomainRow(
                id=d,
                name=name,
                state=self._flags(d, rows[d]),
                cpu_s=running_ns[d] / NS_PER_S,
                cpu_pct=_pct(running_dt[d], dt_ns),
                vcpus=rows[d],
                sched=dict(self._sched[d]),
                io=dict(self._io[d] or {}),
                mem_kb=self.mem_kb[d],
                mem_pct=_pct(self.mem_kb[d], self.host_mem_kb),
                maxmem_kb=self.mem_kb[d],
                maxmem_pct=_pct(self.mem_kb[d], self.host_mem_kb),
            )
            for d, name in enumerate(self.names)
        ]
        io_columns = [c for c in IO_COLUMNS if any(c[0] in d.io for d in domains)]
        return Frame(t_ns, dt_ns, self.end_ns, self.scheduler, self.pcpus, domains, io_columns)

    def _flags(self, dom: int, vcpus: list[VcpuRow]) -> str:
        """xentop's `dsbcpr` as Xen's getdomaininfo sets them: blocked when
        every online VCPU is halted, running when any VCPU is on a PCPU,
        paused when the toolstack has paused it. A simulated domain never
        dies, shuts down or crashes."""
        online = [v for v in vcpus if v.index < self._online[dom]]
        known = all(v.state for v in vcpus)
        blocked = known and all(v.state == BLOCKED for v in online)
        running = any(v.state == RUNNING for v in vcpus)
        paused = self._pauses[dom] > 0
        return "".join(
            flag if on else "-"
            for flag, on in zip(
                "dsbcpr", (False, False, blocked, False, paused, running), strict=True
            )
        )

    # ------------------------------------------------------------ the toolstack

    @staticmethod
    def _domain_actions(sc: Scenario) -> list[tuple[int, str, dict[str, Any]]]:
        out = []
        for a in sc.data.get("action", []):
            if "domain" in a and ("pause" in a or "vcpus_online" in a):
                out.append((_round_ns(float(a["at_s"]) * 1e9), a["domain"], a))
        return out

    def _catch_up_actions(self, t_ns: int) -> None:
        """Account the scenario's pauses and hotplugs due before `t_ns`. A
        sample shows the state just before its instant, so an action at the
        instant itself shows in the next sample."""
        while self._next_action < len(self._actions):
            at_ns, name, a = self._actions[self._next_action]
            if at_ns >= t_ns:
                break
            self._note_admin(self.names.index(name), a)
            self._next_action += 1

    def _note_admin(self, dom: int, changes: dict[str, Any]) -> None:
        if "vcpus_online" in changes:
            self._online[dom] = int(changes["vcpus_online"])
        if "pause" in changes:
            self._pauses[dom] += 1 if changes["pause"] else -1

    def adjust(self, domain: str, changes: dict[str, Any]) -> None:
        """Change a domain now, as `xl sched-*`, `xl pause`, `xl vcpu-set` or
        `xl vcpu-pin` would: `changes` has the keys of a scenario's
        `[[action]]` (`{"weight": 512}`, `{"cap": 50}`, `{"pause": True}`).
        Raises ScenarioError (nothing changed) if the domain or a change is
        wrong."""
        if domain not in self.names:
            raise unknown_name("domain", domain, self.names, path="adjust.domain")
        if not changes:
            raise ScenarioError(
                "nothing to change; expected key=value, e.g. weight=512 or cap=50",
                path="adjust",
            )
        # The scenario's actions up to now, this one included, came first.
        self._catch_up_actions(self._now_ns + 1)
        try:
            self.sim.adjust_domain(domain, json.dumps(changes))
        except Exception as exc:  # noqa: BLE001 - translated
            raise from_core(exc, None) from None
        dom = self.names.index(domain)
        self._note_admin(dom, changes)
        self._sched = [d["sched"] for d in self._summary()["domains"]]
        self.frame.domains[dom].sched = dict(self._sched[dom])
        if "pause" in changes:
            self.frame.domains[dom].state = self._flags(dom, self.frame.domains[dom].vcpus)

    def shares(self) -> dict[str, int]:
        """Each domain's running ns since time 0, at the simulation's clock."""
        out = dict.fromkeys(self.names, 0)
        for dom, _index, run_ns, *_ in self.sim.vcpu_states():
            out[self.names[dom]] += run_ns
        return out


def _memory_kb(data: dict[str, Any]) -> tuple[list[int], int]:
    """Each domain's `memory_mb` and the host's (default: the domains' sum)
    in kB, as xentop's MEM(k) shows them."""
    doms = [d.get("memory_mb", 0) * 1024 for d in data.get("domain", [])]
    host = data.get("host", {}).get("memory_mb")
    return doms, host * 1024 if host is not None else sum(doms)


def _pct(part_ns: int, whole_ns: int) -> float:
    return part_ns * 100 / whole_ns if whole_ns > 0 else 0.0


def parse_changes(text: str) -> dict[str, Any]:
    """`weight=512 cap=50` as the dict `adjust` takes.
    Values are JSON where they parse as JSON (numbers, true/false, lists),
    else strings (`affinity=0-3`). Raises ScenarioError on a malformed pair."""
    changes: dict[str, Any] = {}
    for part in text.split():
        key, sep, value = part.partition("=")
        if not sep or not key or not value:
            raise ScenarioError(
                f'"{part}" is not key=value; expected e.g. weight=512, cap=50 or pause=true',
                path="adjust",
            )
        try:
            changes[key] = json.loads(value)
        except json.JSONDecodeError:
            changes[key] = value
    return changes
