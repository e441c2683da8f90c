"""fb.changepoints on synthetic series with known changes, Gaussian and with heavy stalls."""

import numpy as np
import polars as pl
import pytest

import flashback as fb


def _frame(y, *, capacity=None):
    n = y.size
    wb = np.maximum(y, 0) * 1e6
    return pl.DataFrame(
        {
            "t_s": np.arange(1, n + 1, dtype=float),
            "interval_s": np.ones(n),
            "write_mbps": y,
            "write_bytes": wb.astype(np.uint64),
            "host_written_bytes": np.cumsum(wb.astype(np.uint64)),
        }
    )


def _series(rng, n, cuts, levels, rel_noise=0.04, stalls=0.0):
    lv = np.empty(n)
    edges = [0, *cuts, n]
    for a, b, v in zip(edges[:-1], edges[1:], levels, strict=True):
        lv[a:b] = v
    y = lv * (1 + rel_noise * rng.standard_normal(n))
    if stalls:
        hit = rng.random(n) < stalls
        y[hit] = lv[hit] * rng.uniform(0.05, 0.6, hit.sum())
    return y


@pytest.mark.parametrize("stalls", [0.0, 0.04])
def test_exact_number_of_changes_within_two_samples(stalls):
    rng = np.random.default_rng(11 if stalls else 5)
    errors = []
    for trial in range(20):
        n = 1200
        cuts = sorted(rng.choice(np.arange(100, n - 100, 50), size=3, replace=False))
        levels = rng.uniform(100, 600, size=4)
        # consecutive levels differ by at least 20 %
        for i in range(1, 4):
            if abs(levels[i] / levels[i - 1] - 1) < 0.2:
                levels[i] = levels[i - 1] * (1.3 if rng.random() < 0.5 else 0.7)
        y = _series(rng, n, cuts, levels, stalls=stalls)
        seg = fb.changepoints(_frame(y), x="t_s", transform="log", min_size=10)
        found = [int(b) for b in seg.breakpoints]  # x = t_s start of the segment = row index
        assert len(found) == 3, (trial, found, cuts)
        errors += [abs(f - c) for f, c in zip(found, cuts, strict=True)]
    errors = np.array(errors)
    if stalls == 0:
        assert errors.max() <= 2, errors
    else:
        # A stall right before a drop looks exactly like the new level: a few breakpoints may
        # move onto it. Nearly all stay within 2 samples, none beyond 5.
        assert np.mean(errors <= 2) >= 0.95 and errors.max() <= 5, errors


def test_heavy_tails_switch_cost_and_plain_l2_oversegments():
    rng = np.random.default_rng(3)
    y = _series(rng, 1500, [700], [400, 200], stalls=0.05)
    seg = fb.changepoints(_frame(y), x="t_s", min_size=10)
    assert seg.heavy_tailed and seg.cost == "huber"
    assert [int(b) for b in seg.breakpoints] == pytest.approx([700], abs=2)
    # The penalty measures the noise with the stalls in it (block means), so a plain L2
    # search no longer cuts the series up at every stall either.
    plain = fb.changepoints(_frame(y), x="t_s", min_size=10, cost="l2")
    assert [int(b) for b in plain.breakpoints] == pytest.approx([700], abs=3)


def test_frame_columns_levels_and_fills():
    rng = np.random.default_rng(1)
    y = _series(rng, 600, [300], [500, 250], rel_noise=0.02)
    cap = fb.Capture(_frame(y), {"target": {"size_bytes": 50e9}})
    seg = fb.changepoints(cap)
    f = seg.to_frame()
    for c in (
        "x_start",
        "x_end",
        "t_start_s",
        "t_end_s",
        "gb_start",
        "gb_end",
        "fills_start",
        "fills_end",
        "level",
        "level_lo",
        "level_hi",
        "slope",
        "n",
    ):
        assert c in f.columns
    assert f.height == 2
    for i, true in enumerate((500, 250)):
        assert f["level_lo"][i] < f["level"][i] < f["level_hi"][i]
        assert f["level"][i] == pytest.approx(true, rel=0.01)
    gb = seg.breakpoints[0] / 1e9
    assert gb == pytest.approx(300 * 500 / 1e3, rel=0.02)
    assert f["fills_start"][1] == pytest.approx(gb * 1e9 / 50e9)
    lo, hi = seg.intervals[0]
    assert lo <= seg.breakpoints[0] <= hi
    assert "GB" in seg.describe()


def test_penalty_path_contains_the_default_segmentation():
    rng = np.random.default_rng(2)
    y = _series(rng, 800, [200, 500], [300, 450, 150])
    seg = fb.changepoints(_frame(y), x="t_s", min_size=5)
    path = seg.penalty_path()
    assert path["n_changes"].to_list() == sorted(path["n_changes"].to_list(), reverse=True)
    assert 2 in path["n_changes"].to_list()


def test_by_segments_each_group():
    rng = np.random.default_rng(4)
    a = _series(rng, 300, [150], [500, 300], rel_noise=0.02)
    b = _series(rng, 300, [], [100], rel_noise=0.02)
    df = _frame(np.r_[a, b]).with_columns(pl.Series("step", ["seq"] * 300 + ["rnd"] * 300))
    seg = fb.changepoints(df, x="t_s", by="step", min_size=5)
    f = seg.to_frame()
    assert f.filter(pl.col("group") == "seq").height == 2
    assert f.filter(pl.col("group") == "rnd").height == 1
    # CrystalDiskMark-style steps: one test across loops, grouped by an expression
    loops = df.with_columns(
        pl.Series(
            "step", [f"cdm_pass_{i // 100}/{'seq' if i < 300 else 'rnd'}" for i in range(600)]
        )
    )
    seg2 = fb.changepoints(loops, x="t_s", by=pl.col("step").str.split("/").list.last(), min_size=5)
    assert seg2.to_frame()["group"].unique(maintain_order=True).to_list() == ["seq", "rnd"]
    assert seg2.breakpoints == seg.breakpoints


def test_by_on_a_lazy_frame_passes_every_option_on():
    # a LazyFrame with by= goes through flashback.dataset.grouped.per_group, which used to
    # drop min_change_pct: a 3 % step (below the 5 % default) then vanished in every group
    rng = np.random.default_rng(7)
    parts = [
        _frame(_series(rng, 400, [200], [500, 515], rel_noise=0.003)).with_columns(
            pl.lit(serial).alias("serial")
        )
        for serial in ("A", "B")
    ]
    lf = pl.concat(parts).lazy()
    assert fb.changepoints(parts[0], x="t_s").breakpoints == []  # the 5 % default merges it
    g = fb.changepoints(lf, x="t_s", by="serial", min_change_pct=0)
    for serial, part in zip(("A", "B"), parts, strict=True):
        direct = fb.changepoints(part, x="t_s", min_change_pct=0)
        assert len(direct.breakpoints) == 1
        assert g[serial].breakpoints == direct.breakpoints
    assert g["A"].min_change_pct == 0
    assert all(
        s.model == "linear"
        for s in fb.changepoints(lf, x="t_s", by="serial", model="linear").values()
    )


def test_ruptures_methods_are_reachable():
    rng = np.random.default_rng(6)
    y = _series(rng, 300, [150], [500, 250], rel_noise=0.02)
    for method in ("binseg", "bottomup"):
        seg = fb.changepoints(_frame(y), x="t_s", method=method, cost="l2", min_size=5)
        assert seg.method == method
        assert any(abs(int(b) - 150) <= 2 for b in seg.breakpoints), seg.breakpoints
