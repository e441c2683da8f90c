"""fb.steady_state_onset: where a generated SSD run levels off (truth in bytes), with a CI
that covers the truth; flat and still-sloping series; bad input."""

import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import flashback as fb

sys.path.insert(0, str(Path(__file__).parent))
from support.ssd_series import ssd_run


def test_onset_on_generated_ssd_runs():
    errs, covered = [], []
    for s in range(800, 816):
        rng = np.random.default_rng(s)
        run = ssd_run(s, n=int(rng.integers(10_000, 15_000)))
        o = fb.steady_state_onset(run.frame)
        assert o.lo_bytes <= o.bytes <= o.hi_bytes if o.reached else True
        errs.append(abs(o.bytes - run.onset_bytes) / run.total_bytes if o.reached else 1.0)
        covered.append(o.reached and o.lo_bytes <= run.onset_bytes <= o.hi_bytes)
    # bar: median onset error <= 10 % of the bytes written (measured: ~1 %)
    assert np.median(errs) <= 0.10, errs
    # a nominal 95 % interval: at least 14 of 16 (P(<= 13 | 95 %) = 4 %)
    assert sum(covered) >= 14, (covered, errs)


def _frame(y):
    n = y.size
    wb = y * 1e6
    return pl.DataFrame(
        {
            "t_s": np.arange(1.0, n + 1),
            "interval_s": np.ones(n),
            "write_mbps": y,
            "write_bytes": wb,
            "host_written_bytes": np.cumsum(wb),
        }
    )


def test_flat_run_is_steady_from_the_start_and_a_slide_is_not_steady():
    rng = np.random.default_rng(2)
    flat = 300 * np.exp(0.05 * rng.standard_normal(5000))
    o = fb.steady_state_onset(_frame(flat))
    assert o.reached and o.bytes == 0.0 and o.level == pytest.approx(flat.mean())
    assert "levels off at 0 GB" in o.describe()
    slide = np.linspace(600, 200, 5000) * np.exp(0.05 * rng.standard_normal(5000))
    s = fb.steady_state_onset(_frame(slide))
    assert not s.reached and s.x is None and "has not levelled off" in s.describe()


def test_cliff_then_slide_then_flat_in_seconds():
    rng = np.random.default_rng(4)
    lv = np.r_[np.full(3000, 900.0), np.geomspace(400, 250, 2000), np.full(5000, 250.0)]
    y = lv * np.exp(0.04 * rng.standard_normal(lv.size))
    o = fb.steady_state_onset(_frame(y), x="t_s")
    assert o.reached and o.lo <= 5000 <= o.hi and abs(o.x - 5000) <= 150, o
    assert o.seconds == o.x


def test_bad_input_is_an_analysis_error():
    df = _frame(np.full(100, 5.0))
    with pytest.raises(fb.AnalysisError, match="confidence"):
        fb.steady_state_onset(df, confidence=1.5)
    with pytest.raises(fb.AnalysisError, match="bins"):
        fb.steady_state_onset(df, bins=3)
    with pytest.raises(fb.AnalysisError, match="penalty"):
        fb.steady_state_onset(df, penalty="big")
    with pytest.raises(fb.AnalysisError, match="write_mbs"):
        fb.steady_state_onset(df, y="write_mbs")
    with pytest.raises(fb.AnalysisError):
        fb.steady_state_onset(df.head(5))
