"""Published vs replayed: the frame behind :meth:`Replay.compare`."""

from __future__ import annotations

from typing import Any

import polars as pl

COLUMNS = {
    "metric": pl.String,
    "condition": pl.String,
    "published": pl.Float64,
    "replayed": pl.Float64,
    "unit": pl.String,
    "rel_error": pl.Float64,
    "source": pl.String,
    "test": pl.String,
    "drive": pl.String,
    "tolerance": pl.Float64,
    "within_tolerance": pl.Boolean,
    "note": pl.String,
}


def published_numbers() -> pl.DataFrame | None:
    """``fb.published()`` when the published data set is installed, else ``None``."""
    try:
        import flashback

        fn = getattr(flashback, "published", None)
        if fn is None:
            return None
        frame = fn()
    except Exception:  # a broken or missing data set must not stop a comparison
        return None
    return frame if isinstance(frame, pl.DataFrame) and frame.height else None


def _lookup(pub: pl.DataFrame | None, source: str, row: dict[str, Any]) -> tuple[float | None, str]:
    """The published value for ``row`` (matched on source, drive, test, condition, metric)
    and a note on where it came from."""
    if pub is not None and pub.height:
        sel = pub.filter(
            (pl.col("source") == source)
            & (pl.col("test") == row["test"])
            & (pl.col("condition") == row["condition"])
            & (pl.col("metric") == row["metric"])
        )
        if row["drive"] is None:
            sel = sel.filter(pl.col("drive").is_null())
        else:
            sel = sel.filter(pl.col("drive") == row["drive"])
        if sel.height:
            note = (
                "" if sel.height == 1 else f"{sel.height} published rows match; the first is used"
            )
            return float(sel["value"][0]), note
    if row["seed_value"] is not None:
        return row["seed_value"], "value read from the seed (no matching row in fb.published())"
    return None, ""


def _within(row: dict[str, Any], value: float | None, rel: float | None) -> bool | None:
    if not row["reproducible"] or row["tolerance"] is None or value is None:
        return None
    if row["replayed"] is None:
        return False
    tol = row["tolerance"]
    if row["bound"] == "min":
        return row["replayed"] >= value * (1 - tol)
    if row["bound"] == "max":
        return row["replayed"] <= value * (1 + tol)
    return rel is not None and abs(rel) <= tol


def compare(
    replay: Any, *, published: pl.DataFrame | None = None, other: Any = None
) -> pl.DataFrame:
    """Rows from the protocol's checks, with published values and relative errors."""
    from flashback.errors import ReplayError

    proto = replay.protocol
    pub = published if published is not None else published_numbers()
    checks = proto.checks(replay)
    if other is not None:
        if other.meta.get("protocol") != proto.name:
            raise ReplayError(
                f"other= is a replay of {other.meta.get('protocol')!r}, not {proto.name!r}; "
                "pass a replay of the same protocol"
            )
        if proto.pair_checks is not None:
            checks += proto.pair_checks(replay, other)
    rows = []
    for r in checks:
        value, where = _lookup(pub, proto.source, r)
        rel = None
        if value not in (None, 0) and r["replayed"] is not None:
            rel = (r["replayed"] - value) / abs(value)
        within = _within(r, value, rel)
        notes = [n for n in (r["note"], where) if n]
        if r["bound"] != "value":
            notes.insert(
                0, f"the published number is a {'lower' if r['bound'] == 'min' else 'upper'} bound"
            )
        if not r["reproducible"]:
            notes.insert(0, "not reproducible by the model")
        rows.append(
            {
                "metric": r["metric"],
                "condition": r["condition"],
                "published": value,
                "replayed": r["replayed"],
                "unit": r["unit"],
                "rel_error": rel,
                "source": proto.source,
                "test": r["test"],
                "drive": r["drive"],
                "tolerance": r["tolerance"],
                "within_tolerance": within,
                "note": "; ".join(notes) or None,
            }
        )
    return pl.DataFrame(rows, schema=COLUMNS)
