"""The report's bar charts draw the review's own numbers beside the replayed bars (#25: the
figures tell the truth), not only the compare table."""

from __future__ import annotations

import polars as pl
import pytest

import flashback as fb
from flashback.report.reviews import anand2009, anandtech_trim, behardware, xbit


def _ticks(chart) -> set[tuple[str, float]]:
    spec = chart.to_dict()
    ticks = [layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "tick"]
    assert len(ticks) == 1, [layer.get("mark") for layer in spec["layer"]]
    rows = spec["datasets"][ticks[0]["data"]["name"]]
    return {(r["condition"], r["published"]) for r in rows}


@pytest.mark.parametrize(
    ("module", "test", "states"),
    [
        (anand2009, "seq2m_read", {"fresh": "fresh", "used": "used"}),
        (
            anandtech_trim,
            "as_ssd_seq_write",
            {"clean": "clean", "torture": "after_torture", "after_trim": "after_trim"},
        ),
    ],
)
def test_bars_carry_the_published_numbers(module, test, states):
    section, _ = module.build(scale="1/512", progress=False)
    (_, chart), *_ = section.charts
    pub = fb.published(test=test, metric="avg_mbps")
    if test == "seq2m_read":
        pub = pub.filter(pub["drive"] == "Intel X25-M")
    want = {(states[c], v) for c, v in pub.select("condition", "value").iter_rows()}
    assert _ticks(chart) == want


def test_xbit_bars_carry_the_published_share_of_fresh():
    section, _ = xbit.build(scale="1/512", progress=False)
    (_, chart), *_ = section.charts
    pub = fb.published(source="x-bit", metric="relative_to_fresh_pct", drive="Intel SSD 335")
    assert pub.height  # the 335's 90 % after two fills
    want = {(c, v) for c, v in pub.select("condition", "value").iter_rows()}
    assert _ticks(chart) == want


def _published_layer(chart) -> list[dict]:
    """The rows of a faceted per-second chart's published layer (its one data set)."""
    spec = chart.to_dict()
    layers = spec["spec"]["layer"]
    assert any("published" in str(layer.get("transform")) for layer in layers)
    return [r for r in spec["datasets"][spec["data"]["name"]] if r.get("layer") == "published"]


@pytest.mark.parametrize("preset", ["crucial-m4-128g", "ocz-vertex3-120g"])
def test_behardware_per_second_series_carry_the_review_numbers(monkeypatch, preset):
    """Each dip time (s) and each MB/s level the review gives for the drive sits in the panel
    of the run it belongs to: the random runs' dips, the sequential runs' levels."""
    monkeypatch.setattr(behardware, "PRESET", preset)
    section, _ = behardware.build(scale="1/512", progress=False)
    charts = {name: chart for name, chart in section.charts if name.endswith("per second")}
    assert set(charts) == {"random write per second", "sequential write per second"}
    drawn = set()
    for chart in charts.values():
        for r in _published_layer(chart):
            drawn.add((r["run"], r["pub_x"] if r["pub_y"] is None else r["pub_y"]))
    drive = {"crucial-m4-128g": "Crucial M4", "ocz-vertex3-120g": "OCZ Vertex 3"}[preset]
    pub = fb.published(source="behardware", drive=drive).filter(
        pl.col("test").is_in(["iometer_rnd_write", "iometer_seq_write"])
        & ((pl.col("metric") == "dip_time_s") | pl.col("metric").str.ends_with("_mbps"))
    )
    step = {"iometer_rnd_write": "random_write_", "iometer_seq_write": "seq_write_"}
    state = {"fresh": "new", "used": "used", "after_trim": "trim"}
    want = {
        (step[t] + state[c], v) for t, c, v in pub.select("test", "condition", "value").iter_rows()
    }
    assert len(want) >= 2 and drawn == want


def test_behardware_bars_carry_the_vertex3_levels(monkeypatch):
    """The review's whole-run levels for the Vertex 3 (160 MB/s new, 130 after TRIM, both
    sequential) sit on the sequential bars of their state; the m4 has none to draw."""
    monkeypatch.setattr(behardware, "PRESET", "ocz-vertex3-120g")
    section, _ = behardware.build(scale="1/512", progress=False)
    chart = dict(section.charts)["states"]
    spec = chart.to_dict()
    ticks = [layer for layer in spec["layer"] if layer.get("mark", {}).get("type") == "tick"]
    rows = spec["datasets"][ticks[0]["data"]["name"]]
    pub = fb.published(source="behardware", drive="Vertex 3", metric="level_mbps")
    assert pub.height == 2
    want = {("sequential", c, v) for c, v in pub.select("condition", "value").iter_rows()}
    assert {(r["test"], r["condition"], r["published"]) for r in rows} == want
