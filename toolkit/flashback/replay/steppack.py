"""Numeric packing of a saved replay's step-table columns (:mod:`flashback.replay.stepstore`):
floats that are whole multiples of 10^-d stored as integers, integers that count up stored as
differences; undone bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl


def packed(col: pl.Series, kind: str) -> tuple[pl.Series, int | None, bool]:
    """A stored column packed: floats that are whole multiples of 10^-d (d ≤ 9; a time in
    nanoseconds) as those integers, and integers that count up as the differences between
    one step's value and the previous step's that has one. Returns the column, ``d`` (or
    ``None``) and whether it holds differences; :func:`unpacked` undoes it bit for bit."""
    decimals = None
    if kind == "float":
        present = col.drop_nulls().to_numpy()
        for d in range(10):
            scale = 10.0**d
            k = np.round(present * scale)
            if not np.all(np.abs(k) < 2.0**53):
                break
            ints = k.astype(np.int64)
            if np.array_equal(
                (ints.astype(np.float64) / scale).view(np.int64), present.view(np.int64)
            ):
                decimals = d
                col = pl.Series(col.name, [None] * len(col), dtype=pl.Int64).scatter(
                    col.is_not_null().arg_true(), ints
                )
                break
        if decimals is None:
            return col, None, False
    elif kind != "int":
        return col, None, False
    present = col.drop_nulls().to_numpy()
    if len(present) < 2:
        return col, decimals, False
    diff = np.diff(present, prepend=np.int64(0))  # wraps as the sum that undoes it does
    if len(np.unique(diff)) >= len(np.unique(present)):
        return col, decimals, False
    return col.clone().scatter(col.is_not_null().arg_true(), diff), decimals, True  # (in place)


def unpacked(col: pl.Series, spec: dict[str, Any]) -> pl.Series:
    present = col.is_not_null().arg_true()
    if spec["delta"]:
        col = col.clone().scatter(present, np.cumsum(col.drop_nulls().to_numpy(), dtype=np.int64))
    if spec["decimals"] is not None:
        values = col.drop_nulls().to_numpy().astype(np.float64) / 10.0 ** spec["decimals"]
        col = pl.Series(col.name, [None] * len(col), dtype=pl.Float64).scatter(present, values)
    return col
