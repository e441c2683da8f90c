"""Per-second series of each protocol step laid over each other (BeHardware's New / Used /
TRIM graphs, AnandTech TRIM validation), time counted from each step's start."""

from __future__ import annotations

import altair as alt
import polars as pl

from flashback.figures._theme import color_scale, first_seen
from flashback.figures._util import bin_mean, clean, require, title_for


def step_series(
    intervals: pl.DataFrame,
    *,
    y: str = "write_mbps",
    step: str = "step",
    t: str = "t_s",
    facet: str | None = None,
    steps: list[str] | None = None,
    color: str | None = None,
    max_points: int = 4000,
    width: int = 420,
    height: int = 200,
) -> alt.Chart | alt.FacetChart:
    """One line per step against seconds since that step began.

    Args:
        intervals: capture interval frame (design schema) with ``t``, ``y`` and ``step``.
        facet: optional column splitting panels (e.g. ``drive`` or a test name column).
        steps: steps to show, in legend order (default: all, in order of appearance); panels
            follow the same order.
        color: column that colours the lines (e.g. ``condition``: one colour per drive
            state, as every chart of a report colours it); default: the step.
        max_points: row budget for all steps; above it intervals are binned (mean) in polars.

    Raises:
        AnalysisError: empty, missing columns, or none of ``steps`` present.
    """
    require(intervals, [t, y, step], what="intervals")
    if color is not None:
        require(intervals, [color], what="intervals")
    by = color if color is not None and color != step else None
    keys = [step] + ([facet] if facet and facet in intervals.columns else [])
    df = intervals.select(list(dict.fromkeys([t, y, *keys, *([by] if by else [])])))
    if steps is not None:
        df = df.filter(pl.col(step).is_in(steps))
        require(df, [t, y, step], what=f"intervals of steps {steps}")
    order = steps or first_seen(df[step])
    df = df.with_columns((pl.col(t) - pl.col(t).min().over(keys)).alias("t_step_s"))
    df = clean(
        bin_mean(
            df.drop(t), x="t_step_s", ys=[y], by=list(dict.fromkeys([*keys, *([by] if by else [])])),
            max_points=max_points,
        )
    )  # fmt: skip
    hue = by or step
    hue_order = first_seen(intervals.filter(pl.col(step).is_in(order))[hue]) if by else order
    facet_order = first_seen(df.sort(pl.col(step).replace_strict(
        {s: i for i, s in enumerate(order)}, default=len(order)), maintain_order=True)[facet]
    ) if facet is not None and len(keys) > 1 else []  # fmt: skip
    chart = (
        alt.Chart(df)
        .mark_line()
        .encode(
            x=alt.X("t_step_s:Q", title="Time since step start (s)"),
            y=alt.Y(f"{y}:Q", title=title_for(y)),
            color=alt.Color(
                f"{hue}:N",
                title="Step" if hue == step else hue.replace("_", " ").capitalize(),
                scale=color_scale(hue_order),
                sort=hue_order,
            ),
            tooltip=[
                step,
                alt.Tooltip("t_step_s:Q", format=".0f"),
                alt.Tooltip(f"{y}:Q", format=".1f"),
            ],
        )
        .properties(width=width, height=height)
    )
    if len(keys) > 1:
        return chart.facet(column=alt.Column(f"{facet}:N", title=None, sort=facet_order))
    return chart
