"""AnandTech's performance-consistency scatter: per-second IOPS against time."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from flashback.figures._util import bin_extremes, clean, require, title_for


def iops_scatter(
    intervals: pl.DataFrame,
    *,
    t: str = "t_s",
    y: str = "write_iops",
    variant: str | None = "variant",
    scale: str = "log",
    t_min_s: float | None = None,
    t_max_s: float | None = None,
    y_max: float | None = None,
    max_points: int = 4000,
    width: int = 300,
    height: int = 220,
) -> alt.Chart | alt.FacetChart:
    """IOPS of every interval against time, one panel per variant (default vs +25 % OP).

    Args:
        intervals: capture interval frame (design schema): ``t`` and ``y`` columns, and
            ``variant`` (e.g. ``default_op`` / ``op_25``) when several runs are shown.
        scale: ``"log"`` (AnandTech's first two sets) or ``"linear"`` (the third set).
        t_min_s, t_max_s: time window; ``t_min_s=1400`` is AnandTech's steady-state zoom.
        y_max: top of a linear axis (AnandTech used 40,000 IOPS).
        max_points: row budget; above it each time bin keeps its lowest and highest point
            (the scatter's spread survives, the row count is bounded).

    Raises:
        AnalysisError: empty frame, missing column, or an unknown scale.
    """
    require(intervals, [t, y], what="intervals")
    if scale not in ("log", "linear"):
        from flashback.errors import AnalysisError

        raise AnalysisError(f"scale must be 'log' or 'linear', not {scale!r}")
    var_col = variant if variant and variant in intervals.columns else None
    df = intervals.select([t, y, *([var_col] if var_col else [])])
    if t_min_s is not None:
        df = df.filter(pl.col(t) >= t_min_s)
    if t_max_s is not None:
        df = df.filter(pl.col(t) <= t_max_s)
    if scale == "log":
        df = df.filter(pl.col(y) > 0)  # zero-IOPS seconds cannot sit on a log axis
    require(df, [t, y], what="intervals in the chosen window")
    df = clean(bin_extremes(df, x=t, y=y, by=[var_col] if var_col else None, max_points=max_points))
    y_scale = (
        alt.Scale(type="log")
        if scale == "log"
        else alt.Scale(domain=[0, y_max] if y_max else alt.Undefined, clamp=bool(y_max))
    )
    chart = (
        alt.Chart(df)
        .mark_point(size=8, filled=True, opacity=0.7)
        .encode(
            x=alt.X(f"{t}:Q", title=title_for(t), scale=alt.Scale(zero=t_min_s is None)),
            y=alt.Y(
                f"{y}:Q",
                title=title_for(y) + (" (log scale)" if scale == "log" else ""),
                scale=y_scale,
            ),
            tooltip=[alt.Tooltip(f"{t}:Q", format=".0f"), alt.Tooltip(f"{y}:Q", format=",.0f")],
        )
        .properties(width=width, height=height)
    )
    if var_col:
        # variants in the order they first appear (the order they ran), not alphabetical
        order = list(dict.fromkeys(df[var_col].to_list()))
        return chart.facet(column=alt.Column(f"{var_col}:N", title=None, sort=order))
    return chart


def consistency_panel(
    intervals: pl.DataFrame,
    *,
    t: str = "t_s",
    y: str = "write_iops",
    variant: str | None = "variant",
    steady_from_s: float = 1400.0,
    linear_max: float | None = 40000.0,
) -> alt.VConcatChart:
    """AnandTech's three sets stacked: full run (log), steady-state zoom (log), zoom (linear).

    Raises:
        AnalysisError: as :func:`iops_scatter`.
    """
    kw: dict[str, Any] = dict(t=t, y=y, variant=variant)
    return alt.vconcat(
        iops_scatter(intervals, scale="log", **kw).properties(title="Full run"),
        iops_scatter(intervals, scale="log", t_min_s=steady_from_s, **kw).properties(
            title=f"Steady state from t = {steady_from_s:.0f} s"
        ),
        iops_scatter(
            intervals, scale="linear", t_min_s=steady_from_s, y_max=linear_max, **kw
        ).properties(title="Steady state, linear scale"),
    )
