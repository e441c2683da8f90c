"""``to_dataset``: one capture into a hive-partitioned Parquet dataset
(``root/model=.../serial=.../test=.../<capture_id>.parquet``) that polars, DuckDB or Spark
read with no flashback code."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import polars as pl

from flashback._io import atomic_output
from flashback._meta import META_KEY, meta_to_json
from flashback.dataset.identity import IDENTITY_SCHEMA, identity
from flashback.errors import CaptureFileError, FlashbackError, ParameterError

if TYPE_CHECKING:  # a type only: capture.Capture.to_dataset calls this module
    from flashback.capture import Capture

#: the partition value of a null (unknown) key, as Hive, Spark, polars and DuckDB spell it
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
DEFAULT_PARTITIONS = ("model", "serial", "test")


def partition_value(value: Any) -> str:
    """A key's value as a directory name: percent-encoded (``/`` → ``%2F``), or
    :data:`NULL_PARTITION` when unknown."""
    if value is None or value == "":
        return NULL_PARTITION
    return quote(str(value), safe=" -_.,+@()")


def hive_schema(partition_by: Sequence[str] = DEFAULT_PARTITIONS) -> dict[str, pl.DataType]:
    """The partition columns' types, for ``pl.scan_parquet(..., hive_schema=...)``: without
    it a reader guesses from the values (a serial made of digits would become a number).

    Raises:
        ParameterError: a partition key is not an identity column.
    """
    check_partition_keys(partition_by)
    return {k: IDENTITY_SCHEMA[k] for k in partition_by}


def check_partition_keys(partition_by: Sequence[str]) -> None:
    """Checks that every key can partition a dataset (an identity column other than the
    capture's path).

    Raises:
        ParameterError: names the first key that cannot.
    """
    bad = [k for k in partition_by if k not in IDENTITY_SCHEMA or k == "capture_path"]
    if bad:
        raise ParameterError(
            f"cannot partition by {bad[0]!r}; use identity columns such as model, serial, "
            "test, host, firmware or workload_rw"
        )


def to_dataset(
    cap: Capture,
    root: str | os.PathLike[str],
    *,
    partition_by: Sequence[str] = DEFAULT_PARTITIONS,
) -> Path:
    """Writes ``cap`` as ``root/<k>=<v>/.../<capture_id>.parquet`` and returns that path.

    The file holds the intervals and the identity columns (:data:`IDENTITY_SCHEMA`) except the
    partition keys, which live in the directory names as Hive's convention wants; its footer
    keeps the capture's metadata, so :func:`flashback.scan_captures` and
    :func:`flashback.load` read it back whole. Writing the same capture again replaces its
    file (the id is a hash of the metadata). The file appears atomically.

    Raises:
        ParameterError: a partition key is not an identity column.
        CaptureFileError: the directory cannot be made or the file written under ``root``
            (the message names the operating system's reason); no file is left behind.
    """
    check_partition_keys(partition_by)
    ident = identity(cap.meta)
    directory = Path(root).joinpath(*(f"{k}={partition_value(ident[k])}" for k in partition_by))
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CaptureFileError(
            f"cannot write a dataset under {root}: {e.strerror or e} ({e.filename}); "
            "pass a directory you can write to"
        ) from None
    keep = {k: v for k, v in ident.items() if k not in partition_by and k != "capture_path"}
    body = cap.intervals.drop([c for c in cap.intervals.columns if c in IDENTITY_SCHEMA])
    frame = body.with_columns(
        pl.lit(v, dtype=IDENTITY_SCHEMA[k]).alias(k) for k, v in keep.items()
    ).select([*keep, *body.columns])
    path = directory / f"{ident['capture_id']}.parquet"
    # The guarded writer: the temporary is nameless (O_TMPFILE), or, on a file system without
    # it, named in the directory above the dataset (polars reads every file in the tree,
    # hidden or not), so a crash never leaves a file a scan would trip on.
    outside = Path(root).resolve().parent
    staging = outside if os.access(outside, os.W_OK | os.X_OK) else None
    try:
        with atomic_output(path, overwrite=True, staging=staging) as f:
            frame.write_parquet(f, metadata={META_KEY: meta_to_json(cap.meta)})
    except FlashbackError:
        raise
    except OSError as e:
        raise CaptureFileError(
            f"cannot write {path}: {e.strerror or e}; pass a directory you can write to"
        ) from None
    return path
