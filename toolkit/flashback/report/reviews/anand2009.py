"""AnandTech 2009: sequential reads and read latency, new vs used (Intel X25-M)."""

from __future__ import annotations

import polars as pl

from flashback import figures
from flashback.published import published as published_rows
from flashback.report.html import Section
from flashback.report.reviews.common import SEEDS, compare_part, procedure, replay, runs

NAME = "anand2009-new-vs-used"
PRESET = "intel-x25m-80g"


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    rep = replay(NAME, preset=PRESET, scale=scale, progress=progress)
    st = runs(rep).filter(pl.col("step").str.ends_with("seq_read"))
    frame = st.select(
        pl.lit("Intel X25-M").alias("drive"), "condition", pl.col("read_mbps").alias("value")
    )
    s = Section(
        "AnandTech 2009 — reads barely age",
        [
            "The 2009 article compared 2 MB sequential reads and queue-depth-3 read latency on new "
            "and used drives: reads lose little once a drive has been written all over.",
            f"Replayed on the simulated {PRESET} shrunk by {scale}.",
        ],
        procedure=procedure([rep]),
    )
    # the review's own new and used reads as ticks on the replayed bars
    published = published_rows(test="seq2m_read", metric="avg_mbps")
    s.charts.append(("new vs used", figures.new_vs_used(frame, published=published)))
    return s, compare_part(s, rep.compare(seeds=SEEDS))
