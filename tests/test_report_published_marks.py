"""The report's bar charts draw the review's own numbers beside the replayed bars (#25: the
figures tell the truth), not only the compare table."""

from __future__ import annotations

import pytest

import flashback as fb
from flashback.report.reviews import anand2009, anandtech_trim


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
