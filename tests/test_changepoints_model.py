"""``fb.changepoints(model=...)``: step or piecewise-linear segments, chosen by a BIC-type
criterion for non-capture columns, so a trend is not cut into stairs."""

import numpy as np
import polars as pl
import pytest
from conftest import ar1 as _ar1

import flashback as fb


def _kinked_trend(seed, n=600, kink=300):
    """Up at 0.05 per point, then down at 0.03 per point from ``kink`` on; AR(0.5) noise."""
    rng = np.random.default_rng(seed)
    i = np.arange(n, dtype=float)
    level = np.where(i < kink, 0.05 * i, 0.05 * kink - 0.03 * (i - kink))
    return pl.DataFrame({"i": i, "value": level + _ar1(rng, n, 0.5, 1.0)})


@pytest.mark.parametrize("seed", range(5))
def test_a_kinked_trend_gives_one_breakpoint_at_the_kink(seed):
    df = _kinked_trend(seed)
    seg = fb.changepoints(df, x="i", y="value")
    assert seg.model == "linear"
    assert len(seg.breakpoints) == 1, seg.breakpoints
    assert abs(seg.breakpoints[0] - 300) <= 25, seg.breakpoints
    lo, hi = seg.intervals[0]
    assert lo <= seg.breakpoints[0] <= hi
    # the segments' slopes are the two trends (per unit of x)
    slopes = seg.to_frame()["slope"].to_list()
    assert slopes[0] == pytest.approx(0.05, abs=0.01) and slopes[1] == pytest.approx(
        -0.03, abs=0.01
    )
    # the step model cannot find the kink: stairs along the trend, or one step elsewhere
    step = fb.changepoints(df, x="i", y="value", model="step").breakpoints
    assert not (len(step) == 1 and abs(step[0] - 300) <= 25), step


@pytest.mark.parametrize("seed", range(5))
def test_a_step_stays_a_step(seed):
    rng = np.random.default_rng(100 + seed)
    y = np.r_[np.zeros(300), np.full(300, 2.0)] + _ar1(rng, 600, 0.5, 1.0)
    seg = fb.changepoints(pl.DataFrame({"i": np.arange(600.0), "value": y}), x="i", y="value")
    assert seg.model == "step"
    assert len(seg.breakpoints) == 1 and abs(seg.breakpoints[0] - 300) <= 10, seg.breakpoints


@pytest.mark.parametrize("seed", range(3))
def test_the_reported_long_run_sigma_is_the_one_the_penalty_used(seed):
    """``penalty`` = 4 · ln n · ``long_run_sigma``² for lines and 3 · ln n · ``long_run_sigma``²
    for levels, as the docstring says. Before, lines reported the level search's long-run
    variance (the kinked trend, seed 0: penalty / (4 ln n) = 2.99 against 6.00)."""
    df = _kinked_trend(seed)
    n = df.height
    lines = fb.changepoints(df, x="i", y="value")
    assert lines.model == "linear"
    assert lines.penalty == pytest.approx(4 * np.log(n) * lines.long_run_sigma**2, rel=1e-9)
    steps = fb.changepoints(df, x="i", y="value", model="step")
    assert steps.penalty == pytest.approx(3 * np.log(n) * steps.long_run_sigma**2, rel=1e-9)
    # the noise around the lines is stationary AR(0.5) with σ = 1, long-run variance
    # (1+φ)/(1−φ)·σ² = 3; the level search's residual also holds the trend it cut into stairs
    assert 1.5 <= lines.long_run_sigma**2 <= 9.0, lines.long_run_sigma
    assert lines.long_run_sigma < steps.long_run_sigma


def test_capture_columns_keep_the_step_model():
    # a throughput column is a capture column: a cache filling is a step, so even a ramp is
    # segmented with levels (steady_state_onset is the piecewise-linear view of a run)
    df = _kinked_trend(0).with_columns((pl.col("value") + 50).alias("write_mbps"))
    assert fb.changepoints(df, x="i", y="write_mbps").model == "step"
    assert fb.changepoints(df, x="i", y="write_mbps", model="linear").model == "linear"


def test_bad_model_arguments_are_analysis_errors():
    df = _kinked_trend(0)
    with pytest.raises(fb.AnalysisError, match="model='ramp' is not one of"):
        fb.changepoints(df, x="i", y="value", model="ramp")
    with pytest.raises(fb.AnalysisError, match="model='linear' needs method='pelt'"):
        fb.changepoints(df, x="i", y="value", model="linear", method="binseg")


def test_real_series_nile_and_us_macro():
    """Data not generated here (statsmodels' copies): the Nile's annual flow drops in 1898
    (Cobb 1978; the new level from 1899) — a step; log US CPI 1959–2009 trends, with the
    1979–82 disinflation a change of slope, log real GDP the 2007–09 recession, where a step
    model draws a dozen stairs."""
    datasets = pytest.importorskip("statsmodels.datasets")
    nile = datasets.nile.load_pandas().data
    seg = fb.changepoints(
        pl.DataFrame(
            {"year": nile["year"].to_numpy(float), "flow": nile["volume"].to_numpy(float)}
        ),
        x="year",
        y="flow",
    )
    assert seg.model == "step"
    assert len(seg.breakpoints) == 1 and 1898 <= seg.breakpoints[0] <= 1900, seg.breakpoints

    macro = datasets.macrodata.load_pandas().data
    q = np.arange(len(macro), dtype=float)  # quarters since 1959Q1
    for col in ("realgdp", "pop", "cpi"):
        df = pl.DataFrame({"q": q, "v": np.log(macro[col].to_numpy(float))})
        auto = fb.changepoints(df, x="q", y="v")
        step = fb.changepoints(df, x="q", y="v", model="step")
        assert auto.model == "linear", col
        # a line per business-cycle phase, not a dozen stairs
        assert 2 * len(auto.breakpoints) <= len(step.breakpoints), (col, auto.breakpoints)
        if col == "realgdp":  # the NBER-dated recession: peak 2007Q4 (q 195), trough 2009Q2
            assert any(195 <= b <= 201 for b in auto.breakpoints), auto.breakpoints
        if col == "cpi":  # 1979Q1–1982Q4: quarters 80–95
            assert any(80 <= b <= 95 for b in auto.breakpoints), auto.breakpoints


def test_a_long_series_is_searched_on_bins_and_breaks_refined_to_rows():
    # 20,000 rows (beyond LINEAR_MAX_ROWS): flat, then a ramp from row 8,000
    from flashback.analysis.changepoints import LINEAR_MAX_ROWS

    n = 20_000
    assert n > LINEAR_MAX_ROWS
    rng = np.random.default_rng(11)
    i = np.arange(n, dtype=float)
    y = np.where(i < 8000, 0.0, (i - 8000) * 1e-3) + rng.standard_normal(n)
    seg = fb.changepoints(pl.DataFrame({"i": i, "value": y}), x="i", y="value")
    assert seg.model == "linear"
    assert len(seg.breakpoints) == 1 and abs(seg.breakpoints[0] - 8000) <= 400, seg.breakpoints
    lo, hi = seg.intervals[0]
    assert lo <= 8000 <= hi, (lo, hi)


def test_model_choice_over_40_runs_each():
    """Kinked trends → one line break at the kink, its interval covering it; steps of 2 σ in
    AR(0.5) noise → one step. (Judging both models against the step search's own noise
    estimate, which also holds the trend it could not follow, kept a flat level on 13 of 40
    kinked runs.)"""
    kink_ok = covered = step_ok = 0
    for seed in range(40):
        seg = fb.changepoints(_kinked_trend(seed), x="i", y="value")
        if seg.model == "linear" and len(seg.breakpoints) == 1:
            kink_ok += abs(seg.breakpoints[0] - 300) <= 25
            covered += seg.intervals[0][0] <= 300 <= seg.intervals[0][1]
        rng = np.random.default_rng(100 + seed)
        y = np.r_[np.zeros(300), np.full(300, 2.0)] + _ar1(rng, 600, 0.5, 1.0)
        seg = fb.changepoints(pl.DataFrame({"i": np.arange(600.0), "value": y}), x="i", y="value")
        step_ok += seg.model == "step" and len(seg.breakpoints) == 1
    assert kink_ok >= 38 and covered >= 36 and step_ok >= 38, (kink_ok, covered, step_ok)


def test_kendall_correction_removes_most_of_the_small_sample_bias_of_rho():
    """AR(1) φ = 0.6, 30 points: the lag-1 estimate is biased low by about (1 + 3φ)/n ≈ 0.09
    (Kendall 1954); the corrected mean over 400 series lies closer to φ."""
    from flashback.analysis.noise import kendall_rho

    raw, fixed = [], []
    for seed in range(400):
        x = _ar1(np.random.default_rng(seed), 30, 0.6, 1.0)
        c = x - x.mean()
        r = float(c[:-1] @ c[1:] / (c @ c))
        raw.append(r)
        fixed.append(kendall_rho(r, 30))
    assert np.mean(raw) < 0.6 - 0.05, np.mean(raw)
    assert abs(np.mean(fixed) - 0.6) < abs(np.mean(raw) - 0.6) / 2, (np.mean(raw), np.mean(fixed))


def test_ar1_long_run_variance_matches_theory():
    # AR(1) φ = 0.5, unit variance: long-run variance (1 + φ)/(1 − φ) = 3
    from flashback.analysis.noise import ar1_long_run_variance

    x = _ar1(np.random.default_rng(5), 200_000, 0.5, 1.0)
    assert ar1_long_run_variance(x, 0.5) == pytest.approx(3.0, rel=0.03)


def test_short_autocorrelated_series_find_their_one_step():
    """30 points of AR(0.6) noise with a 4 σ step in the middle: with fewer than 64 points the
    block estimator of the long-run variance sees no autocorrelation at all, and the penalty
    from it split the noise too (the step found alone in 13 of 40 runs); with the AR(1) floor
    from the bias-corrected ρ̃ it is found alone in 25 of 40."""
    alone = 0
    for seed in range(40):
        y = _ar1(np.random.default_rng(seed), 30, 0.6, 1.0) + np.where(np.arange(30) >= 15, 4.0, 0)
        b = fb.changepoints(pl.DataFrame({"i": np.arange(30.0), "value": y}), x="i", y="value")
        alone += len(b.breakpoints) == 1 and abs(b.breakpoints[0] - 15) <= 2
    assert alone >= 20, alone


def test_noise_scale_of_a_steep_trend_is_the_noise_not_zero():
    """Slope 10 per point, white noise σ = 1: every 7-point window is monotone, so the
    running median is the point itself and the old residual was 0 everywhere (σ̂ = ρ̂ = 0,
    and ``changepoints`` fell back to the series' standard deviation, ~5,800). Around a
    7-point running mean, white noise keeps a variance of σ²(1 − 1/7): σ̂ ≈ 0.93."""
    from flashback.analysis.noise import residual_scale

    n = 2000
    y = 10.0 * np.arange(n) + np.random.default_rng(11).standard_normal(n)
    sigma, rho = residual_scale(y, window=7)
    assert 0.85 <= sigma <= 1.0, sigma
    assert rho < 0.1, rho
    seg = fb.changepoints(pl.DataFrame({"i": np.arange(n, dtype=float), "v": y}), x="i", y="v")
    assert seg.model == "linear" and seg.breakpoints == [], seg.breakpoints
    assert 0.85 <= seg.sigma <= 1.0, seg.sigma


def test_autocorrelation_of_a_trending_series_is_read_as_on_a_level():
    """AR(1) φ = 0.8 around a steep line reads about as the same noise on a level does: σ̂
    within 40 % and ρ̂ within 30 % of the running-median estimates on the noise alone (both
    smoothers absorb part of slow noise, the 7-point mean less than the median: 0.50 against
    0.37 here; neither ρ̂ is φ itself); the old estimates on the line were 0."""
    from flashback.analysis.noise import residual_scale

    noise = _ar1(np.random.default_rng(12), 4000, 0.8, 1.0)
    s_flat, r_flat = residual_scale(noise, window=7)
    sigma, rho = residual_scale(10.0 * np.arange(4000) + noise, window=7)
    assert r_flat > 0.15
    assert sigma == pytest.approx(s_flat, rel=0.4) and rho == pytest.approx(r_flat, rel=0.3)


def test_the_variance_of_a_mean_uses_the_same_rho_correction_as_the_penalty():
    """``blocks.ar1_var_of_mean`` (effect and level CIs) and the change-point penalty correct
    ρ̂ with one rule, :func:`noise.kendall_rho`: the variance of the mean of AR(0.6) noise in
    20 points is the AR(1) formula at ρ̃ = (n·ρ̂ + 1)/(n − 3). Before, it added (1 + 3ρ̂)/n to
    ρ̂ instead, which leaves half as much bias again (−0.060 against −0.040 over 4000 series)."""
    from flashback.analysis import blocks
    from flashback.analysis.noise import kendall_rho

    for seed in range(5):
        y = _ar1(np.random.default_rng(seed), 20, 0.6, 1.0)
        n = y.size
        rho = kendall_rho(blocks.lag1_autocorrelation(y), n, cap=0.995)
        h = np.arange(1, n)
        f = 1 + 2 * float(np.sum((1 - h / n) * rho**h))
        want = float(np.var(y)) / max(1 - f / n, 0.05) * f / n
        assert blocks.ar1_var_of_mean(y) == pytest.approx(want, rel=1e-12)
