"""The five reviews' published numbers as one tidy polars frame.

The CSVs ship inside the package (``flashback/data/published/*.csv``; the repository's
``data/published/`` holds the README that documents schema and vocabularies, plus symlinks).

>>> import flashback as fb
>>> fb.published(drive="520", metric="max_mbps")  # doctest: +SKIP
"""

from __future__ import annotations

import functools
from importlib import resources

import polars as pl

from flashback.errors import ParameterError

#: Column names and dtypes of :func:`published`, in order.
SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String(),
    "publication": pl.String(),
    "drive": pl.String(),
    "capacity_gb": pl.Float64(),
    "controller": pl.String(),
    "test": pl.String(),
    "condition": pl.String(),
    "metric": pl.String(),
    "value": pl.Float64(),
    "unit": pl.String(),
    "x": pl.Float64(),
    "x_unit": pl.String(),
    "note": pl.String(),
}

#: Allowed values of ``unit`` (documented in data/published/README.md).
UNITS = frozenset(
    {
        "MB/s",
        "IOPS",
        "GB",
        "KiB",
        "s",
        "ms",
        "us",
        "%",
        "count",
        "fills",
        "ratio",
        "nm",
        "years",
        "GHz",
        "Gb/s",
        "MT/s",
    }
)
#: Allowed values of ``x_unit``.
X_UNITS = frozenset({"GB written", "s"})
#: Allowed values of ``condition``.
CONDITIONS = frozenset(
    {
        "spec",
        "all",
        "fresh",
        "used",
        "after_trim",
        "after_idle",
        "clean",
        "torture",
        "compressible",
        "incompressible",
        "steady_state",
        "default_op",
        "op_25",
        "trim_on_vs_off",
    }
)

_DATA_PACKAGE = ("data", "published")


def data_files() -> list:
    """The packaged CSV files (``importlib.resources`` traversables), sorted by name."""
    folder = resources.files("flashback").joinpath(*_DATA_PACKAGE)
    return sorted((f for f in folder.iterdir() if f.name.endswith(".csv")), key=lambda f: f.name)


@functools.cache
def _load_all() -> pl.DataFrame:
    frames = []
    for f in data_files():
        with f.open("rb") as fh:
            frames.append(pl.read_csv(fh, schema=SCHEMA))
    if not frames:
        raise ParameterError(
            "no published-number CSVs found in the flashback package; reinstall flashback"
        )
    return pl.concat(frames, how="vertical").sort("source", maintain_order=True)


def published(
    *,
    drive: str | None = None,
    source: str | None = None,
    test: str | None = None,
    metric: str | None = None,
    condition: str | None = None,
) -> pl.DataFrame:
    """The reviews' published numbers, one row per number, optionally filtered.

    Args:
        drive: case-insensitive substring of the drive name (``"520"``, ``"vertex"``).
            Rows about a procedure (no drive) are dropped when this is given.
        source: seed file name, its prefix (``"000"``) or a case-insensitive substring of
            the publication (``"puget"``, ``"anandtech"``).
        test: exact test name (``"cdm_seq_write"``).
        metric: exact metric name (``"max_mbps"``).
        condition: exact condition (``"fresh"``, ``"after_trim"``...).

    Returns:
        A polars frame with the columns of :data:`SCHEMA` (``value``, ``x`` and
        ``capacity_gb`` are Float64; the rest String), in file order.

    Raises:
        ParameterError: ``condition`` is not one of :data:`CONDITIONS`.
    """
    df = _load_all().clone()  # the cache must not be changed through a returned frame
    if drive is not None:
        df = df.filter(pl.col("drive").str.to_lowercase().str.contains(drive.lower(), literal=True))
    if source is not None:
        s = source.lower()
        df = df.filter(
            pl.col("source").str.to_lowercase().str.starts_with(s)
            | pl.col("publication").str.to_lowercase().str.contains(s, literal=True)
        )
    if condition is not None:
        if condition not in CONDITIONS:
            raise ParameterError(
                f"unknown condition {condition!r}; use one of {', '.join(sorted(CONDITIONS))}"
            )
        df = df.filter(pl.col("condition") == condition)
    if test is not None:
        df = df.filter(pl.col("test") == test)
    if metric is not None:
        df = df.filter(pl.col("metric") == metric)
    return df


__all__ = ["published", "SCHEMA", "UNITS", "X_UNITS", "CONDITIONS", "data_files"]
