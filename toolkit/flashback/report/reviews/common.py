"""What every review section shares: the replay call, the compare table and its chart."""

from __future__ import annotations

from typing import Any

import polars as pl

import flashback as fb
from flashback import figures
from flashback.report.html import Section

COMPARE_COLS = [
    "test",
    "metric",
    "condition",
    "published",
    "replayed",
    "unit",
    "rel_error",
    "within_tolerance",
    "note",
]


def sim_target(preset: str, scale: str) -> str:
    """``sim:<preset>?scale=<scale>`` — the review's drive shrunk by ``scale``."""
    return f"sim:{preset}?scale={scale}"


def replay(name: str, *, preset: str, scale: str, progress: bool, **params: Any) -> fb.Replay:
    """Replays ``name`` on the review's preset shrunk by ``scale``, procedure scaled alike."""
    return fb.replay(
        name, target=sim_target(preset, scale), scale=scale, progress=progress, **params
    )


def compare_part(
    section: Section, cmp: pl.DataFrame, *, name: str = "published vs replayed"
) -> pl.DataFrame:
    """Adds the compare table (and its relative-error chart when any number is checkable)."""
    cols = [c for c in COMPARE_COLS if c in cmp.columns]
    table = cmp.select(cols)
    checkable = cmp.filter(pl.col("published").is_not_null() & pl.col("replayed").is_not_null())
    if checkable.height:
        section.charts.append((name, figures.compare_errors(checkable)))
    section.tables.append((name, table))
    return table


def tally(cmp: pl.DataFrame) -> dict[str, Any]:
    """Counts for the summary: numbers compared, within tolerance, median |relative error|."""
    c = cmp.filter(pl.col("published").is_not_null() & pl.col("replayed").is_not_null())
    within = c.filter(pl.col("within_tolerance") == True).height  # noqa: E712
    med = c.select(pl.col("rel_error").abs().median()).item() if c.height else None
    return {
        "compared": c.height,
        "within_tolerance": within,
        "median_abs_rel_error_pct": None if med is None else 100 * med,
    }


def runs(rep: fb.Replay) -> pl.DataFrame:
    """The replay's run steps (no erase/discard/idle rows)."""
    st = rep.steps
    return st.filter(pl.col("kind") == "run") if st.height else st
