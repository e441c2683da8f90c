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
        # a picture of the page as drawn, beside the report, for a person to look at
        shot = b.screenshot(path.parent / "report-screenshot.png")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
        assert all(u.startswith(("file:", "data:", "about:")) for u in b.requests), b.requests


def _tables(html: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(caption, header, rows) of every table in the report, cell text as printed."""
    out = []
    for body in re.findall(r"<table>(.*?)</table>", html, re.S):
        cap = re.search(r"<caption>(.*?)</caption>", body, re.S)
        head = re.findall(r"<th>(.*?)</th>", body, re.S)
        rows = [
            re.findall(r"<td>(.*?)</td>", tr, re.S)
            for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S)
        ]
        out.append((cap.group(1) if cap else "", head, [r for r in rows if r]))
    return out


def test_no_table_has_an_empty_column(report):
    path, _ = report
    for caption, head, rows in _tables(path.read_text()):
        for i, col in enumerate(head):
            assert any(r[i] != "—" for r in rows), f"{caption!r}: column {col!r} is empty"


def test_a_breakpoint_is_one_value_in_text_and_tables(report):
    """Puget's change points: the paragraph, the segments table and the published-vs-
    replayed table quote the same GB (they once said 136.8 and 150.4 for one change)."""
    from flashback.replay.procedures.puget_checks import PUB_TEST

    path, _ = report
    html = path.read_text()
    section = html[html.index("<section id='puget") :]
    section = section[: section.index("</section>")]
    tables = {cap.split(" (")[0]: (head, rows) for cap, head, rows in _tables(section)}
    head, rows = tables["published vs replayed"]
    col = {c: i for i, c in enumerate(head)}
    checked = 0
    for test, pub in PUB_TEST.items():
        found = [
            r[col["replayed"]]
            for r in rows
            if r[col["test"]] == f"{pub}_write"
            and re.fullmatch(r"breakpoint_\d+_gb", r[col["metric"]])
            and r[col["replayed"]] != "—"
        ]
        seg_head, seg_rows = tables["segments"]
        sc = {c: i for i, c in enumerate(seg_head)}
        starts = [r[sc["x_start"]] for r in seg_rows if r[sc["test"]] == test][1:]
        if not found:
            continue
        assert found == starts[: len(found)], (test, found, starts)
        m = re.search(rf"{test}: ((?:[\d,]+(?:\.\d)? GB(?:, )?)+)", section)
        quoted = re.findall(r"([\d,]+(?:\.\d)?) GB", m.group(1))
        assert quoted[: len(found)] == found, (test, quoted, found)
        checked += 1
    assert checked >= 1  # the quick puget replay finds change points in one or more tests
