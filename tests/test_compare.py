"""`vmsched compare` end to end, porting scenarios between schedulers, the verdicts, and
the HTML report (vmsched.htmlreport) in a real headless browser (Debian's Chromium,
which `make browser` installs)."""

from __future__ import annotations

import base64
import os
import pty
import re
import shutil
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest
import vmsched
from conftest import BASE, vmsched_cmd
from vmsched import cli, compare, htmlreport
from vmsched.compare import RunSpec, metrics, parse_variant, port, prepare, verdict_sentence

SCHEDULERS = "credit,credit2,rtds"
VARIANTS = ("credit:tslice_ms=5", "credit:vm2.cap=10")
LABELS = ["credit", "credit2", "rtds", *VARIANTS]
FIGURES = ["cpu-over-time.png", "cpu-share.png", "wake-latency.png", "workload-metrics.png"]


def _compare_args(scenario: Path, out: Path) -> list[str]:
    args = ["compare", str(scenario), "--schedulers", SCHEDULERS]
    for v in VARIANTS:
        args += ["--variant", v]
    return [*args, "--out", str(out), "--jobs", "2"]


@pytest.fixture(scope="module")
def scenario_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "tiny.toml"
    path.write_text(BASE)
    return path


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory, scenario_path) -> Path:
    """One comparison, run as a user runs it (in parallel processes)."""
    out = tmp_path_factory.mktemp("compare") / "out"
    proc = vmsched_cmd(*_compare_args(scenario_path, out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", "no progress bar when stderr is not a terminal"
    assert "CPU % per domain" in proc.stdout
    assert f"report: {out / 'report.html'}" in proc.stdout
    return out


# ----- the output folder ---------------------------------------------------------------------


def test_compare_writes_report_csv_and_figures(report_dir):
    assert sorted(p.name for p in report_dir.iterdir()) == sorted(
        ["report.html", "results.csv", *FIGURES]
    )
    for name in FIGURES:
        img = matplotlib.image.imread(report_dir / name)
        assert img.shape[0] > 300 and img.shape[1] > 600
        assert img[..., :3].std() > 0.05, f"{name} is blank"


def test_results_csv_rows_and_values(report_dir, scenario_path):
    df = pd.read_csv(report_dir / "results.csv")
    assert list(df.columns) == ["run", "scheduler", "domain", "vcpu", "metric", "value", "unit"] + [
        "replications",
        "ci95_low",
        "ci95_high",
    ]
    assert (df["replications"] == 3).all()
    assert list(df["run"].unique()) == LABELS
    assert df.groupby("run")["scheduler"].first().to_dict() == {
        "credit": "credit",
        "credit2": "credit2",
        "rtds": "rtds",
        "credit:tslice_ms=5": "credit",
        "credit:vm2.cap=10": "credit",
    }
    # One row per run x domain x metric (x VCPU for wake-up metrics).
    assert not df.duplicated(subset=["run", "domain", "vcpu", "metric"]).any()
    per_run = df.groupby("run").size()
    assert per_run.nunique() == 1
    metrics = set(df[df["domain"] == "vm2"]["metric"])
    assert {"cpu_pct", "runnable_pct", "wakeups", "wake_p99_us", "workload.missed_periods"} <= (
        metrics
    )
    assert not any(m.startswith("workload.") for m in df[df["domain"] == "vm1"]["metric"])

    def value(run: str, domain: str, metric: str) -> float:
        row = df[(df["run"] == run) & (df["domain"] == domain) & (df["metric"] == metric)]
        assert len(row) == 1
        return float(row["value"].iloc[0])

    # The plain credit run is the scenario as it is: the same numbers as `vmsched run`.
    direct = vmsched.run(scenario_path, progress=False)
    for d in direct.summary["domains"]:
        assert value("credit", d["name"], "cpu_pct") == pytest.approx(d["cpu_pct"], rel=1e-9)
    # The variant's per-domain cap took effect (vm2 asks for 20 %).
    assert value("credit", "vm2", "cpu_pct") == pytest.approx(20, abs=0.5)
    assert value("credit:vm2.cap=10", "vm2", "cpu_pct") <= 10.5
    units = df.groupby("metric")["unit"].first()
    assert units["cpu_pct"] == "%" and units["wake_p99_us"] == "us"
    assert units["context_switches"] == "count"


class _Html(HTMLParser):
    """Collects tags, images and nesting errors (every non-void element closed in order)."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "wbr"}

    def __init__(self) -> None:
        super().__init__()
        self.doctype = None
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: Counter[str] = Counter()
        self.images: list[dict[str, str]] = []
        self.text: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag, attrs) -> None:
        self.tags[tag] += 1
        if tag == "img":
            self.images.append(dict(attrs))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(path: Path) -> _Html:
    parser = _Html()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def test_report_is_self_contained_html5(report_dir):
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    doc = _parse(report_dir / "report.html")
    assert doc.doctype == "DOCTYPE html"
    assert doc.errors == [] and doc.stack == []
    assert doc.tags["h1"] == 1 and doc.tags["html"] == 1 and doc.tags["script"] == 1
    # Nothing is loaded from elsewhere: every image is inline and equals its PNG file.
    assert not re.search(r"""(src|href)=["'](?!data:|#)""", page)
    assert "http://" not in page and "https://" not in page
    assert len(doc.images) == len(FIGURES)
    for img, name in zip(doc.images, FIGURES, strict=True):
        assert img["alt"]
        prefix = "data:image/png;base64,"
        assert img["src"].startswith(prefix)
        assert base64.b64decode(img["src"][len(prefix) :]) == (report_dir / name).read_bytes()
    text = " ".join(doc.text)
    for heading in ("Runs", "Parameters adjusted", "Verdicts", "CPU share", "Wake-up latency"):
        assert heading in text
    # What porting to RTDS changed is said, with the reason.
    assert "domain[0].weight = 512 dropped: rtds has no per-domain parameter weight" in text
    assert "tslice_ms=5" in text


# ----- in a real browser -----------------------------------------------------------------------


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    message = (
        "Chromium is not installed; `make browser` installs it (Debian: apt-get install chromium)"
    )
    if os.geteuid() != 0:
        # A user who cannot install packages still runs every other test.
        pytest.skip(message)
    pytest.fail(message)


def _browser(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            _chromium(),
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            *args,
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )


def _console_problems(stderr: str) -> list[str]:
    return [
        line
        for line in stderr.splitlines()
        if ":CONSOLE" in line or "Uncaught" in line or "Refused to" in line
    ]


def _rendered(page: Path, profile: Path) -> tuple[dict[str, str], list[str]]:
    """The <body> attributes after the page loaded, and the console messages."""
    proc = _browser(page, profile, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", proc.stdout)
    assert body, proc.stdout[:500]
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1)))
    return attrs, _console_problems(proc.stderr)


def test_report_renders_in_chromium_without_console_errors(report_dir, tmp_path):
    attrs, problems = _rendered(report_dir / "report.html", tmp_path / "profile")
    assert problems == []
    assert attrs.get("data-rendered") == "1"
    assert attrs.get("data-images") == str(len(FIGURES))
    assert attrs.get("data-broken-images") == "0"


def test_browser_check_catches_a_broken_report(report_dir, tmp_path):
    """The checks above can fail: a style the page's policy does not allow and a corrupt
    image are both reported."""
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    page = page.replace("color-scheme: light;", "color-scheme: light; ", 1)
    page = page.replace("data:image/png;base64,iVBOR", "data:image/png;base64,AAAAA", 1)
    broken = tmp_path / "broken.html"
    broken.write_text(page, encoding="utf-8")
    attrs, problems = _rendered(broken, tmp_path / "profile")
    assert any("Content Security Policy" in p for p in problems), problems
    assert attrs.get("data-rendered") == "1"
    assert attrs.get("data-broken-images") == "1"


def test_report_screenshot(report_dir, tmp_path):
    shot = tmp_path / "report.png"
    width, height = 1280, 1800
    proc = _browser(
        report_dir / "report.html",
        tmp_path / "profile",
        f"--screenshot={shot}",
        f"--window-size={width},{height}",
        "--hide-scrollbars",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _console_problems(proc.stderr) == []
    img = matplotlib.image.imread(shot)
    assert img.shape[:2] == (height, width)
    rgb = img[..., :3]
    assert rgb.std() > 0.05, "the screenshot is blank"
    # Text and tables, not one flat colour: many distinct shades.
    assert len(np.unique((rgb * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 20


# ----- htmlreport on its own -------------------------------------------------------------------


def test_htmlreport_blocks_and_escaping(tmp_path):
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(3, 2))
    fig.add_subplot().plot([0, 1], [1, 0])
    df = pd.DataFrame({"name": ["<b>x</b>", "y"], "value": [1234.5, None], "n": [3, 4]})
    path = htmlreport.write_report(
        tmp_path / "r.html",
        "A & B <report>",
        [
            htmlreport.Heading("First"),
            "text with <script>alert(1)</script>\n\nsecond paragraph",
            ("table", df, "numbers"),
            htmlreport.Figure(fig, "a line", name="line"),
            ("figure", htmlreport.png_bytes(fig), "the same, from bytes"),
            htmlreport.Verdicts([htmlreport.Verdict("holds", "pass"), "plain"], title="Checks"),
            ("code", "vmsched run x.toml"),
        ],
    )
    page = path.read_text()
    assert "<title>A &amp; B &lt;report&gt;</title>" in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<p>") == 2  # two paragraphs (the "generated" line has a class)
    assert "<td>&lt;b&gt;x&lt;/b&gt;</td>" in page
    assert '<td class="num">1,234</td>' in page and '<td class="num">—</td>' in page
    assert '<li class="pass"><span class="tag">PASS</span>holds</li>' in page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure-2.png", "line.png", "r.html"]
    doc = _parse(path)
    assert doc.errors == [] and doc.stack == []


def test_htmlreport_rejects_bad_blocks(tmp_path):
    with pytest.raises(TypeError, match="report block 1: int is not a block"):
        htmlreport.render("t", ["ok", 3])
    with pytest.raises(ValueError, match="two figures are named 'a'"):
        png = b"\x89PNG\r\n\x1a\n" + bytes(16)
        htmlreport.render("t", [("figure", png, "x", "a"), ("figure", png, "y", "a")])
    with pytest.raises(ValueError, match="verdict status 'great' is unknown"):
        htmlreport.render("t", [htmlreport.Verdicts([htmlreport.Verdict("x", "great")])])
    with pytest.raises(ValueError, match="not a plain file name"):
        htmlreport.render("t", [("figure", png, "x", "../escape")])
    assert list(tmp_path.iterdir()) == []


# ----- porting a scenario and the variant syntax ---------------------------------------------


def test_parse_variant():
    spec = parse_variant("credit: tslice_ms=5, vm2.cap=50 ,xen_version=4.2", ["vm1", "vm2"])
    assert spec == RunSpec(
        "credit:tslice_ms=5,vm2.cap=50,xen_version=4.2",
        "credit",
        {"tslice_ms": 5, "xen_version": "4.2"},  # declared a string: kept as text
        {"vm2": {"cap": 50}},
    )
    arinc = parse_variant(
        'arinc653:schedule=[{domain="vm1", vcpu=0, runtime_ms=5}],major_frame_ms=10', ["vm1"]
    )
    assert arinc.global_params == {
        "schedule": [{"domain": "vm1", "vcpu": 0, "runtime_ms": 5}],
        "major_frame_ms": 10,
    }
    assert parse_variant("sedf", ["vm1"]) == RunSpec("sedf", "sedf")


SEDF = {
    "host": {"pcpus": 1},
    "scheduler": {"name": "sedf"},
    "run": {"duration_s": 2},
    "domain": [
        {
            "name": "a",
            "sched": {"period": 10, "slice": 2.5, "extratime": False},
            "workload": {"kind": "cpu-hog"},
        },
        {"name": "b", "sched": {"period": 20, "slice": 5}, "workload": {"kind": "cpu-hog"}},
    ],
    "action": [{"at_s": 1, "domain": "b", "slice": 4}],
}


def test_port_converts_units_and_drops_what_the_target_lacks():
    base = vmsched.Scenario(SEDF).validate()
    sc, notes = port(base, RunSpec("rtds", "rtds"))
    doms = sc.data["domain"]
    assert doms[0]["sched"] == {"period": 10000, "extratime": False}  # 10 ms = 10000 us
    assert doms[1]["sched"] == {"period": 20000}
    assert "action" not in sc.data
    assert notes == [
        "domain[0].sched.period = 10: rtds takes it in us: converted to 10000 us",
        "domain[0].sched.slice = 2.5 dropped: rtds has no per-domain parameter slice",
        "domain[1].sched.period = 20: rtds takes it in us: converted to 20000 us",
        "domain[1].sched.slice = 5 dropped: rtds has no per-domain parameter slice",
        "action[0].slice = 4 dropped: rtds has no per-domain parameter slice",
        "the action at 1 s on b dropped: nothing left to do",
    ]
    # The same scheduler keeps everything.
    same, none = port(base, RunSpec("sedf", "sedf"))
    assert same.data == base.data and none == []


def test_port_drops_values_the_target_rejects():
    # Atropos takes period, slice and latency together: the converted pair is dropped.
    sc, notes = port(vmsched.Scenario(SEDF).validate(), RunSpec("atropos", "atropos"))
    assert all("sched" not in d for d in sc.data["domain"])
    assert "domain[0].sched.period = 10000000 dropped: is missing; expected period" in notes[-6]
    # A variant's xen_version without tslice_ms and ratelimit_us (added in Xen 4.2).
    base = vmsched.load(Path(__file__).parents[1] / "scenarios" / "credit-three-vms.toml")
    spec = parse_variant("credit:xen_version=3.0.3", [])
    sc, notes = port(base, spec)
    assert sc.data["scheduler"] == {"name": "credit", "xen_version": "3.0.3"}
    assert notes[0].startswith(
        "scheduler.tslice_ms = 30 dropped: does not exist in Xen 3.0.3 (added in 4.2)"
    )
    # A parameter both schedulers declare with different defaults is kept, with a warning.
    sc, notes = port(base, RunSpec("sedf", "sedf"))
    assert sc.data["domain"][0]["weight"] == 512
    assert "domain[0].weight = 512: kept, but sedf's weight may mean something else" in notes[2]


def test_quick_compresses_the_run_in_time():
    data = dict(SEDF, run={"duration_s": 50, "warmup_s": 10, "sample_ms": 500})
    data["action"] = [{"at_s": 20, "domain": "b", "slice": 4}]
    p = prepare(data, schedulers=["sedf", "credit"], quick=True)
    run = p.runs[0].scenario
    assert run["run"] == {"duration_s": 5.0, "warmup_s": 1.0, "sample_ms": 50.0}
    assert run["action"][0]["at_s"] == 2.0
    assert p.quick_factor == pytest.approx(0.1)


# ----- verdicts --------------------------------------------------------------------------------


def test_verdict_sentences():
    labels = ["credit", "credit2", "sedf"]
    assert (
        verdict_sentence("web", labels, [1000.0, 10.0, 10.05], "µs", -1)
        == "web: best credit2, sedf (10.0 µs), worst credit (1,000 µs): 100x"
    )
    assert (
        verdict_sentence("vm1", labels, [60.0, 40.0, None], "%", 0)
        == "vm1: highest under credit (60.0%), lowest under credit2 (40.0%): "
        "20.0 percentage points apart (no value under sedf)"
    )
    assert (
        verdict_sentence("bench", labels, [10, 12, 11], "", +1)
        == "bench: best credit2 (12), worst credit (10): 20 % apart"
    )
    assert verdict_sentence("x", labels, [5.0, 5.2, 5.3], "%", -1) == (
        "x: the same under every run (5.0% to 5.3%)"
    )
    assert compare.direction("missed_periods") == -1
    assert compare.direction("requests_completed") == +1
    assert compare.direction("switches") == 0


def test_workload_metrics_are_generic():
    dom = {
        "workload": {
            "kind": "web-server",
            "completed": 10,
            "response_ms": {"p50": 1.5, "p99": None},
            "mode": "closed",
            "warm": True,
            "throughput_req_s": 5.0,
        }
    }
    assert compare.workload_metrics(dom) == {
        "completed": 10,
        "response_ms.p50": 1.5,
        "response_ms.p99": None,
        "throughput_req_s": 5.0,
    }
    units = {
        m: metrics._unit_of(m)
        for m in ("throughput_req_s", "completion_s", "response_ms.p99", "cpu_pct", "periods")
    }
    assert units == {
        "throughput_req_s": "req/s",
        "completion_s": "s",
        "response_ms.p99": "ms",
        "cpu_pct": "%",
        "periods": "count",
    }
    assert compare.direction("response_ms.p99") == -1
    assert compare.direction("throughput_req_s") == +1


# ----- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            ["--schedulers", "credit,credti"],
            '--schedulers: unknown scheduler "credti"; expected one of',
        ),
        (
            ["--schedulers", "credit", "--variant", "credit:tslice=5"],
            '--variant credit:tslice=5: unknown pool-wide credit parameter "tslice"; '
            "expected one of",
        ),
        (
            ["--schedulers", "credit", "--variant", "credit:cap=5"],
            "--variant credit:cap=5: 'cap' is a per-domain credit parameter; "
            "expected DOMAIN.cap=VALUE",
        ),
        (
            ["--schedulers", "credit", "--variant", "credit:vm7.cap=5"],
            '--variant credit:vm7.cap=5: unknown domain "vm7"; expected one of vm1, vm2',
        ),
        (
            ["--schedulers", "credit", "--variant", "credit:tslice_ms=0"],
            "--variant credit:tslice_ms=0: scheduler.tslice_ms: 0 is out of range; expected",
        ),
        (
            ["--schedulers", "credit", "--variant", "credit:tslice_ms"],
            '"tslice_ms" is not a setting; expected PARAM=VALUE or DOMAIN.PARAM=VALUE',
        ),
        (["--schedulers", "credit"], "a comparison needs at least two runs (only credit)"),
        (["--schedulers", "credit,credit"], "credit is asked for twice"),
        (["--schedulers", "credit,sedf", "--jobs", "0"], "--jobs: 0 is not allowed"),
    ],
)
def test_bad_compare_input(scenario_path, tmp_path, capsys, extra, message):
    out = tmp_path / "out"
    assert cli.main(["compare", str(scenario_path), *extra, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vmsched: error: "), captured.err
    assert message in lines[0]
    assert captured.out == ""
    assert not out.exists(), "nothing is written on bad input"


def test_bad_scenario_and_output_folder(scenario_path, tmp_path, capsys):
    missing = tmp_path / "nope.toml"
    assert cli.main(["compare", str(missing), "--schedulers", "credit,sedf", "--out", "x"]) == 2
    assert f"{missing}: no such file" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = blocker / "out"
    assert (
        cli.main(["compare", str(scenario_path), "--schedulers", "credit,sedf", "--out", str(out)])
        == 2
    )
    assert "expected a writable output folder" in capsys.readouterr().err


# ----- the Python API and progress -----------------------------------------------------------


def test_compare_api_in_process(scenario_path, tmp_path):
    seen = []
    c = compare.compare(
        scenario_path,
        schedulers=["credit", "credit2"],
        jobs=1,
        progress=lambda done, total: seen.append((done, total)),
    )
    # Two runs, each on the default 3 seeds.
    assert seen[-1] == (6, 6) and c.replications == compare.REPLICATIONS == 3
    assert c.labels == ["credit", "credit2"]
    df = c.results()
    assert set(df["run"]) == {"credit", "credit2"}
    titles = [title for title, _ in c.verdicts()]
    assert titles[:2] == ["CPU share (CPU %, 100 = one PCPU)", "Waiting for a PCPU (runnable %)"]
    out = c.save(tmp_path / "api")
    assert (out / "report.html").is_file() and (out / "results.csv").is_file()


def test_progress_is_shown_on_a_terminal(scenario_path, tmp_path):
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "vmsched", "compare", str(scenario_path)]
        + ["--schedulers", "credit,credit2", "--out", str(tmp_path / "o"), "--jobs", "1"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    stdout, _ = proc.communicate(timeout=120)
    os.close(leader)
    assert proc.returncode == 0
    terminal = b"".join(chunks).decode(errors="replace")
    assert "compare credit vs credit2" in terminal
    assert "6/6 runs" in terminal  # 2 runs x 3 replications
    assert b"runs" not in stdout


def test_one_replication_is_the_run_itself(scenario_path):
    c = compare.compare(scenario_path, schedulers=["credit", "sedf"], replications=1, jobs=1)
    direct = vmsched.run(scenario_path, progress=False).summary
    assert c.runs[0].summary["domains"] == direct["domains"]
    assert c.runs[0].summary_low is None
    df = c.results()
    assert (df["replications"] == 1).all() and df["ci95_low"].isna().all()


def test_replications_mean_interval_and_verdicts():
    means, low, high = compare.combine(
        [{"a": 1.0, "b": "x", "c": [2, 5]}, {"a": 3.0, "b": "x", "c": [2, 7]}]
    )
    assert means == {"a": 2.0, "b": "x", "c": [2, 6.0]}
    assert low["a"] == pytest.approx(2 - 12.706) and high["c"][1] == pytest.approx(6 + 12.706)
    assert low["c"][0] == high["c"][0] == 2  # equal in every replication: its own interval
    labels = ["A", "B"]
    # 10 % apart: a difference on the values alone ...
    assert "best B" in verdict_sentence("x", labels, [110.0, 100.0], "us", -1)
    assert compare.differs([110.0, 100.0], "us")
    # ... but not when the 95 % intervals overlap,
    wide = [(90.0, 130.0), (80.0, 120.0)]
    assert verdict_sentence("x", labels, [110.0, 100.0], "us", -1, wide).startswith(
        "x: the same under every run"
    )
    assert not compare.differs([110.0, 100.0], "us", wide)
    # and again when they separate.
    narrow = [(108.0, 112.0), (99.0, 101.0)]
    assert "best B" in verdict_sentence("x", labels, [110.0, 100.0], "us", -1, narrow)
    assert compare.differs([110.0, 100.0], "us", narrow)
