"""X-bit labs: 4 KiB random writes fresh, after two fills, after idle, after TRIM (% of fresh)."""

from __future__ import annotations

import polars as pl

from flashback import figures
from flashback.published import published as published_rows
from flashback.report.html import Section
from flashback.report.reviews.common import SEEDS, compare_part, procedure, replay, runs

NAME = "xbit-pts-degradation"
PRESET = "intel-335-240g"


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    rep = replay(NAME, preset=PRESET, scale=scale, progress=progress)
    st = runs(rep).filter(pl.col("condition") != "fill")
    frame = st.select(
        pl.lit(PRESET).alias("drive"), "condition", pl.col("write_iops").alias("value")
    )
    s = Section(
        "X-bit labs — degradation relative to fresh",
        [
            "The review measured 4 KiB random-write speed on a fresh drive, after filling it twice, "
            "after 30 minutes idle and after TRIM, and quoted each as a share of the fresh speed.",
            f"Replayed on the simulated {PRESET} shrunk by {scale}.",
        ],
        procedure=procedure([rep]),
    )
    # the review's own share of fresh for the replayed drive as ticks on the replayed bars
    published = published_rows(
        source="x-bit", metric="relative_to_fresh_pct", drive=rep.meta["drive"]
    )
    order = tuple(frame["condition"].unique(maintain_order=True))
    chart = figures.relative_to_fresh(frame, order=order, published=published)
    s.charts.append(("relative to fresh", chart))
    return s, compare_part(s, rep.compare(sensitivity=True, seeds=SEEDS))
