"""CROPS: every optimal segmentation for penalties in ``[pen_min, pen_max]`` (Haynes, Eckley
& Fearnhead 2017), with as few searches as there are distinct segmentations (plus one)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from flashback.errors import AnalysisError


def crops(
    signal: np.ndarray,
    *,
    search: Callable[[float], list[int]],
    pen_min: float,
    pen_max: float,
    cost: str = "l2",
    max_searches: int = 60,
) -> pl.DataFrame:
    """Runs ``search(pen)`` (a penalised search returning segment end indices) across the
    penalty interval and returns one row per distinct segmentation: ``penalty`` (the smallest
    penalty tried that gives it), ``n_changes``, ``cost`` (unpenalised, under ``cost``, the
    cost the search minimises) and ``ends``.

    Raises:
        AnalysisError: ``pen_min`` is not below ``pen_max`` or is negative.
    """
    from flashback.analysis.pelt import segmentation_cost

    def seg_cost(sig: np.ndarray, ends: list[int]) -> float:
        return segmentation_cost(sig, ends, cost)

    if not (0 <= pen_min < pen_max):
        raise AnalysisError(
            f"penalty_path needs 0 <= pen_min < pen_max, got pen_min={pen_min} and "
            f"pen_max={pen_max}"
        )
    found: dict[float, list[int]] = {}

    def run(p: float) -> list[int]:
        found[p] = search(p)
        return found[p]

    run(pen_min)
    run(pen_max)
    todo = [(pen_min, pen_max)]
    while todo and len(found) < max_searches:
        lo, hi = todo.pop()
        b_lo, b_hi = found[lo], found[hi]
        m_lo, m_hi = len(b_lo) - 1, len(b_hi) - 1
        if m_lo <= m_hi + 1:
            continue
        q_lo, q_hi = seg_cost(signal, b_lo), seg_cost(signal, b_hi)
        p = (q_hi - q_lo) / (m_lo - m_hi)
        if not (lo < p < hi):
            continue
        b = run(p)
        if len(b) - 1 != m_hi:
            todo += [(lo, p), (p, hi)]
    rows = {}
    for p in sorted(found):
        ends = found[p]
        key = tuple(ends)
        if key not in rows:
            rows[key] = {
                "penalty": p,
                "n_changes": len(ends) - 1,
                "cost": seg_cost(signal, ends),
                "ends": list(ends),
            }
    return pl.DataFrame(list(rows.values())).sort("penalty")
