"""AnandTech: TRIM validation on an Intel 530 (clean, after torture, after TRIM)."""

from __future__ import annotations

import polars as pl

from flashback import figures
from flashback.published import published as published_rows
from flashback.report.html import Section
from flashback.report.reviews.anandtech_consistency import PRESET
from flashback.report.reviews.common import SEEDS, compare_part, procedure, replay, runs


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    rep = replay("anandtech-trim-validation", preset=PRESET, scale=scale, progress=progress)
    st = runs(rep).filter(pl.col("condition").is_in(["clean", "after_torture", "after_trim"]))
    frame = st.select(
        pl.lit(PRESET).alias("drive"), "condition", pl.col("write_mbps").alias("value")
    )
    s = Section(
        "AnandTech — TRIM validation",
        [
            "Sequential write speed clean, after an hour of 4 KiB random writes, and after TRIM: "
            "the review used it to check whether TRIM restores a tortured drive.",
            f"Replayed on the simulated {PRESET} shrunk by {scale}.",
        ],
        procedure=procedure([rep]),
    )
    # the review's three AS-SSD writes as ticks on the replayed bars (its "torture" state is
    # the replay's after_torture step)
    published = published_rows(test="as_ssd_seq_write", metric="avg_mbps").with_columns(
        pl.col("condition").replace("torture", "after_torture")
    )
    chart = figures.condition_bars(frame, published=published, title="sequential write")
    s.charts.append(("clean, torture, trim", chart))
    return s, compare_part(s, rep.compare(sensitivity=True, seeds=SEEDS))
