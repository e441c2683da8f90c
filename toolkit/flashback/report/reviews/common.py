"""What every review section shares: the replay call, the compare table and its chart."""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from flashback import figures
from flashback.errors import AnalysisError
from flashback.replay.api import Replay
from flashback.replay.api import replay as run_replay
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


_COUNTER = re.compile(r"\d{2,}")


def procedure(replays: list[Replay], *, variants: tuple[str, ...] = ()) -> list[list[str]]:
    """What a section's charts may show, in the order the replays ran it: one list of labels
    per step — its name, the parts of its name, its ``condition``, ``test`` and ``pattern``
    — after one list per variant (one replay each, e.g. ``incompressible`` then
    ``compressible``). Step names (and parts) with a loop or round counter (two or more
    digits, e.g. ``cdm_loop_0003``) are left out — charts draw loops and rounds as points, not
    categories — and so are steps that add no label not seen before."""
    out = [[v] for v in variants]
    seen = set(variants)
    for rep in replays:
        st = rep.steps
        if st.is_empty():
            continue
        cols = [c for c in ("condition", "test", "pattern") if c in st.columns]
        for row in st.select("step", *cols).iter_rows():
            names = [v for v in (row[0], *row[0].split("/")) if not _COUNTER.search(v)]
            labels = list(dict.fromkeys(v for v in (*names, *row[1:]) if isinstance(v, str) and v))
            if not seen.issuperset(labels):
                out.append(labels)
                seen.update(labels)
    return out


def in_order(frame: pl.DataFrame, col: str, order: list[list[str]]) -> pl.DataFrame:
    """``frame`` stably sorted by the first step of ``order`` (:func:`procedure`) naming
    ``col``'s value (values it does not name last): figures show categories in the order
    they first appear."""
    rank: dict[str, int] = {}
    for i, labels in enumerate(order):
        for v in labels:
            rank.setdefault(v, i)
    key = (
        pl.col(col).cast(pl.String).replace_strict(rank, default=len(order), return_dtype=pl.Int64)
    )
    return frame.sort(key, maintain_order=True)


def runs(rep: Replay) -> pl.DataFrame:
    """The replay's run steps (no erase/discard/idle rows)."""
    st = rep.steps
    return st.filter(pl.col("kind") == "run") if st.height else st
