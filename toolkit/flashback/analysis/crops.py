"""CROPS: every optimal segmentation for penalties in ``[pen_min, pen_max]`` (Haynes, Eckley
& Fearnhead 2017), with as few searches as there are distinct segmentations (plus one)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import polars as pl


def crops(
    signal: np.ndarray,
    *,
    search: Callable[[float], list[int]],
    pen_min: float,
    pen_max: float,
    max_searches: int = 60,
) -> pl.DataFrame:
    """Runs ``search(pen)`` (a penalised search returning segment end indices) across the
    penalty interval and returns one row per distinct segmentation: ``penalty`` (the smallest
    penalty tried that gives it), ``n_changes``, ``cost`` (unpenalised L2) and ``ends``.

    Raises:
        ValueError: ``pen_min`` is not below ``pen_max`` or is negative.
    """
    from flashback.analysis.pelt import l2_cost

    if not (0 <= pen_min < pen_max):
        raise ValueError(f"need 0 <= pen_min < pen_max, got {pen_min} and {pen_max}")
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
        q_lo, q_hi = l2_cost(signal, b_lo), l2_cost(signal, b_hi)
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
                "cost": l2_cost(signal, ends),
                "ends": list(ends),
            }
    return pl.DataFrame(list(rows.values())).sort("penalty")
