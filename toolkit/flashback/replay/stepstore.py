"""A saved replay's step records as one column table (``steps.columns``, a Parquet file).

Each step record is a nested dict (its labels, the step capture's metadata). Stored as one
JSON object per step, a Puget replay's steps took 58x its intervals file: every step repeated
the key names, and values that another field or the previous step already holds (the drive's
counters at the start of a step are the ones at the end of the step before). Here every leaf
path is a column, and a column that mostly repeats another column (of the same step, or of
the previous step) stores only the cells where it differs, so each value is stored once and
the others refer to it. Integer columns that count up are stored as differences. Parquet's
dictionary and run-length encoding and zstd do the rest.

:func:`encode` gives the table and the column descriptions ``replay.json`` keeps;
:func:`decode` gives back the very same step records (the same dicts, values and types).
"""

from __future__ import annotations

import json
from typing import Any, Literal, TypedDict

import numpy as np
import polars as pl

from flashback.replay.steppack import packed, unpacked

#: ``replay.json``'s ``steps_table.format`` for this layout.
FORMAT = "flashback-steps/1"
#: The kinds of column: a Parquet type each, ``json`` for anything else (lists, nulls,
#: mixed types, empty objects, integers beyond 64 bits) as JSON text.
#: ``pairs``: a list of [int, int] (a latency histogram's buckets and counts), stored as one
#: list of integers, the first of each pair as differences, then the second of each pair.
KINDS = ("bool", "int", "float", "str", "pairs", "json")
_DTYPES: dict[str, pl.DataType | type[pl.DataType]] = {
    "bool": pl.Boolean,
    "int": pl.Int64,
    "float": pl.Float64,
    "str": pl.String,
    "pairs": pl.List(pl.Int64),
    "json": pl.String,
}
#: A column that refers to another is used when at least this share of its rows match it.
_REF_SHARE = 0.5


class _Absent:
    """A step without this leaf (distinct from a ``null`` value)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


class StepTableError(ValueError):
    """The table or its column descriptions are not what :func:`encode` writes."""


class _Node:
    """A key path's place in the tree of every step's keys: its column (the step's value, or
    :data:`ABSENT`) when some step has a leaf there, and the keys below it."""

    __slots__ = ("values", "children")

    def __init__(self) -> None:
        self.values: list[Any] | None = None
        self.children: dict[str, _Node] = {}


def _walk(d: dict[str, Any], node: _Node, row: int, n: int, order: list[Any]) -> None:
    for k, v in d.items():
        child = node.children.get(k)
        if child is None:
            child = node.children[k] = _Node()
        if isinstance(v, dict) and v:
            _walk(v, child, row, n, order)
            continue
        if child.values is None:
            child.values = [ABSENT] * n
            order.append(child)
        child.values[row] = v


def _paths(node: _Node, prefix: tuple[str, ...], out: dict[int, tuple[str, ...]]) -> None:
    for k, child in node.children.items():
        out[id(child)] = (*prefix, k)
        _paths(child, (*prefix, k), out)


def _kind(values: list[Any]) -> str:
    present = [v for v in values if v is not ABSENT]
    types = {type(v) for v in present}
    if types == {bool}:
        return "bool"
    if types == {int} and all(-(2**63) <= v < 2**63 for v in present):
        return "int"
    if types == {float}:
        return "float"
    if types == {str}:
        return "str"
    if types == {list} and all(_is_pairs(v) for v in present):
        return "pairs"
    return "json"


def _is_pairs(v: list[Any]) -> bool:
    return all(
        type(p) is list
        and len(p) == 2
        and type(p[0]) is int
        and type(p[1]) is int
        and -(2**63) <= p[0] < 2**63
        and -(2**63) <= p[1] < 2**63
        for p in v
    )


def _pairs_cell(v: list[list[int]]) -> list[int]:
    a = np.array([p[0] for p in v], dtype=np.int64)
    return [*np.diff(a, prepend=np.int64(0)).tolist(), *(p[1] for p in v)]


def _pairs_value(cell: list[int]) -> list[list[int]]:
    if len(cell) % 2:
        raise StepTableError("a list of pairs has an odd length")
    n = len(cell) // 2
    firsts = np.cumsum(np.array(cell[:n], dtype=np.int64), dtype=np.int64).tolist()
    return [[a, b] for a, b in zip(firsts, cell[n:])]


def _series(name: str, kind: str, values: list[Any]) -> pl.Series:
    cells: list[Any]
    if kind == "json":
        dump = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
        cells = [None if v is ABSENT else dump(v) for v in values]
    elif kind == "pairs":
        cells = [None if v is ABSENT else _pairs_cell(v) for v in values]
    else:
        cells = [None if v is ABSENT else v for v in values]
    return pl.Series(name, cells, dtype=_DTYPES[kind])


def _key(s: pl.Series) -> pl.Series:
    """Cells compared bit for bit (a float's bits, so -0.0 is not 0.0 and NaN is NaN)."""
    if s.dtype == pl.Float64:
        bits = s.fill_null(0.0).to_numpy().view(np.int64)
        return pl.Series(bits).scatter(s.is_null().arg_true(), None)
    return s


def encode(steps: list[dict[str, Any]]) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """The step records (JSON-able dicts) as a table, and its column descriptions: per column
    its leaf ``path`` (the keys from the step record down), ``kind`` (:data:`KINDS`), ``ref``
    (``None``, or ``{"col": j, "lag": 0|1}``: cells left null are column ``j``'s cell of the
    same step (lag 0) or of the step before (lag 1); with ``"add": true`` this column's
    previous cell plus column ``j``'s previous cell), ``delta`` (stored as differences from
    the step before) and ``decimals`` (a float column stored as integers × 10^-decimals).
    Keys at their default (no ``ref``, ``delta`` false, no ``decimals``) are left out.

    Every JSON-able value has a kind (``json`` at worst).
    """
    n = len(steps)
    root = _Node()
    order: list[Any] = []
    for row, step in enumerate(steps):
        _walk(step, root, row, n, order)
    names: dict[int, tuple[str, ...]] = {}
    _paths(root, (), names)
    columns = []
    for i, node in enumerate(order):
        kind = _kind(node.values)
        columns.append((i, kind, _series(f"c{i}", kind, node.values)))
    specs: list[dict[str, Any]] = [
        {"path": list(names[id(node)]), "kind": kind, "ref": None, "delta": False, "decimals": None}
        for node, (_, kind, _) in zip(order, columns)
    ]
    data: list[pl.Series] = [col for _, _, col in columns]
    # stored columns a later one may refer to: (index, kind, cells compared, cells)
    plain: list[tuple[int, str, pl.Series, pl.Series]] = []
    # the sparsest first: a column present in fewer steps is stored, and a fuller one that
    # repeats it stores only the steps where it differs (or where the other has no value)
    for i, kind, col in sorted(columns, key=lambda c: len(c[2]) - c[2].null_count()):
        spec = specs[i]
        best = _best_ref(col, kind, plain)
        if best is not None:
            spec["ref"], same = best
            data[i] = pl.select(pl.when(same).then(None).otherwise(col)).to_series().alias(col.name)
        else:
            plain.append((i, kind, _key(col), col))
            data[i], spec["decimals"], spec["delta"] = packed(col, kind)
    # replay.json keeps only what differs from the defaults (no reference, not packed)
    brief = [
        {k: v for k, v in spec.items() if k not in _DEFAULTS or v != _DEFAULTS[k]} for spec in specs
    ]
    # (steps without a single leaf give a table without columns, and its height is lost)
    return pl.DataFrame(data), brief


def _best_ref(
    col: pl.Series, kind: str, plain: list[tuple[int, str, pl.Series, pl.Series]]
) -> tuple[dict[str, Any], pl.Series] | None:
    """The reference to a stored column this column's cells repeat most often, with the mask
    of the rows that match; ``None`` when none matches :data:`_REF_SHARE` of the rows.
    References: the other's cell in the same step (lag 0) or the step before (lag 1), or
    for floats this column's previous cell plus the other's previous cell (``add``: a start
    time that is the previous start plus the previous duration). A row where this column is
    absent must have the reference absent too (a null cell means "as the reference")."""
    if len(col) < 2:
        return None
    key = _key(col)
    absent = col.is_null()
    best = None
    for j, other_kind, other_key, other in plain:
        if other_kind != kind:
            continue
        candidates = [({"col": j, "lag": 0}, other_key), ({"col": j, "lag": 1}, other_key.shift(1))]
        if kind == "float":
            candidates.append(
                ({"col": j, "lag": 1, "add": True}, _key(col.shift(1) + other.shift(1)))
            )
        for ref, cells in candidates:
            same = key.eq_missing(cells)
            if (absent & ~same).any():
                continue
            n = int(same.sum())
            if n >= _REF_SHARE * len(col) and (best is None or n > best[1].sum()):
                best = (ref, same)
    return best


#: What a column description that leaves a key out means.
_DEFAULTS = {"ref": None, "delta": False, "decimals": None}


class ParquetOptions(TypedDict):
    """The keywords of ``pl.DataFrame.write_parquet`` the step table sets."""

    compression: Literal["zstd"]
    compression_level: int
    row_group_size: int
    data_page_size: int
    statistics: bool


#: The parameters a saved replay's step table is written with (one page per column: the
#: table is small, and zstd finds repeats across all of a column's steps).
WRITE_OPTIONS: ParquetOptions = {
    "compression": "zstd",
    "compression_level": 22,
    "row_group_size": 1 << 30,
    "data_page_size": 1 << 30,
    "statistics": False,
}


def check_specs(specs: Any, *, count: Any) -> list[dict[str, Any]]:
    """Checks column descriptions read from ``replay.json`` before anything is decoded;
    returns them with the keys left out filled in.

    Raises:
        StepTableError: not a list of what :func:`encode` writes (names what is wrong).
    """
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise StepTableError("'count' is not a step count")
    if not isinstance(specs, list):
        raise StepTableError("'columns' is not a list")
    if not all(isinstance(s, dict) and {"path", "kind"} <= set(s) for s in specs):
        raise StepTableError("a column description has no path or kind")
    specs = [{**_DEFAULTS, **s} for s in specs]
    for i, s in enumerate(specs):
        if set(s) != {"path", "kind", "ref", "delta", "decimals"}:
            raise StepTableError(f"column {i} is not a column description")
        path = s["path"]
        if not isinstance(path, list) or not path or not all(isinstance(k, str) for k in path):
            raise StepTableError(f"column {i}'s path is not a list of keys")
        if s["kind"] not in KINDS or not isinstance(s["delta"], bool):
            raise StepTableError(f"column {i}'s kind or delta is not one written by flashback")
        d = s["decimals"]
        if d is not None and (type(d) is not int or not 0 <= d <= 9 or s["kind"] != "float"):
            raise StepTableError(f"column {i}'s decimals are not those of a float column")
        numeric = s["kind"] == "int" or d is not None
        if (s["delta"] or d is not None) and (not numeric or s["ref"] is not None):
            raise StepTableError(f"column {i} is packed but is not a stored number")
        ref = s["ref"]
        if ref is None:
            continue
        ok = (
            isinstance(ref, dict)
            and set(ref) in ({"col", "lag"}, {"col", "lag", "add"})
            and type(ref["col"]) is int
            and ref["lag"] in (0, 1)
            and type(ref["lag"]) is int
            and 0 <= ref["col"] < len(specs)
            and ref.get("add", True) is True
            and ("add" not in ref or (ref["lag"] == 1 and s["kind"] == "float"))
        )
        if not ok or not isinstance(specs[ref["col"]], dict) or specs[ref["col"]].get("ref"):
            raise StepTableError(f"column {i} refers to no stored column")
        if specs[ref["col"]].get("kind") != s["kind"]:
            raise StepTableError(f"column {i} refers to a column of another kind")
    return specs


def decode(table: pl.DataFrame, specs: list[dict[str, Any]], *, count: int) -> list[dict]:
    """The step records :func:`encode` was given. ``specs`` must have passed
    :func:`check_specs`.

    Raises:
        StepTableError: the table does not match its descriptions (a missing column, another
            type, another number of rows, a cell that is not JSON, two leaves on one path).
    """
    if table.width != len(specs) or (specs and table.height != count):
        raise StepTableError(f"the table has {table.height} rows and {table.width} columns")
    cols: list[pl.Series] = []
    for i, s in enumerate(specs):
        name = f"c{i}"
        dtype = pl.Int64 if s["decimals"] is not None else _DTYPES[s["kind"]]
        if name not in table.columns or table[name].dtype != dtype:
            raise StepTableError(f"column {name} is missing or not of kind {s['kind']}")
        cols.append(unpacked(table[name], s))
    for i, s in enumerate(specs):
        ref = s["ref"]
        if ref is None or not count:
            continue
        other = cols[ref["col"]]
        if ref.get("add"):
            cells = _running(cols[i].to_list(), other.to_list())
            cols[i] = pl.Series(cols[i].name, cells, dtype=pl.Float64)
        else:
            cols[i] = cols[i].fill_null(other.shift(1) if ref["lag"] else other)
    steps: list[dict[str, Any]] = [{} for _ in range(count)]
    for s, col in zip(specs, cols):
        path, kind = s["path"], s["kind"]
        for row, v in zip(steps, col.to_list()):
            if v is None:
                continue
            if kind == "json":
                try:
                    v = json.loads(v)
                except (ValueError, RecursionError):
                    raise StepTableError("a cell is not JSON") from None
            elif kind == "pairs":
                v = _pairs_value(v)
            _put(row, path, v)
    return steps


def _running(stored: list[Any], other: list[Any]) -> list[Any]:
    """Cells of an ``add`` column: a stored cell, else the previous cell plus the other
    column's previous cell (absent when either is)."""
    out = list(stored)
    for i in range(1, len(out)):
        if out[i] is None and out[i - 1] is not None and other[i - 1] is not None:
            out[i] = out[i - 1] + other[i - 1]
    return out


def _put(row: dict[str, Any], path: list[str], value: Any) -> None:
    d = row
    for k in path[:-1]:
        d = d.setdefault(k, {})
        if not isinstance(d, dict):
            raise StepTableError(f"two values are stored on the path {'/'.join(path)}")
    if path[-1] in d:
        raise StepTableError(f"two values are stored on the path {'/'.join(path)}")
    d[path[-1]] = value
