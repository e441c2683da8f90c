"""The capture's column table, as the Rust core declares it (``native/src/capture/columns.rs``):
name, dtype, unit, nullable, kind and group of every column. Aggregations (rounds, windows,
datasets) take a column's kind from here, never from its name.

Kinds: ``counter`` (per interval: summed over a window), ``cumulative`` (a running total: take
differences), ``gauge`` (a level or rate: averaged, interval-weighted, or its extremes),
``label`` (a name; not aggregated). A column the table does not know (a hand-built frame's own
column) is treated as a gauge.
"""

from __future__ import annotations

from typing import Any

from flashback import _native

#: one dict per column, in file order: name, dtype (``f64``/``u64``/``str``), unit, nullable,
#: kind, group (``base``/``sim``/``drive``/``import``)
COLUMNS: tuple[dict[str, Any], ...] = tuple(_native.capture_columns())
_KIND = {c["name"]: c["kind"] for c in COLUMNS}
KINDS = ("counter", "cumulative", "gauge", "label")


def kind(name: str) -> str:
    """The kind of column ``name``: ``counter``, ``cumulative``, ``gauge`` or ``label``
    (``gauge`` for a column the table does not declare)."""
    return _KIND.get(name, "gauge")


def named(kind_: str) -> tuple[str, ...]:
    """The names of the table's columns of kind ``kind_``, in file order."""
    return tuple(c["name"] for c in COLUMNS if c["kind"] == kind_)
