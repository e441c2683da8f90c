"""``scan_captures``: many capture files (Arrow IPC streams and Parquet) as one lazy polars frame,
with each capture's identity (drive, host, workload, test...) as columns."""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

import polars as pl

from flashback import _native
from flashback.capture import META_KEY, Capture, load
from flashback.dataset.identity import IDENTITY_SCHEMA, identity_columns
from flashback.errors import CaptureFileError

#: file suffixes that hold captures
ARROW_SUFFIXES = (".arrow", ".arrows", ".ipc")
CAPTURE_SUFFIXES = (*ARROW_SUFFIXES, ".parquet")

Source = str | os.PathLike[str]


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def capture_paths(source: Source | Sequence[Source]) -> list[Path]:
    """The capture files named by ``source``: a file, a directory (searched recursively, as a
    hive-partitioned dataset is laid out), a glob (``captures/**/*.parquet``), or a list of them.

    Raises:
        CaptureFileError: a path does not exist, or nothing matches.
    """
    if isinstance(source, (list, tuple)):
        if not source:
            raise CaptureFileError("the list of captures is empty; give at least one path")
        out: list[Path] = []
        for s in source:
            out += capture_paths(s)
        return list(dict.fromkeys(out))
    text = os.fspath(cast(Source, source))  # not a list or tuple: one path
    p = Path(text)
    if p.is_dir():
        found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in CAPTURE_SUFFIXES)
        if not found:
            raise CaptureFileError(
                f"{text} holds no .arrow or .parquet capture; give a directory of captures"
            )
        return found
    if p.is_file():
        return [p]
    if glob.has_magic(text):
        found = sorted(
            Path(f)
            for f in glob.glob(text, recursive=True)
            if Path(f).is_file() and Path(f).suffix in CAPTURE_SUFFIXES
        )
        if not found:
            raise CaptureFileError(
                f"no .arrow or .parquet capture matches {text!r}; check the pattern"
            )
        return found
    raise CaptureFileError(
        f"{text} does not exist; give a capture file, a directory of captures or a glob "
        "such as 'captures/**/*.parquet'"
    )


def _parquet_meta(path: Path) -> dict[str, Any]:
    try:
        md = pl.read_parquet_metadata(path)
    except Exception as e:  # polars raises several types for a bad file
        raise CaptureFileError(
            f"{path} is not a readable Parquet file ({_first_line(e)})"
        ) from None
    if META_KEY in md:
        return _native.parse_capture_meta(str(path), md[META_KEY])
    saved = path.with_name("replay.json")
    if path.name == "intervals.parquet" and saved.exists():  # a Replay.save directory
        return json.loads(saved.read_text())["meta"]
    raise CaptureFileError(f"{path} has no flashback metadata; pass captures written by flashback")


def scan_file(path: Path) -> pl.LazyFrame:
    """One capture file as a lazy frame with its identity columns first.

    Raises:
        CaptureFileError: the file is not a readable flashback capture.
    """
    if path.suffix in ARROW_SUFFIXES:
        # An IPC stream has no footer to scan: it is read whole (it is the format of one run
        # as it is written; finished captures and datasets are Parquet, scanned lazily).
        return capture_frame(load(path), path=str(path))
    meta = _parquet_meta(path)
    lf = pl.scan_parquet(path, hive_partitioning=False)
    try:
        names = lf.collect_schema().names()
    except Exception as e:
        raise CaptureFileError(
            f"{path} is not a readable Parquet file ({_first_line(e)})"
        ) from None
    # A file written by to_dataset already holds identity columns: they are derived again
    # from its metadata, the one source of truth.
    lf = lf.drop([c for c in names if c in IDENTITY_SCHEMA])
    return lf.with_columns(identity_columns(meta, path=str(path))).select(
        [*IDENTITY_SCHEMA, *(c for c in names if c not in IDENTITY_SCHEMA)]
    )


def capture_frame(cap: Capture, *, path: str | None = None) -> pl.LazyFrame:
    """One capture's intervals with its identity columns first, as a lazy frame."""
    df = cap.intervals.drop([c for c in cap.intervals.columns if c in IDENTITY_SCHEMA])
    return (
        df.lazy()
        .with_columns(identity_columns(cap.meta, path=path))
        .select([*IDENTITY_SCHEMA, *df.columns])
    )


def concat_frames(frames: Iterable[pl.LazyFrame], origins: Sequence[str]) -> pl.LazyFrame:
    """Concatenates capture frames whose columns may differ (a simulated drive's ground-truth
    columns are null for the others), after checking that no column changes kind.

    Raises:
        CaptureFileError: a column holds numbers in one capture and text (or another kind) in
            another.
    """
    frames = list(frames)
    seen: dict[str, tuple[pl.DataType, str]] = {}
    for lf, origin in zip(frames, origins, strict=True):
        for name, dtype in lf.collect_schema().items():
            if dtype == pl.Null:
                continue
            if name not in seen:
                seen[name] = (dtype, origin)
                continue
            first, where = seen[name]
            same_kind = first == dtype or (first.is_numeric() and dtype.is_numeric())
            if not same_kind:
                raise CaptureFileError(
                    f"column {name!r} is {first} in {where} but {dtype} in {origin}; "
                    "scan captures whose columns agree, or cast that column first"
                )
    return pl.concat(frames, how="diagonal_relaxed")


def scan_captures(source: Source | Sequence[Source]) -> pl.LazyFrame:
    """Many captures as one lazy frame: every interval of every capture, with the capture's
    identity as columns (``capture_id``, ``capture_path``, ``model``, ``serial``,
    ``firmware``, ``host``, ``kernel``, ``flashback_version``, ``target_spec``,
    ``target_kind``, ``capacity_bytes``, ``test``, ``status``, ``start_time`` and the workload
    fields ``workload_rw``, ``workload_bs_bytes``, ``workload_iodepth``...), then the interval
    columns (``step`` among them). A column some captures lack (the simulator's ground truth)
    is null for them.

    Args:
        source: a capture file (``.arrow`` IPC stream or ``.parquet``), a directory (searched
            recursively, e.g. a dataset written by :meth:`Capture.to_dataset`), a glob
            (``"lab/**/*.parquet"``), or a list of these.

    Returns:
        A ``pl.LazyFrame``. Parquet files are scanned lazily (only their footers are read
        here); Arrow streams have no footer and are read whole.

    Raises:
        CaptureFileError: a path does not exist, nothing matches, a file is not a flashback
            capture (or is torn: see :func:`flashback.recover`), or a column's type differs
            in kind between captures.
    """
    paths = capture_paths(source)
    return concat_frames([scan_file(p) for p in paths], [str(p) for p in paths])
