"""A `vmsched reproduce` report opens in a real headless browser (Debian's
Chromium), as the `vmsched compare` report does: no console errors, every
figure loaded, and a screenshot that is not blank."""

from __future__ import annotations

import re

import matplotlib.image
import numpy as np
import pytest
from test_compare import _browser, _console_problems, _rendered
from vmsched import cli


@pytest.fixture(scope="module")
def repro_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro") / "thesis2015-net"
    assert (
        cli.main(["reproduce", "thesis2015-net", "--quick", "--jobs", "2", "--out", str(out)]) == 0
    )
    return out


def test_reproduce_report_renders_in_chromium(repro_dir, tmp_path):
    page = repro_dir / "report.html"
    images = len(re.findall(r"<img ", page.read_text(encoding="utf-8")))
    assert images >= 1, "the report has its figures"
    attrs, problems = _rendered(page, tmp_path / "profile")
    assert problems == []
    assert attrs.get("data-rendered") == "1"
    assert attrs.get("data-images") == str(images)
    assert attrs.get("data-broken-images") == "0"


def test_reproduce_report_screenshot(repro_dir, tmp_path):
    shot = tmp_path / "report.png"
    width, height = 1280, 1600
    proc = _browser(
        repro_dir / "report.html",
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
    assert len(np.unique((rgb * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 20
