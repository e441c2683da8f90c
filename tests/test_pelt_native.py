"""Native PELT == ruptures' Pelt (l2, jump 1) == the plain-Python twin, on random cases."""

import numpy as np
import pytest
import ruptures as rpt

from flashback import _native
from flashback.analysis import _reference as reference


def _case(rng):
    n = int(rng.integers(3, 90))
    level = np.zeros(n)
    for c in rng.integers(1, n, size=int(rng.integers(0, 5))):
        level[c:] += rng.normal(0, 4)
    x = level + rng.normal(0, rng.uniform(0.2, 3), size=n)
    return x, int(rng.integers(1, 10)), float(rng.uniform(0.05, 40))


def test_native_pelt_equals_ruptures_on_random_cases():
    rng = np.random.default_rng(2026)
    compared = 0
    for _ in range(300):
        x, m, pen = _case(rng)
        if x.size < m:
            continue
        expected = rpt.Pelt(model="l2", min_size=m, jump=1).fit(x).predict(pen=pen)
        assert _native.pelt_search(x, pen, m) == expected, (x.size, m, pen)
        compared += 1
    assert compared > 250


def test_native_pelt_equals_python_twin():
    rng = np.random.default_rng(7)
    for _ in range(60):
        x, m, pen = _case(rng)
        if x.size < m:
            continue
        assert _native.pelt_search(x, pen, m) == reference.pelt_l2(list(x), pen, m)


def test_native_pelt_accepts_lists_and_rejects_nan():
    assert _native.pelt_search([0.0] * 10 + [5.0] * 10, 1.0, 2) == [10, 20]
    with pytest.raises(ValueError):
        _native.pelt_search([0.0, float("nan"), 1.0], 1.0, 1)


def _long_steps(rng, n: int, k: int) -> np.ndarray:
    """``n`` points, ``k`` changes at random (mostly off any grid) indices, noise σ = 1."""
    level = np.zeros(n)
    for c in np.sort(rng.choice(np.arange(100, n - 100), size=k, replace=False)):
        level[c:] += rng.choice([-1, 1]) * rng.uniform(3, 30)
    return level + rng.normal(0, 1, size=n)


def test_two_pass_grid_search_finds_what_a_search_at_every_index_finds():
    from flashback.analysis.pelt import GRID_FROM, default_jump, search

    assert default_jump(GRID_FROM, 60) == 1
    assert default_jump(GRID_FROM + 1, 60) == 2
    assert default_jump(10**7, 60) == 60, "never coarser than min_size"
    rng = np.random.default_rng(11)
    grid_alone_differs = 0
    for case in range(12):
        n = int(rng.integers(6_000, 10_000))
        x = _long_steps(rng, n, int(rng.integers(1, 7)))
        m, jump = 60, int(rng.choice([3, 7, 15, 60]))
        pen = 3 * np.log(n)
        exact = _native.pelt_search(x, pen, m)
        coarse = _native.pelt_search(x, pen, m, "l2", jump)
        assert all(e % jump == 0 for e in coarse[:-1])
        grid_alone_differs += coarse != exact
        assert search(x, pen=pen, min_size=m, cost="l2", jump=jump) == exact, case
    assert grid_alone_differs >= 8, "the cases must put changes between grid points"


def test_two_pass_grid_search_with_the_normal_cost():
    # mean and variance change: the "normal" cost (len · ln var), as changepoints(cost="normal")
    from flashback.analysis.pelt import search

    rng = np.random.default_rng(5)
    differs = 0
    for case in range(6):
        n = int(rng.integers(6_000, 9_000))
        cuts = np.sort(rng.choice(np.arange(200, n - 200), size=3, replace=False))
        scale = np.ones(n)
        level = np.zeros(n)
        for c in cuts:
            scale[c:] *= rng.uniform(0.3, 3)
            level[c:] += rng.uniform(-2, 2)
        x = level + scale * rng.standard_normal(n)
        m, jump, pen = 40, 9, 3 * np.log(n)
        exact = _native.pelt_search(x, pen, m, "normal")
        differs += _native.pelt_search(x, pen, m, "normal", jump) != exact
        assert search(x, pen=pen, min_size=m, cost="normal", jump=jump) == exact, case
    assert differs >= 3


def test_a_long_flat_signal_is_one_segment():
    # PELT's worst case (nothing to prune): searched on the grid it takes well under a second
    import polars as pl

    import flashback as fb

    n = 200_000
    y = 1000 + 20 * np.random.default_rng(3).standard_normal(n)
    df = pl.DataFrame({"t_s": np.arange(1.0, n + 1), "write_mbps": y})
    seg = fb.changepoints(df, x="t_s", y="write_mbps")
    assert seg.to_frame().height == 1
    assert seg.jump == 10


def test_candidate_ends_must_ascend_to_the_length():
    from flashback.analysis.pelt import native_pelt_ends
    from flashback.errors import AnalysisError

    x = np.r_[np.zeros(20), np.ones(20) * 5]
    assert native_pelt_ends(x, pen=1.0, min_size=2, ends=np.array([10, 20, 30, 40])) == [20, 40]
    with pytest.raises(AnalysisError, match="ascend"):
        native_pelt_ends(x, pen=1.0, min_size=2, ends=np.array([10, 30]))


@pytest.mark.parametrize("seed", range(6))
def test_piecewise_linear_pelt_equals_its_python_twin(seed):
    from flashback import _native

    rng = np.random.default_rng(seed)
    n = 60 + 10 * seed
    x = np.sort(rng.uniform(0, 1e12, n))  # bytes-sized x: the native side scales it
    y = np.where(x < 4e11, 5.0, 3.0 - 2e-12 * (x - 4e11)) + 0.3 * rng.standard_normal(n)
    pen = float(rng.uniform(0.2, 3.0))
    got = list(_native.pelt_linear_search(x, y, pen, 2))
    assert got == reference.pelt_linear(list(x), list(y), pen, 2)
