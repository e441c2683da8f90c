"""The steps of :func:`flashback.analysis.changepoints.changepoints` on one series, as
ruptures splits them: :func:`fit` reads the series and its noise (:class:`Series`), then
:func:`predict` searches the steps (and lines), picks the model and measures each segment."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Literal, get_args

import numpy as np
import polars as pl

from flashback.analysis import blocks, frames, levels, noise
from flashback.analysis.crops import crops
from flashback.analysis.pelt import default_jump, l2_cost, search
from flashback.analysis.row_axes import RowAxes
from flashback.analysis.segment_search import (
    _bic,
    _line_residuals,
    _linear_ends,
    _linear_interval,
    _location_interval,
    _merge_small,
    _raise_to_residual,
    _refine_l1,
)
from flashback.errors import AnalysisError

#: the default penalty is PENALTY_FACTOR · ln n · (long-run variance of the noise)
PENALTY_FACTOR = 3.0

#: default ``min_change_pct`` for capture columns (throughput, IOPS, latency)
CAPTURE_MIN_CHANGE_PCT = 5.0

#: a piecewise-linear search's default penalty is LINEAR_PENALTY_FACTOR · ln n · (long-run
#: variance of the noise): a break there frees a location, a level and a slope
LINEAR_PENALTY_FACTOR = 4.0

#: columns measured by a capture (their physical model is a level that steps: a cache fills,
#: a drive throttles)
CAPTURE_SUFFIXES = ("_mbps", "_iops", "_us")

Model = Literal["auto", "step", "linear"]
MODELS: tuple[Model, ...] = get_args(Model)


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


def _default_min_size(n: int) -> int:
    return int(min(max(3, n // 200), 60))


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


@dataclasses.dataclass(frozen=True, kw_only=True)
class Series:
    """One series read for segmenting (ruptures' ``fit``): the values along ``x``, the
    searched signal (transformed, clipped for the huber cost) and its noise."""

    xs: np.ndarray
    raw: np.ndarray
    sig: np.ndarray  # raw, transformed (log or none)
    work: np.ndarray  # sig, clipped when the cost is huber: what the searches read
    log: bool
    m: int  # min_size
    sigma: float
    rho: float
    heavy: bool
    used: str  # the cost reported (auto resolved)
    search_cost: str  # the cost searched (huber searches l2 on the clipped signal)
    lrv: float  # long-run variance of the noise
    jump: int
    method: Any

    @property
    def n(self) -> int:
        return int(self.raw.size)

    def search(self, pen: float) -> list[int]:
        """Segment ends of a step search at penalty ``pen``."""
        return search(
            self.work, pen=pen, min_size=self.m, method=self.method, cost=self.search_cost,
            jump=self.jump,
        )  # fmt: skip


def fit(
    df: pl.DataFrame,
    *,
    x: str,
    y: str,
    transform: str | None,
    min_size: int | None,
    method: Any,
    cost: str,
    model: str,
) -> Series:
    """``y`` along ``x`` of ``df``, checked, transformed and with its noise measured.

    Raises:
        AnalysisError: a missing or bad column, x going backwards, too few rows, a
            ``min_size`` below 1 or an unknown ``model``.
    """
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
    return Series(
        xs=xs, raw=raw, sig=sig, work=work, log=transform == "log", m=m, sigma=sigma, rho=rho,
        heavy=heavy, used=used, search_cost="l2" if used == "huber" else used, lrv=lrv,
        jump=default_jump(n, m), method=method,
    )  # fmt: skip


def step_penalty(s: Series, penalty: str | float) -> float:
    """The step search's penalty: for ``"auto"`` BIC-type 3 · ln n, in units of the long-run
    variance (what a segment mean of autocorrelated noise really scatters by; normal cost:
    the inflation factor only).

    Raises:
        AnalysisError: ``penalty`` is neither ``"auto"`` nor a finite number ≥ 0.
    """
    if penalty == "auto":
        scale = s.lrv / s.sigma**2 if s.search_cost == "normal" else s.lrv
        return PENALTY_FACTOR * math.log(s.n) * scale
    return explicit_penalty(penalty)


@dataclasses.dataclass(frozen=True)
class Choice:
    """The model kept and its segmentation (``xl``/``lrv_fit``: the scaled x and the
    residual's long-run variance of the lines, when lines were fitted)."""

    model: str
    ends: list[int]
    pen: float
    lrv: float  # the long-run variance reported: the one the kept penalty was scaled by
    xl: np.ndarray | None = None
    lrv_fit: float = 0.0


def predict_steps(s: Series, *, pen: float, auto: bool, pct: float) -> Choice:
    """The step segmentation: a search at ``pen``, raised to the residual's long-run variance
    (``auto`` penalties with an l2 search), then changes under ``pct`` % merged."""
    ends = s.search(pen)
    lrv_step = s.lrv
    if auto and s.search_cost == "l2":
        ends, pen, lrv_step = _raise_to_residual(
            ends,
            pen=pen,
            lrv=s.lrv,
            pen_per_lrv=PENALTY_FACTOR * math.log(s.n),
            search=s.search,
            residual=lambda _ends: s.work,
        )
    ends = _merge_small(s.work, ends, pct=pct, log=s.log)
    return Choice("step", ends, pen, lrv_step)


def choose_model(s: Series, steps: Choice, *, model: str, y: str, auto: bool) -> Choice:
    """``steps``, or lines per segment when ``model`` asks for them or (``auto``, for a column
    that is not a capture column) their BIC-type criterion is lower.

    Raises:
        AnalysisError: ``model="linear"`` without ``method="pelt"`` and an l2/huber cost.
    """
    linear_ok = s.method == "pelt" and s.search_cost == "l2"
    if model == "linear" and not linear_ok:
        raise AnalysisError(
            "model='linear' needs method='pelt' and an l2 or huber cost; drop method=/cost="
        )
    if not (
        model == "linear" or (model == "auto" and linear_ok and not y.endswith(CAPTURE_SUFFIXES))
    ):
        return steps
    n, work, lrv = s.n, s.work, s.lrv
    # x shifted and scaled: the line fits are invariant to it, and bytes (~1e12) squared
    # would cost precision
    span = float(s.xs[-1] - s.xs[0]) or 1.0
    xl = (s.xs - s.xs[0]) / span

    # the same procedure as the step search: the penalty from the noise, raised to the
    # long-run variance of the residual around the lines while that is larger
    def run_l(p: float) -> list[int]:
        return _linear_ends(xl, work, pen=p, min_size=s.m)

    pen_l = LINEAR_PENALTY_FACTOR * math.log(n) * lrv if auto else steps.pen
    ends_l = run_l(pen_l)
    lrv_line = lrv
    if auto:
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
    lrv_cmp = min(lrv_fit, max(noise.segment_residual_lrv(work, steps.ends), lrv * 1e-6))
    ends = steps.ends
    step_bic = _bic(l2_cost(work, ends), lrv_cmp, n, breaks=len(ends) - 1, per_segment=1)
    lin_bic = _bic(float(res_l @ res_l), lrv_cmp, n, breaks=len(ends_l) - 1, per_segment=2)
    if model == "linear" or lin_bic < step_bic:
        return Choice("linear", ends_l, pen_l, lrv_line, xl, lrv_fit)
    return Choice("step", steps.ends, steps.pen, steps.lrv, xl, lrv_fit)


def _segment_row(
    s: Series, c: Choice, ax: RowAxes, a: int, e: int, *, x: str, capacity: float | None,
    confidence: float,
) -> dict[str, Any]:  # fmt: skip
    """The row of the segment of rows ``a`` to ``e`` (exclusive)."""
    raw, xs = s.raw, s.xs
    if c.model == "linear" and c.xl is not None:
        # the mean of a sloping segment: the line's mean plus the mean of the noise
        # around it (a trend is not noise)
        lv, lo, hi = levels.shifted_interval(
            raw[a:e],
            _line_residuals(c.xl[a:e], raw[a:e], [e - a]),
            log=s.log,
            confidence=confidence,
        )
    else:
        lv, lo, hi = levels.level_interval(raw[a:e], log=s.log, confidence=confidence)
    nan = float("nan")
    t, t0, hb, hb0 = ax.t, ax.t0, ax.hb, ax.hb0
    return {
        "x_start": float(ax.x0[a]),
        "x_end": float(xs[e - 1]),
        "t_start_s": float(t0[a]) if t0 is not None else nan,
        "t_end_s": float(t[e - 1]) if t is not None else nan,
        "gb_start": float(hb0[a]) / 1e9 if hb0 is not None else nan,
        "gb_end": float(hb[e - 1]) / 1e9 if hb is not None else nan,
        "fills_start": float(hb0[a]) / capacity if hb0 is not None and capacity else nan,
        "fills_end": float(hb[e - 1]) / capacity if hb is not None and capacity else nan,
        "level": lv,
        "level_lo": lo,
        "level_hi": hi,
        "slope": blocks.ols_slope(xs[a:e] / (1e9 if x.endswith("_bytes") else 1.0), raw[a:e]),
        "n": e - a,
    }


def _intervals(
    s: Series, c: Choice, starts: list[int], ends: list[int], x0: np.ndarray
) -> list[tuple[float, float]]:
    """Each change's ~95 % location interval, in x."""
    out = []
    for i in range(1, len(starts)):
        if c.model == "linear" and c.xl is not None:
            lo_i, hi_i = _linear_interval(
                c.xl, s.work, starts[i - 1], starts[i], ends[i], c.lrv_fit
            )
        else:
            lo_i, hi_i = _location_interval(
                s.work, starts[i - 1], starts[i], ends[i], math.sqrt(c.lrv), s.m
            )
        out.append((float(x0[min(lo_i, starts[i])]), float(x0[max(hi_i, starts[i])])))
    return out


def _path(s: Series, x0: np.ndarray) -> Callable[[float, float], pl.DataFrame]:
    """The step search's penalty path (CROPS) between two penalties, breakpoints in x."""

    def path(pen_min: float, pen_max: float) -> pl.DataFrame:
        f = crops(s.work, search=s.search, pen_min=pen_min, pen_max=pen_max, cost=s.search_cost)
        return f.with_columns(
            pl.col("ends")
            .map_elements(
                lambda es: [float(x0[a]) for a in ([0] + list(es)[:-1])[1:]],
                return_dtype=pl.List(pl.Float64),
            )
            .alias("breakpoints")
        ).drop("ends")

    return path


def predict(
    df: pl.DataFrame,
    s: Series,
    c: Choice,
    *,
    x: str,
    capacity: float | None,
    confidence: float,
    pct: float,
) -> tuple[pl.DataFrame, list[float], list[tuple[float, float]], dict[str, Any]]:
    """The segments of choice ``c`` (ruptures' ``predict``): their frame, breakpoints and
    location intervals in x, and what the fit found (penalty, noise, cost, model, path)."""
    ends = c.ends
    starts = [0] + ends[:-1]
    if s.used == "huber" and c.model == "step":
        starts = _refine_l1(s.sig, starts, ends, s.m)
        ends = starts[1:] + [s.n]
    ax = RowAxes.of(df, x, s.xs)
    rows = [
        _segment_row(s, c, ax, a, e, x=x, capacity=capacity, confidence=confidence)
        for a, e in zip(starts, ends, strict=True)
    ]
    info = {
        "penalty": c.pen, "sigma": s.sigma, "rho": s.rho, "lrv": c.lrv, "min_change_pct": pct,
        "cost": s.used, "min_size": s.m, "jump": s.jump, "heavy": s.heavy,
        "path": _path(s, ax.x0), "model": c.model,
    }  # fmt: skip
    bkps = [float(ax.x0[a]) for a in starts[1:]]
    return pl.DataFrame(rows), bkps, _intervals(s, c, starts, ends, ax.x0), info
