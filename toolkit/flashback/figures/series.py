"""Per-second series of each protocol step laid over each other (BeHardware's New / Used /
TRIM graphs, AnandTech TRIM validation), time counted from each step's start."""

from __future__ import annotations

import altair as alt
import polars as pl

from flashback.figures._theme import CONDITION_COLORS
from flashback.figures._util import bin_mean, clean, require, title_for


def step_series(
    intervals: pl.DataFrame,
    *,
    y: str = "write_mbps",
    step: str = "step",
    t: str = "t_s",
    facet: str | None = None,
    steps: list[str] | None = None,
    max_points: int = 4000,
    width: int = 420,
    height: int = 200,
) -> alt.Chart | alt.FacetChart:
    """One line per step against seconds since that step began.

    Args:
        intervals: capture interval frame (design schema) with ``t``, ``y`` and ``step``.
        facet: optional column splitting panels (e.g. ``drive`` or a test name column).
        steps: steps to show, in legend order (default: all, in order of appearance).
        max_points: row budget for all steps; above it intervals are binned (mean) in polars.

    Raises:
        AnalysisError: empty, missing columns, or none of ``steps`` present.
    """
    require(intervals, [t, y, step], what="intervals")
    keys = [step] + ([facet] if facet and facet in intervals.columns else [])
    df = intervals.select([t, y, *keys])
    if steps is not None:
        df = df.filter(pl.col(step).is_in(steps))
        require(df, [t, y, step], what=f"intervals of steps {steps}")
    order = steps or df[step].unique(maintain_order=True).to_list()
    df = df.with_columns((pl.col(t) - pl.col(t).min().over(keys)).alias("t_step_s"))
    df = clean(bin_mean(df.drop(t), x="t_step_s", ys=[y], by=keys, max_points=max_points))
    palette = [CONDITION_COLORS.get(s.split("/")[-1], None) for s in order]
    scale = (
        alt.Scale(domain=order, range=palette)
        if all(palette)
        else alt.Scale(domain=order, scheme="tableau10")
    )
    chart = (
        alt.Chart(df)
        .mark_line()
        .encode(
            x=alt.X("t_step_s:Q", title="Time since step start (s)"),
            y=alt.Y(f"{y}:Q", title=title_for(y)),
            color=alt.Color(f"{step}:N", title="Step", scale=scale, sort=order),
            tooltip=[
                step,
                alt.Tooltip("t_step_s:Q", format=".0f"),
                alt.Tooltip(f"{y}:Q", format=".1f"),
            ],
        )
        .properties(width=width, height=height)
    )
    if len(keys) > 1:
        return chart.facet(column=alt.Column(f"{facet}:N", title=None))
    return chart
