"""``flashback report``: an unknown ``--only`` name is refused before anything is written (it
wrote an empty report and exited 0), and every chart has alt text (the page's chart element
and the SVG beside it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import altair as alt
import polars as pl

from flashback.report.html import Section, write_report


def test_unknown_only_is_refused_and_nothing_is_written(tmp_path: Path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "flashback", "report", "--quick", "--no-progress",
         "--only", "pugt", "-o", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "'pugt' is not a review's name; pick from: puget," in proc.stderr
    assert not out.exists()


def test_charts_have_alt_text(tmp_path: Path):
    df = pl.DataFrame({"gb": [0.0, 1.0, 2.0], "mbps": [500.0, 480.0, 200.0]})
    chart = (
        alt.Chart(df)
        .mark_line()
        .encode(x=alt.X("gb:Q", title="Host data written (GB)"), y=alt.Y("mbps:Q", title="MB/s"))
        .properties(title="Write <cliff>")
    )
    path = write_report([Section("s", [], [("cliff", chart)])], tmp_path, figure_formats=("svg",))
    page = path.read_text()
    assert (
        "role='img' aria-label='Write &lt;cliff&gt; — MB/s against Host data written (GB)'" in page
    )
    svg = next((tmp_path / "figures").glob("*.svg")).read_text()
    assert "<title>Write &lt;cliff&gt; — MB/s against Host data written (GB)</title>" in svg


def test_a_wide_chart_scrolls_in_its_box_on_a_1280_px_screen(tmp_path: Path):
    """The demo report was 1,545 px wide (its published-vs-replayed charts): a chart wider
    than the page now scrolls inside its own box, and the page fits 1280 px."""
    import pytest
    from support.chromium import Chromium, chromium_binary

    if chromium_binary() is None:
        pytest.skip("chromium is not installed (make test installs it)")
    df = pl.DataFrame({"x": list(range(40)), "y": [float(i) for i in range(40)]})
    wide = alt.Chart(df).mark_bar().encode(x="x:O", y="y:Q").properties(width=1500)
    path = write_report([Section("s", [], [("wide", wide)])], tmp_path, figure_formats=())
    with Chromium() as b:
        b.send("Emulation.setDeviceMetricsOverride", width=1280, height=900,
               deviceScaleFactor=1, mobile=False)  # fmt: skip
        b.navigate(path.as_uri())
        b.wait_for("!!document.querySelector('.chart svg')")
        assert b.evaluate("document.documentElement.scrollWidth") <= 1280
        assert b.evaluate("document.querySelector('.chart').scrollWidth") > 1280
