"""Where each row of a capture begins and ends on its axes (x, seconds, bytes written): a
capture's cumulative columns are read at an interval's end, so a segment's start is the row
before it."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl

from flashback.analysis import frames

#: columns whose value on a row is where that row's interval *ends* (its start is the row before)
END_OF_INTERVAL = {
    "host_written_bytes": "write_bytes",
    "t_s": "interval_s",
    "nand_written_bytes": None,
}


def starts_x(df: pl.DataFrame, x: str, xs: np.ndarray) -> np.ndarray:
    """x at the *start* of each row. For end-of-interval columns (``host_written_bytes``,
    ``t_s``...) that is the previous row's x, the first row stepping back by its own increment
    (``write_bytes``, ``interval_s``); any other column (an index, a round label) labels its
    own row, so it is ``x`` itself."""
    if x not in END_OF_INTERVAL:
        return xs.astype(np.float64, copy=True)
    first = xs[0]
    inc = END_OF_INTERVAL[x]
    if inc and inc in df.columns:
        first = xs[0] - float(df.get_column(inc)[0] or 0)
    return np.concatenate([[first], xs[:-1]])


@dataclasses.dataclass(frozen=True)
class RowAxes:
    """x, and the bytes and seconds of the rows when the frame has them, at each row's start
    (``*0``) and end."""

    x0: np.ndarray
    t: np.ndarray | None
    t0: np.ndarray | None
    hb: np.ndarray | None
    hb0: np.ndarray | None

    @classmethod
    def of(cls, df: pl.DataFrame, x: str, xs: np.ndarray) -> RowAxes:
        t = frames.column(df, "t_s", role="t_s") if "t_s" in df.columns else None
        hb = (
            frames.column(df, "host_written_bytes", role="host_written_bytes")
            if "host_written_bytes" in df.columns
            else None
        )
        return cls(
            x0=starts_x(df, x, xs),
            t=t,
            t0=starts_x(df, "t_s", t) if t is not None else None,
            hb=hb,
            hb0=starts_x(df, "host_written_bytes", hb) if hb is not None else None,
        )
