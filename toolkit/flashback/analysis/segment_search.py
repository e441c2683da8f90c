"""The searches' building blocks for :mod:`flashback.analysis.segmentation`: merging changes
too small to count, a change's location interval, the L1 refinement of a huber search, the
penalty raised to the residual's long-run variance, and the piecewise-linear search with its
line residuals, criterion and intervals."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from flashback.analysis import blocks, noise

#: LR threshold for a ~95 % change-location interval (Hansen 2000: −2 ln(1 − √0.95))
LOCATION_LR_95 = 7.35

#: at most this many re-searches with the penalty from the residual's long-run variance
RESIDUAL_ROUNDS = 4

#: above this many rows the piecewise-linear search runs on this many bins (equal numbers of
#: rows) and each break found is then moved to the row that minimises the two-line cost
#: around it: an exact search costs O(n²) when nothing changes (20,000 rows took 13 s)
LINEAR_MAX_ROWS = 2000


def _merge_small(sig: np.ndarray, ends: list[int], *, pct: float, log: bool) -> list[int]:
    """Removes, smallest first, every breakpoint whose two neighbouring segment levels (means
    of ``sig``; ``log``: ``sig`` is a log) differ by less than ``pct`` % of the larger."""
    if pct <= 0 or len(ends) < 2:
        return list(ends)
    limit = math.log1p(pct / 100) if log else pct / 100
    cs = np.concatenate([[0.0], np.cumsum(sig)])
    e = np.asarray(ends, dtype=np.int64)
    while e.size > 1:
        a = np.r_[0, e[:-1]]
        means = (cs[e] - cs[a]) / (e - a)
        d = np.abs(np.diff(means))
        if not log:
            big = np.maximum(np.abs(means[:-1]), np.abs(means[1:]))
            d = np.divide(d, big, out=np.zeros_like(d), where=big > 0)
        i = int(np.argmin(d))
        if d[i] >= limit:
            break
        e = np.delete(e, i)
    ends = [int(v) for v in e]
    return ends


def _location_interval(
    sig: np.ndarray, a: int, b: int, c: int, sigma: float, m: int
) -> tuple[int, int]:
    """Indices (lo, hi) of starts τ in (a, c) whose two-segment L2 cost is within
    ``LOCATION_LR_95 · σ̂²`` of the chosen start ``b``."""
    seg = sig[a:c]
    s1 = np.concatenate([[0.0], np.cumsum(seg - seg.mean())])
    s2 = np.concatenate([[0.0], np.cumsum((seg - seg.mean()) ** 2)])
    n = c - a
    taus = np.arange(max(1, min(m, b - a)), n - max(1, min(m, c - b)) + 1)
    if taus.size == 0:
        return b, b
    left = s2[taus] - s1[taus] ** 2 / taus
    right = (s2[n] - s2[taus]) - (s1[n] - s1[taus]) ** 2 / (n - taus)
    tot = left + right
    at_b = tot[np.searchsorted(taus, b - a)] if (b - a) in taus else tot.min()
    ok = taus[tot - at_b <= LOCATION_LR_95 * max(sigma, 1e-300) ** 2]
    return (a + int(ok.min()), a + int(ok.max())) if ok.size else (b, b)


def _refine_l1(sig: np.ndarray, starts: list[int], ends: list[int], m: int) -> list[int]:
    """Moves each segment start, within ±4·min_size, to the split that minimises the L1
    distance of the points to their segment's median. Robust to stalls next to an edge, which
    can nudge an L2 search on a clipped signal by a few samples. O(window) per breakpoint."""
    out = list(starts)
    for i in range(1, len(starts)):
        seg_l, seg_r = sig[out[i - 1] : out[i]], sig[out[i] : ends[i]]
        med_l, med_r = float(np.median(seg_l)), float(np.median(seg_r))
        a = max(out[i - 1] + m, out[i] - 4 * m)
        c = min(ends[i] - m, out[i] + 4 * m)
        if c <= a:
            continue
        # cost(t) - const = sum_{a<=j<t} |s_j - med_l| - |s_j - med_r|
        w = sig[a:c]
        d = np.abs(w - med_l) - np.abs(w - med_r)
        cost = np.concatenate([[0.0], np.cumsum(d)])
        out[i] = a + int(np.argmin(cost))
    return out


def _line_residuals(x: np.ndarray, y: np.ndarray, ends: list[int]) -> np.ndarray:
    """``y`` minus a least-squares line of ``y`` on ``x`` in each segment ending at ``ends``
    (a segment whose ``x`` is constant: minus its mean)."""
    out = np.empty_like(y, dtype=np.float64)
    start = 0
    for end in ends:
        xx, yy = x[start:end], y[start:end]
        out[start:end] = yy - yy.mean() - blocks.ols_slope(xx, yy) * (xx - xx.mean())
        start = end
    return out


def _bic(rss: float, lrv: float, n: int, *, breaks: int, per_segment: int) -> float:
    """BIC-type criterion in units of the noise's long-run variance: ``rss / lrv`` plus ln n
    per free parameter (one location per break, ``per_segment`` per segment: 1 for a level,
    2 for a line)."""
    return rss / lrv + math.log(n) * (breaks + per_segment * (breaks + 1))


def _raise_to_residual(
    ends: list[int],
    *,
    pen: float,
    lrv: float,
    pen_per_lrv: float,
    search: Callable[[float], list[int]],
    residual: Callable[[list[int]], np.ndarray],
) -> tuple[list[int], float, float]:
    """The residual around the segments found (``residual(ends)``) must look like the noise
    the penalty assumed; while it wanders more (a trend cut into stairs), the penalty is
    raised to ``pen_per_lrv`` times its long-run variance and ``search(penalty)`` run again,
    at most :data:`RESIDUAL_ROUNDS` times, until the segmentation stops changing. Returns
    ``(ends, penalty, long-run variance)``."""
    for _ in range(RESIDUAL_ROUNDS):
        lrv_res = noise.segment_residual_lrv(residual(ends), ends)
        if lrv_res <= lrv * 1.05:
            break
        lrv = lrv_res
        pen = pen_per_lrv * lrv
        new = search(pen)
        if new == ends:
            break
        ends = new
    return ends, pen, lrv


def _linear_ends(x: np.ndarray, sig: np.ndarray, *, pen: float, min_size: int) -> list[int]:
    """Segment ends of a piecewise-linear segmentation of ``sig`` along ``x`` with ``pen`` per
    break (squared units of ``sig``): exact native PELT up to :data:`LINEAR_MAX_ROWS` rows;
    beyond, PELT on that many bin means (penalty divided by the rows per bin: for breaks on
    bin edges the residual sum of squares of the rows is that of the bins times the rows per
    bin, plus a part no break moves), each break then placed at the best row between its
    neighbours."""
    from flashback import _native

    n = sig.size
    m = max(min_size, 3)
    if n <= LINEAR_MAX_ROWS:
        return [int(e) for e in _native.pelt_linear_search(x, sig, pen, m)]
    edges = blocks.bin_edges(n, LINEAR_MAX_ROWS)
    per = n / LINEAR_MAX_ROWS
    xb, yb = blocks.bin_means(x, edges), blocks.bin_means(sig, edges)
    mb = max(2, math.ceil(m / per))
    ends = [int(edges[e]) for e in _native.pelt_linear_search(xb, yb, pen / per, mb)]
    for i in range(len(ends) - 1):
        a = ends[i - 1] if i else 0
        c = ends[i + 1]
        lo, hi = m, c - a - m
        if hi < lo:
            continue
        costs = np.asarray(_native.linear_split_costs(x[a:c], sig[a:c], lo, hi))
        ends[i] = a + lo + int(np.argmin(costs))
    return ends


def _linear_interval(
    x: np.ndarray, sig: np.ndarray, a: int, b: int, c: int, lrv: float
) -> tuple[int, int]:
    """Indices (lo, hi) of starts τ in (a, c) whose two-line cost is within
    ``LOCATION_LR_95 · lrv`` of the chosen start ``b`` (:func:`_location_interval` for
    sloping segments)."""
    from flashback import _native

    lo, hi = 2, c - a - 2
    if hi < lo or not (lo <= b - a <= hi):
        return b, b
    costs = np.asarray(_native.linear_split_costs(x[a:c], sig[a:c], lo, hi))
    ok = np.flatnonzero(costs - costs[b - a - lo] <= LOCATION_LR_95 * lrv) + lo
    return (a + int(ok.min()), a + int(ok.max())) if ok.size else (b, b)
