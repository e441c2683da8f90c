"""Puget Systems: CrystalDiskMark looped on an Intel 520 from a secure erase to ~1.8 TB."""

from __future__ import annotations

from typing import cast

import altair as alt
import polars as pl

from flashback import figures
from flashback.analysis.knees import lines
from flashback.replay.api import Replay
from flashback.replay.procedures.puget_checks import loops_frame
from flashback.report.html import Section
from flashback.report.html import _fmt as fmt_cell
from flashback.report.reviews.common import SEEDS, compare_part, in_order, procedure, replay

NAME = "puget-cdm-loop"
PRESET = "intel-520-120g"


def _loops(rep: Replay, data: str) -> pl.DataFrame:
    """One row per loop and write test: review-scale GB written and MB/s — the replay's own
    per-loop results (:func:`loops_frame`), so that every number here matches its checks."""
    w = loops_frame(rep)
    if w.is_empty():
        return w
    return w.filter(pl.col("direction") == "write").select(
        "loop",
        "test",
        "gb_written_full",
        pl.col("mbps").alias("write_mbps"),
        pl.lit(data).alias("data"),
    )


def _segments(part: pl.DataFrame, test: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Segments and breakpoints of one test's incompressible curve, from the fit the
    replay's checks use (:func:`flashback.analysis.knees.lines`, the fit behind
    :func:`~flashback.analysis.knees.knees`): one breakpoint value everywhere. Each segment is drawn as the fit models it, its own least-squares line
    (``level`` at its start, ``level_end`` at its end), so a decline is drawn declining."""
    part = part.sort("gb_written_full")
    x, y = part["gb_written_full"].to_numpy(), part["write_mbps"].to_numpy()
    rows = []
    segs = lines(x, y)
    bps = [seg["x_start"] for seg in segs[1:]]
    for seg in segs:
        gb = pl.col("gb_written_full")
        last = seg["x_end"] == float(x[-1])
        piece = part.filter(
            (gb >= seg["x_start"]) & ((gb <= seg["x_end"]) if last else (gb < seg["x_end"]))
        )
        rows.append(
            {
                "test": test,
                "x_start": seg["x_start"],
                "x_end": seg["x_end"],
                "level": seg["y_start"],
                "level_end": seg["y_end"],
                "level_lo": float(cast(float, piece["write_mbps"].min())),
                "level_hi": float(cast(float, piece["write_mbps"].max())),
                "loops": int(seg["loops"]),
            }
        )
    bp = pl.DataFrame(
        {"x": bps, "x_lo": bps, "x_hi": bps, "test": [test] * len(bps)},
        schema={"x": pl.Float64, "x_lo": pl.Float64, "x_hi": pl.Float64, "test": pl.String},
    )
    return pl.DataFrame(rows), bp


#: The review's marks drawn beside the replayed curve: metric → the axis it sits on.
MARKS = {
    "breakpoint_1_gb": "x",
    "breakpoint_2_gb": "x",
    "avg_mbps": "y",
    "level_after_breakpoint_1_mbps": "y",
}


def published_marks(tests: list[str]) -> pl.DataFrame:
    """The review's knees (GB written) and levels (MB/s) for each replayed write test, from
    the published data set (``fb.published()``), as ``performance_vs_written(published=)``
    draws them: columns ``test``, ``x``, ``y``, ``label``."""
    from flashback.replay.base import get_protocol
    from flashback.replay.compare import published_numbers
    from flashback.replay.procedures.puget_checks import PUB_TEST

    schema = {"test": pl.String, "x": pl.Float64, "y": pl.Float64, "label": pl.String}
    pub = published_numbers()
    rows: list[dict] = []
    if pub is None:
        return pl.DataFrame(schema=schema)
    pub = pub.filter(
        (pl.col("source") == get_protocol(NAME).source) & (pl.col("condition") == "incompressible")
    )
    for short in tests:
        if short not in PUB_TEST:
            continue
        sel = pub.filter(
            (pl.col("test") == f"{PUB_TEST[short]}_write") & pl.col("metric").is_in(list(MARKS))
        )
        for metric, value, unit in sel.select("metric", "value", "unit").iter_rows():
            axis = MARKS[metric]
            rows.append(
                {
                    "test": short,
                    "x": value if axis == "x" else None,
                    "y": value if axis == "y" else None,
                    "label": f"review: {metric} = {value:g} {unit}",
                }
            )
    return pl.DataFrame(rows, schema=schema)


def figure_inputs(rnd: Replay, zer: Replay) -> dict[str, pl.DataFrame]:
    """The main figure's frames from the incompressible (``rnd``) and compressible (``zer``)
    replays: ``curves`` (one row per loop and write test, tests in the order the loop runs
    them — CrystalDiskMark's seq, 512K, 4K, 4K QD32), the incompressible curves' fitted
    ``segments`` and ``breakpoints``, and the review's ``published`` marks."""
    order = procedure([rnd, zer], variants=("incompressible", "compressible"))
    curves = in_order(
        pl.concat([_loops(rnd, "incompressible"), _loops(zer, "compressible")]), "test", order
    )
    inc = curves.filter(pl.col("data") == "incompressible")
    segs, bps = [], []
    for (test,), part in inc.group_by("test", maintain_order=True):
        seg, bp = _segments(part, test)
        segs.append(seg)
        bps.append(bp)
    return {
        "curves": curves,
        "segments": pl.concat(segs),
        "breakpoints": pl.concat(bps),
        "published": published_marks(curves["test"].unique(maintain_order=True).to_list()),
    }


def main_figure(inputs: dict[str, pl.DataFrame]) -> alt.LayerChart | alt.FacetChart:
    """Write speed against GB written per test (:func:`figure_inputs`' frames): the replayed
    curves, their change points and the review's knees and levels — the report's first
    Puget chart and the README's picture."""
    return figures.performance_vs_written(
        inputs["curves"],
        x="gb_written_full",
        y="write_mbps",
        test="test",
        data="data",
        segments=inputs["segments"],
        breakpoints=inputs["breakpoints"],
        published=inputs["published"],
    )


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    rnd = replay(NAME, preset=PRESET, scale=scale, progress=progress, data="random")
    zer = replay(NAME, preset=PRESET, scale=scale, progress=progress, data="zeros")
    inputs = figure_inputs(rnd, zer)
    curves, segments, breakpoints = inputs["curves"], inputs["segments"], inputs["breakpoints"]
    found = []
    for test in curves.filter(pl.col("data") == "incompressible")["test"].unique(
        maintain_order=True
    ):
        bp = breakpoints.filter(pl.col("test") == test)
        where = ", ".join(f"{fmt_cell(v)} GB" for v in bp["x"]) or "none"  # as in the tables
        found.append(f"{test}: {where}")
    s = Section(
        "Puget Systems — Intel 520 under a CrystalDiskMark loop",
        [
            "The review ran CrystalDiskMark over and over on an Intel 520 120GB (SandForce SF-2281) "
            "from a secure erase until about 1.8 TB had been written, with incompressible and with "
            "compressible data, and watched each test's speed against the data written.",
            f"Here the same loop runs on the simulated {PRESET} shrunk by {scale}; GB written "
            "are quoted at the review drive's scale (replayed bytes divided by the scale), "
            "speeds as measured; one point per loop, CrystalDiskMark's best pass. Change "
            "points in the incompressible curves (the fit the comparison table checks): "
            + "; ".join(found)
            + ". The review saw speed fall after about 40 GB and level off "
            "after about 380 GB at about 160 MB/s: its knees and levels are drawn as purple "
            "dotted rules beside the replayed curves and fitted change points.",
        ],
        procedure=procedure([rnd, zer], variants=("incompressible", "compressible")),
    )
    s.charts.append(("performance vs written", main_figure(inputs)))
    summary = curves.group_by("test", "data", maintain_order=True).agg(
        pl.col("write_mbps").max().alias("max_mbps"), pl.col("write_mbps").mean().alias("avg_mbps")
    )
    s.charts.append(("max and average", figures.max_avg_bars(summary)))
    s.tables.append(
        (
            "segments (incompressible, per test; GB at review scale, level = mean MB/s of the "
            "loops, lo/hi = slowest/fastest loop)",
            segments,
        )
    )
    cmp = compare_part(s, rnd.compare(other=zer, seeds=SEEDS))
    return s, cmp
