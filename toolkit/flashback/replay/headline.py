"""A review's headline number beside the replayed one (``Protocol.headline``)."""

from __future__ import annotations

from typing import Any

import polars as pl

from flashback.replay.compare import COMPARED


def headline(protocol: Any, cmp: pl.DataFrame) -> str:
    """The review's headline number beside the replayed one with its status, or why the
    replay cannot compare it (``Protocol.headline``).

    Raises:
        ReplayError: the protocol declares no headline, or its headline row is not in ``cmp``
            (a protocol must compare its headline or say why not).
    """
    from flashback.errors import ReplayError

    key = protocol.headline
    if isinstance(key, str):
        if not key:
            raise ReplayError(f"{protocol.name} declares no headline number nor why it has none")
        return f"not compared: {key}"
    test, condition, metric = key
    r = _headline_row(protocol, cmp)
    if r is None and protocol.pair_checks is not None:
        return (
            f"not compared here: {metric} needs a second replay (compare(other=...), see "
            f"{protocol.name}'s pair checks)"
        )
    if r is None:
        raise ReplayError(
            f"{protocol.name}'s headline {test}/{condition}/{metric} is not among its compare rows"
        )

    def fmt(v: float | None) -> str:
        return "—" if v is None else f"{v:.4g}"

    return (
        f"{metric} ({condition}): published {fmt(r['published'])}, replayed "
        f"{fmt(r['replayed'])} {r['unit']} — {r['status']}"
    )


def headline_compared(protocol: Any, cmp: pl.DataFrame) -> bool:
    """Whether ``cmp`` compares the protocol's headline number: its row is there with a
    status of :data:`COMPARED` (not documented-not-modelled, nor without a published or a
    replayed value)."""
    r = _headline_row(protocol, cmp)
    return r is not None and r["status"] in COMPARED


def _headline_row(protocol: Any, cmp: pl.DataFrame) -> dict[str, Any] | None:
    """The compare row of ``Protocol.headline`` (``None`` for a headline that is a reason, or
    a row ``cmp`` lacks)."""
    if isinstance(protocol.headline, str):
        return None
    test, condition, metric = protocol.headline
    sel = cmp.filter(
        (pl.col("test") == test) & (pl.col("condition") == condition) & (pl.col("metric") == metric)
    )
    return None if sel.is_empty() else sel.row(0, named=True)
