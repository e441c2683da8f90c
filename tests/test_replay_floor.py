"""The scale floor: each protocol's rows are held by the tests down to its ``min_held_scale``
(``tests/test_replay_scale.py`` reads it from there); a simulated replay below it shows its
values but no within/outside, and the tally leaves those rows out and says why. Measured on
f0aa14e before the floor, AnandTech 2009's used-read drop (published 12.84 %, ±5 pp) read 34.7 %
at 1/512 (outside), 15.9 % at 1/256 (within) and -0.05 % at 1/32 (outside): a status that
flipped with the scale."""

from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest

import flashback as fb
from flashback.replay.base import get_protocol, registered
from flashback.replay.compare import COMPARED, tally
from flashback.replay.headline import headline, headline_compared, require_accounted
from flashback.replay.status import BELOW_HELD

NAME = "anand2009-new-vs-used"


def test_every_protocol_declares_its_floor_as_a_scale():
    floors = {p.name: Fraction(p.min_held_scale) for p in registered()}
    assert all(0 < f <= 1 for f in floors.values()), floors
    # the AS-SSD pass moves from seed to seed by more than 3 % below 1/16
    assert floors["anandtech-trim-validation"] == Fraction(1, 16)


@pytest.mark.parametrize("scale", ["1/128", "1/512"])
def test_a_replay_below_its_floor_shows_values_but_no_status(scale):
    rep = fb.replay(NAME, scale=scale)
    cmp = rep.compare()
    published = cmp.filter(pl.col("published").is_not_null() & (pl.col("status") != "setting"))
    assert published.height == 3  # the two levels and the drop
    assert set(published["status"]) == {BELOW_HELD}
    assert published["within_tolerance"].null_count() == published.height
    assert published["replayed"].null_count() == 0  # the values are still shown
    why = f"not compared: replayed at {scale}, below 1/64, the smallest scale its rows are held at"
    assert all(n.startswith(why) for n in published["note"])
    t = tally(cmp)
    assert (t["compared"], t["within_tolerance"], t["below_held_scale"]) == (0, 0, 3)
    assert t["not_compared"] == why
    proto = get_protocol(NAME)
    assert not headline_compared(proto, cmp)
    assert headline(proto, cmp).startswith("not compared: drop_pct (used): published 12.84")
    assert f"replayed at {scale}, below 1/64" in headline(proto, cmp)
    require_accounted(proto, cmp)  # the headline row says why it is not compared


def test_a_replay_at_its_floor_is_compared():
    cmp = fb.replay(NAME, scale="1/64").compare()
    published = cmp.filter(pl.col("published").is_not_null() & (pl.col("status") != "setting"))
    assert set(published["status"]) <= set(COMPARED)
    t = tally(cmp)
    assert t["compared"] == 3 and t["below_held_scale"] == 0 and t["not_compared"] == ""


def test_the_floor_is_the_protocols_own():
    """AnandTech's TRIM validation is held from 1/16: 1/32 is below it, though above 1/64."""
    cmp = fb.replay("anandtech-trim-validation", scale="1/32").compare()
    below = cmp.filter(pl.col("status") == BELOW_HELD)
    assert below.height and all("below 1/16" in n for n in below["note"])
    assert not cmp.filter(pl.col("status").is_in(COMPARED)).height


def test_a_real_target_is_measured_as_it_is(tmp_path):
    """The floor is where the tests hold the simulated drive's rows; a file is compared."""
    rep = fb.replay(
        "anandtech-trim-validation", target=tmp_path / "t.bin", scale=1 / 4096, torture_s=60.0
    )
    cmp = rep.compare()
    assert BELOW_HELD not in set(cmp["status"])
    assert cmp.filter(pl.col("status").is_in(COMPARED)).height


def test_the_demo_summary_has_a_total_row_and_headlines(tmp_path):
    """``--quick`` runs each review at its protocol's floor, so its statuses are held; the
    total row sums the reviews' counts."""
    from flashback.replay.procedures import REVIEWS
    from flashback.report.demo import build_demo

    # SNIA PTS's computed reason (no published number for its drive) is held by
    # test_replay_compare_headline.py; left out here for make test's time (8.8 s at 1/64)
    only = ["anandtech-consistency", "anand2009"]
    _, summary = build_demo(tmp_path, quick=True, only=only, progress=False)
    assert summary["review"].to_list() == [*only, "total"]
    floors = {r.name: get_protocol(r.protocol).min_held_scale for r in REVIEWS}
    assert dict(zip(summary["review"][:-1], summary["scale"][:-1], strict=True)) == {
        name: floors[name] for name in only
    }
    total = summary.filter(pl.col("review") == "total").row(0, named=True)
    parts = summary.filter(pl.col("review") != "total")
    for col in ("compared", "within_tolerance", "borderline", "documented_not_modelled"):
        assert total[col] == parts[col].sum(), col
    assert total["below_held_scale"] == 0 and total["not_compared"] == ""
    heads = dict(zip(summary["review"], summary["headline"], strict=True))
    assert "published 12.84" in heads["anand2009"]
    assert not heads["anand2009"].startswith("not compared")
    # AnandTech's headline is the 530 beside the 335: the section replays both and compares it
    assert heads["anandtech-consistency"].startswith("steady_state_onset_vs_ssd335_ratio")
    compared = sum(not h.startswith("not compared") for h in parts["headline"])
    assert (
        total["headline"] == f"{compared} of {parts.height} reviews compare their headline number"
    )


def test_the_demo_scales_are_at_or_above_the_floors():
    from flashback.replay.procedures import REVIEWS

    for r in REVIEWS:
        assert Fraction(r.scale) >= Fraction(get_protocol(r.protocol).min_held_scale), r.name


def test_a_review_below_its_floor_is_left_out_of_the_total_and_says_so(tmp_path, monkeypatch):
    """The report's scales are the reviews' (never below a floor); one set below it, as a user
    editing REVIEWS would, adds nothing to the counts and the rows say why."""
    import dataclasses

    from flashback.report import demo

    (anand,) = [r for r in demo.REVIEWS if r.name == "anand2009"]
    monkeypatch.setattr(demo, "REVIEWS", (dataclasses.replace(anand, scale="1/256"),))
    _, summary = demo.build_demo(tmp_path, progress=False)
    row, total = summary.row(0, named=True), summary.row(1, named=True)
    assert (row["compared"], row["within_tolerance"], row["below_held_scale"]) == (0, 0, 3)
    assert row["not_compared"] == (
        "not compared: replayed at 1/256, below 1/64, the smallest scale its rows are held at"
    )
    assert row["headline"].startswith("not compared: drop_pct (used): published 12.84")
    assert (total["compared"], total["below_held_scale"]) == (0, 3)
    assert total["not_compared"] == (
        "not compared: 3 published numbers of 1 review replayed below the smallest scale "
        "their rows are held at"
    )
    assert total["headline"] == "0 of 1 reviews compare their headline number"
