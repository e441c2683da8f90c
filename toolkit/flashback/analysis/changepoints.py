"""``changepoints``: piecewise-constant segmentation of a capture series, in the bytes-written
(or time) domain, with robust defaults for scattered per-second SSD data."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack, overload

import numpy as np
import polars as pl

from flashback.analysis import frames, segmentation
from flashback.analysis.segment_search import LINEAR_MAX_ROWS as LINEAR_MAX_ROWS
from flashback.analysis.segment_search import LOCATION_LR_95 as LOCATION_LR_95
from flashback.analysis.segment_search import RESIDUAL_ROUNDS as RESIDUAL_ROUNDS
from flashback.analysis.segmentation import (
    CAPTURE_MIN_CHANGE_PCT as CAPTURE_MIN_CHANGE_PCT,
)
from flashback.analysis.segmentation import CAPTURE_SUFFIXES as CAPTURE_SUFFIXES
from flashback.analysis.segmentation import LINEAR_PENALTY_FACTOR as LINEAR_PENALTY_FACTOR
from flashback.analysis.segmentation import MODELS as MODELS
from flashback.analysis.segmentation import PENALTY_FACTOR as PENALTY_FACTOR
from flashback.analysis.segmentation import Model as Model
from flashback.analysis.segmentation import _min_change_pct
from flashback.analysis.segmentation import explicit_penalty as explicit_penalty
from flashback.analysis.segments import Segments
from flashback.errors import AnalysisError

if TYPE_CHECKING:
    from flashback.dataset.grouped import Grouped

#: the options passed as strings (Model: see flashback.analysis.segmentation)
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
    """One series segmented: fit (the series and its noise), the step search, the model
    chosen, predict (the segments, breakpoints, intervals and what was found)."""
    s = segmentation.fit(
        df, x=x, y=y, transform=transform, min_size=min_size, method=method, cost=cost,
        model=model,
    )  # fmt: skip
    pen = segmentation.step_penalty(s, penalty)
    pct = _min_change_pct(min_change_pct, y)
    steps = segmentation.predict_steps(s, pen=pen, auto=penalty == "auto", pct=pct)
    chosen = segmentation.choose_model(s, steps, model=model, y=y, auto=penalty == "auto")
    return segmentation.predict(
        df, s, chosen, x=x, capacity=capacity, confidence=confidence, pct=pct
    )


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
