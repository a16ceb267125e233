"""A frame as text: the header lines, the cells of the domain and VCPU
tables, and the plain-text frame `vmsched top --batch` prints."""

from __future__ import annotations

import math

from vmsched.monitor.model import IO_COLUMNS, DomainRow, Frame, VcpuRow

#: Characters in a VCPU's utilisation bar.
BAR_WIDTH = 20

#: xentop's columns, in its order (tools/xentop/xentop.c, `fields[]`).
DOMAIN_COLUMNS = (
    "NAME",
    "STATE",
    "CPU(sec)",
    "CPU(%)",
    "MEM(k)",
    "MEM(%)",
    "MAXMEM(k)",
    "MAXMEM(%)",
    "VCPUS",
    "NETS",
    "NETTX(k)",
    "NETRX(k)",
    "VBDS",
    "VBD_OO",
    "VBD_RD",
    "VBD_WR",
    "VBD_RSECT",
    "VBD_WSECT",
    "SSID",
)
VCPU_COLUMNS = ("VCPU", "STATE", "UTIL(%)", "AVG(%)", "READY(%)", "UTILISATION")


def speed_label(speed: float) -> str:
    """`10x`, `0.5x` or `max`."""
    return "max" if math.isinf(speed) else f"{speed:g}x"


def header_lines(frame: Frame, speed: float, interval_s: float) -> list[str]:
    """xentop's summary lines: where the run is, the domains by state, the CPUs."""
    end = f"{frame.end_ns / 1e9:g} s"
    where = "finished" if frame.finished else f"speed {speed_label(speed)}"
    n = len(frame.domains)
    if frame.source:
        return [
            f"vmsched top - {frame.time_s:.3f} s of {frame.source}, a real host, "
            f"speed {speed_label(speed)}",
            f"{n} domain{'s' if n != 1 else ''}: {frame.count('r')} running, "
            f"{frame.count('b')} blocked, {frame.count('p')} paused, "
            f"{frame.count('c')} crashed, {frame.count('d')} dying, "
            f"{frame.count('s')} shutdown",
            f"frames every {interval_s:g} s (xentop -d)",
        ]
    return [
        f"vmsched top - {frame.time_s:.3f} s of {end} simulated, {where}, "
        f"scheduler {frame.scheduler}",
        f"{n} domain{'s' if n != 1 else ''}: {frame.count('r')} running, "
        f"{frame.count('b')} blocked, {frame.count('p')} paused, {frame.count('c')} crashed, "
        f"{frame.count('d')} dying, {frame.count('s')} shutdown",
        f"CPUs: {frame.pcpus}, sampled every {interval_s:g} s simulated",
    ]


def domain_columns(frame: Frame) -> list[str]:
    """The domain table's column names: xentop's, then the scheduler
    parameters (SCHED)."""
    return [*DOMAIN_COLUMNS, "SCHED"]


#: The screen's domain columns: xentop's CPU ones (the I/O ones follow when
#: the core has them); the full set is too wide for a terminal, `--batch`
#: prints it.
SCREEN_COLUMNS = ("NAME", "STATE", "CPU(sec)", "CPU(%)", "VCPUS")


def screen_columns(frame: Frame) -> list[str]:
    """The screen's domain table: SCREEN_COLUMNS, the I/O columns the core
    reports, and the scheduler parameters."""
    return [*SCREEN_COLUMNS, *(label for _, label in frame.io_columns), "SCHED"]


def screen_cells(frame: Frame, d: DomainRow) -> list[str]:
    io = [_io_cell(d.io.get(key)) for key, _ in frame.io_columns]
    sched = ",".join(f"{k}={v}" for k, v in d.sched.items()) or "-"
    return [d.name, d.state, f"{d.cpu_s:.2f}", f"{d.cpu_pct:.1f}", str(len(d.vcpus)), *io, sched]


def domain_cells(frame: Frame, d: DomainRow) -> list[str]:
    """xentop's cells of a domain. MAXMEM is MEM (no ballooning is
    simulated); VBD_OO is 0 (a simulated ring never turns a request away)
    and SSID 0 (no XSM label); the I/O counters are `-` if the core has none."""
    io = {key: _io_cell(d.io.get(key)) for key, _ in IO_COLUMNS}
    sched = ",".join(f"{k}={v}" for k, v in d.sched.items()) or "-"
    mem = [str(d.mem_kb), f"{d.mem_pct:.1f}"]
    maxmem = [
        "no limit" if d.maxmem_kb is None else str(d.maxmem_kb),
        "n/a" if d.maxmem_pct is None else f"{d.maxmem_pct:.1f}",
    ]
    return [
        d.name,
        d.state,
        f"{d.cpu_s:.2f}",
        f"{d.cpu_pct:.1f}",
        *mem,
        *maxmem,
        str(len(d.vcpus)),
        str(d.nets),
        io["nettx_kb"],
        io["netrx_kb"],
        str(d.vbds),
        "0",
        io["vbd_rd"],
        io["vbd_wr"],
        io["vbd_rsect"],
        io["vbd_wsect"],
        "0",
        sched,
    ]


def _io_cell(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.0f}"
    return "-" if v is None else str(v)


def bar(util_pct: float, avg_pct: float, width: int = BAR_WIDTH) -> str:
    """`[#####---|------]`: `#` fills the current utilisation, `|` marks the
    average."""
    filled = min(width, max(0, round(util_pct * width / 100)))
    cells = ["#"] * filled + ["-"] * (width - filled)
    cells[min(width - 1, max(0, int(avg_pct * width / 100)))] = "|"
    return "[" + "".join(cells) + "]"


def vcpu_cells(d: DomainRow, v: VcpuRow) -> list[str]:
    """A VCPU's cells; index -1 is a whole domain's row (a real host's
    xentop without -v), a NaN is a value the source does not give (`-`)."""
    return [
        f"{d.name}.v{v.index}" if v.index >= 0 else f"{d.name}.all",
        v.state or "-",
        f"{v.util_pct:.1f}",
        f"{v.avg_pct:.1f}",
        "-" if math.isnan(v.ready_pct) else f"{v.ready_pct:.1f}",
        bar(v.util_pct, v.avg_pct),
    ]


def _table(columns: list[str], rows: list[list[str]]) -> list[str]:
    """Left-aligned first and last columns, right-aligned numbers."""
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
    last = len(columns) - 1

    def line(cells: list[str]) -> str:
        out = []
        for i, (cell, w) in enumerate(zip(cells, widths, strict=True)):
            out.append(cell.ljust(w) if i in (0, 1, last) else cell.rjust(w))
        return "  ".join(out).rstrip()

    return [line(columns), *(line(r) for r in rows)]


def frame_text(frame: Frame, speed: float, interval_s: float, sort: str = "id") -> str:
    """One frame of `vmsched top --batch`: header, domain table, VCPU table."""
    domains = frame.sorted_domains(sort)
    lines = header_lines(frame, speed, interval_s)
    lines.append("")
    lines += _table(domain_columns(frame), [domain_cells(frame, d) for d in domains])
    lines.append("")
    lines += _table(list(VCPU_COLUMNS), [vcpu_cells(d, v) for d in domains for v in d.vcpus])
    return "\n".join(lines) + "\n"
