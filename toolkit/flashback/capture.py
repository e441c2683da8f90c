"""Captures: a polars frame of intervals plus a metadata dict, and their files.

On disk a capture is an Arrow IPC *stream* (``.arrow``) with the metadata as JSON in the
schema, or a Parquet file (``.parquet``) with the same metadata key. Both round-trip exactly.

Latency columns: ``{read,write}_lat_*_us`` are fio's ``lat``, from when an I/O is queued to
the ring to just after the ``io_uring_enter`` that returns with its completion. A run of
flashback's engine fills only these. fio's ``clat`` starts instead when the enter that hands
the I/O to the kernel returns; the engine hands the last I/Os of each round over in the same
enter that waits for completions (one system call per I/O at QD1), and that enter returns only
after some have completed, so their hand-over time cannot be read and an engine ``clat`` would
be a guess. ``{read,write}_clat_*_us`` therefore appear only in fio imports, which fill both
from what fio measured.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from flashback import _native
from flashback._io import atomic_output, check_output
from flashback._meta import META_KEY, CaptureMeta, as_capture_meta, meta_to_json
from flashback.errors import CaptureFileError

#: file suffixes a capture can be saved as; all but ``.parquet`` are Arrow IPC streams
SAVE_SUFFIXES = (".arrow", ".arrows", ".ipc", ".parquet")


def check_save_path(path: str | os.PathLike[str], *, overwrite: bool) -> Path:
    """Checks, before anything is run or written, that a capture can be saved at ``path``:
    a known suffix, an existing directory, and no existing file unless ``overwrite``.

    Returns the path. Raises:
        CaptureFileError: one sentence naming what is wrong with ``path``.
    """
    path = Path(path)
    if path.is_dir():
        raise CaptureFileError(
            f"{path} is a directory; give a capture file name such as {path / 'capture.arrow'}"
        )
    if path.suffix not in SAVE_SUFFIXES:
        raise CaptureFileError(
            f"cannot save a capture as {path.name!r}; use a .arrow or .parquet file name"
        )
    parent = path.parent
    if not parent.is_dir():
        raise CaptureFileError(
            f"cannot save a capture in {parent}: that directory does not exist; create it first"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CaptureFileError(f"cannot save a capture in {parent}: the directory is not writable")
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise CaptureFileError(
            f"{path} already exists; choose another name or pass --overwrite (overwrite=True) to replace it"
        )
    # the guarded writer's own checks: no device, FIFO, socket or link to one, and no file
    # another flashback process is writing (SafetyError)
    check_output(path, overwrite=overwrite)
    return path


@dataclasses.dataclass
class Capture:
    """One run: ``intervals`` (one row per interval, the design's schema) and ``meta``.

    ``meta`` holds the workload, target, host, flashback version, start/end time, ``status``
    (``complete``, ``interrupted``, ``failed: ...``) and ``data_compress_ratio``.
    """

    intervals: pl.DataFrame
    meta: CaptureMeta

    @property
    def status(self) -> str:
        return str(self.meta.get("status", "unknown"))

    @property
    def target_size_bytes(self) -> int | None:
        """User capacity of the target in bytes, when known (for drive-fill units)."""
        t = self.meta.get("target") or {}
        return t.get("size_bytes")

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
        """Writes the capture to ``.arrow`` (IPC stream) or ``.parquet`` through flashback's
        guarded writer: a temporary beside ``path``, synced, then renamed into place, so
        ``path`` holds the old file or the new one, never a mix. An existing regular file is
        replaced unless ``overwrite=False``; a device node, FIFO, socket or directory (or a
        symlink to one) never is.

        Raises:
            CaptureFileError: the suffix is neither ``.arrow`` nor ``.parquet``, the directory
                does not exist, or ``path`` exists and ``overwrite`` is false.
            SafetyError: ``path`` is (or leads to) a device node, FIFO or socket, or another
                flashback process is writing it.
            DeviceError: the disk is full (the message names the file and what was kept).
        """
        path = check_save_path(path, overwrite=overwrite)
        meta_json = meta_to_json(self.meta)
        if path.suffix == ".parquet":
            with atomic_output(path, overwrite=overwrite) as f:
                self.intervals.write_parquet(f, metadata={META_KEY: meta_json})
        else:
            _native.write_capture(str(path), self.intervals, meta_json)
        return path

    def to_dataset(
        self,
        root: str | os.PathLike[str],
        *,
        partition_by: Sequence[str] = ("model", "serial", "test"),
    ) -> Path:
        """Writes the capture into a hive-partitioned Parquet dataset under ``root``
        (``model=.../serial=.../test=.../<capture_id>.parquet``) and returns the file's path;
        see :func:`flashback.dataset.to_dataset`.

        Raises:
            ParameterError: a partition key is not an identity column.
        """
        from flashback.dataset.write import to_dataset

        return to_dataset(self, root, partition_by=partition_by)

    def summary(self) -> pl.DataFrame:
        """Per-step totals: seconds, GB written/read, mean MB/s and IOPS, and the whole run's
        latency per direction (``{read,write}_lat_{p50,p99,p999,p9999,max}_us``, µs from
        submission to completion, exact to the 3 significant digits of the run's merged
        histogram; null for a direction without I/O, or for steps this capture's metadata has
        no histogram of, e.g. imported or concatenated captures).

        An empty capture gives an empty frame.

        Raises:
            polars.exceptions.ColumnNotFoundError: a hand-built ``intervals`` frame without the
                design's ``step``, ``interval_s`` and byte/I/O columns (a capture flashback
                ran, loaded or imported has them).
        """
        return with_run_latency(summarize(self.intervals), self.meta)

    def __repr__(self) -> str:
        w = self.meta.get("workload", {})
        return (
            f"Capture({len(self.intervals)} intervals, status={self.status!r}, "
            f"rw={w.get('rw')!r}, target={(self.meta.get('target') or {}).get('spec')!r})"
        )


def summarize(intervals: pl.DataFrame) -> pl.DataFrame:
    """Per-step totals of an interval frame, in the order steps first appear."""
    if intervals.is_empty():
        return pl.DataFrame()
    return intervals.group_by("step", maintain_order=True).agg(
        pl.col("interval_s").sum().alias("seconds"),
        (pl.col("write_bytes").sum() / 1e9).alias("written_gb"),
        (pl.col("read_bytes").sum() / 1e9).alias("read_gb"),
        (pl.col("write_bytes").sum() / pl.col("interval_s").sum() / 1e6).alias("write_mbps"),
        (pl.col("read_bytes").sum() / pl.col("interval_s").sum() / 1e6).alias("read_mbps"),
        (pl.col("write_ios").sum() / pl.col("interval_s").sum()).alias("write_iops"),
        (pl.col("read_ios").sum() / pl.col("interval_s").sum()).alias("read_iops"),
    )


#: Whole-run latency statistics of a run's metadata (``meta["latency"][direction]``), in the
#: order :meth:`Capture.summary` shows them.
RUN_LATENCY_STATS = ("p50", "p99", "p999", "p9999", "max")


def with_run_latency(summary: pl.DataFrame, meta: CaptureMeta) -> pl.DataFrame:
    """``summary`` (one row per step) with the run's whole-run latency columns
    ``{read,write}_lat_{stat}_us`` from ``meta["latency"]``, filled on the row of the run's own
    step (``meta["step"]``) and null elsewhere."""
    if summary.is_empty():
        return summary
    lat = meta.get("latency") or {}
    own = pl.col("step") == (meta.get("step") or "")
    cols = []
    for d in ("read", "write"):
        stats = lat.get(d) or {}
        for stat in RUN_LATENCY_STATS:
            v = stats.get(f"{stat}_us")
            value = pl.lit(v, dtype=pl.Float64)
            cols.append(pl.when(own).then(value).otherwise(None).alias(f"{d}_lat_{stat}_us"))
    return summary.with_columns(cols)


def summarize_totals(meta: CaptureMeta) -> pl.DataFrame:
    """The one-step summary of :func:`summarize` from a run's metadata totals alone (for a
    capture streamed to its file without keeping its intervals), with the whole run's latency
    columns of :func:`with_run_latency`."""
    t = meta.get("totals") or {}
    s = float(meta.get("duration_s") or 0.0) or float("nan")
    return pl.DataFrame(
        {
            "step": [str(meta.get("step", ""))],
            "seconds": [s],
            "written_gb": [t.get("write_bytes", 0) / 1e9],
            "read_gb": [t.get("read_bytes", 0) / 1e9],
            "write_mbps": [t.get("write_bytes", 0) / s / 1e6],
            "read_mbps": [t.get("read_bytes", 0) / s / 1e6],
            "write_iops": [t.get("write_ios", 0) / s],
            "read_iops": [t.get("read_ios", 0) / s],
        }
    ).pipe(with_run_latency, meta)


def from_native(table: Any, meta: CaptureMeta, *, path: Path | None = None) -> Capture:
    """Builds a Capture from a native Arrow table (zero copy) and its metadata dict (checked
    by the native reader, or the dict a native run returns).

    Raises:
        CaptureFileError: polars cannot import the table's columns (a damaged file at
            ``path``).
    """
    try:
        frame = pl.DataFrame(table)
    except (Exception, pl.exceptions.PanicException) as e:  # a damaged header's columns
        raise CaptureFileError(
            f"{path or 'the capture'} has columns polars cannot read ({e}); pass a file written by flashback"
        ) from None
    return Capture(intervals=frame, meta=meta)


def _load_parquet(path: Path) -> Capture:
    """Reads a ``.parquet`` capture through one open file, so the metadata and the intervals
    come from the same file even if ``path`` is replaced meanwhile.

    Raises:
        CaptureFileError: not a readable Parquet file, no flashback metadata, or damaged
            metadata.
    """
    try:
        with open(path, "rb") as f:
            md = pl.read_parquet_metadata(f)
            f.seek(0)
            df = pl.read_parquet(f)
    except (Exception, pl.exceptions.PanicException) as e:  # polars raises several types
        raise CaptureFileError(f"{path} is not a readable Parquet file ({e})") from None
    if META_KEY not in md:
        raise CaptureFileError(
            f"{path} has no flashback metadata; pass a capture written by flashback"
        )
    return Capture(
        intervals=df, meta=as_capture_meta(_native.parse_capture_meta(str(path), md[META_KEY]))
    )


def load(path: str | os.PathLike[str]) -> Capture:
    """Reads a capture saved as ``.arrow`` (IPC stream) or ``.parquet``.

    Only a whole capture loads: a stream that does not end as a finished capture ends (cut
    short at any point, its run killed before finishing, its trailer's interval count, run id
    or checksum not matching what precedes it) is an error. :func:`recover` is the one way to
    get the salvageable part of such a file.

    Raises:
        CaptureFileError: the file is missing, a directory (a saved replay: the message
            names :meth:`flashback.Replay.load`), not a flashback capture, torn, unfinished,
            written by two runs, with damaged metadata, or altered after writing (a batch
            fails its checksum: the message names its intervals); the message says how many
            intervals :func:`recover` keeps.
    """
    path = Path(path)
    if not path.exists():
        raise CaptureFileError(f"{path} does not exist; give the path of a saved capture")
    if path.is_dir():
        if (path / "replay.json").exists():
            raise CaptureFileError(
                f"{path} is a saved replay (a directory); load it with fb.Replay.load({str(path)!r})"
            )
        raise CaptureFileError(f"{path} is a directory; give the path of a saved capture file")
    if path.suffix == ".parquet":
        return _load_parquet(path)
    table, meta, _, _ = _native.read_capture(str(path), salvage=False)
    return from_native(table, as_capture_meta(meta), path=path)


def recover(path: str | os.PathLike[str], *, out: str | os.PathLike[str] | None = None) -> Capture:
    """Salvages a capture whose stream did not finish: torn by a crash or ``kill -9`` (a
    streaming run loses at most its last second of wall time), cut short, or damaged.

    Every whole, checksummed batch of intervals before the tear (or before the first batch
    that fails its checksum) is kept; the status becomes ``interrupted`` unless the file
    turned out whole, and ``meta["recovered"]["damage"]`` says what stopped the reading.
    Memory is the salvaged intervals plus one batch. With ``out`` the salvaged capture is also
    written there (never over ``path`` itself unless ``out == path``).

    Raises:
        CaptureFileError: the file has no readable header or its metadata is damaged.
    """
    path = Path(path)
    if not path.exists():
        raise CaptureFileError(f"{path} does not exist; give the path of a capture to recover")
    table, meta, torn, damage = _native.read_capture(str(path), salvage=True)
    cap = from_native(table, as_capture_meta(meta), path=path)
    if cap.status == "running" or (torn and cap.status == "complete"):
        cap.meta["status"] = "interrupted"
    cap.meta["recovered"] = {
        "torn_tail": bool(torn),
        "intervals": len(cap.intervals),
        "damage": damage,
    }
    if out is not None:
        cap.save(out)
    return cap
