"""The HTML report renders every chart in real headless Chromium, offline."""

from pathlib import Path

import altair as alt
import polars as pl
import pytest
from support.chromium import Chromium, chromium_binary

from flashback.report import Section, write_report

pytestmark = pytest.mark.skipif(
    chromium_binary() is None, reason="chromium is not installed (make test installs it)"
)


def _charts():
    df = pl.DataFrame({"gb": [0.0, 10, 20, 40, 80], "mbps": [190.0, 185, 120, 70, 60]})
    line = (
        alt.Chart(df)
        .mark_line()
        .encode(x=alt.X("gb:Q", title="GB written"), y=alt.Y("mbps:Q", title="MB/s"))
    )
    bars = alt.Chart(df).mark_bar().encode(x="gb:O", y="mbps:Q")
    return [("line", line), ("bars", bars)]


def test_report_renders_all_charts_without_network(tmp_path: Path):
    sections = [
        Section(
            "First review",
            ["Two charts."],
            _charts(),
            [("numbers", pl.DataFrame({"a": [1.5], "b": ["x"]}))],
        ),
        Section("Second review", [], _charts()[:1]),
    ]
    path = write_report(sections, tmp_path / "out", title="t")
    assert (tmp_path / "out" / "figures" / "first-review-line.png").read_bytes()[
        :8
    ] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (tmp_path / "out" / "figures" / "second-review-line.svg").read_text()[:500]
    with Chromium() as b:
        b.navigate(path.as_uri())
        n = b.wait_for(
            "(() => { const c = [...document.querySelectorAll('.chart')];"
            " return c.length && c.every(d => d.querySelector('svg, canvas')) ? c.length : 0; })()",
            timeout_s=30,
        )
        b.pump(0.5)
        assert n == 3
        # marks really drawn: the line chart has a path with data
        assert b.evaluate("document.querySelectorAll('.chart svg .mark-line path').length") >= 1
        assert b.console_errors == [] and b.exceptions == []
        assert b.failed_requests == []
        assert all(u.startswith(("file:", "data:", "about:")) for u in b.requests), b.requests


def test_broken_chart_is_detected(tmp_path: Path):
    """The check can fail: a chart whose spec vega rejects leaves an empty container + error."""
    bad = alt.Chart(pl.DataFrame({"a": [1]})).mark_point().encode(x="a:Q")
    path = write_report([Section("s", [], [("bad", bad)])], tmp_path, figure_formats=())
    html = path.read_text().replace('"mark": {"type": "point"}', '"mark": {"type": "nosuchmark"}')
    path.write_text(html)
    with Chromium() as b:
        b.navigate(path.as_uri())
        b.pump(3)
        assert not b.evaluate("!!document.querySelector('.chart svg')")
        assert b.console_errors or b.exceptions
