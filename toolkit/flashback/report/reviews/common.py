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
    "status",
    "note",
]


def sim_target(preset: str, scale: str) -> str:
    """``sim:<preset>?scale=<scale>`` — the review's drive shrunk by ``scale``."""
    from flashback.targets import sim_spec

    return sim_spec(preset, {"scale": scale})


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
    """Counts for the summary: published numbers compared with replayed ones, how many are
    within tolerance, their median |relative error|, and the documented numbers the model
    does not reproduce. Procedure settings echoed back (a duration, a span) are not counted:
    they check the replay, not the drive."""
    from flashback.replay.compare import COMPARED, UNMODELLED

    c = cmp.filter(pl.col("status").is_in(COMPARED))
    within = c.filter(pl.col("status") == "within tolerance").height
    med = c.select(pl.col("rel_error").abs().median()).item() if c.height else None
    return {
        "compared": c.height,
        "within_tolerance": within,
        "median_abs_rel_error_pct": None if med is None else 100 * med,
        "documented_not_modelled": cmp.filter(pl.col("status") == UNMODELLED).height,
    }


def runs(rep: fb.Replay) -> pl.DataFrame:
    """The replay's run steps (no erase/discard/idle rows)."""
    st = rep.steps
    return st.filter(pl.col("kind") == "run") if st.height else st
