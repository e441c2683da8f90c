"""Segment levels and their intervals (``flashback.analysis.levels``): computed on the scale
the segmentation used (log for rates and latencies), never below zero for a quantity that
cannot be, and still covering the mean at the nominal rate on SSD-like and AR series."""

import sys
from pathlib import Path

import numpy as np
import pytest

import flashback as fb
from flashback.analysis.blocks import level_ci
from flashback.analysis.levels import level_interval

sys.path.insert(0, str(Path(__file__).parent))
from bench.effect_coverage import ar97_noise, ssd_noise
from support.ssd_series import ar1


def _ar90(rng, n):
    return 1 + ar1(rng, n, 0.9, 0.1)


DESIGNS = {"ssd": (ssd_noise, 1200), "ar97": (ar97_noise, 300), "ar90": (_ar90, 300)}


def _truth(noise, n):
    """The expected mean of a series of ``n`` points (the GC oscillation starts in its fast
    state, so not exactly 1): 4000 series from an independent seed."""
    rng = np.random.default_rng(999)
    return float(np.mean([noise(rng, n).mean() for _ in range(4000)]))


def _coverage(design, trials, seed=7):
    noise, n = DESIGNS[design]
    truth = 500 * _truth(noise, n)
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(trials):
        _, lo, hi = level_interval(500 * noise(rng, n), log=True, confidence=0.95)
        assert lo > 0
        hits += lo <= truth <= hi
    return hits / trials


def test_quickstart_capture_levels_are_never_below_zero():
    # the README's quick-start capture: short recovery bursts after GC gave
    # 92.8 [-613, 799] MB/s before (the interval of the raw mean, with one degree of freedom)
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, written="1.5g", interval="0.1s")
    cap = fb.run("sim:generic?scale=1/256", w)
    for y in ("write_mbps", "write_iops"):
        f = fb.changepoints(cap, x="host_written_bytes", y=y).to_frame()
        assert (f["level_lo"] > 0).all(), f.select("level", "level_lo", "level_hi")
        assert (f["level_lo"] <= f["level"]).all() and (f["level"] <= f["level_hi"]).all()
        # the level is still the mean of the segment's intervals
        ys = cap.intervals[y].to_numpy()
        assert f["level"][0] == pytest.approx(ys[: f["n"][0]].mean())


def test_log_interval_is_asymmetric_and_positive_where_the_raw_one_crosses_zero():
    y = np.array([5.0, 8, 30, 80, 200, 420, 600, 650, 640, 700, 20, 10, 700, 680])
    m, lo_raw, _ = level_ci(y)
    assert lo_raw < 0  # what the old code printed
    lv, lo, hi = level_interval(y, log=True)
    assert lv == pytest.approx(m)
    assert 0 < lo < lv < hi
    assert hi - lv > lv - lo


def test_raw_scale_interval_is_bounded_at_zero_for_non_negative_data():
    y = np.array([5.0, 8, 30, 80, 200, 420, 600, 650, 640, 700, 20, 10, 700, 680])
    _, lo, hi = level_interval(y, log=False)
    assert lo == 0.0 and hi > y.mean()
    # a series with negative values keeps its t-interval
    _, lo_neg, _ = level_interval(y - 400, log=False)
    assert lo_neg < -400


@pytest.mark.parametrize("design", ["ssd", "ar97", "ar90"])
def test_log_interval_covers_the_mean(design):
    # 200 trials (SE ~1.6 %); the slow test below runs 1000
    assert _coverage(design, 200) >= 0.91


@pytest.mark.slow
@pytest.mark.parametrize("design", ["ssd", "ar97", "ar90"])
def test_log_interval_covers_the_mean_1000_trials(design):
    cov = _coverage(design, 1000, seed=11)
    print(f"{design}: coverage {cov:.3f}")
    assert cov >= 0.93, cov


def test_chart_band_stays_within_the_curve_so_the_axis_follows_the_data():
    import polars as pl

    curve = pl.DataFrame(
        {"host_written_bytes": [0.0, 1e9, 2e9, 3e9], "write_mbps": [90.0, 95, 20, 22]}
    )
    seg = pl.DataFrame(
        {
            "x_start": [0.0, 2e9],
            "x_end": [1.9e9, 3e9],
            "level": [92.8, 21.0],
            "level_lo": [0.05, 19.0],
            "level_hi": [185_000.0, 23.0],
        }
    )
    chart = fb.figures.performance_vs_written(curve, y="write_mbps", segments=seg)
    spec = chart.to_dict()
    rows = [r for r in next(iter(spec["datasets"].values())) if r.get("layer") == "segment"]
    assert [(r["band_lo"], r["band_hi"]) for r in rows] == [(20.0, 95.0), (20.0, 23.0)]
    assert any(
        layer.get("encoding", {}).get("y", {}).get("field") == "band_lo" for layer in spec["layer"]
    )
