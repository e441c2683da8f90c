"""fio's latency histograms (``log_hist_msec`` logs and json+ ``bins``).

fio buckets latencies with ``FIO_IO_U_PLAT_BITS = 6``: values below 128 units have their own
bucket, each later power of two is split in 64. fio < 3.0 has 19 groups (1216 buckets, µs);
fio ≥ 3.0 has 29 groups (1856 buckets, ns).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from flashback.errors import FioFormatError
from flashback.fio.logtable import read_table
from flashback.fio.version import Version

BUCKETS_NS = 1856  # fio >= 3.0
BUCKETS_US = 1216  # fio < 3.0
#: Most I/Os a histogram line may count per ms since the job started (10⁹ IOPS, ~100× the
#: fastest single devices). A real log from fio 3.7's client/server mode holds garbage counts
#: (up to 8e18 in one bucket, tests/data/fio), which no run can produce.
MAX_IOS_PER_MS = 1e6


def bucket_values(idx: np.ndarray, bits: int = 6) -> np.ndarray:
    """fio's bucket index → the bucket's representative value (fio's ``plat_idx_to_val``:
    the middle of the bucket), in the histogram's unit."""
    val = 1 << bits
    idx = np.asarray(idx, dtype=np.int64)
    out = idx.astype(np.float64)
    hi = idx >= (val << 1)
    error_bits = (idx[hi] >> bits) - 1
    base = np.left_shift(1, error_bits + bits).astype(np.float64)
    k = idx[hi] % val
    out[hi] = base + (k + 0.5) * np.left_shift(1, error_bits).astype(np.float64)
    return out


def layout_version(n_buckets: int, path: Path | str) -> tuple[Version, Version, float]:
    """(lowest, first-excluded fio version, ns per unit) a histogram of ``n_buckets`` implies.

    Raises:
        FioFormatError: neither 1216 nor 1856 buckets.
    """
    if n_buckets == BUCKETS_NS:
        return (3, 0), (99, 0), 1.0
    if n_buckets == BUCKETS_US:
        return (0, 0), (3, 0), 1000.0
    coarse = any(n_buckets << c in (BUCKETS_NS, BUCKETS_US) for c in range(1, 7))
    raise FioFormatError(
        f"{path}: a histogram log with {n_buckets} buckets; fio writes 1216 (fio 2.x) or 1856 "
        "(fio 3.x)" + ("; logs written with log_hist_coarseness > 0 are not read" if coarse else "")
    )


def parse_hist(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """clat hist log → (time_ms, ddir, counts[n_lines, n_buckets]).

    Raises:
        ImportFormatError: malformed line.
        FioFormatError: fewer than the time, direction, block size and one bucket on a line;
            negative counts, or a line counting more I/Os than any device can do
            in the time since the job started (a corrupt file).
    """
    a = read_table(path)
    if a.shape[0] == 0:
        return np.zeros(0), np.zeros(0), np.zeros((0, BUCKETS_NS))
    if a.shape[1] < 4:
        raise FioFormatError(
            f"{path}: a histogram log line holds {a.shape[1]} field(s); fio writes the time, "
            "direction, block size and then 1216 (fio 2.x) or 1856 (fio 3.x) bucket counts"
        )
    t_ms, counts = a[:, 0].astype(np.float64), a[:, 3:].astype(np.float64)
    limit = np.maximum(t_ms, 1.0) * MAX_IOS_PER_MS
    bad = counts.sum(axis=1) > limit
    if bad.any():
        k = int(np.argmax(bad))
        raise FioFormatError(
            f"{path} line {k + 1}: the buckets count {counts[k].sum():.3g} I/Os by "
            f"{t_ms[k]:g} ms, more than {MAX_IOS_PER_MS * 1000:.0e} I/O/s; the histogram is "
            "corrupt"
        )
    return t_ms, a[:, 1], counts


def stats(counts: np.ndarray, *, ns_per_unit: float) -> dict[str, float] | None:
    """count, mean, p50/p99/p999 and max (µs) of one histogram; fio's percentile rule: the
    first bucket whose cumulative count reaches p·N. ``None`` when empty."""
    total = float(counts.sum())
    if total <= 0:
        return None
    vals = bucket_values(np.arange(counts.size)) * ns_per_unit / 1000.0
    cum = np.cumsum(counts)
    q = {
        k: float(vals[min(int(np.searchsorted(cum, p * total - 1e-9)), counts.size - 1)])
        for k, p in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999))
    }
    return {
        "ios": total,
        "mean": float((vals * counts).sum() / total),
        **q,
        "max": float(vals[np.nonzero(counts)[0].max()]),
    }


def stats_from_bins(bins: dict[str, float], *, ns_per_unit: float) -> dict[str, float] | None:
    """Same as :func:`stats` for json+ ``bins`` (``{value: count}``, values in the block's
    unit, already bucket values)."""
    if not bins:
        return None
    v = np.array([float(k) for k in bins]) * ns_per_unit / 1000.0
    n = np.array([float(x) for x in bins.values()])
    o = np.argsort(v)
    v, n = v[o], n[o]
    total = n.sum()
    if total <= 0:
        return None
    cum = np.cumsum(n)
    out = {"ios": float(total), "mean": float((v * n).sum() / total), "max": float(v[n > 0].max())}
    for k, p in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999)):
        out[k] = float(v[min(int(np.searchsorted(cum, p * total - 1e-9)), v.size - 1)])
    return out
