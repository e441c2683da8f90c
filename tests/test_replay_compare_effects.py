"""Effects compared as effects: BeHardware's TRIM recovery (the after-TRIM sequential level as a
share of the new one) beside the two levels, derived from the review's levels where it prints
both (Vertex 3: 130 of 160 MB/s), else from its own published row (the m4, 320 and 510 start
at their new level after TRIM)."""

from __future__ import annotations

import polars as pl
import pytest
from support.floors import floors_lowered

import flashback as fb

NAME = "behardware-used-trim"
TEST = "iometer_seq_write"


@pytest.fixture(scope="module", autouse=True)
def _statuses_below_the_floor():
    """These tests check which column a row lands in at small scales (support.floors)."""
    with floors_lowered():
        yield


def _row(cmp: pl.DataFrame, condition: str, metric: str) -> dict:
    sel = cmp.filter(
        (pl.col("test") == TEST) & (pl.col("condition") == condition) & (pl.col("metric") == metric)
    )
    assert sel.height == 1, sel
    return sel.row(0, named=True)


@pytest.mark.parametrize("preset", ["ocz-vertex3-120g", "crucial-m4-128g"])
def test_trim_recovery_is_compared_as_an_effect(preset):
    rep = fb.replay(NAME, target=f"sim:{preset}?scale=1/128")
    cmp = rep.compare()
    drive = rep.meta["drive"]
    rec = _row(cmp, "after_trim", "relative_to_fresh_pct")
    new, trimmed = _row(cmp, "fresh", "level_mbps"), _row(cmp, "after_trim", "level_mbps")
    assert rec["replayed"] == pytest.approx(100 * trimmed["replayed"] / new["replayed"])
    pub = fb.published(source="behardware", test=TEST)
    pub = pub.filter(pl.col("drive") == drive)

    def one(condition: str, metric: str) -> float | None:
        v = pub.filter((pl.col("condition") == condition) & (pl.col("metric") == metric))
        return v["value"][0] if v.height else None

    levels = one("fresh", "level_mbps"), one("after_trim", "level_mbps")
    if None not in levels:  # the Vertex 3: 130 against 160 MB/s
        assert rec["published"] == pytest.approx(100 * levels[1] / levels[0])
        assert "derived from the review's fresh" in rec["note"]
    else:  # the m4: at its new level from the start
        assert rec["published"] == one("after_trim", "relative_to_fresh_pct")
    within = abs(rec["replayed"] - rec["published"]) <= rec["tolerance"] * rec["published"]
    assert rec["status"] == ("within tolerance" if within else "outside tolerance")
