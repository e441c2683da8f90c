"""The main job: replay every review on its simulated drive, analyse, write the report."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

from flashback.replay.compare import tally
from flashback.replay.procedures import REVIEWS
from flashback.report.html import Section, write_report
from flashback.report.reviews.common import SEEDS, take_replays


def section_builder(key: str) -> Callable[..., tuple[Section, pl.DataFrame]]:
    """The report section builder of review ``key``: ``build`` in
    ``flashback/report/reviews/<module>.py`` (see :mod:`flashback.replay.procedures`).

    Raises:
        ModuleNotFoundError: ``key`` is not a registered review's name (callers check first).
    """
    module = key.replace("-", "_")
    return importlib.import_module(f"flashback.report.reviews.{module}").build  # type: ignore[no-any-return]


def build_demo(
    out_dir: str | Path = "out",
    *,
    quick: bool = False,
    only: list[str] | None = None,
    progress: bool = True,
) -> tuple[Path, pl.DataFrame]:
    """Runs every review replay, writes ``out_dir/report.html`` (+ figures), returns the path
    and a summary frame (per review: numbers compared, within tolerance, median error,
    documented but not modelled).

    Raises:
        ParameterError: a name in ``only`` is not a review's (nothing is run or written).
    """
    keys = [r.name for r in REVIEWS]
    unknown = [name for name in only or () if name not in keys]
    if unknown:
        from flashback.errors import ParameterError

        raise ParameterError(f"{unknown[0]!r} is not a review's name; pick from: {', '.join(keys)}")
    from flashback.replay.headline import headline, headline_compared

    sections, rows, cmps, compared = [], [], [], 0
    for r in REVIEWS:
        if only and r.name not in only:
            continue
        t0 = time.monotonic()
        scale = r.quick_scale if quick else r.scale
        take_replays()
        section, cmp = section_builder(r.name)(scale=scale, progress=progress)
        replays = take_replays()  # every replay of a review is of the review's one protocol
        section.conformance = [
            f"{rep.meta['protocol']}: {rep.conformance()['line']}" for rep in replays
        ]
        sections.append(section)
        cmps.append(cmp)
        compared += headline_compared(replays[0].protocol, cmp)
        rows.append(
            {
                "review": r.name,
                "scale": scale,
                "seconds": round(time.monotonic() - t0, 1),
                **tally(cmp),
                "headline": headline(replays[0].protocol, cmp),
            }
        )
    if rows:
        counts = tally(pl.concat(cmps, how="diagonal_relaxed"))
        below = counts["below_held_scale"]
        if below:
            reviews = sum(1 for r in rows if r["below_held_scale"])
            counts["not_compared"] = (
                f"not compared: {below} published numbers of {reviews} "
                f"review{'s' if reviews != 1 else ''} replayed below the smallest scale their "
                "rows are held at"
            )
        rows.append(
            {
                "review": "total",
                "scale": "",
                "seconds": round(sum(r["seconds"] for r in rows), 1),
                **counts,
                "headline": f"{compared} of {len(rows)} reviews compare their headline number",
            }
        )
    summary = pl.DataFrame(rows)
    overview = Section(
        "Summary",
        [
            "Each review's procedure was replayed on a simulated drive configured like the review's "
            "drive and shrunk by the given scale; the tables compare every published number the "
            "replay can check. 'compared' counts published numbers set against a replayed one "
            "(settings of a procedure echoed back are not counted), a published number the "
            "replay did not produce (a knee its curve lacks) among them, as a miss; "
            "'documented_not_modelled' counts published numbers that need a mechanism a review "
            "documents and the replayed drive lacks — each row names it and the review, and a "
            "row whose mechanism the drive has is compared. A review replayed below the "
            "smallest scale at which the tests hold its rows (its protocol's min_held_scale: "
            "1/64, 1/16 for AnandTech's TRIM validation) compares nothing: "
            "'below_held_scale' counts its published numbers and 'not_compared' says so. "
            f"Every comparison is replayed with {SEEDS} seeds: 'replayed_lo'/'replayed_hi' give "
            "each row's spread, a row is within tolerance only if its whole spread is, and "
            "'borderline' if the spread straddles the tolerance. Effects (a drop, a recovery, "
            "a knee, a recovery) are compared as effects beside the levels. 'headline' sets each "
            "review's headline number beside the replayed one, or says why it cannot — no "
            "published number for the replayed drive, a number set beside a second replay, or "
            "none printed for it — a reason computed from the published numbers, not written "
            "per review; the last row totals every review. "
            "Rows with status 'sensitivity' replay a parameter the review does not state (an "
            "idle gap, a measurement length) at other plausible values, to show how much the "
            "replayed number hangs on it; they are never counted as matches.",
        ],
        tables=[("published vs replayed, per review", summary)],
    )
    path = write_report(
        [overview, *sections],
        out_dir,
        title="flashback — SSD reviews replayed",
        subtitle="Write cliffs, steady state, compression and TRIM, regenerated from the reviews' procedures.",
    )
    return path, summary
