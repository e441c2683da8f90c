"""Steady state: the PTS window check agrees with a longhand reference; rounds; verdicts."""

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flashback as fb
from flashback.analysis import _reference as reference
from flashback.analysis.steady_state import window_check

values = st.lists(st.floats(min_value=1.0, max_value=1e6, allow_nan=False), min_size=5, max_size=5)


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from(["snia", "tkperf"]))
def test_window_check_matches_reference(v, rule):
    w = v[:5]
    ok = window_check(np.array(w), rule)["ok"]
    ref = reference.pts_window(w, rule)
    if ok != ref:
        # Only a tie at the limit may differ (floating point); re-check with a margin.
        chk = window_check(np.array(w), rule)
        assert min(abs(chk["range_margin"]), abs(chk["slope_margin"])) < 1e-9
    else:
        assert ok == ref


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(min_value=0.85, max_value=1.15), min_size=5, max_size=5), st.floats(1, 1e5)
)
def test_near_flat_windows_around_the_limits(v, scale):
    # Windows close to the 20 % / 10 % limits, where a wrong convention would show.
    w = [x * scale for x in v]
    chk = window_check(np.array(w), "snia")
    if chk["ok"] != reference.pts_window(w, "snia"):
        assert min(abs(chk["range_margin"]), abs(chk["slope_margin"])) < 1e-9


def _capture(levels_per_min, seconds_per_round=60, noise=0.02, seed=0, capacity=10e9):
    rng = np.random.default_rng(seed)
    y = np.repeat(levels_per_min, seconds_per_round) * (
        1 + noise * rng.standard_normal(len(levels_per_min) * seconds_per_round)
    )
    n = y.size
    wb = (y * 4096).astype(np.uint64)
    df = pl.DataFrame(
        {
            "t_s": np.arange(1.0, n + 1),
            "interval_s": np.ones(n),
            "write_iops": y,
            "write_bytes": wb,
            "host_written_bytes": np.cumsum(wb),
            "step": ["x"] * n,
        }
    )
    return fb.Capture(df, {"target": {"size_bytes": capacity}})


def test_snia_rule_finds_the_first_steady_window():
    levels = [50000, 30000, 15000, 11000, 10500, 10200, 10000, 10100, 9900, 10000, 10050, 9950]
    cap = _capture(levels)
    ss = fb.steady_state(cap, y="write_iops", round="60s")
    assert ss.reached
    first, last = ss.window
    assert last - first == 4
    w = [np.mean(levels[i - 1]) for i in range(first, last + 1)]
    assert reference.pts_window(w)
    # no earlier window passes the reference
    for end in range(5, last):
        assert not reference.pts_window(levels[end - 5 : end])
    assert ss.onset["seconds"] == pytest.approx(60 * (first - 1))
    assert ss.onset["fills"] == pytest.approx(ss.onset["bytes"] / 10e9)
    assert ss.to_frame().height >= 1 and "steady state reached" in ss.describe()


def test_never_steady_and_variants():
    cap = _capture([50000 * 0.8**i for i in range(12)])
    for rule in ("snia", "tkperf", "band"):
        assert not fb.steady_state(cap, y="write_iops", rule=rule).reached
    flat = _capture([10000] * 8, noise=0.01)
    assert fb.steady_state(flat, y="write_iops", rule="fio_iops", ss_dur=60, limit=10).reached
    assert fb.steady_state(
        flat, y="write_iops", rule="fio_iops_slope", ss_dur=120, limit=0.5
    ).reached
    assert not fb.steady_state(flat, y="write_iops", rule="fio_iops", ss_dur=60, limit=0.5).reached


def test_rounds_by_time_bytes_and_fills():
    cap = _capture([10000] * 6)
    r = fb.to_rounds(cap, round="60s")
    assert r.height == 6 and r["write_iops"][0] == pytest.approx(10000, rel=0.01)
    total = int(cap.intervals["write_bytes"].sum())
    rb = fb.to_rounds(cap, round=total // 3)
    assert rb.height in (3, 4) and rb["write_bytes"].sum() == total
    rf = fb.to_rounds(cap, round="0.25fill", capacity_bytes=total / 2)
    assert rf.filter(pl.col("complete")).height in (7, 8)
    assert rf["fills_end"].max() == pytest.approx(2.0)


def test_rounds_shorter_than_an_interval_are_refused():
    cap = _capture([10000] * 6)  # 1 s intervals of ~41 MB each
    with pytest.raises(fb.AnalysisError, match="shorter than some of the capture's intervals"):
        fb.to_rounds(cap, round="0.5s")
    with pytest.raises(fb.AnalysisError, match="use larger rounds or capture with a shorter"):
        fb.to_rounds(cap, round=20_000_000)
    # a round exactly one interval long is fine
    assert fb.to_rounds(cap, round="1s").height == 360


def test_multi_variable_tracking_needs_all():
    cap = _capture([10000] * 8)
    df = cap.intervals.with_columns(
        (pl.col("write_iops") * (1 + pl.col("t_s") / 100)).alias("write_lat_mean_us")
    )
    one = fb.steady_state(df, y="write_iops")
    both = fb.steady_state(df, y=["write_iops", "write_lat_mean_us"])
    assert one.reached and both.window != one.window or not both.reached


def test_tkperf_is_the_pts_window_as_tkperf_codes_it():
    # TKperf (StdyState.checkSteadyState) checks the last 5 rounds with |slope| · 4: the
    # PTS rule. On 1000 random windows near the limits the two agree every time (the old
    # 4-round, |slope| · w form agreed on 235).
    rng = np.random.default_rng(0)
    for _ in range(1000):
        w = 10000 * rng.uniform(0.88, 1.12, 5) * (1 + rng.uniform(-0.04, 0.04) * np.arange(5))
        assert window_check(w, "tkperf")["ok"] == window_check(w, "snia")["ok"]
        assert window_check(w, "tkperf")["ok"] == reference.pts_window(list(w), "tkperf")
    cap = _capture([50000, 30000, 15000, 11000, 10500, 10200, 10000, 10100, 9900, 10000])
    a, b = fb.steady_state(cap, rule="tkperf"), fb.steady_state(cap, rule="snia")
    assert a.window == b.window and a.window[1] - a.window[0] == 4


def test_window_and_onset_are_round_labels():
    # A frame of rounds whose labels start at 11 (the first 10 were dropped): the window names
    # rounds 11.., not row positions 1..
    levels = [50000, 30000, 15000, 11000, 10500, 10200, 10000, 10100, 9900, 10000]
    rounds = fb.to_rounds(_capture(levels), round="60s").with_columns(
        (pl.col("round") + 10).alias("round")
    )
    ss = fb.steady_state(rounds, y="write_iops")
    plain = fb.steady_state(_capture(levels), y="write_iops")
    assert ss.window == (plain.window[0] + 10, plain.window[1] + 10)
    assert ss.onset["round"] == ss.window[0]
    assert ss.onset["seconds"] == plain.onset["seconds"]
    assert ss.to_frame()["window_last"].max() == ss.window[1]


def test_holds_after_counts_later_windows_that_fail():
    # steady at 10000 from round 4, then a 21 % drop at round 14 (after a TRIM, say)
    levels = [40000, 20000, 12000] + [10000] * 10 + [7900] * 10
    ss = fb.steady_state(_capture(levels), y="write_iops", max_rounds=None)
    assert ss.reached and ss.window == (4, 8)
    # later windows end at rounds 9..23; those ending at 14..18 straddle the drop (range 21 %)
    expect = [reference.pts_window(levels[e - 5 : e]) for e in range(9, len(levels) + 1)]
    assert ss.later_windows == len(expect) == 15
    assert ss.holds_after == pytest.approx(np.mean(expect))
    assert ss.holds_after < 1 and "NOT steady afterwards" in ss.describe()
    flat = fb.steady_state(_capture([20000, 12000] + [10000] * 10), y="write_iops")
    assert flat.holds_after == 1.0 and "holds in" in flat.describe()
    never = fb.steady_state(_capture([50000 * 0.8**i for i in range(12)]), y="write_iops")
    assert never.holds_after is None
