"""The Python API: run a scenario, get its results::

    r = vmsched.run("scenarios/credit-three-vms.toml")
    r.summary        # dict, the same as summary.json
    r.timeseries     # pandas DataFrame: time_s, domain, vcpu, cpu_pct, runnable_pct, blocked_pct,
                     # executions and the I/O counters (docs/metrics.md)
    r.plot.cpu()     # matplotlib Figures: CPU share over time, wake-up latency (vmsched.plot)
    r.save("results/run1")

`run` also takes a `Scenario` built as Python objects, or a plain dict. With
`out`, `trace=True` and `xentrace=True` also stream the scheduler's events
into `out/trace.txt` (ftrace text, for the Perfetto UI) and
`out/trace.xentrace` (Xen's binary trace records); docs/trace.md. A
cluster scenario (`[[host]]` tables) runs all its hosts together; its summary
has `hosts` (each host's own summary) and `domains` (every domain, with its
`host`), and its time series a `host` column.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence

from vmsched import _core, budget
from vmsched.errors import OutputError, ScenarioError, from_core
from vmsched.output import (
    OutputSet,
    check_out,
    check_out_path,
    make_private_file,
    probe_writable,
    pure,
    unwritable,
)
from vmsched.scenario import Scenario, read

# `typing` is not loaded at run time (it is a tenth of `vmsched run`'s start-up):
# annotations are not evaluated (`from __future__ import annotations`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# `pathlib` is loaded where a Path is made (not by `vmsched run --out`:
# vmsched.output's note).

#: A run that takes longer than this (wall seconds) shows a progress bar.
PROGRESS_AFTER_S = 2.0
#: Number of slices a run is cut into, so progress can be reported.
CHUNKS = 200

ProgressFn = Callable[[float, float], None]

#: A screen's worth of domains: `vmsched run` on a host with more shows the
#: first ones and one line for the rest (summary.json has every domain).
SHOWN_DOMAINS = 30

#: The file each trace option writes into the output folder.
TRACE_FILES = {"trace": "trace.txt", "xentrace": "trace.xentrace"}


class Result:
    """The results of one run (of one host, or of a cluster)."""

    def __init__(
        self,
        scenario: Scenario,
        summary: dict[str, Any],
        series: dict[str, Any] | list[tuple[str, dict[str, Any]]],
        traces: dict[str, Path] | None = None,
    ):
        self.scenario = scenario
        self._summary: dict[str, Any] | None = summary
        self._series_raw = series
        self._df = None
        #: The trace files the run wrote, by option ("trace", "xentrace").
        self.traces = dict(traces or {})
        # A lazy result's engine (`_of_sim`): (the simulation, the wall
        # seconds its summary gives, the scenario's JSON text).
        self._sim: tuple[Any, float, str] | None = None
        # Its summary.json bytes and cut summary (`_lazy_texts`).
        self._texts: tuple[bytes, str] | None = None
        # Its cut summary, kept when summary.json was written (`_write_into`).
        self._head: str | None = None

    @classmethod
    def _of_sim(
        cls, scenario: Scenario, sim: Any, wall_s: float, text: str, traces: dict[str, Path]
    ) -> Result:
        """The result of one host's finished simulation `sim`, whose summary
        and time series are taken from it when first used (`vmsched.run`
        with `lazy=True`); `text` is the scenario as the core read it."""
        result = cls(scenario, None, None, traces)
        result._sim = (sim, wall_s, text)
        return result

    def _lazy_texts(self) -> tuple[bytes, str]:
        """A lazy result's summary.json bytes and summary cut after
        SHOWN_DOMAINS (`_core.Sim.summary_texts`), made once."""
        if self._texts is None:
            sim, wall_s, text = self._sim
            self._texts = sim.summary_texts(wall_s, text, SHOWN_DOMAINS)
        return self._texts

    def _release(self) -> None:
        """Let the engine go once nothing more is taken from it."""
        if self._summary is not None and self._series_raw is not None:
            self._sim = None
            self._texts = None
            self._head = None

    @property
    def summary(self) -> dict[str, Any]:
        """The summary (a dict, the same as summary.json)."""
        if self._summary is None:
            sim, wall_s, _text = self._sim
            summary = json.loads(sim.summary(wall_s))
            # The scenario as run (after any overrides), so a result explains itself.
            summary["scenario"] = self.scenario.data
            self._summary = summary
            self._release()
        return self._summary

    @summary.setter
    def summary(self, value: dict[str, Any]) -> None:
        self._summary = value

    @property
    def _series(self) -> dict[str, Any] | list[tuple[str, dict[str, Any]]]:
        if self._series_raw is None:
            self._series_raw = self._sim[0].series()
            self._release()
        return self._series_raw

    def _summary_head(self) -> dict[str, Any]:
        """The summary, or for a lazy result one whose domain list stops
        after the first SHOWN_DOMAINS, with `_rest` saying what a table shows
        of the others (`_core.Sim.summary_texts`), and no `scenario`. What
        `vmsched run` prints from, without holding every domain of a large
        host as Python objects."""
        if self._summary is not None:
            return self._summary
        if self._head is None:
            self._head = self._lazy_texts()[1]
        return json.loads(self._head)

    def _summary_text(self) -> str:
        """`json.dumps(self.summary, indent=2)`, without building the summary
        of a lazy result."""
        if self._summary is not None:
            return _core.indent_json(json.dumps(self._summary))
        return self._lazy_texts()[0].decode()[:-1]

    @property
    def is_cluster(self) -> bool:
        """Is this the result of a cluster of hosts?"""
        if self._summary is None:
            return False  # a lazy result is one host's
        return bool(self.summary.get("cluster"))

    @property
    def timeseries(self):
        """One row per (sample time, domain or VCPU); `vcpu` is null on domain
        rows. A cluster's has a `host` column after `time_s`."""
        if self._df is None:
            if isinstance(self._series, list):
                self._df = cluster_series_frame(self._series)
            else:
                self._df = series_frame(self._series)
        return self._df

    @property
    def plot(self):
        """Figures of this run: `r.plot.cpu()`, `r.plot.latency()` (vmsched.plot.Plots);
        of a cluster, one host's: `r.host("n1").plot.cpu()`."""
        from vmsched.plot import Plots

        if self.is_cluster:
            raise ScenarioError(
                "the figures are of one host; expected r.host(NAME).plot on a cluster's result",
                path="plot",
            )
        return Plots(self)

    def host(self, name: str) -> Result:
        """One host of a cluster's result, as a single-host Result (its own
        summary and time series)."""
        if not self.is_cluster:
            raise KeyError("not a cluster's result; it has one host")
        names = [h["name"] for h in self.summary["hosts"]]
        if name not in names:
            raise KeyError(f"no host {name!r}; the hosts are {', '.join(names)}")
        i = names.index(name)
        return Result(self.scenario, self.summary["hosts"][i], self._series[i][1])

    def _label(self, d: dict[str, Any]) -> str:
        return f"{d['host']}/{d['name']}" if "host" in d else d["name"]

    def domain(self, name: str) -> dict[str, Any]:
        """The summary of one domain, by name (`host/name` in a cluster; a
        bare name if only one host has it)."""
        doms = self.summary["domains"]
        found = [d for d in doms if self._label(d) == name] or [
            d for d in doms if d["name"] == name
        ]
        if len(found) == 1:
            return found[0]
        names = ", ".join(self._label(d) for d in doms)
        if found:
            raise KeyError(f"{name!r} is on several hosts; name one of {names}")
        raise KeyError(f"no domain {name!r}; the domains are {names}")

    def cpu_pct(self) -> dict[str, float]:
        """CPU % per domain (xentop's convention: 100 = one PCPU); keyed
        `host/name` in a cluster."""
        return {self._label(d): d["cpu_pct"] for d in self.summary["domains"]}

    def timeseries_table(self):
        """The time series as a pyarrow Table (what timeseries.parquet holds),
        built from the engine's columns without going through pandas."""
        if isinstance(self._series, list):
            return cluster_series_table(self._series)
        return series_table(self._series)

    def save(self, out: str | Path) -> Path:
        """Write summary.json and timeseries.parquet into `out`, both or
        neither (vmsched.output). Raises OutputError if they cannot be written."""
        with OutputSet(out) as staged:
            self._write_into(staged)
        return staged.out

    def _write_into(self, staged: OutputSet, sim: Any = None) -> None:
        """Write this result's files into a staging folder; given the
        single-host simulation it came from, the series is encoded by the core."""
        summary = staged.path_text("summary.json")
        if self._summary is None and self._texts is None:
            # What json.dumps(self.summary, indent=2) writes, from the core,
            # a piece at a time (the cut summary is kept for the table).
            engine, wall_s, text = self._sim
            with open(summary, "wb") as f:
                self._head = engine.write_summary(wall_s, text, SHOWN_DOMAINS, f)
        elif self._summary is None:
            with open(summary, "wb") as f:
                f.write(self._texts[0])
        else:
            with open(summary, "w") as f:
                f.write(self._summary_text() + "\n")
        series = staged.path_text("timeseries.parquet")
        if sim is not None and not self.is_cluster:
            write_series(sim, sim.series_rows(), series)
        else:
            write_table(self.timeseries_table(), series)

    def __repr__(self) -> str:
        shares = ", ".join(f"{k}={v:.1f}%" for k, v in self.cpu_pct().items())
        if self.is_cluster:
            return f"<Result cluster of {len(self.summary['hosts'])} hosts: {shares}>"
        return f"<Result {self.summary['scheduler']}: {shares}>"


#: The columns after the CPU shares: executions on every row, then the
#: domain's I/O counters (null on VCPU rows); docs/metrics.md.
COUNT_COLUMNS = ("executions",)
IO_COLUMNS = (
    "io_count",
    "nettx_pkts",
    "nettx_bytes",
    "netrx_pkts",
    "netrx_bytes",
    "vbd_rd",
    "vbd_wr",
)


def series_frame(raw: dict[str, Any]):
    """Turn the core's raw columns into a DataFrame."""
    import numpy as np
    import pandas as pd

    names = raw["domain_names"]
    dom_idx = np.frombuffer(raw["domain"], dtype="<u4")
    vcpu = np.frombuffer(raw["vcpu"], dtype="<i4")
    df = pd.DataFrame(
        {
            "time_s": np.frombuffer(raw["time_s"], dtype="<f8"),
            "domain": pd.Categorical.from_codes(dom_idx.astype("int64"), categories=names)
            if len(names)
            else pd.Categorical([]),
            "vcpu": pd.array(np.where(vcpu < 0, 0, vcpu), dtype="Int32"),
            "cpu_pct": np.frombuffer(raw["cpu_pct"], dtype="<f4").astype("float64"),
            "runnable_pct": np.frombuffer(raw["runnable_pct"], dtype="<f4").astype("float64"),
            "blocked_pct": np.frombuffer(raw["blocked_pct"], dtype="<f4").astype("float64"),
        }
    )
    df.loc[vcpu < 0, "vcpu"] = pd.NA
    df["domain"] = df["domain"].astype(str)
    for name in COUNT_COLUMNS:
        df[name] = np.frombuffer(raw[name], dtype="<u8")
    on_vcpu_rows = vcpu >= 0
    for name in IO_COLUMNS:
        values = np.frombuffer(raw[name], dtype="<u8").copy()
        df[name] = pd.arrays.IntegerArray(values, on_vcpu_rows.copy())
    return df


def cluster_series_frame(raw: list[tuple[str, dict[str, Any]]]):
    """Each host's frame with a `host` column (after `time_s`), one after another."""
    import pandas as pd

    frames = []
    for host, columns in raw:
        df = series_frame(columns)
        df.insert(1, "host", host)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def series_table(raw: dict[str, Any]):
    """The core's raw columns as a pyarrow Table: each column's bytes are
    wrapped as they are (shares are widened from float32 to float64, the
    type the DataFrame has). Reads back with pandas as the same DataFrame
    as `series_frame`. Neither pandas nor pyarrow.compute is imported."""
    import numpy as np  # pyarrow imports it anyway
    import pyarrow as pa

    n = raw["rows"]

    def wrap(kind, key: str, valid: str | None = None):
        bitmap = None if valid is None else pa.py_buffer(raw[valid])
        return pa.Array.from_buffers(kind, n, [bitmap, pa.py_buffer(raw[key])])

    domain = [None, pa.py_buffer(raw["domain_offsets"]), pa.py_buffer(raw["domain_data"])]
    columns = {
        "time_s": wrap(pa.float64(), "time_s"),
        "domain": pa.Array.from_buffers(pa.large_string(), n, domain),
        "vcpu": wrap(pa.int32(), "vcpu", "vcpu_rows"),
    }
    for name in ("cpu_pct", "runnable_pct", "blocked_pct"):
        wide = np.frombuffer(raw[name], dtype="<f4").astype("<f8")
        columns[name] = pa.Array.from_buffers(pa.float64(), n, [None, pa.py_buffer(wide)])
    for name in COUNT_COLUMNS:
        columns[name] = wrap(pa.uint64(), name)
    for name in IO_COLUMNS:
        columns[name] = wrap(pa.uint64(), name, "domain_rows")
    return pa.Table.from_arrays(list(columns.values()), names=list(columns))


def _repeated(text: str, n: int):
    """A pyarrow large_string array of `n` times `text`, from its buffers
    (`pyarrow.array` on a list would import pandas to inspect it)."""
    import array

    import pyarrow as pa

    data = text.encode()
    offsets = array.array("q", range(0, (n + 1) * len(data), len(data)) if data else [0] * (n + 1))
    if sys.byteorder != "little":
        offsets.byteswap()
    buffers = [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data * n)]
    return pa.Array.from_buffers(pa.large_string(), n, buffers)


def cluster_series_table(raw: list[tuple[str, dict[str, Any]]]):
    """Each host's table with a `host` column (after `time_s`), one after another."""
    import pyarrow as pa

    tables = []
    for host, columns in raw:
        t = series_table(columns)
        tables.append(t.add_column(1, "host", _repeated(host, t.num_rows)))
    return pa.concat_tables(tables)


#: How pandas reads back each Arrow type of the series (the DataFrame's dtypes).
_PANDAS_TYPES = {
    "double": ("float64", "float64"),
    "large_string": ("unicode", "object"),
    "int32": ("int32", "Int32"),
    "uint64": ("uint64", "uint64"),
}


#: One host's series columns and their Arrow types (`series_table`'s schema).
SERIES_TYPES = (
    ("time_s", "double"),
    ("domain", "large_string"),
    ("vcpu", "int32"),
    ("cpu_pct", "double"),
    ("runnable_pct", "double"),
    ("blocked_pct", "double"),
    *((name, "uint64") for name in COUNT_COLUMNS + IO_COLUMNS),
)


def _pandas_metadata(table) -> bytes:
    """The schema metadata pandas writes with a DataFrame, so that
    `pandas.read_parquet` gives back `Result.timeseries` exactly (nullable
    integer columns, a range index) without pandas writing the file."""
    fields = [(field.name, str(field.type)) for field in table.schema]
    return _pandas_metadata_of(fields, table.num_rows)


def _pandas_metadata_of(fields: Sequence[tuple[str, str]], rows: int) -> bytes:
    """`_pandas_metadata` of columns given as (name, Arrow type) and a row count."""
    columns = []
    for name, arrow_type in fields:
        pandas_type, numpy_type = _PANDAS_TYPES[arrow_type]
        if name in IO_COLUMNS:
            numpy_type = "UInt64"
        columns.append(
            {
                "name": name,
                "field_name": name,
                "pandas_type": pandas_type,
                "numpy_type": numpy_type,
                "metadata": None,
            }
        )
    meta = {
        "index_columns": [{"kind": "range", "name": None, "start": 0, "stop": rows, "step": 1}],
        "column_indexes": [
            {
                "name": None,
                "field_name": None,
                "pandas_type": "unicode",
                "numpy_type": "object",
                "metadata": {"encoding": "UTF-8"},
            }
        ],
        "columns": columns,
        "attributes": {},
        "creator": {"library": "vmsched", "version": _core.__version__},
    }
    return json.dumps(meta).encode()


def prepare_out_dir(out: str | Path) -> Path:
    """Create the output folder, or say clearly why it cannot be written."""
    p = check_out_path(out)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe_writable(p)
    except OSError as exc:
        raise ScenarioError(
            f"cannot be written ({exc.strerror}); expected a writable output folder", file=str(out)
        ) from None
    return p


def _new_file_mode() -> int:
    """The permissions `open()` gives a new file (0o666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _write_whole(path: Path, fill: Callable[[str], object]) -> None:
    """Create `path` whole or not at all: `fill` writes a temporary file in the
    same folder, which then takes the place of `path`."""
    from pathlib import Path

    path = Path(path)
    tmp = make_private_file(path.parent, f".{path.name}.")
    try:
        fill(tmp)
        # The new file is private (0600); results are ordinary files.
        os.chmod(tmp, _new_file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write text or bytes to `path`, whole or not at all."""
    data = text.encode() if isinstance(text, str) else text

    def fill(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)

    _write_whole(path, fill)


def write_parquet_atomic(df, path: Path) -> None:
    """Write a DataFrame as Parquet, whole or not at all."""
    _write_whole(path, lambda tmp: df.to_parquet(tmp, index=False))


def write_table(table, path: str | Path) -> None:
    """Write the series' pyarrow Table as Parquet that pandas reads back as
    `Result.timeseries` (into a run's staging folder, vmsched.output)."""
    import pyarrow.parquet as pq

    pq.write_table(table.replace_schema_metadata({b"pandas": _pandas_metadata(table)}), path)


def write_series(sim: Any, rows: int, path: str | Path) -> None:
    """Write one host's series of `rows` rows straight from the engine
    (`_core.Sim`): the core encodes the Parquet file a column at a time
    into it (`Sim.write_series_parquet`), which pandas reads back as
    `write_table`'s, and pyarrow is not loaded."""
    meta = _pandas_metadata_of(SERIES_TYPES, rows).decode()
    with open(path, "wb") as f:
        sim.write_series_parquet(meta, f)


class _TerminalProgress:
    """A rich progress bar that appears only once a run has taken PROGRESS_AFTER_S."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.start = time.monotonic()
        self.bar = None
        self.task = None
        self.enabled = sys.stderr.isatty()

    def __call__(self, now_s: float, end_s: float) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < PROGRESS_AFTER_S or now_s >= end_s:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            # On stderr, like the check above: stdout may carry results (--json).
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed:.1f}/{task.total:.1f} simulated s"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=end_s)
        self.bar.update(self.task, completed=now_s)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


class _NotebookProgress:
    """Progress in Jupyter (IPython without a terminal): one line of text,
    updated in place, that appears once a run has taken PROGRESS_AFTER_S."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.start = time.monotonic()
        self.handle = None

    def _text(self, now_s: float, end_s: float) -> str:
        pct = 100 * now_s / end_s if end_s > 0 else 100.0
        filled = int(pct / 5)
        cells = "#" * filled + "-" * (20 - filled)
        return f"{self.label} [{cells}] {now_s:.1f}/{end_s:.1f} simulated s"

    def __call__(self, now_s: float, end_s: float) -> None:
        if self.handle is None:
            if time.monotonic() - self.start < PROGRESS_AFTER_S or now_s >= end_s:
                return
            from IPython.display import display

            self.handle = display(self._text(now_s, end_s), display_id=True)
        else:
            self.handle.update(self._text(now_s, end_s))

    def close(self) -> None:
        if self.handle is not None:
            self.handle.update(f"{self.label}: done")


def _in_notebook() -> bool:
    """Is this an IPython kernel (Jupyter), as opposed to a terminal?"""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and hasattr(shell, "kernel")


def make_progress(label: str) -> _TerminalProgress | _NotebookProgress | None:
    """The progress display of a run: a bar on a terminal, a line in
    Jupyter, nothing elsewhere (a pipe, a file, CI)."""
    if sys.stderr.isatty():
        return _TerminalProgress(label)
    if _in_notebook():
        return _NotebookProgress(label)
    return None


def check_budget(sc: Scenario) -> None:
    """Refuse a run that would need more memory than the limit (vmsched.budget)."""
    budget.check(sc.data, sc.source)


def _check_trace_space(sc: Scenario, targets: dict[str, Path], out: str | Path | None) -> None:
    """Refuse a traced run whose traces would not fit (vmsched.budget's
    pilot), before anything is written."""

    def make_sim(text: str) -> Any:
        try:
            return _core.Sim(text)
        except Exception as exc:  # noqa: BLE001 - translated
            raise from_core(exc, sc.source) from None

    # A scratch folder that cannot be written leaves the estimate out: the
    # run itself says whether its own files can be.
    import contextlib

    with contextlib.suppress(OSError):
        budget.check_traces(sc.data, sc.source, targets, make_sim)


def _coerce(scenario: str | Path | Scenario | dict[str, Any]) -> tuple[Scenario, str]:
    """The scenario validated, and its tree as the core reads it."""
    if isinstance(scenario, Scenario):
        sc = scenario
    elif isinstance(scenario, dict):
        sc = Scenario(scenario)
    else:
        sc = read(scenario)
    return sc, sc._validated_json()


def _trace_target(option: str, value: bool | str | Path | None, out) -> Path | None:
    """Where the trace asked for by `option` goes: `out/trace.txt` (or
    `out/trace.xentrace`) for True, the path itself for a path, or None."""
    if value is None or value is False:
        return None
    if value is True:
        if out is None:
            raise ScenarioError(
                f"True needs an output folder; expected out=DIR as well "
                f"(the trace is written to DIR/{TRACE_FILES[option]}) or a file path",
                path=option,
            )
        from pathlib import Path

        return Path(out) / TRACE_FILES[option]
    if isinstance(value, str | os.PathLike):
        from pathlib import Path

        return Path(value)
    raise ScenarioError(
        f"{value!r} is a {type(value).__name__}; expected True, False or a file path",
        path=option,
    )


def _unwritable(exc: OSError) -> ScenarioError:
    """A trace file that cannot be written is bad input, like an output folder."""
    return ScenarioError(
        f"cannot be written ({exc.strerror}); expected a writable place for the trace",
        file=exc.filename,
    )


def run(
    scenario: str | Path | Scenario | dict[str, Any],
    *,
    out: str | Path | None = None,
    progress: bool | ProgressFn = True,
    trace: bool | str | Path = False,
    xentrace: bool | str | Path = False,
    lazy: bool = False,
) -> Result:
    """Simulate a scenario (a TOML path, a Scenario or a dict) and return its Result.

    `progress=True` shows a bar on a terminal for runs longer than about two
    seconds; a callable receives (simulated seconds done, total). With `out`,
    the results are also written there.

    `trace=True` streams the scheduler's events, from the start of
    measurement, into `out/trace.txt` (ftrace text, for the Perfetto UI);
    `xentrace=True` into `out/trace.xentrace` (Xen's binary trace records).
    Either may be a file path instead. Each file appears whole when the run
    ends, or not at all. docs/trace.md describes both formats.

    `lazy=True` (one host only; a cluster's result is built at once) keeps
    the engine in the Result and takes the summary and the time series from
    it when first used: the files are written from the engine directly, and
    a large host's summary is not held as Python objects unless asked for
    (what `vmsched run` does). The result is the same either way.
    """
    sc, text = _coerce(scenario)
    targets = {
        option: path
        for option, value in (("trace", trace), ("xentrace", xentrace))
        if (path := _trace_target(option, value, out)) is not None
    }
    if targets and sc.is_cluster:
        option = next(iter(targets))
        raise ScenarioError(
            "traces one host's scheduler; a cluster scenario has several hosts "
            "(run one host's scenario to trace it)",
            file=sc.source,
            path=option,
        )
    if out is not None:
        check_out(out)
    check_budget(sc)
    if targets:
        _check_trace_space(sc, targets, out)
    # Everything is checked: from here on, files are written (or nothing is).
    staged = OutputSet(out) if out is not None else None
    if staged is not None:
        for path in targets.values():
            if path.parent == staged.out:
                staged.check_free(path.name, "a writable place for the trace")
        for name in ("summary.json", "timeseries.parquet"):
            staged.check_free(name, "a writable place for the results")
    try:
        try:
            sim = _core.Cluster(text) if sc.is_cluster else _core.Sim(text)
        except Exception as exc:  # noqa: BLE001 - translated
            raise from_core(exc, sc.source) from None
        result = _simulate(sc, sim, targets, staged, progress, text, lazy)
        if staged is not None:
            staged.commit()
    except BaseException as exc:
        if staged is not None:
            staged.discard()
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise _write_failed(exc, staged) from None
        raise
    if staged is not None:
        result.traces = {
            k: staged.final(p.name) if p.parent == staged.staging else p
            for k, p in result.traces.items()
        }
    return result


def _write_failed(exc: OSError, staged: OutputSet | None) -> OutputError:
    """The OutputError of a write that failed, naming the file where it
    would have been (not its staging name)."""
    from pathlib import Path

    name = exc.filename
    if staged is not None and name and Path(name).parent == staged.staging:
        name = staged.final(Path(name).name)
    return unwritable(exc, name)


def _simulate(
    sc: Scenario,
    sim: Any,
    targets: dict[str, Path],
    staged: OutputSet | None,
    progress: bool | ProgressFn,
    text: str,
    lazy: bool,
) -> Result:
    """Run `sim` to its end and build the Result, writing its files into
    `staged` (the traces go there too when they belong in the output folder).
    `text` is the scenario as the core read it; `lazy` as `run` takes it."""
    if staged is not None:
        targets = {
            k: staged.path(p.name) if p.parent == staged.out and p.name == TRACE_FILES[k] else p
            for k, p in targets.items()
        }
    if targets:
        try:
            sim.set_trace(
                text=targets.get("trace"),
                xentrace=targets.get("xentrace"),
            )
        except OSError as exc:
            raise _unwritable(exc) from None
    # Path(sc.source).name, without pathlib.
    source = pure(sc.source) if sc.source else "."
    label = source.rpartition("/")[2] if source not in (".", "/", "//") else ""
    label = label if sc.source else "simulating"
    bar = make_progress(label) if progress is True else None
    report = bar if bar is not None else (progress if callable(progress) else None)
    t0 = time.perf_counter()
    try:
        end_ns = int(round(sc.duration_s * 1e9))
        step = max(end_ns // CHUNKS, 1)
        until = 0
        while True:
            until = min(until + step, end_ns)
            now_ns, end, _events, finished = sim.run_until(until)
            if report is not None:
                report(now_ns / 1e9, end / 1e9)
            if finished or until >= end_ns:
                if not finished:
                    sim.run_until(end_ns)
                break
    except BaseException as exc:
        # No partial trace file is left (nor waits for the garbage collector).
        if targets:
            sim.discard_trace()
        if isinstance(exc, Exception) and not isinstance(exc, OSError):
            raise from_core(exc, sc.source) from None
        raise
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    if targets:
        # A trace that could not be written (a full disk) is reported here,
        # after the simulation: OutputError, not bad input.
        sim.finish_trace()
    if lazy and not sc.is_cluster:
        result = Result._of_sim(sc, sim, wall, text, targets)
    else:
        summary = json.loads(sim.summary(wall))
        # The scenario as run (after any overrides), so a result explains itself.
        summary["scenario"] = sc.data
        result = Result(sc, summary, sim.series(), targets)
    if staged is not None:
        result._write_into(staged, sim)
    return result


def catalogue() -> dict[str, Any]:
    """Every scheduler, workload and platform profile with its parameters."""
    return json.loads(_core.catalogue())
