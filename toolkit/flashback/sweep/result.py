"""What a sweep returns: its captures in job order, and the jobs that failed."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from flashback.capture import Capture, load
from flashback.dataset.write import DEFAULT_PARTITIONS
from flashback.errors import FlashbackError
from flashback.sweep.job import Job


@dataclasses.dataclass(kw_only=True)
class SweepResult:
    """The captures of a sweep, in the order of its jobs.

    Attributes:
        jobs: the jobs as run.
        paths: with ``out=``, where each capture was written (else None); ``None`` in the
            place of a job that failed.
        elapsed_s: wall-clock seconds from the first submission to the last result.
        errors: the jobs that failed, by job index: the :class:`~flashback.FlashbackError`
            each raised (prefixed with the job), or a :class:`SweepError` saying its worker
            process died. Empty when every job succeeded.
    """

    jobs: list[Job]
    paths: list[Path | None] | None
    elapsed_s: float
    errors: dict[int, FlashbackError] = dataclasses.field(default_factory=dict)
    _captures: list[Capture | None] | None = dataclasses.field(default=None, repr=False)

    @property
    def ok(self) -> list[int]:
        """Indices of the jobs that succeeded, in job order."""
        return [i for i in range(len(self.jobs)) if i not in self.errors]

    def __repr__(self) -> str:
        written = [p for p in self.paths or [] if p is not None]
        where = f", out={written[0].parent}" if written else ""
        failed = f", {len(self.errors)} failed" if self.errors else ""
        return f"SweepResult({len(self.jobs)} jobs{failed}, {self.elapsed_s:.1f} s{where})"

    @property
    def captures(self) -> list[Capture | None]:
        """One :class:`~flashback.Capture` per job (read from ``paths`` on first use), ``None``
        for a job that failed (see :attr:`errors`)."""
        if self._captures is None:
            self._captures = [None if p is None else load(p) for p in self.paths or []]
        return self._captures

    def scan(self) -> pl.LazyFrame:
        """Every capture's intervals with ``job`` (index), ``job_label`` and the identity
        columns of :func:`flashback.scan_captures` first.

        Raises:
            CaptureFileError: a capture file written by the sweep is gone or damaged.
        """
        from flashback.dataset.scan import capture_frame, concat_frames, scan_file

        ok = self.ok
        if self._captures is None and self.paths is not None:
            frames = [scan_file(p) for p in self.paths if p is not None]
        else:
            frames = [capture_frame(c) for c in self.captures if c is not None]
        tagged = [
            f.select(
                pl.lit(i, dtype=pl.Int64).alias("job"),
                pl.lit(self.jobs[i].label, dtype=pl.String).alias("job_label"),
                pl.all(),
            )
            for i, f in zip(ok, frames, strict=True)
        ]
        return concat_frames(tagged, [self.jobs[i].label for i in ok])

    def to_dataset(
        self,
        root: str | os.PathLike[str],
        *,
        partition_by: Sequence[str] = DEFAULT_PARTITIONS,
    ) -> list[Path]:
        """Writes every capture with :meth:`Capture.to_dataset` under ``root``, partitioned
        by ``partition_by`` (identity columns), and returns the files' paths.

        Raises:
            ParameterError: a partition key is not an identity column.
            CaptureFileError: a capture file written by the sweep is gone or damaged, or
                ``root`` cannot be written.
        """
        return [
            c.to_dataset(root, partition_by=partition_by) for c in self.captures if c is not None
        ]
