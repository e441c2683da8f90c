"""SNIA PTS steady-state window: round means, the window's mean with ±10 % / ±20 % bands and
the least-squares line fitted through the window."""

from __future__ import annotations

from typing import cast

import altair as alt
import numpy as np
import polars as pl

from flashback.errors import AnalysisError
from flashback.figures._util import clean, require, title_for


def steady_state_window(
    rounds: pl.DataFrame,
    *,
    round_col: str = "round",
    y: str = "write_iops",
    window: tuple[int, int] | None = None,
    window_rounds: int = 5,
    width: int = 560,
    height: int = 260,
) -> alt.LayerChart:
    """Round means with the measurement window's criteria drawn over them.

    Args:
        rounds: one row per round: ``round_col`` (int) and ``y`` (the round's mean, e.g.
            ``write_iops``). A ``SteadyState.to_frame()`` with those columns works.
        window: first and last round of the measurement window (``SteadyState.window``);
            default: the last ``window_rounds`` rounds.

    Returns:
        Layers: all round means (points + line), the window's mean (rule), bands at
        mean ±10 % (PTS data-excursion limit: a 20 % range) and ±20 %, and the fitted line.

    Raises:
        AnalysisError: empty/missing columns, or a window with fewer than 2 rounds.
    """
    require(rounds, [round_col, y], what="rounds")
    df = rounds.select(pl.col(round_col).cast(pl.Int64), pl.col(y).cast(pl.Float64)).sort(round_col)
    if window is None:
        tail = df[round_col].to_list()[-window_rounds:]
        window = (tail[0], tail[-1])
    first, last = int(window[0]), int(window[1])
    win = df.filter(pl.col(round_col).is_between(first, last))
    if len(win) < 2:
        raise AnalysisError(
            f"the steady-state window {first}..{last} holds {len(win)} round(s); it needs 2+"
        )
    mean = float(cast(float, win[y].mean()))
    slope, intercept = np.polyfit(win[round_col].to_numpy(), win[y].to_numpy(), 1)
    df = clean(df.with_columns(pl.col(round_col).is_between(first, last).alias("in_window")))
    bands = pl.DataFrame(
        {
            "band": ["±20 %", "±10 %"],
            "lo": [mean * 0.8, mean * 0.9],
            "hi": [mean * 1.2, mean * 1.1],
            "x0": [float(first), float(first)],
            "x1": [float(last), float(last)],
        }
    )
    fit = pl.DataFrame(
        {
            "x": [float(first), float(last)],
            "fit": [intercept + slope * first, intercept + slope * last],
        }
    )
    x_enc = alt.X(f"{round_col}:Q", title="Round", axis=alt.Axis(tickMinStep=1))
    band = (
        alt.Chart(bands)
        .mark_rect()
        .encode(
            x="x0:Q",
            x2="x1:Q",
            y="lo:Q",
            y2="hi:Q",
            opacity=alt.Opacity(
                "band:N",
                scale=alt.Scale(domain=["±20 %", "±10 %"], range=[0.12, 0.25]),
                title="Window mean",
            ),
            color=alt.value("#4c78a8"),
        )
    )
    pts = (
        alt.Chart(df)
        .mark_line(point=True, color="#333333")
        .encode(
            x=x_enc,
            y=alt.Y(f"{y}:Q", title=title_for(y) + " (round mean)"),
            tooltip=[round_col, alt.Tooltip(f"{y}:Q", format=",.1f"), "in_window"],
        )
    )
    mean_rule = (
        alt.Chart(pl.DataFrame({"x0": [float(first)], "x1": [float(last)], "mean": [mean]}))
        .mark_rule(color="#4c78a8", strokeWidth=2)
        .encode(x="x0:Q", x2="x1:Q", y="mean:Q")
    )
    fit_line = (
        alt.Chart(fit).mark_line(color="#d62728", strokeDash=[6, 3]).encode(x="x:Q", y="fit:Q")
    )
    return alt.LayerChart(layer=[band, pts, mean_rule, fit_line], width=width, height=height)
