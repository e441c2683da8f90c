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
    """The published value for ``row`` and a note on where it came from."""
    if pub is None:
        return row["seed_value"], ""
    want = {"source": source, "drive": row["drive"], "metric": row["metric"]}
    want["condition"] = row["condition"]
    want.update(row["match"])
    sel = pub
    for col, value in want.items():
        if col in sel.columns and value is not None:
            sel = sel.filter(pl.col(col) == value)
    if sel.height == 0:
        if row["seed_value"] is None:
            return None, ""
        return row["seed_value"], "value read from the seed (no matching row in fb.published())"
    if "test" in sel.columns and sel.height > 1 and row["test"]:
        narrowed = sel.filter(pl.col("test") == row["test"])
        sel = narrowed if narrowed.height else sel
    value = sel["value"][0]
    note = "" if sel.height == 1 else f"{sel.height} published rows match; the first is used"
    return (None if value is None else float(value)), note


def compare(replay: Any, *, published: pl.DataFrame | None = None) -> pl.DataFrame:
    """Rows from the protocol's checks, with published values and relative errors."""
    proto = replay.protocol
    pub = published if published is not None else published_numbers()
    rows = []
    for r in proto.checks(replay):
        value, where = _lookup(pub, proto.source, r)
        rel = None
        if value not in (None, 0) and r["replayed"] is not None:
            rel = (r["replayed"] - value) / abs(value)
        within = None
        if r["reproducible"] and rel is not None and r["tolerance"] is not None:
            within = abs(rel) <= r["tolerance"]
        notes = [n for n in (r["note"], where) if n]
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
