"""The whole command's results path gives what it gave before, byte for byte.

`summary.json` is written by the core (`_core.Sim.summary_texts`, or
`_core.indent_json` over the C encoder's text) instead of Python's indenting
encoder; `vmsched run` prints a large host from a summary cut short by the
core (`Result._summary_head`). Each is compared here with what Python itself
gives: `json.dumps(summary, indent=2)`, `repr`, and the tables printed from
the whole summary.
"""

from __future__ import annotations

import errno
import json
import math
import random
import struct
import subprocess
import sys

import pytest
import vmsched
from conftest import SCENARIOS, vmsched_cmd
from hypothesis import given, settings
from hypothesis import strategies as st
from vmsched import _core, api, cli
from vmsched.scenario import Scenario, load
from vmsched.tabular import Output

#: Floats whose repr changes notation, rounds or needs every digit.
EDGE_FLOATS = [
    0.0,
    -0.0,
    1.0,
    0.1,
    1e16,
    1e15,
    9999999999999998.0,
    1234567890123456.0,
    1e-4,
    1e-5,
    0.00012345,
    1.5e-7,
    -2.5e300,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    20.00241,
    123.456,
    float(2**53),
    float(2**53 + 2),
    1 / 3,
]


def test_floats_are_written_as_python_repr_writes_them():
    rng = random.Random(14)
    xs = list(EDGE_FLOATS)
    while len(xs) < 200_000:
        (x,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(x):
            xs.append(x)
    # Values of the kind a summary has: shares, seconds, microseconds.
    xs += [round(rng.uniform(0, 100), rng.randint(0, 9)) for _ in range(50_000)]
    xs += [rng.uniform(0, 1) * 10 ** rng.randint(-12, 20) for _ in range(50_000)]
    bad = [(x, _core.float_repr(x)) for x in xs if _core.float_repr(x) != repr(x)]
    assert bad == [], bad[:5]


#: JSON trees of the kinds a summary holds: tables, lists, text with any
#: character (quotes, controls, beyond ASCII and the BMP), integers, floats.
TREES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(TREES)
def test_indent_json_lays_out_as_python(tree):
    assert _core.indent_json(json.dumps(tree)) == json.dumps(tree, indent=2)


#: Domain names that JSON escapes: quotes, backslashes, beyond ASCII,
#: beyond the BMP (the title adds controls and DEL).
ODD_NAMES = ['q"uote', "back\\slash", "café", "漢字", "emoji🎉"]


def _odd_scenario(n_domains: int) -> Scenario:
    sc = Scenario(pcpus=2, scheduler="credit", duration_s=0.5)
    sc.data["title"] = "odd: tab\tnl\n\x01 del\x7f " + " ".join(ODD_NAMES)
    for i in range(n_domains):
        name = f"{ODD_NAMES[i % len(ODD_NAMES)]}-{i}"
        sc.add_domain(name, workload={"kind": "duty-cycle", "util_pct": 10 + i % 50})
    return sc


def _scenarios():
    return sorted(SCENARIOS.glob("*.toml"))


@pytest.mark.parametrize("path", _scenarios(), ids=lambda p: p.stem)
@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_summary_json_is_what_python_writes(path, lazy, tmp_path):
    """summary.json is `json.dumps(result.summary, indent=2) + "\\n"`, the
    summary built by Python from the core's (the same run, the same wall
    seconds): the core's writer, and the C encoder laid out by the core."""
    sc = load(path)
    sc.data.setdefault("run", {})["duration_s"] = min(sc.duration_s, 5.0)
    sc.data["run"]["warmup_s"] = 0
    r = vmsched.run(sc, out=tmp_path / "out", progress=False, lazy=lazy)
    written = (tmp_path / "out" / "summary.json").read_text()
    assert written == json.dumps(r.summary, indent=2) + "\n"
    assert r._summary_text() + "\n" == written


@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_summary_json_of_odd_names_is_what_python_writes(lazy, tmp_path):
    r = vmsched.run(_odd_scenario(9), out=tmp_path / "out", progress=False, lazy=lazy)
    written = (tmp_path / "out" / "summary.json").read_text()
    assert "\\u00e9" in written and "\\ud83c\\udf89" in written and "\\u007f" in written
    assert written == json.dumps(r.summary, indent=2) + "\n"


def test_a_lazy_result_is_the_eager_one(tmp_path):
    """The same scenario run both ways: the same summary (but the wall
    seconds), the same time series, the same Parquet bytes."""
    sc = _odd_scenario(40)
    lazy = vmsched.run(sc, out=tmp_path / "lazy", progress=False, lazy=True)
    eager = vmsched.run(sc, out=tmp_path / "eager", progress=False)
    a, b = dict(lazy.summary), dict(eager.summary)
    a.pop("wall_s"), b.pop("wall_s")
    assert a == b
    assert lazy.timeseries.equals(eager.timeseries)
    parquet = [(tmp_path / d / "timeseries.parquet").read_bytes() for d in ("lazy", "eager")]
    assert parquet[0] == parquet[1]
    # Both taken from the engine: it is let go.
    assert lazy._sim is None


def _printed(capsys, s: dict, verbose: bool) -> str:
    out = Output()
    cli._print_host(out, s, verbose, note="note")
    out.flush()
    return capsys.readouterr().out


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize("n", [cli.SHOWN_DOMAINS - 1, cli.SHOWN_DOMAINS, cli.SHOWN_DOMAINS + 13])
def test_a_large_host_prints_from_the_cut_summary_as_from_the_whole(capsys, n, verbose):
    """`vmsched run` prints from a summary the core cut after SHOWN_DOMAINS
    domains (with `_rest`): the same lines as from the whole summary,
    whose means and sums Python takes itself."""
    sc = _odd_scenario(n)
    r = vmsched.run(sc, progress=False, lazy=True)
    head = r._summary_head()
    assert len(head["domains"]) == min(n, cli.SHOWN_DOMAINS)
    assert ("_rest" in head) == (n > cli.SHOWN_DOMAINS)
    cut = _printed(capsys, head, verbose)
    whole = _printed(capsys, r.summary, verbose)
    assert cut == whole
    if n > cli.SHOWN_DOMAINS:
        assert f"{n - cli.SHOWN_DOMAINS} more (mean)" in cut


def test_the_io_table_sees_io_beyond_the_rows_shown(capsys):
    """Only a domain after the first SHOWN_DOMAINS does I/O: the I/O table is
    printed all the same, from the cut summary as from the whole."""
    sc = load(SCENARIOS / "web-through-dom0.toml")
    sc.data["run"] = {"duration_s": 2.0}
    doms = sc.data["domain"]
    idle = [{"name": f"idle{i}", "workload": {"kind": "idle"}} for i in range(cli.SHOWN_DOMAINS)]
    # The I/O domains go last; the idle ones fill the rows shown.
    sc.data["domain"] = idle + doms
    r = vmsched.run(sc, progress=False, lazy=True)
    head = r._summary_head()
    assert head["_rest"]["io"] is True
    assert not any(d["xenmon"]["io_events"] for d in head["domains"])
    cut = _printed(capsys, head, False)
    assert cut == _printed(capsys, r.summary, False)
    assert "I/O (XenMon" in cut


def test_the_command_prints_json_as_python_did(scenario_file, tmp_path):
    """--json prints the document summary.json holds (without its last newline)."""
    path = SCENARIOS / "credit-three-vms.toml"
    out = tmp_path / "out"
    proc = vmsched_cmd("run", str(path), "--duration-s", "7", "--json", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (out / "summary.json").read_text()
    s = json.loads(proc.stdout)
    assert proc.stdout == json.dumps(s, indent=2) + "\n"


def test_the_program_ends_quickly_and_completely(tmp_path):
    """`vmsched run` ends without the interpreter's teardown (cli.entry), yet
    everything it prints arrives, its files are whole and its status is
    kept: 0, and 2 for bad input."""
    path = SCENARIOS / "credit-three-vms.toml"
    out = tmp_path / "out"
    ok = vmsched_cmd("run", str(path), "--duration-s", "7", "--out", str(out))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.rstrip().endswith("(summary.json, timeseries.parquet)")
    assert json.loads((out / "summary.json").read_text())["duration_s"] == 7
    bad = vmsched_cmd("run", str(path), "--duration-s", "-1")
    assert bad.returncode == 2 and bad.stderr.startswith("vmsched: error: ")
    # Exit handlers still run before the process ends.
    code = (
        "import atexit, sys; atexit.register(lambda: print('bye', flush=True)); "
        "from vmsched.cli import entry; sys.argv = ['vmsched', 'validate', sys.argv[1]]; "
        "raise SystemExit(entry())"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "bye"


class _File:
    """A binary file object that keeps what it is given, write by write;
    from its `full`-th write on it raises ENOSPC as a full disk does."""

    def __init__(self, full: int | None = None):
        self.writes: list[bytes] = []
        self.full = full

    def write(self, data: bytes) -> int:
        if len(self.writes) == self.full:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.writes.append(bytes(data))
        return len(data)


def test_the_series_goes_to_the_file_a_column_at_a_time(tmp_path):
    """`vmsched run --out` writes timeseries.parquet a column at a time
    (`Sim.write_series_parquet`), never the whole file at once: the same
    bytes as the file written; a write that fails is raised as it is, and
    nothing more is written after it."""
    sc = _odd_scenario(40)
    sc.data["run"]["duration_s"] = 20.0
    vmsched.run(sc, out=tmp_path / "out", progress=False)
    written = (tmp_path / "out" / "timeseries.parquet").read_bytes()
    sim = _core.Sim(sc.to_json())
    sim.run_until(2**64 - 1)
    meta = api._pandas_metadata_of(api.SERIES_TYPES, sim.series_rows()).decode()
    f = _File()
    sim.write_series_parquet(meta, f)
    assert b"".join(f.writes) == written
    assert len(f.writes) > 2 and max(map(len, f.writes)) < len(written) / 2
    full = _File(full=2)
    with pytest.raises(OSError) as raised:
        sim.write_series_parquet(meta, full)
    assert raised.value.errno == errno.ENOSPC
    assert len(full.writes) == 2


def test_summary_json_goes_to_the_file_a_piece_at_a_time():
    """`vmsched run --out` writes summary.json a piece at a time
    (`Sim.write_summary`): the bytes and the cut summary `summary_texts`
    gives; a write that fails is raised as it is, nothing written after it."""
    sc = _odd_scenario(cli.SHOWN_DOMAINS + 70)
    sim = _core.Sim(sc.to_json())
    sim.run_until(2**64 - 1)
    text = json.dumps(sc.data)
    document, head = sim.summary_texts(1.5, text, cli.SHOWN_DOMAINS)
    f = _File()
    assert sim.write_summary(1.5, text, cli.SHOWN_DOMAINS, f) == head
    assert b"".join(f.writes) == document
    assert len(f.writes) > 2 and max(map(len, f.writes)) < len(document) / 2
    full = _File(full=1)
    with pytest.raises(OSError) as raised:
        sim.write_summary(1.5, text, cli.SHOWN_DOMAINS, full)
    assert raised.value.errno == errno.ENOSPC
    assert len(full.writes) == 1
