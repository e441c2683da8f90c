"""`flashback report` end to end (quick scales): every review section, every chart rendered
in headless Chromium, no console errors, no request leaving the file."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.chromium import Chromium, chromium_binary

pytestmark = pytest.mark.skipif(
    chromium_binary() is None, reason="chromium is not installed (make test installs it)"
)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("report")
    proc = subprocess.run(
        [sys.executable, "-m", "flashback", "report", "--quick", "--no-progress", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / "report.html", proc.stdout


def test_summary_and_files(report):
    path, stdout = report
    assert "report written to" in stdout and str(path.resolve()) in stdout
    for review in (
        "puget",
        "behardware",
        "xbit",
        "anandtech-consistency",
        "anandtech-trim",
        "anand2009",
        "snia-pts",
    ):
        assert review in stdout
    html = path.read_text()
    ids = re.findall(r"<div class='chart' id='chart-([^']+)'", html)
    assert len(ids) >= 12
    for cid in ids:
        png = path.parent / "figures" / f"{cid}.png"
        assert png.read_bytes()[:4] == b"\x89PNG", cid
        assert (path.parent / "figures" / f"{cid}.svg").read_text().lstrip().startswith("<svg")
    assert "<script src=" not in html  # everything inline


def test_every_chart_renders_offline(report):
    path, _ = report
    with Chromium() as b:
        b.navigate(path.as_uri())
        total = b.evaluate("document.querySelectorAll('.chart').length")
        done = b.wait_for(
            "[...document.querySelectorAll('.chart')].filter(d => d.querySelector('svg, canvas')).length"
            f" === {total}",
            timeout_s=60,
        )
        b.pump(0.5)
        missing = b.evaluate(
            "[...document.querySelectorAll('.chart')].filter(d => !d.querySelector('svg, canvas')).map(d => d.id)"
        )
        assert done and missing == [], missing
        assert b.console_errors == [] and b.exceptions == [], (b.console_errors, b.exceptions)
        assert b.failed_requests == []
        assert all(u.startswith(("file:", "data:", "about:")) for u in b.requests), b.requests
