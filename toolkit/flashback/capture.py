"""Captures: a polars frame of intervals plus a metadata dict, and their files.

On disk a capture is an Arrow IPC *stream* (``.arrow``) with the metadata as JSON in the
schema, or a Parquet file (``.parquet``) with the same metadata key. Both round-trip exactly.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import polars as pl

from flashback import _native
from flashback.errors import CaptureFileError

META_KEY = "flashback.meta"


@dataclasses.dataclass
class Capture:
    """One run: ``intervals`` (one row per interval, the design's schema) and ``meta``.

    ``meta`` holds the workload, target, host, flashback version, start/end time, ``status``
    (``complete``, ``interrupted``, ``failed: ...``) and ``data_compress_ratio``.
    """

    intervals: pl.DataFrame
    meta: dict[str, Any]

    @property
    def status(self) -> str:
        return str(self.meta.get("status", "unknown"))

    @property
    def target_size_bytes(self) -> int | None:
        """User capacity of the target in bytes, when known (for drive-fill units)."""
        t = self.meta.get("target") or {}
        return t.get("size_bytes")

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Writes the capture to ``.arrow`` (IPC stream) or ``.parquet``, atomically.

        Raises:
            CaptureFileError: the suffix is neither ``.arrow`` nor ``.parquet``.
        """
        path = Path(path)
        meta_json = json.dumps(self.meta)
        if path.suffix == ".parquet":
            tmp = path.with_name(path.name + f".tmp{os.getpid()}")
            try:
                self.intervals.write_parquet(tmp, metadata={META_KEY: meta_json})
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
        elif path.suffix in (".arrow", ".arrows", ".ipc"):
            _native.write_capture(str(path), self.intervals, meta_json)
        else:
            raise CaptureFileError(
                f"cannot save a capture as {path.name!r}; use a .arrow or .parquet file name"
            )
        return path

    def summary(self) -> pl.DataFrame:
        """Per-step totals: seconds, GB written/read, mean MB/s and IOPS, and the whole run's
        latency per direction (``{read,write}_lat_{p50,p99,p999,p9999,max}_us``, µs from
        submission to completion, exact to the 3 significant digits of the run's merged
        histogram; null for a direction without I/O, or for steps this capture's metadata has
        no histogram of, e.g. imported or concatenated captures)."""
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


def with_run_latency(summary: pl.DataFrame, meta: dict[str, Any]) -> pl.DataFrame:
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


def from_native(table: Any, meta_json: str) -> Capture:
    """Builds a Capture from a native Arrow table (zero copy) and its metadata JSON."""
    return Capture(intervals=pl.DataFrame(table), meta=json.loads(meta_json))


def load(path: str | os.PathLike[str]) -> Capture:
    """Reads a capture saved as ``.arrow`` (IPC stream) or ``.parquet``.

    Raises:
        CaptureFileError: the file is missing, not a flashback capture, or torn (then
            :func:`recover` salvages it).
    """
    path = Path(path)
    if not path.exists():
        raise CaptureFileError(f"{path} does not exist; give the path of a saved capture")
    if path.suffix == ".parquet":
        try:
            md = pl.read_parquet_metadata(path)
            df = pl.read_parquet(path)
        except Exception as e:  # polars raises several types for a bad file
            raise CaptureFileError(f"{path} is not a readable Parquet file ({e})") from None
        if META_KEY not in md:
            raise CaptureFileError(
                f"{path} has no flashback metadata; pass a capture written by flashback"
            )
        return Capture(intervals=df, meta=json.loads(md[META_KEY]))
    table, meta_json, torn = _native.read_capture(str(path), salvage=False)
    cap = from_native(table, meta_json)
    if cap.status == "running":
        # The writer never finished (killed): the stream is whole up to its last flush.
        cap.meta["status"] = "interrupted"
        cap.meta["note"] = "the run ended without finalising this file (killed or crashed)"
    return cap


def recover(path: str | os.PathLike[str], *, out: str | os.PathLike[str] | None = None) -> Capture:
    """Salvages a capture whose tail was torn by a crash or ``kill -9``.

    Every whole interval before the tear is kept; the status becomes ``interrupted``.
    With ``out`` the salvaged capture is also written there (never over ``path`` itself
    unless ``out == path``).

    Raises:
        CaptureFileError: the file has no readable header at all.
    """
    path = Path(path)
    if not path.exists():
        raise CaptureFileError(f"{path} does not exist; give the path of a capture to recover")
    table, meta_json, torn = _native.read_capture(str(path), salvage=True)
    cap = from_native(table, meta_json)
    if cap.status == "running" or (torn and cap.status == "complete"):
        cap.meta["status"] = "interrupted"
    cap.meta["recovered"] = {"torn_tail": bool(torn), "intervals": len(cap.intervals)}
    if out is not None:
        cap.save(out)
    return cap
