"""A fio text log's fields as numeric columns: read by the Rust core in one pass when the
file is a plain per-I/O log, else by polars' CSV reader, with each field's range; a line
that is not a fio log's is named (file, line, field) in one sentence."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import polars as pl

from flashback import _native
from flashback.errors import FioFormatError, ImportFormatError


def read_table(path: Path) -> np.ndarray:
    """All rows of a fio log as an int64 array (rows × fields), parsed by polars.

    Raises: as :func:`read_columns`.
    """
    cols = read_columns(path).cols
    if not cols:
        return np.zeros((0, 0), dtype=np.int64)
    return np.column_stack(cols)


@dataclasses.dataclass
class Table:
    """A fio log's fields: ``cols`` (one int64 array per field, each row a line; from
    :func:`read_plain`, the time and value fields are float64 holding the same integers), the
    fields written in hex (``hexcols``), each field's smallest and largest value (``lows``,
    ``highs``), and whether the time column never steps back (``t_sorted``)."""

    cols: list[np.ndarray]
    hexcols: set[int]
    lows: tuple = ()
    highs: tuple = ()
    t_sorted: bool = True


def read_columns(path: Path) -> Table:
    """The fields of a fio log as int64 columns parsed by polars, the fields written in hex
    (``0x…`` on line 1: ``log_prio=1``'s priority) read as integers, with each field's
    range and whether the times are in order (see :class:`Table`).

    Raises:
        ImportFormatError: a line that is not comma-separated integers, or has a different
            number of fields (names file and line).
        FioFormatError: a negative value (fio never logs one; the file is corrupt), or a time
            that steps back (several jobs' logs appended to one file).
    """
    with path.open("rb") as f:
        first = f.readline()
    if not first.strip():
        return Table([], set())
    fields = first.rstrip(b"\r\n ,").split(b",")
    width = len(fields)
    # log_prio=1 (fio 3.3x) writes the priority column as hex, "0x2004"
    hexcols = {i for i, f in enumerate(fields) if f.strip().lower().startswith(b"0x")}
    try:
        df = pl.read_csv(
            path,
            has_header=False,
            schema={f"c{i}": pl.String if i in hexcols else pl.Int64 for i in range(width)},
            truncate_ragged_lines=False,
        )
        if hexcols:
            df = df.with_columns(
                pl.col(f"c{i}")
                .str.strip_chars()
                .str.to_lowercase()
                .str.strip_prefix("0x")
                .str.to_integer(base=16, strict=False)
                for i in hexcols
            )
        # nulls, smallest and largest value of every field in one pass of polars
        stats = df.select(
            [pl.all().null_count().name.suffix("_nulls")]
            + [pl.all().min().name.suffix("_min"), pl.all().max().name.suffix("_max")]
        ).row(0)
        ok = sum(stats[:width]) == 0
    except (pl.exceptions.PolarsError, OSError):
        ok = False
    except BaseException as e:  # polars' CSV reader panics on some malformed lines
        if type(e).__name__ != "PanicException":
            raise
        ok = False
    if not ok:
        _raise_bad_line(path, width, hexcols)
    lows, highs = stats[width : 2 * width], stats[2 * width :]
    n = df.height
    # fields after time and value holding one value throughout (the direction of a
    # one-direction job, a fixed bs, an unused priority) are read-only views of that value
    cols = [
        np.broadcast_to(np.int64(lows[i]), (n,))
        if i >= 2 and lows[i] is not None and lows[i] == highs[i]
        else _numpy(df.to_series(i))
        for i in range(width)
    ]
    del df
    if any(lo is not None and lo < 0 for lo in lows):
        row, col = min(
            (int(np.argmax(c < 0)), k) for k, c in enumerate(cols) if c.size and c.min() < 0
        )
        raise FioFormatError(
            f"{path} line {row + 1}: field {col + 1} is negative ({cols[col][row]}); fio never "
            "logs negative values, so the file is corrupt"
        )
    t = cols[0]
    steps = np.diff(t) if t.size > 1 else np.zeros(1, dtype=np.int64)
    first_step = int(steps.min())
    if first_step < -_TIME_BACK_MS:
        back = np.flatnonzero(steps < -_TIME_BACK_MS)
        if back.size:
            k = int(back[0]) + 1
            raise FioFormatError(
                f"{path} line {k + 1}: the time goes back from {t[k - 1]} to {t[k]} ms, so the "
                f"file holds {back.size + 1} logs one after another (per_job_logs=0 appends "
                "every job's log to one file); pass one job's log (per_job_logs=1) or the JSON "
                "output"
            )
    return Table(cols, hexcols, lows, highs, t_sorted=first_step >= 0)


def column_view(col: _native.LogColumn, dtype: type[np.float64] | type[np.int64]) -> np.ndarray:
    """``col``'s numbers in place: a LogColumn exports the buffer protocol (PyO3's
    ``__getbuffer__``), which typeshed spells ``__buffer__`` only from Python 3.12."""
    return np.frombuffer(col, dtype=dtype)  # type: ignore[call-overload]


def read_plain(path: Path) -> Table | None:
    """The fields of a plain per-I/O log (what fio writes: unsigned decimal integers after
    optional spaces, ``,``-separated, ``\\n``-ended lines of one width, at least 3 fields, times
    and values below 2⁵³, times never stepping back by more than :data:`_TIME_BACK_MS`),
    read by the Rust core in one pass without a copy: times and values as float64, a later
    field holding one value throughout as a read-only broadcast of it. ``None`` for any other
    file, which :func:`read_columns` reads or refuses with its own message; where both
    read a file, they give the same numbers."""
    got = _native.read_fio_log(path, _TIME_BACK_MS)
    if got is None:
        return None
    rows, t, value, rest, lows, highs, t_sorted = got
    cols = [column_view(t, np.float64), column_view(value, np.float64)] + [
        np.broadcast_to(np.int64(c), (rows,)) if isinstance(c, int) else column_view(c, np.int64)
        for c in rest
    ]
    return Table(cols, set(), tuple(lows), tuple(highs), t_sorted=t_sorted)


def _numpy(s: pl.Series) -> np.ndarray:
    """A polars integer column as one contiguous numpy array: its chunks (as the CSV reader's
    threads left them) joined by numpy, about twice as fast as ``Series.to_numpy``'s own
    joining."""
    chunks = s.get_chunks()
    if len(chunks) == 1:
        return chunks[0].to_numpy()
    return np.concatenate([c.to_numpy() for c in chunks])


#: How far a log's time may step back (ms) before the file counts as several logs appended:
#: fio logs each job's samples in time order (no real log here steps back at all).
_TIME_BACK_MS = 100


def _raise_bad_line(path: Path, width: int, hexcols: set[int]) -> None:
    """Slow path, only when polars refused the file: finds and names the first bad line
    (``hexcols``: the fields that are hex, ``0x…``, as line 1's are)."""
    with path.open("r", errors="replace") as f:
        for lineno, line in enumerate(f, start=1):
            s = line.strip().rstrip(",")
            parts = [p.strip() for p in s.split(",")] if s else []
            if len(parts) != width:
                raise ImportFormatError(
                    f"{path} line {lineno}: has {len(parts)} fields where line 1 has {width}; "
                    "the file is truncated or mixes layouts"
                )
            if not all(
                re.fullmatch(r"0[xX][0-9a-fA-F]+" if i in hexcols else r"-?\d+", p)
                for i, p in enumerate(parts)
            ):
                raise ImportFormatError(
                    f"{path} line {lineno}: expected comma-separated integers, got {s[:60]!r}; "
                    "is this a fio log?"
                )
            raw = line.rstrip("\r\n").rstrip(",").split(",")
            spaced = [k for k, p in enumerate(raw) if p != p.rstrip()]
            if spaced:
                raise ImportFormatError(
                    f"{path} line {lineno}: field {spaced[0] + 1} ({raw[spaced[0]]!r}) has a space "
                    "after its value; fio writes ', ' between fields, so the file was edited "
                    "or written by another tool: remove the trailing spaces"
                )
            big = [p for p in parts if int(p, 0 if p[:2] in ("0x", "0X") else 10) >= 2**63]
            if big:
                raise FioFormatError(
                    f"{path} line {lineno}: value {big[0]} is a negative number wrapped around "
                    "(fio printed an unsigned underflow); the file is corrupt"
                )
    raise ImportFormatError(f"{path}: not a fio log (polars could not read it as integers)")
