"""Published numbers drawn on a replayed curve, and a published-vs-replayed error chart."""

from __future__ import annotations

import altair as alt
import polars as pl

from flashback.figures._theme import COLORS, color_scale, first_seen
from flashback.figures._util import bin_mean, clean, require, title_for

_UNIT_OF = {"_mbps": "MB/s", "_iops": "IOPS", "_us": "us", "_ms": "ms"}


def _unit_for(col: str) -> str | None:
    return next((u for s, u in _UNIT_OF.items() if col.endswith(s)), None)


def published_overlay(
    curve: pl.DataFrame,
    published: pl.DataFrame,
    *,
    x: str = "host_written_bytes",
    y: str = "write_mbps",
    series: str | None = "step",
    max_points: int = 4000,
    width: int = 560,
    height: int = 280,
) -> alt.LayerChart:
    """A replayed curve with the review's numbers on it.

    Published rows (``fb.published(...)`` frame) are placed by their units:
    rows in the curve's y unit with an ``x`` become points at (x, value); rows in the y unit
    without ``x`` become dashed horizontal rules (levels, maxima, averages); rows whose
    metric starts with ``breakpoint`` (unit GB) become vertical rules when the x axis is GB
    written. The title says which marks are the review's (on the figure, where a PNG keeps
    it); hover shows drive, test, condition, metric and note.

    Args:
        curve: replayed interval or per-loop frame with ``x`` and ``y`` (and ``series``).
        published: rows of :func:`flashback.published`.
        x: ``host_written_bytes`` (shown in GB) or ``t_s`` (seconds).

    Raises:
        AnalysisError: empty curve or missing columns.
    """
    require(curve, [x, y], what="curve")
    require(published, ["metric", "value", "unit", "x", "x_unit"], what="published")
    ser = series if series and series in curve.columns else None
    in_gb = x.endswith("_bytes")
    df = curve.select([x, y, *([ser] if ser else [])])
    if in_gb:
        df = df.with_columns(pl.col(x) / 1e9)
    df = clean(bin_mean(df, x=x, ys=[y], by=[ser] if ser else None, max_points=max_points))
    x_title = "Host data written (GB)" if in_gb else title_for(x)
    line = (
        alt.Chart(df)
        .mark_line(opacity=0.85)
        .encode(
            x=alt.X(f"{x}:Q", title=x_title),
            y=alt.Y(f"{y}:Q", title=title_for(y)),
            color=alt.Color(
                f"{ser}:N",
                title="Replayed",
                scale=color_scale(first_seen(df[ser])),
                sort=first_seen(df[ser]),
            )
            if ser
            else alt.value(COLORS["replayed"]),
        )
    )
    unit = _unit_for(y)
    want_x_unit = "GB written" if in_gb else "s"
    keep = [
        c
        for c in ("drive", "test", "condition", "metric", "value", "unit", "x", "x_unit", "note")
        if c in published.columns
    ]
    pub = published.select(keep)
    tip = [
        alt.Tooltip(c, type="nominal")
        for c in ("drive", "test", "condition", "metric", "note")
        if c in keep
    ] + [alt.Tooltip("value:Q", title="published")]
    layers = [line]
    said: list[str] = []  # what each published layer is, in words (the chart's title)
    pts = pub.filter(
        (pl.col("unit") == unit) & pl.col("x").is_not_null() & (pl.col("x_unit") == want_x_unit)
    )
    if not pts.is_empty():
        layers.append(
            alt.Chart(clean(pts))
            .mark_point(shape="diamond", size=90, filled=True, color=COLORS["published"])
            .encode(x="x:Q", y="value:Q", tooltip=tip)
        )
        said.append("purple diamonds, points")
    levels = pub.filter((pl.col("unit") == unit) & pl.col("x").is_null())
    if not levels.is_empty():
        layers.append(
            alt.Chart(clean(levels))
            .mark_rule(strokeDash=[6, 3], color=COLORS["published"])
            .encode(y="value:Q", tooltip=tip)
        )
        said.append("purple dashed rules, levels")
    if in_gb:
        bps = pub.filter(pl.col("metric").str.starts_with("breakpoint") & (pl.col("unit") == "GB"))
        if not bps.is_empty():
            layers.append(
                alt.Chart(clean(bps))
                .mark_rule(strokeDash=[2, 2], color="#333333")
                .encode(x="value:Q", tooltip=tip)
            )
            said.append("dark dotted rules, breakpoints")
    out = alt.LayerChart(layer=layers, width=width, height=height)
    if said:  # on the figure itself: a tooltip is lost in a PNG
        text = "the review's numbers: " + "; ".join(said)
        out = out.properties(title=alt.TitleParams(text=text, fontSize=11, fontWeight="normal"))
    return out


def compare_errors(
    compare: pl.DataFrame, *, tolerance_pct: float | None = None, width: int = 420
) -> alt.LayerChart | alt.VConcatChart | alt.Chart:
    """Relative error of each replayed number against the published one (``Replay.compare()``).

    Only rows that set a published number against a replayed one are drawn, coloured by
    their ``status`` (within / outside / no tolerance). Settings of the procedure echoed
    back, sensitivity replays and rows without both numbers are left out. Rows whose status
    is ``documented, not modelled`` are listed under the bars with their reason (from
    ``note``), not drawn as errors.

    Args:
        compare: frame with ``metric``, ``condition``, ``published``, ``replayed``, ``unit``,
            ``rel_error`` (fraction, e.g. 0.08 for +8 %) and, from ``Replay.compare()``,
            ``status`` and ``note`` (a frame without ``status``: every row with both numbers
            is drawn as ``no tolerance``).
        tolerance_pct: draws ±tolerance rules when given.

    Raises:
        AnalysisError: empty, missing columns, or no row that compares two numbers and none
            documented but not modelled (when the replay ran below its protocol's
            ``min_held_scale``, the message names that scale and the floor).
    """
    from flashback.errors import AnalysisError
    from flashback.replay.compare import COMPARED, UNMODELLED, tally
    from flashback.replay.status import BELOW_HELD

    require(
        compare,
        ["metric", "condition", "published", "replayed", "unit", "rel_error"],
        what="compare",
    )
    if "status" not in compare.columns:
        compare = compare.with_columns(pl.lit("no tolerance").alias("status"))
    if "note" not in compare.columns:
        compare = compare.with_columns(pl.lit(None, pl.String).alias("note"))
    label = (pl.col("metric") + " · " + pl.col("condition")).alias("label")
    compared = compare.filter(
        pl.col("status").is_in(COMPARED)
        & pl.col("published").is_not_null()
        & pl.col("replayed").is_not_null()
        & pl.col("rel_error").is_not_null()
    )
    unmodelled = compare.filter(pl.col("status") == UNMODELLED)
    below = compare.filter(pl.col("status") == BELOW_HELD)
    if compared.is_empty() and unmodelled.is_empty() and below.height:
        why = tally(compare)["not_compared"] or BELOW_HELD
        raise AnalysisError(
            f"compare compares nothing here ({why}); replay at the protocol's min_held_scale "
            "or above to draw its errors"
        )
    if compared.is_empty() and unmodelled.is_empty():
        raise AnalysisError(
            "compare holds no row that compares a published number with a replayed one, and "
            "none the model leaves unmodelled; there is nothing to draw"
        )
    parts: list[alt.LayerChart | alt.Chart] = []
    if compared.height:
        parts.append(_error_bars(compared.with_columns(label), tolerance_pct, width))
    if unmodelled.height:
        parts.append(_unmodelled_list(unmodelled.with_columns(label), width))
    return parts[0] if len(parts) == 1 else alt.vconcat(*parts)


def _error_bars(compared: pl.DataFrame, tolerance_pct: float | None, width: int) -> alt.LayerChart:
    """Bars of relative error (%), coloured by status, with the zero (and tolerance) rules."""
    from flashback.replay.compare import COMPARED

    df = clean(compared.with_columns((pl.col("rel_error") * 100).alias("rel_error_pct")))
    bars = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y("label:N", title=None, sort=None),
            x=alt.X("rel_error_pct:Q", title="Replayed vs published (relative error, %)"),
            color=alt.Color(
                "status:N",
                title="status",
                scale=color_scale(list(COMPARED)),
            ),
            tooltip=[
                "metric",
                "condition",
                "published",
                "replayed",
                "unit",
                "status",
                alt.Tooltip("rel_error_pct:Q", format="+.1f"),
            ],
        )
        .properties(width=width)
    )
    layers = [
        bars,
        alt.Chart(pl.DataFrame({"v": [0.0]})).mark_rule(color="#333333").encode(x="v:Q"),
    ]
    if tolerance_pct:
        tol = pl.DataFrame({"v": [-tolerance_pct, tolerance_pct]})
        layers.append(alt.Chart(tol).mark_rule(strokeDash=[4, 3], color="#888888").encode(x="v:Q"))
    return alt.LayerChart(layer=layers)


def _unmodelled_list(unmodelled: pl.DataFrame, width: int) -> alt.Chart:
    """The documented numbers the model does not reproduce, one line each with its reason
    (the note's first clause, without the status prefix)."""
    from flashback.replay.compare import UNMODELLED

    why = unmodelled.with_columns(
        pl.col("note")
        .fill_null("")
        .str.split("; ")
        .list.first()
        .str.strip_prefix(f"{UNMODELLED}: ")
        .str.slice(0, 160)
        .alias("reason"),
    ).select("label", "published", "unit", "reason", "note")
    return (
        alt.Chart(clean(why), title=f"{UNMODELLED} (not drawn as errors)")
        .mark_text(align="left", baseline="middle", fontSize=11)
        .encode(
            y=alt.Y("label:N", title=None, sort=None),
            text="reason:N",
            tooltip=["label", "published", "unit", "note"],
        )
        .properties(width=width)
    )
