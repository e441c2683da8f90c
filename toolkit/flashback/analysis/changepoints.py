"""``changepoints``: piecewise-constant segmentation of a capture series, in the bytes-written
(or time) domain, with robust defaults for scattered per-second SSD data."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack, get_args, overload

import numpy as np
import polars as pl

from flashback.analysis import blocks, frames, levels, noise
from flashback.analysis.crops import crops
from flashback.analysis.pelt import default_jump, l2_cost, search
from flashback.analysis.segments import Segments
from flashback.errors import AnalysisError

if TYPE_CHECKING:
    from flashback.dataset.grouped import Grouped

#: LR threshold for a ~95 % change-location interval (Hansen 2000: −2 ln(1 − √0.95))
LOCATION_LR_95 = 7.35

#: the default penalty is PENALTY_FACTOR · ln n · (long-run variance of the noise)
PENALTY_FACTOR = 3.0

#: at most this many re-searches with the penalty from the residual's long-run variance
RESIDUAL_ROUNDS = 4

#: default ``min_change_pct`` for capture columns (throughput, IOPS, latency)
CAPTURE_MIN_CHANGE_PCT = 5.0

#: a piecewise-linear search's default penalty is LINEAR_PENALTY_FACTOR · ln n · (long-run
#: variance of the noise): a break there frees a location, a level and a slope
LINEAR_PENALTY_FACTOR = 4.0

#: columns measured by a capture (their physical model is a level that steps: a cache fills,
#: a drive throttles)
CAPTURE_SUFFIXES = ("_mbps", "_iops", "_us")

#: the options passed as strings; each tuple below lists its alias's values
Model = Literal["auto", "step", "linear"]
MODELS: tuple[Model, ...] = get_args(Model)
#: flashback's own costs (``auto``, ``l2``, ``huber``, ``normal``) and ruptures' models
Cost = Literal[
    "auto", "l2", "huber", "normal", "l1", "rbf", "cosine", "linear", "clinear", "rank",
    "mahalanobis", "ar",
]  # fmt: skip
#: the search by name (:data:`flashback.analysis.pelt._RUPTURES`); a ruptures estimator
#: instance is also accepted
Method = Literal["pelt", "binseg", "bottomup", "window", "kernelcpd"]
Transform = Literal["auto", "log", "none"]


class ChangepointOptions(TypedDict, total=False):
    """The keywords of :func:`changepoints` other than ``by`` (for its overloads)."""

    x: str
    y: str
    transform: Transform | None
    penalty: str | float
    min_size: int | None
    method: Method | object
    cost: Cost
    capacity_bytes: float | None
    confidence: float
    min_change_pct: float | str | None
    model: Model


#: above this many rows the piecewise-linear search runs on this many bins (equal numbers of
#: rows) and each break found is then moved to the row that minimises the two-line cost
#: around it: an exact search costs O(n²) when nothing changes (20,000 rows took 13 s)
LINEAR_MAX_ROWS = 2000


def _min_change_pct(value: float | str | None, y: str) -> float:
    if value is None or value == "auto":
        return CAPTURE_MIN_CHANGE_PCT if y.endswith(CAPTURE_SUFFIXES) else 0.0
    try:
        pct = float(value)
    except (TypeError, ValueError):
        raise AnalysisError(f"min_change_pct={value!r} is not a number") from None
    if not math.isfinite(pct) or pct < 0:
        raise AnalysisError(f"min_change_pct must be a finite number >= 0, got {value!r}")
    return pct


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


def _default_min_size(n: int) -> int:
    return int(min(max(3, n // 200), 60))


#: columns whose value on a row is where that row's interval *ends* (its start is the row before)
_END_OF_INTERVAL = {
    "host_written_bytes": "write_bytes",
    "t_s": "interval_s",
    "nand_written_bytes": None,
}


def _starts_x(df: pl.DataFrame, x: str, xs: np.ndarray) -> np.ndarray:
    """x at the *start* of each row. For end-of-interval columns (``host_written_bytes``,
    ``t_s``...) that is the previous row's x, the first row stepping back by its own increment
    (``write_bytes``, ``interval_s``); any other column (an index, a round label) labels its
    own row, so it is ``x`` itself."""
    if x not in _END_OF_INTERVAL:
        return xs.astype(np.float64, copy=True)
    first = xs[0]
    inc = _END_OF_INTERVAL[x]
    if inc and inc in df.columns:
        first = xs[0] - float(df.get_column(inc)[0] or 0)
    return np.concatenate([[first], xs[:-1]])


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


def _one(
    df: pl.DataFrame,
    meta: dict[str, Any],
    *,
    x: str,
    y: str,
    transform: str | None,
    penalty: str | float,
    min_size: int | None,
    method: Any,
    cost: str,
    capacity: float | None,
    confidence: float,
    min_change_pct: float | str | None,
    model: str,
) -> tuple[pl.DataFrame, list[float], list[tuple[float, float]], dict[str, Any]]:
    xs = frames.column(df, x, role="x")
    frames.check_x(xs, x)
    raw = frames.column(df, y, role="y")
    frames.need_rows(raw.size, 2, "change-point detection")
    n = raw.size
    m = _default_min_size(n) if min_size is None else int(min_size)
    if m < 1:
        raise AnalysisError(f"min_size must be at least 1, got {m}")
    frames.need_rows(n, m, f"change-point detection with min_size={m}")
    if model not in MODELS:
        raise AnalysisError(f"model={model!r} is not one of {', '.join(MODELS)}")
    if transform == "auto":
        # Throughput, IOPS and latency scatter in proportion to their level: segment the log.
        transform = "log" if y.endswith(CAPTURE_SUFFIXES) and (raw > 0).mean() > 0.5 else None
    sig = frames.transformed(raw, transform, y)
    window = max(5, 2 * m + 1)
    sigma, rho = noise.residual_scale(sig, window=window)
    if sigma <= 0:
        sigma = max(float(np.std(sig)), 1e-9 * max(1.0, float(np.abs(sig).mean())))
    heavy = noise.is_heavy_tailed(sig, sigma, window=window)
    used = ("huber" if heavy else "l2") if cost == "auto" else cost
    work = noise.huberize(sig, sigma, window=window) if used == "huber" else sig
    lrv = max(noise.long_run_variance(work), sigma**2 * 1e-6)
    # The block estimator reads autocorrelation only up to blocks of n/32 points (a series of
    # fewer than 64 points: none at all), and a lag-1 ρ̂ from few points is biased towards
    # 0: the long-run variance is at least that of AR(1) noise with the bias-corrected ρ̃
    lrv = max(lrv, noise.ar1_long_run_variance(work, noise.kendall_rho(rho, n)))
    search_cost = "l2" if used == "huber" else used
    if penalty == "auto":
        # BIC-type 3 · ln n, in units of the long-run variance: what a segment mean of
        # autocorrelated noise really scatters by (normal cost: the inflation factor only)
        scale = lrv / sigma**2 if search_cost == "normal" else lrv
        pen = PENALTY_FACTOR * math.log(n) * scale
    else:
        pen = explicit_penalty(penalty)
    pct = _min_change_pct(min_change_pct, y)

    jump = default_jump(n, m)

    def run(p: float) -> list[int]:
        return search(work, pen=p, min_size=m, method=method, cost=search_cost, jump=jump)

    ends = run(pen)
    lrv_step = lrv
    if penalty == "auto" and search_cost == "l2":
        ends, pen, lrv_step = _raise_to_residual(
            ends,
            pen=pen,
            lrv=lrv,
            pen_per_lrv=PENALTY_FACTOR * math.log(n),
            search=run,
            residual=lambda _ends: work,
        )
    ends = _merge_small(work, ends, pct=pct, log=transform == "log")
    linear_ok = method == "pelt" and search_cost == "l2"
    if model == "linear" and not linear_ok:
        raise AnalysisError(
            "model='linear' needs method='pelt' and an l2 or huber cost; drop method=/cost="
        )
    consider = model == "linear" or (
        model == "auto" and linear_ok and not y.endswith(CAPTURE_SUFFIXES)
    )
    chosen = "step"
    if consider:
        # x shifted and scaled: the line fits are invariant to it, and bytes (~1e12) squared
        # would cost precision
        span = float(xs[-1] - xs[0]) or 1.0
        xl = (xs - xs[0]) / span

        # the same procedure as the step search: the penalty from the noise, raised to the
        # long-run variance of the residual around the lines while that is larger
        def run_l(p: float) -> list[int]:
            return _linear_ends(xl, work, pen=p, min_size=m)

        pen_l = LINEAR_PENALTY_FACTOR * math.log(n) * lrv if penalty == "auto" else pen
        ends_l = run_l(pen_l)
        lrv_line = lrv
        if penalty == "auto":
            ends_l, pen_l, lrv_line = _raise_to_residual(
                ends_l,
                pen=pen_l,
                lrv=lrv,
                pen_per_lrv=LINEAR_PENALTY_FACTOR * math.log(n),
                search=run_l,
                residual=lambda e: _line_residuals(xl, work, e),
            )
        res_l = _line_residuals(xl, work, ends_l)
        # both models judged against one noise estimate: the smaller long-run variance of
        # their residuals (the wrong model's residual also holds what it could not follow)
        lrv_fit = max(noise.segment_residual_lrv(res_l, ends_l), lrv * 1e-6)
        lrv_cmp = min(lrv_fit, max(noise.segment_residual_lrv(work, ends), lrv * 1e-6))
        step_bic = _bic(l2_cost(work, ends), lrv_cmp, n, breaks=len(ends) - 1, per_segment=1)
        lin_bic = _bic(float(res_l @ res_l), lrv_cmp, n, breaks=len(ends_l) - 1, per_segment=2)
        if model == "linear" or lin_bic < step_bic:
            # the long-run variance reported is the one the lines' penalty was scaled by
            chosen, ends, pen, lrv_step = "linear", ends_l, pen_l, lrv_line
    starts = [0] + ends[:-1]
    if used == "huber" and chosen == "step":
        starts = _refine_l1(sig, starts, ends, m)
        ends = starts[1:] + [n]
    x0 = _starts_x(df, x, xs)
    t = frames.column(df, "t_s", role="t_s") if "t_s" in df.columns else None
    t0 = _starts_x(df, "t_s", t) if t is not None else None
    hb = (
        frames.column(df, "host_written_bytes", role="host_written_bytes")
        if "host_written_bytes" in df.columns
        else None
    )
    hb0 = _starts_x(df, "host_written_bytes", hb) if hb is not None else None
    per = 1e9 if x.endswith("_bytes") else 1.0
    rows = []
    nan = float("nan")
    for s, e in zip(starts, ends):
        if chosen == "linear":
            # the mean of a sloping segment: the line's mean plus the mean of the noise
            # around it (a trend is not noise)
            lv, lo, hi = levels.shifted_interval(
                raw[s:e],
                _line_residuals(xl[s:e], raw[s:e], [e - s]),
                log=transform == "log",
                confidence=confidence,
            )
        else:
            lv, lo, hi = levels.level_interval(
                raw[s:e], log=transform == "log", confidence=confidence
            )
        rows.append(
            {
                "x_start": float(x0[s]),
                "x_end": float(xs[e - 1]),
                "t_start_s": float(t0[s]) if t0 is not None else nan,
                "t_end_s": float(t[e - 1]) if t is not None else nan,
                "gb_start": float(hb0[s]) / 1e9 if hb0 is not None else nan,
                "gb_end": float(hb[e - 1]) / 1e9 if hb is not None else nan,
                "fills_start": float(hb0[s]) / capacity if hb0 is not None and capacity else nan,
                "fills_end": float(hb[e - 1]) / capacity if hb is not None and capacity else nan,
                "level": lv,
                "level_lo": lo,
                "level_hi": hi,
                "slope": blocks.ols_slope(xs[s:e] / per, raw[s:e]),
                "n": e - s,
            }
        )
    bkps = [float(x0[s]) for s in starts[1:]]
    ivals = []
    for i in range(1, len(starts)):
        if chosen == "linear":
            lo_i, hi_i = _linear_interval(xl, work, starts[i - 1], starts[i], ends[i], lrv_fit)
        else:
            lo_i, hi_i = _location_interval(
                work, starts[i - 1], starts[i], ends[i], math.sqrt(lrv_step), m
            )
        ivals.append((float(x0[min(lo_i, starts[i])]), float(x0[max(hi_i, starts[i])])))

    def path(pen_min: float, pen_max: float) -> pl.DataFrame:
        f = crops(work, search=run, pen_min=pen_min, pen_max=pen_max, cost=search_cost)
        return f.with_columns(
            pl.col("ends")
            .map_elements(
                lambda es: [float(x0[s]) for s in ([0] + list(es)[:-1])[1:]],
                return_dtype=pl.List(pl.Float64),
            )
            .alias("breakpoints")
        ).drop("ends")

    info = {
        "penalty": pen,
        "sigma": sigma,
        "rho": rho,
        "lrv": lrv_step,
        "min_change_pct": pct,
        "cost": used,
        "min_size": m,
        "jump": jump,
        "heavy": heavy,
        "path": path,
        "model": chosen,
    }
    return pl.DataFrame(rows), bkps, ivals, info


def explicit_penalty(penalty: object) -> float:
    """A caller's penalty (anything but ``"auto"``) as a float.

    Raises:
        AnalysisError: not a number, not finite, or negative.
    """
    try:
        pen = float(penalty)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise AnalysisError(f"penalty={penalty!r} is neither 'auto' nor a number") from None
    if not math.isfinite(pen) or pen < 0:
        raise AnalysisError(f"penalty must be a finite number >= 0, got {penalty!r}")
    return pen


# a dataset (LazyFrame) split by ``by`` gives one result per group; anything else one Segments
@overload
def changepoints(
    data: pl.LazyFrame, *, by: str | list[str] | pl.Expr, **options: Unpack[ChangepointOptions]
) -> Grouped: ...
@overload
def changepoints(
    data: Any, *, by: str | pl.Expr | None = None, **options: Unpack[ChangepointOptions]
) -> Segments: ...
def changepoints(
    data: Any,
    *,
    x: str = "host_written_bytes",
    y: str = "write_mbps",
    transform: Transform | None = "auto",
    penalty: str | float = "auto",
    min_size: int | None = None,
    method: Method | Any = "pelt",
    cost: Cost = "auto",
    by: str | list[str] | pl.Expr | None = None,
    capacity_bytes: float | None = None,
    confidence: float = 0.95,
    min_change_pct: float | str | None = "auto",
    model: Model = "auto",
) -> Segments | Grouped:
    """Finds where the level of ``y`` changes along ``x``.

    Args:
        data: a :class:`~flashback.Capture` or a polars frame in the capture schema.
        x: the axis: ``host_written_bytes`` (bytes written) or ``t_s`` (seconds), or any
            non-decreasing numeric column.
        y: the series (``write_mbps``, ``write_iops``, ``write_lat_p99_us``...).
        transform: ``"log"`` segments log(y) (multiplicative changes and noise), None the raw
            values, ``"auto"`` (default) log for ``*_mbps``, ``*_iops`` and ``*_us`` columns.
        penalty: ``"auto"`` = 3 · ln n · (long-run variance of the searched series:
            :func:`flashback.analysis.noise.long_run_variance`, which counts the
            autocorrelation of per-second drive data, GC oscillation and stalls, and ignores
            level changes; at least the AR(1) value from the first differences and the lag-1
            autocorrelation with Kendall's small-sample bias removed
            (:func:`flashback.analysis.noise.ar1_long_run_variance`), because the block
            estimator reads correlation only over blocks of n/32 points, none below 64 points,
            and ρ̂ from few points is biased towards 0; raised, up to 4 times, to the long-run variance of the residual
            around the segments found while that is larger, so a trend is not cut into
            stairs), reported as ``Segments.penalty``/``long_run_sigma``; or a number in
            squared units of the (transformed) series.
        min_size: shortest segment in intervals (default: n/200, within 3–60).
        method: ``"pelt"`` (native exact PELT for l2/huber/normal costs; beyond 20,000 rows
            it searches a grid first, then every index near what the grid found: 400,000 rows
            without a change took 0.4 s, where a search at every index took 10.8 s for
            100,000 and grows as n²), another ruptures algorithm name
            (``binseg``, ``bottomup``, ``window``, ``kernelcpd``) or a ruptures estimator
            instance.
        cost: ``"auto"`` (``huber`` when the series is heavy-tailed, else ``l2``), ``l2``,
            ``huber`` (L2 on a signal clipped to ±2 σ̂ of its running median), ``normal``
            (mean and variance), or a ruptures model name (``l1``, ``rbf``...).
        by: a column name or polars expression; each group is segmented separately. With a
            ``pl.LazyFrame`` (a dataset from :func:`flashback.scan_captures`) ``by`` may
            also be a list of columns, and the result is a
            :class:`~flashback.dataset.grouped.Grouped` of one :class:`Segments` per group
            (each with its own drive capacity).
        capacity_bytes: drive capacity for the ``fills`` columns (default: from capture meta).
        confidence: confidence level of ``level_lo``/``level_hi`` (0 < confidence < 1).
            ``level`` is the segment's mean; with the log transform its interval is built
            for log(mean) and transformed back (asymmetric, never below zero), otherwise a
            t-interval bounded at zero for a series with no negative value
            (:mod:`flashback.analysis.levels`).
        min_change_pct: breakpoints between segments whose levels differ by less than this
            percentage are removed, smallest first (``"auto"``: 5 % for ``*_mbps``,
            ``*_iops`` and ``*_us`` columns — well inside the 20 % band a PTS steady state
            allows — and 0 for other columns). Applies to the step model.
        model: ``"step"`` (a level per segment), ``"linear"`` (a least-squares line per
            segment: native exact piecewise-linear PELT, penalty 4 · ln n · long-run variance
            — a break frees a location, a level and a slope — or the given ``penalty``), or
            ``"auto"`` (default): for capture columns (``*_mbps``, ``*_iops``, ``*_us``,
            where a cache filling or a drive throttling is a step) the step model; for any
            other column both, keeping the one with the lower BIC-type criterion
            (residual sum of squares / long-run variance + ln n per parameter: a location per
            break, a level per step segment, a level and a slope per line), so a trend is
            not cut into stairs. Reported as ``Segments.model``. The linear model needs
            ``method="pelt"`` and an l2/huber cost; ``penalty_path`` searches steps.

    Returns:
        :class:`Segments`.

    Raises:
        AnalysisError: empty input, missing or non-numeric column, NaN values, x going
            backwards, too few points, or a bad penalty/method/min_change_pct/model/
            confidence.
    """
    confidence = frames.confidence_level(confidence)
    if by is not None and isinstance(data, pl.LazyFrame):
        from flashback.dataset.grouped import per_group

        return per_group(
            changepoints, data, by=by, x=x, y=y, transform=transform, penalty=penalty,
            min_size=min_size, method=method, cost=cost, capacity_bytes=capacity_bytes,
            confidence=confidence, min_change_pct=min_change_pct, model=model,
        )  # fmt: skip
    df, meta = frames.as_frame(data)
    capacity = frames.capacity_bytes(meta, capacity_bytes)
    kw: dict[str, Any] = dict(
        x=x,
        y=y,
        transform=transform,
        penalty=penalty,
        min_size=min_size,
        method=method,
        cost=cost,
        capacity=capacity,
        confidence=confidence,
        min_change_pct=min_change_pct,
        model=model,
    )
    slope_unit = f"{y} per GB" if x.endswith("_bytes") else f"{y} per {x.rsplit('_', 1)[-1]}"
    mname = method if isinstance(method, str) else type(method).__name__
    if by is None:
        f, bk, iv, info = _one(df, meta, **kw)
        return Segments(
            breakpoints=bk,
            x=x,
            y=y,
            penalty=info["penalty"],
            sigma=info["sigma"],
            cost=info["cost"],
            method=mname,
            min_size=info["min_size"],
            heavy_tailed=info["heavy"],
            intervals=iv,
            slope_unit=slope_unit,
            frame=f,
            _path={None: info["path"]},
            jump=info["jump"],
            rho=info["rho"],
            long_run_sigma=math.sqrt(info["lrv"]),
            min_change_pct=info["min_change_pct"],
            model=info["model"],
        )
    if isinstance(by, list):  # per_group (above) takes lists; a frame here has one key
        raise AnalysisError(
            "by= as a list of columns splits a dataset (a pl.LazyFrame from "
            "flashback.scan_captures); for a frame or capture pass one column or an expression"
        )
    expr = pl.col(by) if isinstance(by, str) else by
    if isinstance(by, str) and by not in df.columns:
        raise AnalysisError(f"by={by!r} is not a column of the frame; name one of its columns")
    keyed = df.with_columns(expr.cast(pl.Utf8).alias("__group"))
    frames_, bks, ivs, paths, infos = [], [], [], {}, []
    for (g,), part in keyed.group_by("__group", maintain_order=True):
        f, bk, iv, info = _one(part.drop("__group"), meta, **kw)
        frames_.append(f.with_columns(pl.lit(g).alias("group")).select(["group", *f.columns]))
        bks += bk
        ivs += iv
        paths[g] = info["path"]
        infos.append(info)
    heavy = any(i["heavy"] for i in infos)
    return Segments(
        breakpoints=bks,
        x=x,
        y=y,
        penalty=float(np.median([i["penalty"] for i in infos])),
        sigma=float(np.median([i["sigma"] for i in infos])),
        cost=",".join(sorted({i["cost"] for i in infos})),
        method=mname,
        min_size=infos[0]["min_size"],
        heavy_tailed=heavy,
        intervals=ivs,
        slope_unit=slope_unit,
        frame=pl.concat(frames_),
        _path=paths,
        jump=max(i["jump"] for i in infos),
        rho=float(np.median([i["rho"] for i in infos])),
        long_run_sigma=float(np.median([math.sqrt(i["lrv"]) for i in infos])),
        min_change_pct=infos[0]["min_change_pct"],
        model=",".join(sorted({i["model"] for i in infos})),
    )
