"""Every review compares its headline number or says why it cannot: a headline row whose
status is computed from the published data set (no number for this drive, a number set beside
a second replay, no such number printed), never a sentence written per review."""

from __future__ import annotations

import dataclasses
import types

import polars as pl
import pytest
from support.floors import floors_lowered

import flashback as fb
from flashback.replay.base import check_row, get_protocol
from flashback.replay.compare import COMPARED, compare
from flashback.replay.headline import (
    NEEDS_PAIR,
    NO_DRIVE,
    NO_VALUE,
    REASONS,
    VARIANT,
    headline,
    joined,
    require_accounted,
)


@pytest.fixture(scope="module", autouse=True)
def _statuses_below_the_floor():
    """These tests check which column a row lands in at small scales (support.floors)."""
    with floors_lowered():
        yield


CONSISTENCY = "anandtech-consistency"
SCALE = "1/512"


@pytest.fixture(scope="module")
def ssd530():
    return fb.replay(CONSISTENCY, scale=SCALE)


@pytest.fixture(scope="module")
def ssd335():
    return fb.replay(CONSISTENCY, target=f"sim:intel-335-240g?scale={SCALE}")


@pytest.fixture(scope="module")
def pts():
    return fb.replay("snia-pts", scale=SCALE)


def _headline_rows(cmp: pl.DataFrame, name: str) -> pl.DataFrame:
    test, condition, metric = get_protocol(name).headline
    return cmp.filter(
        (pl.col("test") == test) & (pl.col("condition") == condition) & (pl.col("metric") == metric)
    )


def test_pts_says_the_review_publishes_no_number_for_its_drive(pts):
    """SNIA PTS replays on sim:generic; the seed it cites (X-bit) publishes numbers for the
    SSD 330 and 335 only: every row compared nothing, and no row said why."""
    cmp = pts.compare()
    assert not cmp.filter(pl.col("status").is_in(COMPARED)).height
    (row,) = _headline_rows(cmp, "snia-pts").iter_rows(named=True)
    assert row["status"] == NO_DRIVE
    assert row["drive"] == "generic"
    assert "Intel SSD 330, Intel SSD 335" in row["note"]  # the drives it does publish
    assert headline(get_protocol("snia-pts"), cmp).startswith("not compared: avg_iops")


def test_consistency_alone_says_its_headline_needs_the_ssd335(ssd530, ssd335):
    cmp = ssd530.compare()
    (row,) = _headline_rows(cmp, CONSISTENCY).iter_rows(named=True)
    assert row["status"] == NEEDS_PAIR
    assert row["published"] == 2.0 and row["replayed"] is None  # the review's "nearly double"
    assert "compare(other=" in row["note"]
    paired = ssd530.compare(other=ssd335)
    (row,) = _headline_rows(paired, CONSISTENCY).iter_rows(named=True)
    assert row["status"] in COMPARED
    # the SSD 335 itself: AnandTech's article publishes no measured number for it
    alone = ssd335.compare()
    (row,) = _headline_rows(alone, CONSISTENCY).iter_rows(named=True)
    assert row["status"] == NO_DRIVE and row["drive"] == "Intel SSD 335"
    assert "Intel SSD 530" in row["note"]


def test_the_reason_follows_the_published_data(ssd530, pts):
    """The same replays, other published data: the status moves with the data, as computed."""
    pub = fb.published()
    ratio = pl.col("metric") == "steady_state_onset_vs_ssd335_ratio"
    # the SSD 530 without its ratio, but with its AS-SSD numbers: another number, not this one
    (row,) = _headline_rows(ssd530.compare(pub.filter(~ratio)), CONSISTENCY).iter_rows(named=True)
    assert row["status"] == NO_VALUE
    assert "as_ssd_seq_write" not in row["note"] and "avg_mbps" in row["note"]
    # no measured SSD 530 number at all (its spec rows stay): no number for this drive
    no530 = pub.filter(~((pl.col("drive") == "Intel SSD 530") & (pl.col("condition") != "spec")))
    (row,) = _headline_rows(ssd530.compare(no530), CONSISTENCY).iter_rows(named=True)
    assert row["status"] == NO_DRIVE
    # a published PTS number for the generic drive: the headline is compared
    extra = pub.filter(pl.col("source") == "002_a117cd683a41e7c2.txt").head(1).with_columns(
        drive=pl.lit("generic"), test=pl.lit("pts_iops"), condition=pl.lit("steady_state"),
        metric=pl.lit("avg_iops"), value=pl.lit(5000.0), unit=pl.lit("IOPS"),
    )  # fmt: skip
    (row,) = _headline_rows(pts.compare(pl.concat([pub, extra])), "snia-pts").iter_rows(named=True)
    assert row["status"] in COMPARED and row["published"] == 5000.0


def _fake(proto, rows, meta):
    """A replay of ``proto`` whose checks return ``rows`` (compare() reads only these)."""
    return types.SimpleNamespace(
        protocol=dataclasses.replace(proto, checks=lambda _rep: rows), meta=meta
    )


def test_a_review_comparing_nothing_without_a_headline_row_fails(pts):
    proto = get_protocol("snia-pts")
    rows = [check_row("pts_wsat", "steady_state", "avg_iops", 1.0, "IOPS", drive="generic")]
    with pytest.raises(fb.ReplayError, match="declares no headline"):
        compare(_fake(dataclasses.replace(proto, headline=()), rows, pts.meta))
    # the check itself: a frame that compares nothing and lacks the reason row is refused
    cmp = pts.compare()
    without = cmp.filter(~pl.col("status").is_in(REASONS))
    with pytest.raises(fb.ReplayError, match="no headline row saying why"):
        require_accounted(proto, without)
    require_accounted(proto, cmp)


def test_a_headline_published_for_the_drive_but_never_checked_is_a_defect(ssd530):
    """The reason is computed, so it cannot hide a protocol that forgot its headline row."""
    proto = dataclasses.replace(get_protocol(CONSISTENCY), pair_checks=None)
    test, condition, _ = proto.headline
    rows = [check_row(test, condition, "initial_iops", 1.0, "IOPS", drive="Intel SSD 530")]
    with pytest.raises(fb.ReplayError, match="no check of the protocol gives its row"):
        compare(_fake(proto, rows, ssd530.meta))


def test_a_section_joining_replays_keeps_one_headline_row_per_drive(ssd530, ssd335):
    """The report joins the 530 beside the 335 (which compares the headline), the 530 alone
    (a variant: 'needs a second replay') and the 335 alone: the variant's reason row goes,
    since the pair compares that number for that drive; the 335's own reason stays."""
    cmp = joined([ssd530.compare(other=ssd335), ssd530.compare(), ssd335.compare()])
    rows = _headline_rows(cmp, CONSISTENCY)
    assert sorted(zip(rows["drive"], rows["status"], strict=True)) == [
        ("Intel SSD 335", NO_DRIVE),
        ("Intel SSD 530", rows.filter(pl.col("drive") == "Intel SSD 530")["status"][0]),
    ]
    assert rows.filter(pl.col("drive") == "Intel SSD 530")["status"][0] in COMPARED
    assert joined([ssd530.compare()])["status"].is_in([NEEDS_PAIR]).sum() == 1


def test_a_variant_says_it_ran_another_condition(ssd530):
    """AnandTech's +25 % OP replay: the published ratio is for the default spare area, so
    neither alone nor beside a +25 % OP SSD 335 does it compare it (this raised beside the
    pair: 'no check gives its row')."""
    op25 = fb.replay(CONSISTENCY, scale=SCALE, op25=True)
    other = fb.replay(CONSISTENCY, target=f"sim:intel-335-240g?scale={SCALE}", op25=True)
    for cmp in (op25.compare(), op25.compare(other=other)):
        (row,) = _headline_rows(cmp, CONSISTENCY).iter_rows(named=True)
        assert row["status"] == VARIANT and row["note"].endswith("this replay ran op_25")
    # the report's join drops it where the default pair compares the number
    ssd335 = fb.replay(CONSISTENCY, target=f"sim:intel-335-240g?scale={SCALE}")
    both = joined([ssd530.compare(other=ssd335), op25.compare()])
    assert not both["status"].is_in([VARIANT]).any()


def test_the_pair_says_when_its_two_drives_are_one_model(ssd530, ssd335):
    """The 530 and 335 presets differ only in name and sources: the replayed ratio is 1 and
    the row says the model cannot separate them; a 335 with another parameter loses the note."""
    (row,) = _headline_rows(ssd530.compare(other=ssd335), CONSISTENCY).iter_rows(named=True)
    assert row["replayed"] == pytest.approx(1.0)
    assert "differ in no modelled parameter" in row["note"]
    other = fb.replay(CONSISTENCY, target=f"sim:intel-335-240g?scale={SCALE}&dirty_rate=1")
    (row,) = _headline_rows(ssd530.compare(other=other), CONSISTENCY).iter_rows(named=True)
    assert "differ in no modelled parameter" not in row["note"]
