"""Per-second series of each protocol step laid over each other (BeHardware's New / Used /
TRIM graphs, AnandTech TRIM validation), time counted from each step's start."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from flashback.figures._theme import COLORS, color_scale, first_seen
from flashback.figures._util import bin_mean, clean, require, spread_over, title_for


def step_series(
    intervals: pl.DataFrame,
    *,
    y: str = "write_mbps",
    step: str = "step",
    t: str = "t_s",
    facet: str | None = None,
    steps: list[str] | None = None,
    color: str | None = None,
    color_order: list[str] | None = None,
    published: pl.DataFrame | None = None,
    max_points: int = 4000,
    width: int = 420,
    height: int = 200,
) -> alt.Chart | alt.LayerChart | alt.FacetChart:
    """One line per step against seconds since that step began.

    Args:
        intervals: capture interval frame (design schema) with ``t``, ``y`` and ``step``.
        facet: optional column splitting panels (e.g. ``drive`` or a test name column).
        steps: steps to show, in legend order (default: all, in order of appearance); panels
            follow the same order.
        color: column that colours the lines (e.g. ``condition``: one colour per drive
            state, as every chart of a report colours it); default: the step.
        color_order: labels of ``color`` in legend order, e.g. the drive states in the order
            the procedure first reached them (those absent are dropped; those present but
            not named follow); default: as they first appear in the steps shown.
        published: the review's own marks: one row per mark with ``label`` and ``x`` (s since
            the step began: a vertical rule, a dip), ``y`` (units of ``y``: a horizontal rule,
            a level), or ``y`` with ``x`` and ``x2`` (a level over that span of the step);
            with the ``facet`` column, in that panel, else in every panel. Drawn in the
            table's ``published`` colour, dotted, and named in the tooltip.
        max_points: row budget for all steps; above it intervals are binned (mean) in polars.

    Raises:
        AnalysisError: empty, missing columns, or none of ``steps`` present; ``published``
            without a ``label`` or with neither ``x`` nor ``y``.
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
    if by and color_order is not None:
        hue_order = [v for v in color_order if v in hue_order] + [
            v for v in hue_order if v not in color_order
        ]
    facet_order = first_seen(df.sort(pl.col(step).replace_strict(
        {s: i for i, s in enumerate(order)}, default=len(order)), maintain_order=True)[facet]
    ) if facet is not None and len(keys) > 1 else []  # fmt: skip
    marks = None
    if published is not None and not published.is_empty():
        marks = _published_marks(published, df, facet if len(keys) > 1 else None)
        df = pl.concat(
            [df.with_columns(pl.lit("curve").alias("layer")), marks], how="diagonal_relaxed"
        )
    base = (
        alt.Chart(df) if marks is None else alt.Chart().transform_filter(alt.datum.layer == "curve")
    )
    chart: alt.Chart | alt.LayerChart = base.mark_line().encode(
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
    if marks is not None:  # one data set for every layer: a faceted layer needs it on top
        chart = alt.LayerChart(layer=[chart, *_published_layers()], data=df)
    chart = chart.properties(width=width, height=height)
    if len(keys) > 1:
        return chart.facet(column=alt.Column(f"{facet}:N", title=None, sort=facet_order))
    return chart


def _published_marks(published: pl.DataFrame, df: pl.DataFrame, facet: str | None) -> pl.DataFrame:
    """The review's marks as rows of the ``published`` layer (``pub_x``, ``pub_x2``,
    ``pub_y``), each in its panel, or in every panel without a ``facet`` column.

    Raises:
        AnalysisError: no ``label``, or neither ``x`` nor ``y``.
    """
    from flashback.errors import AnalysisError

    require(published, ["label"], what="published")
    if "x" not in published.columns and "y" not in published.columns:
        raise AnalysisError("published marks need an x (a time) or a y (a level) column")

    def col(name: str) -> pl.Expr:
        c = pl.col(name).cast(pl.Float64) if name in published.columns else pl.lit(None, pl.Float64)
        return c.alias(f"pub_{name}")

    keep = [facet] if facet and facet in published.columns else []
    marks = published.select(pl.col("label").cast(pl.String), col("x"), col("x2"), col("y"), *keep)
    if facet:
        marks = spread_over(marks, df.select(facet))
        marks = marks.filter(pl.col(facet).is_in(df[facet].unique().to_list()))
    return clean(marks.with_columns(pl.lit("published").alias("layer")))


def _published_layers() -> list[alt.Chart]:
    """Rules for the ``published`` rows: vertical at ``pub_x``, horizontal at ``pub_y``, a
    segment at ``pub_y`` from ``pub_x`` to ``pub_x2``."""
    mark: dict[str, Any] = {"color": COLORS["published"], "strokeDash": [1, 3], "strokeWidth": 2.5}
    tip = [alt.Tooltip("label:N", title="published")]
    pub = alt.Chart().transform_filter(alt.datum.layer == "published")
    return [
        pub.transform_filter("isValid(datum.pub_x) && !isValid(datum.pub_y)")
        .mark_rule(**mark)
        .encode(x="pub_x:Q", tooltip=tip),
        pub.transform_filter("isValid(datum.pub_y) && !isValid(datum.pub_x2)")
        .mark_rule(**mark)
        .encode(y="pub_y:Q", tooltip=tip),
        pub.transform_filter("isValid(datum.pub_y) && isValid(datum.pub_x2)")
        .mark_rule(**mark)
        .encode(x="pub_x:Q", x2="pub_x2:Q", y="pub_y:Q", tooltip=tip),
    ]
