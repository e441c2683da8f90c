"""Parsing fio's text logs into per-job sample frames.

Layouts (comma-separated integers, one sample per line):

- fio ≤ 3.2x: ``time_ms, value, ddir, bs`` (+ ``offset`` with ``log_offset=1``)
- fio 3.33:   ``time_ms, value, ddir, bs, prio`` (``log_offset=1``: ``…, bs, offset, prio``)
- newer fio:  ``log_window_value=both`` gives ``time_ms, mean, max, ddir, bs, …``;
  ``log_issue_time=1`` appends ``issue_time_ns``.
- clat hist logs (``log_hist_msec``): ``time_ms, ddir, bs, count_0 … count_1215``.

Values: bw in KiB/s, iops in IO/s, latencies in ns. ``bs`` is 0 in averaged logs
(``log_avg_msec > 0``) and the I/O size in per-I/O logs.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl

from flashback.errors import ImportFormatError

KINDS = ("bw", "iops", "lat", "clat", "slat", "clat_hist")
_NAME = re.compile(r"_(bw|iops|lat|clat|slat|clat_hist)(?:\.(\d+))?\.log(?:\.\w+)?$")


def kind_of(path: Path) -> tuple[str, int]:
    """(kind, job number) from a fio log file name such as ``x_clat.2.log``.

    Raises:
        ImportFormatError: the name is not a fio log name.
    """
    m = _NAME.search(path.name)
    if not m:
        raise ImportFormatError(
            f"{path}: not a fio log name (expected NAME_bw|iops|lat|clat|slat|clat_hist[.N].log); "
            "rename it or pass the JSON output"
        )
    return m.group(1), int(m.group(2) or 1)


def _rows(path: Path) -> tuple[np.ndarray, int]:
    text = path.read_text(errors="replace")
    rows, width = [], None
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s:
            continue
        parts = [p.strip() for p in s.split(",")]
        if parts and parts[-1] == "":
            parts.pop()
        try:
            vals = [int(p) for p in parts]
        except ValueError:
            raise ImportFormatError(
                f"{path} line {lineno}: expected comma-separated integers, got {s[:60]!r}; "
                "is this a fio log?"
            ) from None
        if width is None:
            width = len(vals)
        if len(vals) != width or width < 3:
            raise ImportFormatError(
                f"{path} line {lineno}: has {len(vals)} fields where earlier lines have {width}; "
                "the file is truncated or mixes layouts"
            )
        rows.append(vals)
    if not rows:
        return np.zeros((0, 0), dtype=np.int64), 0
    return np.asarray(rows, dtype=np.float64), width or 0


def parse_log(
    path: Path, *, window_value: str | None = None, log_offset: bool | None = None
) -> pl.DataFrame:
    """One fio sample log → frame ``time_ms, value, value_max, ddir, bs, offset``.

    Raises:
        ImportFormatError: malformed line (names file and line) or an unknown layout.
    """
    a, w = _rows(path)
    cols = ["time_ms", "value", "value_max", "ddir", "bs", "offset"]
    if a.shape[0] == 0:
        return pl.DataFrame({c: [] for c in cols}, schema={c: pl.Float64 for c in cols})
    both = window_value == "both"
    if window_value is None and w >= 6:
        # 'both' puts ddir in column 3; plain layouts have it in column 2.
        col2_is_ddir = np.isin(a[:, 2], (0, 1, 2)).all()
        col3_is_ddir = np.isin(a[:, 3], (0, 1, 2)).all()
        both = bool(col3_is_ddir and not col2_is_ddir)
    i = 2 if both else 1
    if w < i + 2:
        raise ImportFormatError(f"{path}: {w} fields per line is not a fio log layout")
    ddir = a[:, i + 1]
    bs = a[:, i + 2] if w > i + 2 else np.zeros(len(a))
    rest = w - (i + 3)  # fields after bs: [offset], [prio], [issue_time]
    has_offset = log_offset if log_offset is not None else rest >= 2
    offset = a[:, i + 3] if has_offset and rest >= 1 else np.zeros(len(a))
    if not np.isin(ddir, (0, 1, 2)).all():
        bad = int(np.argmax(~np.isin(ddir, (0, 1, 2))))
        raise ImportFormatError(
            f"{path} line {bad + 1}: data direction {int(ddir[bad])} is not 0, 1 or 2; pass "
            "window_value='both' or log_offset= if the layout was guessed wrong"
        )
    return pl.DataFrame(
        {
            "time_ms": a[:, 0],
            "value": a[:, 1],
            "value_max": a[:, 2] if both else a[:, 1],
            "ddir": ddir,
            "bs": bs,
            "offset": offset,
        }
    )


def plat_idx_to_val(idx: np.ndarray, bits: int = 6) -> np.ndarray:
    """fio's latency histogram bucket index → the bucket's mid value in ns."""
    val = 1 << bits
    idx = np.asarray(idx, dtype=np.int64)
    out = idx.astype(np.float64)
    hi = idx >= (val << 1)
    error_bits = (idx[hi] >> bits) - 1
    base = np.left_shift(1, error_bits + bits).astype(np.float64)
    k = idx[hi] % val
    out[hi] = base + (k + 0.5) * np.left_shift(1, error_bits).astype(np.float64)
    return out


def parse_hist(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """clat hist log → (time_ms, ddir, counts[n_lines, n_bins]).

    Raises:
        ImportFormatError: malformed line.
    """
    a, w = _rows(path)
    if a.shape[0] == 0:
        return np.zeros(0), np.zeros(0), np.zeros((0, 0))
    return a[:, 0], a[:, 1], a[:, 3:]
