"""Native PELT == ruptures' Pelt (l2, jump 1) == the plain-Python twin, on random cases."""

import sys
from pathlib import Path

import numpy as np
import pytest
import ruptures as rpt

from flashback import _native

sys.path.insert(0, str(Path(__file__).parent))
import reference  # noqa: E402


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
