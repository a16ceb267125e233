"""A real Xen host in `vmsched top`: frames read from `xentop -b` output.

`xentop -b -d SECONDS` prints, every SECONDS, a header line (NAME STATE
CPU(sec) CPU(%) MEM(k) ... SSID, right-aligned) and one line per domain;
with `-v` a `VCPUs(sec):` line follows each domain (each online VCPU's
running seconds), with `-n` and `-x` lines per vif and VBD. `XentopFeed` reads
that text, live through a pipe (`xentop -b -d 1 -v | vmsched top --xentop -`)
or recorded in a file, and offers what `Monitor` offers (`frame`, `advance`,
`finished`, ...), so the same screen and `--batch` frames show a real host.

A line that is not what xentop prints (cut short, a number that is not one,
a state that is not six of `dsbcpr-`) is skipped with a warning on stderr,
never a crash. Per-VCPU bars come from the `-v` lines; without them each
domain has one row, `NAME.all`, its CPU(%) shared out over its VCPUS.
"""

from __future__ import annotations

import math
import queue
import re
import sys
import threading
from collections.abc import Callable, Iterable
from typing import IO, Any

from vmsched.errors import ScenarioError
from vmsched.monitor.model import (
    NS_PER_S,
    RUNNING,
    DomainRow,
    Frame,
    VcpuRow,
)

#: xentop's columns, in its order, and the key each fills in a DomainRow's io.
HEADER = (
    "NAME STATE CPU(sec) CPU(%) MEM(k) MEM(%) MAXMEM(k) MAXMEM(%) VCPUS NETS "
    "NETTX(k) NETRX(k) VBDS VBD_OO VBD_RD VBD_WR VBD_RSECT VBD_WSECT SSID"
).split()
_IO_KEYS = {
    "NETTX(k)": "nettx_kb",
    "NETRX(k)": "netrx_kb",
    "VBD_RD": "vbd_rd",
    "VBD_WR": "vbd_wr",
    "VBD_RSECT": "vbd_rsect",
    "VBD_WSECT": "vbd_wsect",
}
_STATE = re.compile(r"^[d-][s-][b-][c-][p-][r-]$")
_VCPU = re.compile(r"(\d+):\s+(\d+)s")
#: xentop's default delay between frames (seconds).
DEFAULT_DELAY_S = 3.0

Warn = Callable[[str], None]


def _stderr_warning(message: str) -> None:
    print(f"vmsched: warning: {message}", file=sys.stderr)


class ParsedDomain:
    """One domain line (and its `VCPUs(sec):` line, if any)."""

    def __init__(self, name: str, cells: dict[str, str]) -> None:
        self.name = name
        self.state = cells["STATE"]
        self.cpu_s = float(cells["CPU(sec)"])
        self.cpu_pct = float(cells["CPU(%)"])
        self.mem_kb = int(cells["MEM(k)"])
        self.mem_pct = float(cells["MEM(%)"])
        limit, share = cells["MAXMEM(k)"], cells["MAXMEM(%)"]
        self.maxmem_kb = None if limit == "no_limit" else int(limit)
        self.maxmem_pct = None if share == "n/a" else float(share)
        self.vcpus = int(cells["VCPUS"])
        self.io: dict[str, int] = {key: int(cells[col]) for col, key in _IO_KEYS.items()}
        #: Running seconds per online VCPU (from -v), by VCPU number.
        self.vcpu_s: dict[int, int] = {}
        for col in ("NETS", "VBDS", "VBD_OO", "SSID"):
            int(cells[col])


def parse_domain_line(line: str, columns: list[str]) -> ParsedDomain:
    """A domain line of the table headed by `columns`; raises ValueError with
    what is wrong. The name may hold spaces (`xentop -f`): the cells are
    counted from the right."""
    tokens = line.replace("no limit", "no_limit").split()
    n_after = len(columns) - 1
    if len(tokens) < n_after + 1:
        raise ValueError(f"{len(tokens)} fields; expected {len(columns)} (one per column)")
    name = " ".join(tokens[: len(tokens) - n_after])
    cells = dict(zip(columns[1:], tokens[len(tokens) - n_after :], strict=True))
    if not _STATE.match(cells.get("STATE", "")):
        raise ValueError(f'state "{cells.get("STATE")}" is not six of the flags dsbcpr or -')
    missing = [c for c in HEADER if c not in columns]
    if missing:
        raise ValueError(f"no column {', '.join(missing)} in the header")
    try:
        d = ParsedDomain(name, cells)
    except ValueError as exc:
        raise ValueError(f"a cell is not a number ({exc})") from None
    if not all(math.isfinite(x) and x >= 0 for x in (d.cpu_s, d.cpu_pct, d.mem_pct)):
        raise ValueError("a number is negative or not finite")
    return d


def parse_frames(lines: Iterable[str], source: str, warn: Warn = _stderr_warning):
    """Yield each frame of xentop batch output as a list of ParsedDomain, as
    soon as the next header (or the end) shows it is complete."""
    columns: list[str] | None = None
    frame: list[ParsedDomain] = []
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        words = line.split()
        if not words:
            continue
        if words[0] == "NAME" and "STATE" in words:
            if columns is not None:
                yield frame
            columns, frame = words, []
            continue
        if words[0] == "VCPUs(sec):" or (line.startswith(" ") and _VCPU.search(line) and frame):
            if frame and columns is not None:
                frame[-1].vcpu_s.update({int(a): int(b) for a, b in _VCPU.findall(line)})
            continue
        if re.match(r"^(Net\d+ RX:|VBD |Tmem:|xentop - |\d+ domains:|Mem: )", line.strip()):
            continue  # -n, -x, -t detail lines and the interactive summary
        if columns is None:
            warn(f"{source}:{number}: skipped, before any xentop header line: {line[:60]!r}")
            continue
        try:
            frame.append(parse_domain_line(line, columns))
        except ValueError as exc:
            warn(f"{source}:{number}: skipped, not a xentop domain line ({exc}): {line[:60]!r}")
    if columns is not None:
        yield frame


class XentopFeed:
    """Frames of a real host's `xentop -b` output, offered as `Monitor`
    offers a simulation's. `interval_s` is the `-d` xentop was run with."""

    scheduler = "xen (xentop)"

    def __init__(
        self,
        stream: IO[str],
        source: str,
        interval_s: float | None = None,
        warn: Warn = _stderr_warning,
        blocking: bool = False,
    ) -> None:
        #: Whether `advance` waits for the next frame (`--batch`) or takes
        #: only what has arrived (the screen, which must stay responsive).
        self.blocking = blocking
        self._first_vcpu: dict[tuple[str, int], int] = {}
        self.interval_ns = round((interval_s or DEFAULT_DELAY_S) * NS_PER_S)
        self.source = source
        self._frames: queue.Queue[list[ParsedDomain] | None] = queue.Queue()
        self._eof = False
        self._count = 0
        self._first: dict[str, float] = {}
        self._prev: dict[str, ParsedDomain] = {}
        self.names: list[str] = []

        def read() -> None:
            try:
                for f in parse_frames(stream, source, warn):
                    self._frames.put(f)
            except (OSError, UnicodeDecodeError) as exc:
                warn(f"{source}: reading stopped ({exc})")
            finally:
                self._frames.put(None)

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        self.frame = Frame(0, 0, self._end_ns, self.scheduler, 0, [], [], source=source)

    @classmethod
    def open(cls, path: str, interval_s: float | None = None, blocking: bool = False) -> XentopFeed:
        """Read `path` (`-` for standard input); ScenarioError if it cannot be opened."""
        if path == "-":
            return cls(sys.stdin, "<stdin>", interval_s, blocking=blocking)
        try:
            stream = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - the reader thread owns it
        except OSError as exc:
            raise ScenarioError(
                f"cannot be read ({exc.strerror}); expected a file of `xentop -b` output or -",
                file=path,
                path="--xentop",
            ) from None
        return cls(stream, path, interval_s, blocking=blocking)

    @property
    def _end_ns(self) -> float:
        return self._count * self.interval_ns if self._eof else math.inf

    @property
    def now_ns(self) -> int:
        return self.frame.time_ns

    @property
    def interval_s(self) -> float:
        return self.interval_ns / NS_PER_S

    @property
    def next_sample_ns(self) -> int:
        return self._count * self.interval_ns

    @property
    def finished(self) -> bool:
        return self._eof and self._frames.empty()

    def advance(self, until_ns: int | float) -> bool:
        """Take every frame read so far whose time is due by `until_ns`
        (frame k stands at k × interval); returns whether one was taken."""
        took = False
        while not self._eof and self.next_sample_ns <= until_ns:
            try:
                item = self._frames.get(block=self.blocking)
            except queue.Empty:
                break
            if item is None:
                self._eof = True
                self.frame.end_ns = self._end_ns
                break
            self.frame = self._to_frame(item)
            self._count += 1
            took = True
        return took

    def _to_frame(self, doms: list[ParsedDomain]) -> Frame:
        t_ns = self._count * self.interval_ns
        dt_ns = self.interval_ns if self._count else 0
        rows = []
        for i, d in enumerate(doms):
            first = self._first.setdefault(d.name, d.cpu_s)
            prev = self._prev.get(d.name)
            rows.append(
                DomainRow(
                    id=i,
                    name=d.name,
                    state=d.state,
                    cpu_s=d.cpu_s,
                    cpu_pct=d.cpu_pct,
                    vcpus=self._vcpu_rows(d, prev, first, t_ns),
                    sched={},
                    io=dict(d.io),
                    mem_kb=d.mem_kb,
                    mem_pct=d.mem_pct,
                    maxmem_kb=d.maxmem_kb,
                    maxmem_pct=d.maxmem_pct,
                )
            )
        self._prev = {d.name: d for d in doms}
        self.names = [d.name for d in doms]
        io_cols = [(k, label) for label, k in _IO_KEYS.items()]
        return Frame(
            t_ns, dt_ns, self._end_ns, self.scheduler, 0, rows, io_cols, source=self.source
        )

    def _vcpu_rows(
        self, d: ParsedDomain, prev: ParsedDomain | None, first_cpu_s: float, t_ns: int
    ) -> list[VcpuRow]:
        """Per VCPU from the `-v` line; else one row for the whole domain."""
        t_s, dt_s = t_ns / NS_PER_S, self.interval_s
        state = RUNNING if d.state[5] == "r" else ""
        if d.vcpu_s:
            rows = []
            for v, secs in sorted(d.vcpu_s.items()):
                first = self._first_vcpu.setdefault((d.name, v), secs)
                before = prev.vcpu_s.get(v, secs) if prev else secs
                util = min(100.0, (secs - before) * 100 / dt_s) if prev else 0.0
                avg = min(100.0, (secs - first) * 100 / t_s) if t_s else 0.0
                rows.append(VcpuRow(v, state, util, avg, math.nan))
            return rows
        n = max(d.vcpus, 1)
        avg = (d.cpu_s - first_cpu_s) * 100 / (t_s * n) if t_s else 0.0
        return [VcpuRow(-1, state, d.cpu_pct / n, min(avg, 100.0), math.nan)]

    def adjust(self, domain: str, changes: dict[str, Any]) -> None:
        raise ScenarioError(
            "a real host's domains are changed with xl on the host, not from vmsched top",
            path="adjust",
        )
