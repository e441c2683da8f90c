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
