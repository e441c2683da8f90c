"""Input validation and coercion: a Capture or a polars frame in, checked numpy columns out.

Every analysis goes through :func:`as_frame` and :func:`column`, so a bad input gets the same
one-sentence :class:`~flashback.errors.AnalysisError` everywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from flashback import columns
from flashback.errors import AnalysisError

#: running byte totals (the column table's cumulative columns in bytes): one that decreases
#: means captures were concatenated; the clock ``t_s`` is checked as a sorted axis instead
CUMULATIVE = tuple(
    c["name"] for c in columns.COLUMNS if c["kind"] == "cumulative" and c["unit"] == "B"
)


def as_frame(data: Any) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Returns ``(intervals, meta)`` from a :class:`~flashback.Capture`, a polars frame or a
    pandas frame (converted).

    Raises:
        AnalysisError: the input is none of these, or has no rows.
    """
    meta: dict[str, Any] = {}
    if hasattr(data, "intervals") and hasattr(data, "meta"):
        df, meta = data.intervals, dict(data.meta or {})
    elif isinstance(data, pl.DataFrame):
        df = data
    elif isinstance(data, pl.LazyFrame):
        df = data.collect()
    elif type(data).__name__ == "DataFrame" and hasattr(data, "to_dict"):
        df = pl.from_pandas(data)
    else:
        raise AnalysisError(
            f"cannot analyse a {type(data).__name__}; pass a Capture or a polars DataFrame"
        )
    if df.height == 0:
        raise AnalysisError("the frame has no rows; pass a capture with at least one interval")
    return df, meta


def column(df: pl.DataFrame, name: str, *, role: str = "y") -> np.ndarray:
    """The column ``name`` as float64, checked: present, numeric, no null/NaN/inf.

    Raises:
        AnalysisError: missing, non-numeric or non-finite values (names the first bad row).
    """
    if name not in df.columns:
        import difflib

        near = difflib.get_close_matches(name, df.columns, n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        raise AnalysisError(
            f"{role}={name!r} is not a column of the frame{hint}; name one of its columns"
        )
    s = df.get_column(name)
    if not s.dtype.is_numeric():
        raise AnalysisError(
            f"{role}={name!r} has type {s.dtype}, not numbers; pick a numeric column"
        )
    a = s.cast(pl.Float64).to_numpy(allow_copy=True).astype(np.float64, copy=False)
    bad = ~np.isfinite(a)
    if bad.any():
        i = int(np.argmax(bad))
        raise AnalysisError(
            f"{role}={name!r} has {int(bad.sum())} missing or non-finite values (first at row {i}); "
            "drop or fill them first"
        )
    return a


def check_x(x: np.ndarray, name: str) -> None:
    """Checks that an x column never goes backwards (cumulative bytes: never decreases).

    Raises:
        AnalysisError: the column decreases somewhere (names the row).
    """
    d = np.diff(x)
    if (d < 0).any():
        i = int(np.argmax(d < 0)) + 1
        if name in CUMULATIVE:
            raise AnalysisError(
                f"{name} decreases at row {i} ({x[i - 1]:.0f} -> {x[i]:.0f}) although it is "
                "cumulative; analyse one capture (or one step, with by=) at a time"
            )
        raise AnalysisError(
            f"x={name!r} is not sorted (row {i} is smaller than row {i - 1}); sort the frame by {name}"
        )


def need_rows(n: int, at_least: int, what: str) -> None:
    """Raises AnalysisError when fewer than ``at_least`` rows are available for ``what``."""
    if n < at_least:
        raise AnalysisError(
            f"{what} needs at least {at_least} intervals but got {n}; capture a longer run"
        )


def capacity_bytes(meta: dict[str, Any], override: float | None = None) -> float | None:
    """The drive's user capacity in bytes (for drive-fill units), or None when unknown."""
    if override is not None:
        return float(override)
    t = meta.get("target") or {}
    for key in ("size_bytes", "capacity_bytes"):
        v = t.get(key) if isinstance(t, dict) else None
        if v:
            return float(v)
    v = meta.get("capacity_bytes")
    return float(v) if v else None


def transformed(y: np.ndarray, transform: str | None, name: str) -> np.ndarray:
    """Applies ``transform`` (None or ``"log"``). Log clamps values <= 0 (stalls to zero) to
    0.1 % of the median so that a dead second does not become -inf.

    Raises:
        AnalysisError: unknown transform, or log of a series with no positive value.
    """
    if transform is None or transform == "none":
        return y
    if transform != "log":
        raise AnalysisError(f"transform={transform!r} is not known; use 'log' or None")
    pos = y[y > 0]
    if pos.size == 0:
        raise AnalysisError(f"cannot take the log of {name!r}: it has no positive value")
    floor = 1e-3 * float(np.median(pos))
    return np.log(np.maximum(y, floor))


def confidence_level(confidence: float) -> float:
    """The confidence level of an interval (0 < c < 1) from ``confidence=``.

    Raises:
        AnalysisError: not a number strictly between 0 and 1.
    """
    try:
        c = float(confidence)
    except (TypeError, ValueError):
        raise AnalysisError(f"confidence={confidence!r} is not a number") from None
    if not 0 < c < 1:
        raise AnalysisError(f"confidence must be between 0 and 1, got {confidence!r}")
    return c
