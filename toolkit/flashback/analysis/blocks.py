"""Block statistics for autocorrelated per-interval data: block length, block means and a
batch-means confidence interval for a level."""

from __future__ import annotations

import math

import numpy as np


def lag1_autocorrelation(y: np.ndarray) -> float:
    """Lag-1 autocorrelation of ``y`` (0 for fewer than 3 points or a constant series)."""
    if y.size < 3:
        return 0.0
    c = y - y.mean()
    den = float(np.dot(c, c))
    if den <= 0:
        return 0.0
    return float(np.dot(c[:-1], c[1:]) / den)


def block_length(y: np.ndarray, *, min_blocks: int = 8) -> int:
    """Block length (points) long enough that block means are nearly independent.

    Three times the AR(1) integrated autocorrelation time ``(1+ρ)/(1−ρ)`` from the lag-1
    autocorrelation ρ, at least ``n^(1/3)`` and at most ``n / min_blocks``.
    """
    n = y.size
    rho = min(max(lag1_autocorrelation(y), 0.0), 0.99)
    tau = (1 + rho) / (1 - rho)
    L = max(math.ceil(3 * tau), math.ceil(n ** (1 / 3)), 1)
    return int(max(1, min(L, n // min_blocks)))


def block_means(y: np.ndarray, length: int) -> np.ndarray:
    """Means of consecutive non-overlapping blocks of ``length`` points (a short tail joins
    the last block)."""
    n = y.size
    k = max(1, n // max(1, length))
    edges = np.linspace(0, n, k + 1).round().astype(int)
    return np.add.reduceat(y, edges[:-1]) / np.diff(edges)


def level_ci(y: np.ndarray, *, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``y`` and a batch-means t-interval ``(mean, lo, hi)`` (NaN bounds for n < 2)."""
    n = y.size
    m = float(y.mean()) if n else float("nan")
    if n < 2:
        return m, float("nan"), float("nan")
    L = block_length(y, min_blocks=8) if n >= 16 else 1
    b = block_means(y, L)
    k = b.size
    if k < 2:
        return m, float("nan"), float("nan")
    se = float(b.std(ddof=1) / math.sqrt(k))
    from scipy import stats  # scipy takes ~1 s to import: only when a mean needs it

    t = float(stats.t.ppf(0.5 + level / 2, k - 1))
    return m, m - t * se, m + t * se


def ols_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ``y`` on ``x`` (0 when ``x`` is constant)."""
    if x.size < 2:
        return 0.0
    xc = x - x.mean()
    den = float(np.dot(xc, xc))
    return float(np.dot(xc, y - y.mean()) / den) if den > 0 else 0.0
