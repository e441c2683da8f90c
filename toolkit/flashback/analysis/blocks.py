"""Block statistics for autocorrelated per-interval data: block length, block means and a
batch-means confidence interval for a level."""

from __future__ import annotations

import math

import numpy as np

from flashback.analysis import noise


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


#: above this many points the Politis–White length is computed on means of consecutive points
#: (arch's estimator grows as n^1.5 — per segment, for every segment of a capture)
PW_MAX_POINTS = 10_000


def optimal_block_length(y: np.ndarray) -> int:
    """Politis–White (2004, corrected by Patton, Politis & White 2009) block length, in
    points, for a circular block bootstrap of ``y``'s mean, from its autocorrelation function
    (``arch.bootstrap.optimal_block_length``); at least 1, at most ``len(y) // 2``. Beyond
    :data:`PW_MAX_POINTS` points it is computed on the means of ``b`` consecutive points (at
    most that many means) and multiplied by ``b``: dependence shorter than ``b`` points then
    counts as ``b`` (longer blocks, never shorter)."""
    from arch.bootstrap import optimal_block_length as pw  # arch is slow to import: only here

    n = y.size
    if n < 8 or float(np.var(y)) == 0.0:
        return 1
    b = math.ceil(n / PW_MAX_POINTS)
    z = block_means(np.asarray(y, dtype=np.float64), b) if b > 1 else y
    # on short series arch divides by the zero variance of a one-point lagged window; the
    # resulting NaN/inf length is handled below, so its RuntimeWarning is not the user's concern
    with np.errstate(divide="ignore", invalid="ignore"):
        L = float(pw(np.asarray(z, dtype=np.float64))["circular"].iloc[0]) * b
    if not math.isfinite(L):
        return 1
    return int(min(max(1, math.ceil(L)), max(1, n // 2)))


def ar1_var_of_mean(y: np.ndarray) -> float:
    """Variance of the mean of ``y`` under an AR(1) model (units of ``y`` squared):
    γ₀ · f / n with f = 1 + 2 Σₕ (1 − h/n) ρʰ, ρ the lag-1 autocorrelation corrected for its
    small-sample bias (:func:`~flashback.analysis.noise.kendall_rho`) and γ₀ the sample variance corrected for
    the part of it the autocorrelation hides (E s² = γ₀ (1 − f/n))."""
    n = y.size
    if n < 3:
        return float(np.var(y)) / max(n, 1)
    rho = noise.kendall_rho(lag1_autocorrelation(y), n, cap=0.995)
    h = np.arange(1, n)
    f = 1 + 2 * float(np.sum((1 - h / n) * rho**h))
    g0 = float(np.var(y)) / max(1 - f / n, 0.05)
    return g0 * f / n


def bin_edges(n: int, k: int) -> np.ndarray:
    """Row edges of ``min(n, k)`` bins (at least 1) of (nearly) equal numbers of rows."""
    k = max(1, min(n, k))
    return np.linspace(0, n, k + 1).round().astype(np.int64)


def bin_means(y: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Means of ``y`` over the bins between consecutive ``edges`` (:func:`bin_edges`), in the
    units of ``y``."""
    return np.add.reduceat(y, edges[:-1]) / np.diff(edges)


def block_means(y: np.ndarray, length: int) -> np.ndarray:
    """Means of consecutive non-overlapping blocks of ``length`` points (a short tail joins
    the last block)."""
    n = y.size
    return bin_means(y, bin_edges(n, n // max(1, length)))


def var_of_mean(y: np.ndarray, bm: np.ndarray) -> tuple[float, float]:
    """Variance of the mean of ``y`` (units of ``y`` squared) and its degrees of freedom, from
    ``bm``, the means of ``y``'s blocks: the larger of the batch-means estimate
    ``var(bm) / k`` and the AR(1) one (:func:`ar1_var_of_mean`: a handful of block means of
    strongly autocorrelated data still correlate with each other, which batch means miss);
    degrees of freedom ``k − 1``, or fewer when the AR(1) effective sample size is smaller
    (at least 1). ``k`` (the number of blocks) must be at least 2."""
    k = bm.size
    ar = ar1_var_of_mean(y)
    v = max(float(bm.var(ddof=1)) / k, ar)
    df = max(1.0, min(k - 1, float(np.var(y)) / ar - 1 if ar > 0 else k - 1))
    return v, df


def level_ci(y: np.ndarray, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``y`` and a t-interval ``(mean, lo, hi)`` (NaN bounds for n < 2 or fewer than
    2 blocks), in the units of ``y``.

    Blocks of the Politis–White length (:func:`optimal_block_length`, the rule the effect
    intervals use), the variance of the mean from :func:`var_of_mean`.
    """
    n = y.size
    m = float(y.mean()) if n else float("nan")
    if n < 2:
        return m, float("nan"), float("nan")
    b = block_means(y, optimal_block_length(y))
    if b.size < 2:
        return m, float("nan"), float("nan")
    v, df = var_of_mean(y, b)
    from scipy import stats  # scipy is slow to import: only when a mean needs it

    t = float(stats.t.ppf(0.5 + confidence / 2, df))
    se = math.sqrt(v)
    return m, m - t * se, m + t * se


def ols_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ``y`` on ``x`` (0 when ``x`` is constant)."""
    if x.size < 2:
        return 0.0
    xc = x - x.mean()
    den = float(np.dot(xc, xc))
    return float(np.dot(xc, y - y.mean()) / den) if den > 0 else 0.0
