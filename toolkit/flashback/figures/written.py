"""Performance against host data written, with change points and their confidence bands (Puget)."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from flashback.figures import _marks
from flashback.figures._theme import COLORS, color_scale, first_seen
from flashback.figures._util import bin_mean, clean, require, spread_over, title_for, x_in_gb

#: The review's own marks: the table's colour of ``published``.
PUBLISHED_COLOR = COLORS["published"]


def _name_group(frame: pl.DataFrame, curves: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """``changepoints(..., by=...)`` names its group column ``group``: rename it to the curve
    column whose values it holds (the test or the data type)."""
    if "group" not in frame.columns:
        return frame
    groups = set(frame["group"].drop_nulls().cast(pl.String))
    for k in keys:
        if k not in frame.columns and groups <= set(curves[k].cast(pl.String)):
            return frame.rename({"group": k})
    return frame


def performance_vs_written(
    curves: pl.DataFrame,
    *,
    x: str = "host_written_bytes",
    y: str = "write_mbps",
    test: str | None = "test",
    data: str | None = "data",
    segments: pl.DataFrame | None = None,
    breakpoints: pl.DataFrame | None = None,
    published: pl.DataFrame | None = None,
    max_points: int = 4000,
    width: int = 520,
    height: int = 160,
) -> alt.LayerChart | alt.FacetChart:
    """Throughput (or IOPS) against host GB written, one panel per test, colour per data type.

    Args:
        curves: one row per point (per loop or per interval); needs ``x`` and ``y``, and the
            ``test`` / ``data`` columns when named and present (e.g. ``cdm_seq_write``,
            ``incompressible``). ``x`` in bytes when its name ends ``_bytes``, else in GB.
        x, y: column names. The y axis title carries the unit from the name (``MB/s``).
        test: column that splits panels (rows, in the order the tests first appear in
            ``curves``: the order they ran); ignored when absent.
        data: column coloured (compressible vs incompressible; colours from the one table,
            :func:`flashback.figures.color_of`); ignored when absent.
        segments: ``Segments.to_frame()``-style frame: ``x_start``, ``x_end``, ``level``,
            ``level_lo``, ``level_hi`` in the units of ``x``; optional ``test``/``data``
            columns (or the ``group`` column of ``changepoints(by=...)``) place them in
            panels. Drawn as level rules with CI bands; with a ``level_end`` column (the
            segment's fitted line at ``x_end``, for knees found by lines rather than
            levels), each rule runs from ``level`` to ``level_end``.
        breakpoints: frame with ``x``, ``x_lo``, ``x_hi`` (units of ``x``, as
            ``Segments.breakpoint_frame()``), optional ``test``/``group``: vertical rules at
            the change point with a shaded CI; without a test column, in every panel. With
            an ``evidence`` column (``Segments.explain(cap)``), each rule is annotated with
            what coincides with it (label at the top, full text in the tooltip).
        published: the review's own marks beside the replayed ones: one row per mark with
            ``label`` and either ``x`` (a knee, units of ``x``: a vertical rule) or ``y`` (a
            level, units of ``y``: a horizontal rule), optional ``test`` (its panel; without
            it, every panel). Drawn purple (:data:`PUBLISHED_COLOR`), dotted, named in the
            tooltip, and said on the chart: a legend (review vs replay: these marks against
            the replay's ``breakpoints``, then drawn in the same group) and a short label on
            each knee and level, the review's and the replay's (``review 40 GB``,
            ``replay 141 GB``, ``replay 131 MB/s``; :mod:`flashback.figures._marks`).
        max_points: row budget of the curves; above it points are binned (mean) in polars.

    Returns:
        A layered chart (faceted by test when the test column is present).

    Raises:
        AnalysisError: a frame is empty or lacks a needed column.
    """
    require(curves, [x, y], what="curves")
    test_col = test if test and test in curves.columns else None
    data_col = data if data and data in curves.columns else None
    keys = [c for c in (test_col, data_col) if c]
    in_bytes = x.endswith("_bytes")
    pts = x_in_gb(curves.select([x, y, *keys]), x, in_bytes=in_bytes)
    pts = pts.drop(x) if x != "x_gb" else pts
    pts = bin_mean(pts, x="x_gb", ys=[y], by=keys, max_points=max_points)
    pts = pts.rename({y: "y"}).with_columns(pl.lit("curve").alias("layer"))
    parts = [pts]
    if segments is not None and not segments.is_empty():
        require(segments, ["x_start", "x_end", "level", "level_lo", "level_hi"], what="segments")
        segments = _name_group(segments, curves, keys)
        seg_keys = [c for c in keys if c in segments.columns]
        seg = segments.select(["x_start", "x_end", "level", "level_lo", "level_hi", *seg_keys])
        ends = segments["level_end"] if "level_end" in segments.columns else segments["level"]
        seg = seg.with_columns(ends.alias("y_end"))
        seg = x_in_gb(seg, "x_start", in_bytes=in_bytes)
        seg = x_in_gb(seg, "x_end", out="x2_gb", in_bytes=in_bytes).drop("x_start", "x_end")
        seg = seg.rename({"level": "y"})
        if test_col:
            seg = spread_over(seg, pts.select(test_col))
        seg = _band_within_curve(seg, pts, keys=[c for c in keys if c in seg.columns])
        parts.append(seg.with_columns(pl.lit("segment").alias("layer")))
    if breakpoints is not None and not breakpoints.is_empty():
        require(breakpoints, ["x", "x_lo", "x_hi"], what="breakpoints")
        breakpoints = _name_group(breakpoints, curves, keys)
        bp_keys = [c for c in keys if c in breakpoints.columns]
        has_ev = "evidence" in breakpoints.columns
        bp = breakpoints.select(["x", "x_lo", "x_hi", *bp_keys, *(["evidence"] if has_ev else [])])
        scale = 1e9 if in_bytes else 1.0
        bp = bp.with_columns(
            (pl.col("x") / scale).alias("x_gb"),
            (pl.col("x_lo") / scale).alias("bp_lo_gb"),
            (pl.col("x_hi") / scale).alias("bp_hi_gb"),
        ).drop("x", "x_lo", "x_hi")
        if test_col:
            bp = spread_over(bp, pts.select(test_col))
        parts.append(bp.with_columns(pl.lit("breakpoint").alias("layer")))
    if published is not None and not published.is_empty():
        parts.append(_published_marks(published, pts, test_col, in_bytes=in_bytes))
    df = clean(pl.concat(parts, how="diagonal_relaxed"))
    if published is not None and not published.is_empty():
        labels = _marks.label_rows(
            df,
            keys=[c for c in keys if c == test_col],
            x_unit="GB",  # x is in bytes (shown in GB) or in GB
            y_unit=_marks.unit_of(y),
            width=width,
            height=height,
        )
        df = pl.concat([df, labels], how="diagonal_relaxed")

    x_enc = alt.X("x_gb:Q", title=title_for(x))
    # tests and data types in the order they first appear in ``curves`` (the order they ran)
    data_order = first_seen(curves[data_col]) if data_col else []
    told = "published" in df["layer"].unique().to_list()
    # with the review's marks, one colour and one dash scale name the data types and the
    # marks (review vs replay) in one legend (flashback.figures._marks)
    cscale = color_scale(data_order) if data_col else None
    dscale = alt.Scale(domain=data_order, range=_marks.DATA_DASHES)
    legend = "Data"
    if told:
        fitted = bool({"segment", "breakpoint"} & set(df["layer"].unique().to_list()))
        cscale, dscale = _marks.scales(cscale, data_order, replay=fitted)
        legend = "Curves and marks" if data_col else "Marks"
    key: dict[str, Any] = {"title": legend, "legend": _marks.LEGEND} if told else {"title": legend}
    color = (
        alt.Color(f"{data_col}:N", scale=cscale, sort=data_order, **key)
        if data_col
        else alt.value(COLORS["replayed"])
    )
    base = alt.Chart(df).properties(width=width, height=height)
    # Curves that coincide (compressible = incompressible where compression does not help)
    # stay visible: every data type after the first is dashed, drawn over a solid line. The
    # dash shares the colour's legend (a strokeDash legend=None dropped the merged legend).
    dash = (
        alt.StrokeDash(f"{data_col}:N", sort=data_order, scale=dscale, **key)
        if data_col
        else alt.value([1, 0])
    )
    line = (
        base.transform_filter(alt.datum.layer == "curve")
        .mark_line(point=len(pts) <= 400, opacity=0.8)
        .encode(
            x=x_enc,
            y=alt.Y("y:Q", title=title_for(y)),
            color=color,
            strokeDash=dash,
            tooltip=[
                alt.Tooltip("x_gb:Q", title="GB written", format=".1f"),
                alt.Tooltip("y:Q", title=title_for(y), format=".1f"),
                *keys,
            ],
        )
    )
    layers = [line]
    if "segment" in df["layer"].unique().to_list():
        seg_base = base.transform_filter(alt.datum.layer == "segment")
        layers.append(
            seg_base.mark_rect(opacity=0.18).encode(
                x="x_gb:Q", x2="x2_gb:Q", y="band_lo:Q", y2="band_hi:Q", color=color
            )
        )
        layers.append(
            seg_base.mark_rule(strokeWidth=3.5).encode(
                x="x_gb:Q",
                x2="x2_gb:Q",
                y="y:Q",
                y2="y_end:Q",
                color=color,
                tooltip=[
                    alt.Tooltip("y:Q", title="level", format=".1f"),
                    alt.Tooltip("y_end:Q", title="level at the end", format=".1f"),
                    alt.Tooltip("level_lo:Q", format=".1f"),
                    alt.Tooltip("level_hi:Q", format=".1f"),
                ],
            )
        )
    has = set(df["layer"].unique().to_list())
    # with the review's marks, the knees and levels (the review's and the replay's) are named
    # in the legend and each carries a label (flashback.figures._marks)
    who = (
        {
            "color": alt.Color("who:N", scale=cscale, **key),
            "strokeDash": alt.StrokeDash("who:N", scale=dscale, **key),
        }
        if told
        else None
    )
    if "breakpoint" in has:
        layers += _breakpoint_layers(base, who=who, evidence="evidence" in df.columns)
    spacing = 20  # Vega-Lite's default between facet rows
    if who is not None:
        marks, spacing = _marks.review_layers(base, df, who=who, width=width, height=height)
        layers += marks
    chart = alt.layer(*layers)
    if test_col:
        chart = chart.facet(
            row=alt.Row(f"{test_col}:N", title=None, sort=first_seen(curves[test_col])),
            spacing=spacing,
        ).resolve_scale(y="independent")
    return chart


def _breakpoint_layers(base: alt.Chart, *, who: dict | None, evidence: bool) -> list:
    """The replay's change points: CI band and rule (named in the legend and coloured by
    ``who`` when the review's marks are drawn too), and their evidence labels."""
    bp_base = base.transform_filter(alt.datum.layer == "breakpoint")
    tip = [
        alt.Tooltip("x_gb:Q", title="breakpoint (GB written)", format=".1f"),
        alt.Tooltip("bp_lo_gb:Q", title="CI low (GB)", format=".1f"),
        alt.Tooltip("bp_hi_gb:Q", title="CI high (GB)", format=".1f"),
    ]
    layers = [
        bp_base.mark_rect(opacity=0.15, color="#888888").encode(x="bp_lo_gb:Q", x2="bp_hi_gb:Q")
    ]
    if who is not None:
        layers.append(
            bp_base.transform_calculate(who=repr(_marks.WHO["replay"]))
            .mark_rule()
            .encode(x="x_gb:Q", tooltip=tip, **who)
        )
    else:
        layers.append(
            bp_base.mark_rule(strokeDash=[5, 3], color="#333333").encode(x="x_gb:Q", tooltip=tip)
        )
    if evidence:
        layers.append(_evidence_labels(base))
    return layers


def _evidence_labels(base: alt.Chart) -> alt.Chart:
    """A short label (the first item of the evidence) at the top of each breakpoint rule,
    the whole evidence in its tooltip."""
    return (
        base.transform_filter(alt.datum.layer == "breakpoint")
        .transform_calculate(label="split(datum.evidence, '; ')[0]")
        .mark_text(align="left", baseline="top", dx=3, dy=2, angle=0, fontSize=9, color="#333333")
        .encode(
            x="x_gb:Q",
            y=alt.value(0),
            text="label:N",
            tooltip=[
                alt.Tooltip("x_gb:Q", title="breakpoint (GB written)", format=".2f"),
                alt.Tooltip("evidence:N", title="coincides with"),
            ],
        )
    )


def _published_marks(
    published: pl.DataFrame, pts: pl.DataFrame, test_col: str | None, *, in_bytes: bool
) -> pl.DataFrame:
    """The review's knees (``x``) and levels (``y``) as rows of the ``published`` layer."""
    from flashback.errors import AnalysisError

    require(published, ["label"], what="published")
    if "x" not in published.columns and "y" not in published.columns:
        raise AnalysisError("published marks need an x (a knee) or a y (a level) column")
    scale = 1e9 if in_bytes else 1.0
    cols = [pl.col("label").cast(pl.String)]
    cols.append(
        (pl.col("x").cast(pl.Float64) / scale).alias("pub_x_gb")
        if "x" in published.columns
        else pl.lit(None, pl.Float64).alias("pub_x_gb")
    )
    cols.append(
        pl.col("y").cast(pl.Float64).alias("pub_y")
        if "y" in published.columns
        else pl.lit(None, pl.Float64).alias("pub_y")
    )
    keep = [test_col] if test_col and test_col in published.columns else []
    marks = published.select(*cols, *keep)
    if test_col:  # marks without a test go in every panel
        marks = spread_over(marks, pts.select(test_col))
    return marks.with_columns(pl.lit("published").alias("layer"))


def _band_within_curve(seg: pl.DataFrame, pts: pl.DataFrame, *, keys: list[str]) -> pl.DataFrame:
    """Adds ``band_lo``/``band_hi``: each segment's interval drawn no further than the curve's
    own range (per curve), so a short segment's wide interval does not set the axis and
    squeeze the curve into a band; the tooltip keeps ``level_lo``/``level_hi``."""
    rng = (
        pts.group_by(keys).agg(pl.col("y").min().alias("_ymin"), pl.col("y").max().alias("_ymax"))
        if keys
        else pts.select(pl.col("y").min().alias("_ymin"), pl.col("y").max().alias("_ymax"))
    )
    seg = seg.join(rng, on=keys, how="left") if keys else seg.join(rng, how="cross")
    return seg.with_columns(
        pl.max_horizontal("level_lo", "_ymin").alias("band_lo"),
        pl.min_horizontal("level_hi", "_ymax").alias("band_hi"),
    ).drop("_ymin", "_ymax")
