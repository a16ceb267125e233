"""A frame as text: the header lines, the cells of the domain and VCPU
tables, and the plain-text frame `vmsched top --batch` prints."""

from __future__ import annotations

import math

from vmsched.monitor.model import DomainRow, Frame, VcpuRow

#: Characters in a VCPU's utilisation bar.
BAR_WIDTH = 20

DOMAIN_COLUMNS = ("NAME", "STATE", "CPU(sec)", "CPU(%)", "VCPUS")
VCPU_COLUMNS = ("VCPU", "STATE", "UTIL(%)", "AVG(%)", "READY(%)", "UTILISATION")


def speed_label(speed: float) -> str:
    """`10x`, `0.5x` or `max`."""
    return "max" if math.isinf(speed) else f"{speed:g}x"


def header_lines(frame: Frame, speed: float, interval_s: float) -> list[str]:
    """xentop's summary lines: where the run is, the domains by state, the CPUs."""
    end = f"{frame.end_ns / 1e9:g} s"
    where = "finished" if frame.finished else f"speed {speed_label(speed)}"
    n = len(frame.domains)
    return [
        f"vmsched top - {frame.time_s:.3f} s of {end} simulated, {where}, "
        f"scheduler {frame.scheduler}",
        f"{n} domain{'s' if n != 1 else ''}: {frame.count('r')} running, "
        f"{frame.count('b')} blocked, {frame.count('p')} paused, {frame.count('c')} crashed, "
        f"{frame.count('d')} dying, {frame.count('s')} shutdown",
        f"CPUs: {frame.pcpus}, sampled every {interval_s:g} s simulated",
    ]


def domain_columns(frame: Frame) -> list[str]:
    """The domain table's column names: xentop's, the I/O ones the core
    reports, and the scheduler parameters."""
    return [*DOMAIN_COLUMNS, *(label for _, label in frame.io_columns), "SCHED"]


def domain_cells(frame: Frame, d: DomainRow) -> list[str]:
    io = [_io_cell(d.io.get(key)) for key, _ in frame.io_columns]
    sched = ",".join(f"{k}={v}" for k, v in d.sched.items()) or "-"
    return [d.name, d.state, f"{d.cpu_s:.2f}", f"{d.cpu_pct:.1f}", str(len(d.vcpus)), *io, sched]


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
    return [
        f"{d.name}.v{v.index}",
        v.state or "-",
        f"{v.util_pct:.1f}",
        f"{v.avg_pct:.1f}",
        f"{v.ready_pct:.1f}",
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
