"""A progress callback that presses Ctrl-C: how the tests interrupt a run mid-way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def ctrl_c_on_call(
    n: int, inner: Callable[[dict], Any] | None = None
) -> tuple[Callable[[dict], None], list[dict]]:
    """``(callback, rows)``: the callback hands each row to ``inner`` (if any), keeps it in
    ``rows`` and raises ``KeyboardInterrupt`` on its ``n``-th call."""
    rows: list[dict] = []

    def cb(row: dict) -> None:
        if inner is not None:
            inner(row)
        rows.append(row)
        if len(rows) == n:
            raise KeyboardInterrupt

    return cb, rows
