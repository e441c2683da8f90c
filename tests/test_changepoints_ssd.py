"""fb.changepoints on generated SSD-shaped runs (truth in bytes) and on one step in AR(1) noise:
the default penalty knows autocorrelated noise, GC oscillation, stalls and zero seconds."""

import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import flashback as fb
from flashback.analysis.pelt import normal_cost, search

sys.path.insert(0, str(Path(__file__).parent))
from bench.ssd_eval import score
from support.ssd_series import ar1, ssd_run


def _scores(seeds, n_lo, n_hi, phi=None):
    out = []
    for s in seeds:
        rng = np.random.default_rng(s)
        run = ssd_run(s, n=int(rng.integers(n_lo, n_hi + 1)), phi=phi)
        out.append(score(run, fb.changepoints(run.frame)))
    return out


def _bars(rows):
    cliff = np.mean([r["cliff_err"] <= 0.005 for r in rows])
    false_ss = np.median([r["false_ss"] for r in rows])
    return cliff, false_ss


def test_ssd_runs_cliff_found_and_steady_state_not_cut_up():
    # 16 runs of 10k-20k seconds, φ drawn in [0, 0.85]; the old penalty (3·σ̂²_diff·ln n)
    # drew a median of 6 breakpoints in these steady states (106 at φ = 0.85).
    rows = _scores(range(500, 516), 10_000, 20_000)
    cliff, false_ss = _bars(rows)
    assert cliff >= 0.95, rows
    assert false_ss <= 2, rows


def test_ssd_runs_strongly_autocorrelated():
    rows = _scores(range(600, 608), 12_000, 16_000, phi=0.85)
    cliff, false_ss = _bars(rows)
    assert cliff >= 0.95, rows
    assert false_ss <= 2, rows


def test_ssd_runs_long():
    rows = _scores(range(700, 706), 100_000, 400_000)
    cliff, false_ss = _bars(rows)
    assert cliff >= 0.95, rows
    assert false_ss <= 2, rows


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.8])
def test_one_step_in_ar1_noise_is_one_change(phi):
    counts, errs = [], []
    for s in range(25):
        rng = np.random.default_rng(s)
        y = ar1(rng, 1000, phi, 1.0)
        y[500:] += 2.0
        df = pl.DataFrame({"i": np.arange(1000.0), "value": y})
        seg = fb.changepoints(df, x="i", y="value")
        counts.append(len(seg.breakpoints))
        errs += [abs(b - 500) for b in seg.breakpoints]
        assert 0 <= seg.rho < 1 and seg.long_run_sigma >= seg.sigma * 0.5
    assert np.median(counts) == 1, counts
    assert np.mean(np.array(counts) == 1) >= (1.0 if phi < 0.8 else 0.9), counts
    assert np.median(errs) <= 5, errs


def test_small_level_shifts_are_not_breakpoints_by_default():
    # A 3 % shift in 0.5 % noise: the search finds it, the capture default (5 %) drops it,
    # min_change_pct=0 keeps it; a 20 % shift survives both.
    rng = np.random.default_rng(3)
    n = 3000
    lv = np.r_[np.full(1000, 500.0), np.full(1000, 485.0), np.full(1000, 388.0)]
    y = lv * (1 + 0.005 * rng.standard_normal(n))
    df = pl.DataFrame({"t_s": np.arange(1.0, n + 1), "write_mbps": y})
    dflt = fb.changepoints(df, x="t_s")
    assert dflt.min_change_pct == 5.0
    assert [round(b) for b in dflt.breakpoints] == [2000]
    keep = fb.changepoints(df, x="t_s", min_change_pct=0)
    assert [round(b) for b in keep.breakpoints] == [1000, 2000]
    # a non-capture column has no minimum by default
    assert fb.changepoints(df.rename({"write_mbps": "v"}), x="t_s", y="v").min_change_pct == 0
    with pytest.raises(fb.AnalysisError, match="min_change_pct"):
        fb.changepoints(df, x="t_s", min_change_pct=-1)


def test_breakpoint_on_a_zero_based_index_is_the_first_row_of_the_new_level():
    y = np.r_[np.full(300, 10.0), np.full(300, 20.0)] + np.tile([0.1, -0.1], 300)
    df = pl.DataFrame({"i": np.arange(600.0), "v": y})
    assert fb.changepoints(df, x="i", y="v").breakpoints == [300.0]


def test_penalty_path_with_the_normal_cost_finds_every_segmentation():
    rng = np.random.default_rng(9)
    y = np.r_[
        rng.normal(0, 1, 300), rng.normal(0, 3, 300), rng.normal(2, 3, 300), rng.normal(2, 1, 300)
    ]
    df = pl.DataFrame({"i": np.arange(y.size, dtype=float), "v": y})
    seg = fb.changepoints(df, x="i", y="v", cost="normal", min_size=20)
    lo, hi = seg.penalty / 20, seg.penalty * 5
    path = seg.penalty_path(lo, hi)
    # every segmentation a direct search gives on a grid of penalties is on the path
    direct = {
        len(search(y, pen=p, min_size=20, cost="normal")) - 1 for p in np.geomspace(lo, hi, 25)
    }
    assert direct <= set(path["n_changes"].to_list()), (direct, path)
    # and the path's cost is the normal cost, not L2
    ends = [int(b) for b in path["breakpoints"][0]] + [y.size]
    assert path["cost"][0] == pytest.approx(normal_cost(y, ends), rel=1e-9)


def test_penalty_path_bad_arguments_are_analysis_errors():
    df = pl.DataFrame({"i": np.arange(200.0), "v": np.r_[np.zeros(100), np.ones(100)]})
    seg = fb.changepoints(df, x="i", y="v")
    with pytest.raises(fb.AnalysisError, match="pen_min"):
        seg.penalty_path(10, 1)
    with pytest.raises(fb.AnalysisError, match="no group 'nope'"):
        seg.penalty_path(group="nope")


def test_a_trend_is_not_cut_into_many_stairs():
    # A straight ramp in noise: the first search (penalty from the noise) draws ~10 stairs;
    # the residual around them wanders far more than the noise, so the default raises the
    # penalty to the residual's long-run variance and draws fewer. (Step model: the default,
    # model="auto", fits one line and draws none.)
    import math

    from flashback.analysis.noise import long_run_variance

    first, default, auto = [], [], []
    for s in range(5):
        rng = np.random.default_rng(s)
        y = np.linspace(0, 10, 500) + 0.5 * rng.standard_normal(500)
        df = pl.DataFrame({"i": np.arange(500.0), "v": y})
        pen = 3 * math.log(500) * long_run_variance(y)
        first.append(len(fb.changepoints(df, x="i", y="v", penalty=pen, model="step").breakpoints))
        default.append(len(fb.changepoints(df, x="i", y="v", model="step").breakpoints))
        seg = fb.changepoints(df, x="i", y="v")
        assert seg.model == "linear"
        auto.append(len(seg.breakpoints))
    assert np.median(first) >= 8, first
    assert np.median(default) <= 5, default
    assert auto == [0] * 5, auto
