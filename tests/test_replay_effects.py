"""Effects (a drop, a share of a reference level) follow one rule for published and replayed
levels alike (``replay.base.EFFECTS`` / ``effect_pct``)."""

from __future__ import annotations

import pytest

import flashback as fb
from flashback.replay.base import EFFECTS, effect_pct


def test_effect_pct_follows_the_published_rule_and_says_when_there_is_nothing_to_compare():
    assert effect_pct("drop_pct", 200.0, 150.0) == pytest.approx(25.0)
    assert effect_pct("ratio_pct", 160.0, 130.0) == pytest.approx(81.25)
    assert effect_pct("drop_pct", 200.0, 150.0) == EFFECTS["drop_pct"](200.0, 150.0)
    assert effect_pct("ratio_pct", None, 1.0) is None
    assert effect_pct("ratio_pct", 1.0, None) is None
    assert effect_pct("drop_pct", 0.0, 1.0) is None
    with pytest.raises(KeyError):
        effect_pct("gain_pct", 1.0, 2.0)


def test_levels_equal_but_for_the_last_bits_have_no_effect():
    # 0.1 + 0.2 and 0.3 differ in the last bit: the same rate reached by two sums
    a, b = 0.1 + 0.2, 0.3
    assert a != b
    assert effect_pct("drop_pct", a, b) == 0.0
    assert effect_pct("ratio_pct", a, b) == 100.0
    # a real 1e-9 difference stays
    assert effect_pct("drop_pct", 1.0, 1.0 - 1e-9) == pytest.approx(1e-7)


@pytest.mark.parametrize("scale", [1 / 256, 1 / 64])
def test_xbit_used_state_equal_to_fresh_shows_no_loss(scale):
    # At these scales the model's used IOPS equal the fresh IOPS but for the float's last
    # bits; the report printed a loss of 1.4e-14 % (and -1.4e-14 % at 1/64).
    cmp = fb.replay("xbit-pts-degradation", scale=scale).compare()
    used = {
        r["metric"]: r["replayed"]
        for r in cmp.filter(cmp["condition"] == "used").iter_rows(named=True)
        if r["metric"] in ("loss_vs_fresh_pct", "relative_to_fresh_pct")
    }
    if used["relative_to_fresh_pct"] != 100.0:
        assert abs(used["relative_to_fresh_pct"] - 100.0) > 1e-10
    else:
        assert used["loss_vs_fresh_pct"] == 0.0
