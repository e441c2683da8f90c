"""A segment's level and its confidence interval on the scale the segmentation used.

A throughput, IOPS or latency series is segmented on log(y) (``transform="log"``): its
noise scales with the level, and the quantity cannot go below zero. The level reported is
still the segment's mean (what fio and the reviews print as an average), but its interval is
built for log(mean) and transformed back — ``mean · exp(±t · se / mean)`` — so it is
asymmetric, like the data, and never below zero. On the raw scale the t-interval is kept,
bounded at zero when every value is non-negative.

The interval of the mean itself is the wider of two batch-means t-intervals: blocks of the
Politis–White length (:func:`~flashback.analysis.blocks.level_ci`) and blocks twice as long.
The Politis–White length is chosen for the variance's mean squared error, not for coverage:
on SSD-like series (AR(0.9) noise, a two-state GC oscillation, Pareto stalls; n = 1200) it
alone covered the mean 92.5 % of the time at a nominal 95 % (4000 trials), on AR(0.97),
n = 300, 92.9 %; the wider of the two covered 95.1 % and 94.9 % for intervals 11 % and 3 %
wider (``tests/test_levels.py``).
"""

from __future__ import annotations

import math

import numpy as np

from flashback.analysis import blocks


def level_interval(
    y: np.ndarray, *, log: bool, confidence: float = 0.95
) -> tuple[float, float, float]:
    """``(level, lo, hi)`` of one segment, in the units of ``y``.

    Args:
        y: the segment's raw values (not transformed).
        log: True when the series was segmented on log(y): the interval is computed for
            log(mean) (delta method: standard error ``se / mean``) and transformed back.
        confidence: 0 < confidence < 1.

    Returns:
        The mean of ``y`` and the interval's bounds (NaN bounds when there are too few points
        for an interval, as :func:`~flashback.analysis.blocks.level_ci`).
    """
    m, lo, hi = mean_interval(y, confidence=confidence)
    return _on_scale(y, m, lo, hi, log=log)


def mean_interval(y: np.ndarray, *, confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of ``y`` on the raw scale: the wider of the batch-means t-intervals
    with Politis–White blocks and with blocks twice as long (at most n/4 points), in the
    units of ``y``; NaN bounds when there are too few points."""
    m, lo, hi = blocks.level_ci(y, confidence=confidence)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return m, lo, hi
    n = y.size
    length = 2 * blocks.optimal_block_length(y)
    if length > n // 4:
        return m, lo, hi
    bm = blocks.block_means(y, length)
    v, df = blocks.var_of_mean(y, bm)
    from scipy import stats  # scipy is slow to import: only when a mean needs it

    hw = float(stats.t.ppf(0.5 + confidence / 2, df)) * math.sqrt(v)
    return m, min(lo, m - hw), max(hi, m + hw)


def shifted_interval(
    y: np.ndarray, residual: np.ndarray, *, log: bool, confidence: float = 0.95
) -> tuple[float, float, float]:
    """``(level, lo, hi)`` of a sloping segment: the mean of ``y`` with the interval of the
    mean of ``residual`` (the noise around the segment's line; a trend is not noise), on the
    scale :func:`level_interval` uses."""
    m = float(y.mean()) if y.size else float("nan")
    _, lo_r, hi_r = mean_interval(residual, confidence=confidence)
    return _on_scale(y, m, m + lo_r, m + hi_r, log=log)


def _on_scale(
    y: np.ndarray, m: float, lo: float, hi: float, *, log: bool
) -> tuple[float, float, float]:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return m, lo, hi
    non_negative = bool(y.size) and float(np.min(y)) >= 0
    if log and m > 0:
        # the half-widths are t · se on the raw scale; on the log scale t · se / mean
        return m, m * math.exp(-(m - lo) / m), m * math.exp((hi - m) / m)
    if non_negative:
        return m, max(lo, 0.0), hi
    return m, lo, hi
