"""fio's text logs → per-file sample arrays, read with polars' CSV reader.

Layouts (comma-separated integers, one sample per line):

- ``time_ms, value, ddir, bs`` — every version; fio 3.2x+ appends ``prio`` (0/1, or with
  ``log_prio=1`` the whole priority in hex, ``0x2004``), ``log_offset=1`` inserts ``offset``
  after ``bs``, ``log_issue_time=1`` appends ``issue_time_ns``.
- ``log_unix_epoch=1`` / ``log_alternate_epoch=1``: ``time_ms`` counts from the epoch of a
  clock (Unix time for the former) instead of the job's start; see :func:`epoch_origin_ms`.
- ``log_window_value=both`` (fio 3.3x): ``time_ms, mean, max, ddir, bs, …``.
- clat histogram logs (``log_hist_msec``): ``time_ms, ddir, bs, count_0 … count_N`` with
  1216 buckets before fio 3.0 (µs) and 1856 from 3.0 (ns); see :mod:`flashback.fio.hist`.

What a row means depends on ``bs`` and the fio version (see :mod:`flashback.fio.version`):
``bs = 0`` is a ``log_avg_msec`` window average; ``bs > 0`` is one I/O (fio ≥ 2.10), except
that fio < 2.10 bw/iops logs without ``log_avg_msec`` hold one 500 ms window per row, with bs.
Values: bw in KiB/s, iops in I/O/s, latencies in µs (fio < 3.0) or ns (fio ≥ 3.0).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from flashback.errors import FioFormatError, ImportFormatError
from flashback.fio.logtable import Table as Table
from flashback.fio.logtable import column_view as column_view
from flashback.fio.logtable import read_columns, read_plain
from flashback.fio.logtable import read_table as read_table

KINDS = ("bw", "iops", "lat", "clat", "slat", "clat_hist")
_NAME = re.compile(
    r"^(?P<prefix>.*)_(?P<kind>bw|iops|lat|clat|slat|clat_hist)(?:\.(?P<job>\d+))?\.log$"
)
_DDIRS = (0, 1, 2)


def is_log_name(name: str) -> bool:
    """Whether ``name`` is a fio log file name (``PREFIX_kind[.N].log``)."""
    return _NAME.match(name) is not None


def kind_of(path: Path) -> tuple[str, int, str]:
    """(kind, job number, run prefix) from a fio log file name such as ``x_clat.2.log``.

    Raises:
        ImportFormatError: the name is not a fio log name.
    """
    m = _NAME.match(path.name)
    if not m:
        raise ImportFormatError(
            f"{path}: not a fio log name (expected PREFIX_bw|iops|lat|clat|slat|clat_hist[.N].log); "
            "rename it or pass the JSON output"
        )
    return m.group("kind"), int(m.group("job") or 1), m.group("prefix")


@dataclasses.dataclass(kw_only=True)
class Log:
    """One fio sample log.

    ``mode``: ``"per_io"`` (one row per I/O), ``"avg"`` (``log_avg_msec`` window averages,
    ``bs = 0``) or ``"default_window"`` (fio < 2.10 bw/iops rows, one per ``bw_avg_time``).
    ``value_max`` is set when the log carries a true window maximum (``log_window_value=both``
    or ``max``); ``value`` is ``None`` when the log carries only maxima.
    """

    path: Path
    kind: str
    job: int
    t_ms: np.ndarray
    ddir: np.ndarray
    bs: np.ndarray
    value: np.ndarray | None
    value_max: np.ndarray | None
    both: bool
    mode: str = "per_io"
    avg_ms: float = 0.0
    extra: np.ndarray | None = None  # fields after bs: [offset], [prio], [issue_time]
    hex_prio: bool = False  # the priority is written in hex (log_prio=1, fio 3.3x)
    # (edges, interval of each row) of the last binning (series.bins_of)
    binned: tuple | None = dataclasses.field(default=None, repr=False)
    _dir_rows: np.ndarray | None = dataclasses.field(default=None, repr=False)
    #: ``value`` as the integers fio wrote (int64), when :func:`read_columns` read the file
    #: (``None`` from :func:`read_plain`, whose float64 values are those integers exactly)
    ivalue: np.ndarray | None = dataclasses.field(default=None, repr=False)
    #: whether the times never step back (as read)
    t_sorted: bool = False
    #: (smallest, largest) bs, and of each extra field, as read; None when not known
    bs_range: tuple | None = None
    extra_ranges: list | None = None

    def rows_in(self, d: int) -> int:
        """How many rows the log holds for direction ``d`` (counted once per log)."""
        if self._dir_rows is None or self._dir_rows.size != 3:
            dd = np.asarray(self.ddir, dtype=np.int64)
            self._dir_rows = np.bincount(dd, minlength=3)[:3] if dd.size else np.zeros(3, int)
        return int(self._dir_rows[d])


def parse_log(path: Path, *, window_value: str | None = None) -> Log:
    """One fio sample log (bw/iops/lat/clat/slat) → :class:`Log` (mode not yet decided for
    rows with ``bs > 0``; see :func:`decide_mode`).

    ``window_value``: ``"both"`` (mean and max columns), ``"max"`` (``log_max_value=1``: the
    value is the window maximum) or ``None``/``"mean"`` (inferred: ``both`` when the 4th
    field, not the 3rd, is a data direction).

    Raises:
        ImportFormatError: malformed line (names file and line) or an unknown layout.
        FioFormatError: a negative value.
    """
    kind, job, _ = kind_of(path)
    table = read_plain(path)
    if table is None:
        table = read_columns(path)
    cols, hexcols = table.cols, table.hexcols
    if not cols or cols[0].size == 0:
        z = np.zeros(0)
        return Log(
            path=path, kind=kind, job=job, t_ms=z, ddir=z, bs=z, value=z, value_max=None, both=False
        )
    w = len(cols)
    if w < 3:
        raise ImportFormatError(f"{path}: {w} fields per line is not a fio log layout")
    both = window_value == "both"
    if window_value is None and w >= 6:
        # values are non-negative (read_columns): a direction column is one of 0, 1, 2
        col2 = table.highs[2] <= 2
        col3 = table.highs[3] <= 2
        both = bool(col3 and not col2)
    i = 2 if both else 1
    if w < i + 2:
        raise ImportFormatError(f"{path}: {w} fields per line is not a fio log layout")
    ddir = cols[i + 1]
    if table.highs[i + 1] > 2:
        k = int(np.argmax(ddir > 2))
        raise ImportFormatError(
            f"{path} line {k + 1}: data direction {int(ddir[k])} is not 0, 1 or 2; pass "
            "window_value='both' if the log was written with log_window_value=both"
        )
    n = ddir.size
    dir_rows = None
    if table.lows[i + 1] == table.highs[i + 1]:  # one direction throughout
        dir_rows = np.zeros(3, dtype=np.int64)
        dir_rows[int(table.lows[i + 1])] = n
    bs = cols[i + 2] if w > i + 2 else np.zeros(n, dtype=np.int64)
    v = np.asarray(cols[1], dtype=np.float64)  # a copy of read_columns' int64
    if both:
        value, vmax = v, cols[2].astype(np.float64)
    elif window_value == "max":
        value, vmax = None, v
    else:
        value, vmax = v, None
    rest = cols[i + 3 :]
    extra = None if not rest else rest[0][:, None] if len(rest) == 1 else np.column_stack(rest)
    return Log(
        hex_prio=bool(hexcols),
        path=path,
        kind=kind,
        job=job,
        t_ms=np.asarray(cols[0], dtype=np.float64),
        ddir=ddir,
        bs=bs,
        value=value,
        value_max=vmax,
        both=both,
        extra=extra,
        ivalue=cols[1] if value is not None and not both and cols[1].dtype == np.int64 else None,
        t_sorted=table.t_sorted,
        _dir_rows=dir_rows,
        bs_range=(table.lows[i + 2], table.highs[i + 2]) if w > i + 2 else (0, 0),
        extra_ranges=list(zip(table.lows[i + 3 :], table.highs[i + 3 :], strict=True)),
    )


def share_with_bs(log: Log) -> float:
    """The share of a log's rows with ``bs > 0`` (1.0 or 0.0 from the range read, when it
    tells)."""
    if log.bs_range is not None and log.bs.size:
        if log.bs_range[0] > 0:
            return 1.0
        if log.bs_range[1] == 0:
            return 0.0
    return float((log.bs > 0).mean())


def fio3_columns(log: Log) -> bool:
    """Whether the fields after ``bs`` can only be fio 3.x's: two or more (offset + prio,
    issue time), a hex priority (``log_prio=1``), or one that is a priority rather than a
    ``log_offset`` offset (all zero, or not sector-aligned). fio 2.x wrote at most ``offset``
    there."""
    if log.extra is None or log.extra.shape[0] == 0:
        return False
    if log.hex_prio or log.extra.shape[1] >= 2:
        return True
    if log.extra_ranges and log.extra_ranges[0] == (0, 0):
        return True  # all zero
    last = log.extra[:, 0]
    return bool((last == 0).all() or (last % 512 != 0).any())


def window_ms(log: Log) -> float:
    """A ``log_avg_msec`` log's window: the typical spacing of one direction's sample times
    (directions are logged a few ms apart, windows jitter by a few ms, and windows without
    I/O are not logged)."""
    spacings = [np.diff(np.unique(log.t_ms[log.ddir == d])) for d in _DDIRS]
    spacings = [s for s in spacings if s.size]
    if not spacings:
        return float(log.t_ms.max()) if log.t_ms.size else 1.0
    s = np.round(np.concatenate(spacings))
    # the most common spacing (longer gaps are windows without samples, a shorter last one is
    # the final partial window), then the median of those within 10 % of it (jitter)
    vals, counts = np.unique(s, return_counts=True)
    mode = vals[np.argmax(counts)]
    return float(np.median(s[np.abs(s - mode) <= 0.1 * mode])) or 1.0


def looks_windowed(log: Log) -> bool:
    """Whether a bw/iops log with ``bs > 0`` holds window samples (fio < 2.10) rather than one
    row per I/O: per-I/O iops rows are all 1, and per-I/O rows come many per window."""
    if log.kind == "iops" and log.value is not None and (log.value == 1).all():
        return False
    t = np.unique(log.t_ms)
    if t.size < 2:
        return log.kind == "iops"
    per_distinct = log.t_ms.size / t.size
    return bool(np.median(np.diff(t)) >= 100.0 and per_distinct < 3.5)


#: Earliest first sample (ms) a job-relative log can have: fio logs a job's first I/O or first
#: window soon after the job starts (ramp_time and startdelay restart the clock), so a log
#: whose earliest sample is an hour or more in counts from a clock's epoch
#: (``log_unix_epoch``/``log_alternate_epoch``; Unix time is > 1e12 ms).
EPOCH_AFTER_MS = 3_600_000.0


def epoch_origin_ms(
    parsed: list[Log], hist_times: list[np.ndarray], *, epoch: bool | None
) -> float:
    """The time (ms, on the logs' clock) at which the run's first job started, when the logs
    were written with ``log_unix_epoch=1``/``log_alternate_epoch=1``; 0.0 for job-relative
    logs. ``epoch``: what the run's JSON options say (``None`` when unknown: then logs whose
    earliest sample is past :data:`EPOCH_AFTER_MS` count as epoch logs).

    fio adds the clock's time at each job's start to every sample, so each log's start is
    estimated as its first sample less one window for ``log_avg_msec`` logs (its first
    I/O for per-I/O logs), within the few ms a first window or I/O can be late; the
    earliest over the logs is returned, which keeps later jobs (startdelay, stonewall) later.
    Histogram logs count their first sample less their typical spacing. Modes must be decided.
    """
    starts = []
    for lg in parsed:
        if lg.t_ms.size:
            starts.append(float(lg.t_ms.min()) - (lg.avg_ms if lg.mode == "avg" else 0.0))
    for t in hist_times:
        if t.size:
            u = np.unique(t)
            starts.append(float(u[0]) - (float(np.median(np.diff(u))) if u.size > 1 else 0.0))
    if not starts:
        return 0.0
    first = min(starts)
    if epoch is None:
        epoch = first >= EPOCH_AFTER_MS
    return max(first, 0.0) if epoch else 0.0


def check_one_row_per_window(log: Log) -> None:
    """Refuses a ``log_avg_msec`` log holding many rows per window and direction: fio with
    ``log_compression`` logs every I/O there with the window's time and ``bs = 0``
    (axboe/fio#1746, seen in fio 3.33–3.37), so the rows are neither windows nor I/Os.
    (Older fio repeats a window's time for a few catch-up windows after a stall, issue
    #971; those stay far below two rows per window on average.)

    Raises:
        FioFormatError: more than two rows per distinct (time, direction) on average.
    """
    if log.mode != "avg" or log.t_ms.size < 8:
        return
    distinct = np.unique(np.stack([log.t_ms, log.ddir.astype(np.float64)]), axis=1).shape[1]
    if log.t_ms.size > 2 * distinct:
        raise FioFormatError(
            f"{log.path}: {log.t_ms.size} rows for {distinct} windows of log_avg_msec; fio "
            "logs every I/O with its window's time when log_compression is set with "
            "log_avg_msec (axboe/fio#1746), so the rows cannot be added up; rerun without "
            "log_compression, or pass the JSON output alone"
        )
