"""What every review section shares: the replay call, the compare table and its chart."""

from __future__ import annotations

from typing import Any

import polars as pl

from flashback import figures
from flashback.errors import AnalysisError
from flashback.replay.api import replay as run_replay
from flashback.replay.base import Replay
from flashback.report.html import Section


#: Seeds every review's comparison is replayed with: each row shows its spread over them.
SEEDS = 3


def sim_target(preset: str, scale: str) -> str:
    """``sim:<preset>?scale=<scale>`` — the review's drive shrunk by ``scale``."""
    from flashback.targets import sim_spec

    return sim_spec(preset, {"scale": scale})


#: replays run since the last :func:`take_replays` (the report prints each one's
#: conformance line beside its section)
_REPLAYED: list[Replay] = []


def take_replays() -> list[Replay]:
    """The replays run since the last call, oldest first; the list is emptied."""
    out = list(_REPLAYED)
    _REPLAYED.clear()
    return out


def replay(name: str, *, preset: str, scale: str, progress: bool, **params: Any) -> Replay:
    """Replays ``name`` on the review's preset shrunk by ``scale``, procedure scaled alike."""
    rep = run_replay(
        name, target=sim_target(preset, scale), scale=scale, progress=progress, **params
    )
    _REPLAYED.append(rep)
    return rep


def compare_part(
    section: Section, cmp: pl.DataFrame, *, name: str = "published vs replayed"
) -> pl.DataFrame:
    """Adds the compare table (every row, its ``status`` and note) and the relative-error chart
    of the rows that compare a published number with a replayed one (documented-not-modelled
    rows listed under it with their reason)."""
    from flashback.replay.compare import TABLE_COLUMNS

    table = cmp.select([c for c in TABLE_COLUMNS if c in cmp.columns])
    # the spread over seeds is shown where some row has one
    spread = [c for c in ("replayed_lo", "replayed_hi") if c in table.columns]
    if spread and table.select(pl.col(spread[0]).is_null().all()).item():
        table = table.drop(spread)
    try:  # compare_errors picks the rows it draws, and refuses a frame with none
        section.charts.append((name, figures.compare_errors(cmp)))
    except AnalysisError:
        pass
    section.tables.append((name, table))
    return table


def runs(rep: Replay) -> pl.DataFrame:
    """The replay's run steps (no erase/discard/idle rows)."""
    st = rep.steps
    return st.filter(pl.col("kind") == "run") if st.height else st
