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
