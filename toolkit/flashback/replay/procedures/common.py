"""Workload builders and small statistics the protocols share."""

from __future__ import annotations

from typing import SupportsFloat

import numpy as np
import polars as pl

from flashback.workload import Workload

GB = 1e9


def num(value: object) -> float:
    """A polars statistic of a numeric column (``Series.mean()``, ``median()``, ``max()``...)
    as a float. Polars types those as any Python literal (dates, strings, lists, None); on the
    numeric columns the protocols read they are an int or a float.

    Raises:
        TypeError: ``value`` has no float value: None, the statistic of an empty or all-null
            column (the error ``float(None)`` raises).
    """
    if isinstance(value, SupportsFloat):
        return float(value)
    raise TypeError(f"a number was expected from a numeric column's statistic, got {value!r}")


def seq_fill(
    *, offset: int, size: int, data: str = "random", interval_s: float | None = None, seed: int = 1
) -> Workload:
    """One sequential pass of 128 KiB QD32 writes over ``[offset, offset + size)``."""
    return Workload(
        rw="write",
        bs="128k",
        iodepth=32,
        offset=offset,
        size=size,
        data=data,
        interval=interval_s,
        seed=seed,
    )


def rand_write(
    *,
    offset: int,
    size: int,
    time_s: float | None = None,
    written: int | None = None,
    iodepth: int = 32,
    data: str = "random",
    interval_s: float | None = None,
    seed: int = 1,
) -> Workload:
    """4 KiB uniform random writes (with replacement, as IOMeter) over the span."""
    return Workload(
        rw="randwrite",
        bs="4k",
        iodepth=iodepth,
        offset=offset,
        size=size,
        time=time_s,
        written=written,
        data=data,
        random="uniform",
        interval=interval_s,
        seed=seed,
    )


def rate(df: pl.DataFrame, col: str) -> float | None:
    """Bytes (or ios) per second over a step: ``col`` is ``write_bytes``, ``read_ios``..."""
    if df.is_empty():
        return None
    secs = num(df["interval_s"].sum())
    return float(df[col].sum()) / secs if secs > 0 else None


def step_wa(rep, name: str) -> float | None:
    """Write amplification during one step of a replay on a sim drive (ground truth).

    NAND bytes over host bytes written between the end of the previous step and the end of
    this one; ``None`` on a real target or when the step wrote nothing.
    """
    df = rep.intervals
    if "nand_written_bytes" not in df.columns or df.is_empty():
        return None
    idx = df.with_row_index("i").filter(pl.col("step") == name)["i"]
    if idx.is_empty():
        return None
    first, last = int(idx[0]), int(idx[-1])
    n0 = float(df["nand_written_bytes"][first - 1]) if first > 0 else 0.0
    h0 = float(df["host_written_bytes"][first - 1]) if first > 0 else 0.0
    host = float(df["host_written_bytes"][last]) - h0
    return (float(df["nand_written_bytes"][last]) - n0) / host if host > 0 else None


def mbps(df: pl.DataFrame, direction: str = "write") -> float | None:
    """Mean MB/s of a step (decimal MB, as reviews quote)."""
    r = rate(df, f"{direction}_bytes")
    return None if r is None else r / 1e6


def iops(df: pl.DataFrame, direction: str = "write") -> float | None:
    """Mean IOPS of a step."""
    return rate(df, f"{direction}_ios")


def regular(df: pl.DataFrame) -> pl.DataFrame:
    """The step's intervals without the short ones (a run's last, partial interval can last
    microseconds and show absurd rates); totals should use every row, per-interval
    statistics these."""
    if df.height < 3:
        return df
    typical = num(df["interval_s"].median())
    return df.filter(pl.col("interval_s") >= 0.5 * typical)


#: Noise a window of intervals may keep, as a fraction of the step's level (see
#: :func:`resolved_mbps`).
RESOLVED_NOISE = 0.02


def noise_sd(y: np.ndarray) -> float:
    """A series' interval-to-interval noise (standard deviation) from its first differences:
    their standard deviation / √2 (a level change is one difference among many; a robust
    median of differences reads 0 on a rate quantised to whole commands, which is noise)."""
    if y.size < 3:
        return 0.0
    return float(np.std(np.diff(y))) / np.sqrt(2)


def resolved_mbps(
    df: pl.DataFrame,
    *,
    scale: float,
    span: pl.DataFrame | None = None,
    noise: float = RESOLVED_NOISE,
) -> pl.DataFrame:
    """A step's write rate (MB/s) over windows of ``k`` consecutive intervals: columns
    ``step_t_s`` (the window's end, s) and ``write_mbps``; ``k`` is the fewest intervals whose
    mean keeps at most ``noise`` × the step's median rate of interval-to-interval noise
    (:func:`noise_sd` over the whole step ``span``, default ``df``; independent noise averages
    as 1/√k), never more than ``1 / scale`` intervals (the bytes the review's own interval
    held on the full-size drive) nor than ``df`` holds (pass the span a statistic is taken
    over: the windows stay inside it, and the coarsest is its mean).

    Why: on a drive scaled by ``scale`` an interval (``scale`` × the review's second) holds
    ``scale`` × the review's bytes, but GC still reclaims whole erase blocks and the host
    still writes whole commands, neither of which scales. An interval holding one or two
    erase blocks swings by a GC victim's copies (the m4 at 1/64: 15 to 21 128 KiB commands per
    interval around a mean of 18.5), so the lowest interval measures that jitter, not the
    drive's rate (BeHardware's early minimum was -16.7 % at 1/64 against full size; with
    windows of ≤ 2 % noise it is within 2.1 % at 1/64, 1/16 and 1/8 for the m4, Vertex 3 and
    SSD 510). A full-size drive, or a scaled one writing smoothly, keeps single intervals; a
    jittery scaled one resolves the rate only over its windows, and a dip shorter than a
    window is averaged: the SSD 320's 6 % drop in the last 4 s of BeHardware's first 30 s is
    4 intervals at 1/64, under one command's quantisation (3.3 %): with the noise taken over
    the whole step its early minimum read +1.4 % there, over the first 30 s (the span the
    minimum is taken over) -0.4 %. Short intervals are dropped first (:func:`regular`).
    """
    df = regular(df)
    if df.is_empty():
        return pl.DataFrame({"step_t_s": [], "write_mbps": []})
    whole = regular(df if span is None else span)
    level = num(whole["write_mbps"].median() or 0.0)
    sd = noise_sd(whole["write_mbps"].to_numpy().astype(float))
    k = 1
    if level > 0 and sd > 0:
        k = int(np.ceil((sd / (noise * level)) ** 2))
    k = max(1, min(k, int(1.0 / scale + 1e-9) if scale > 0 else 1, df.height))
    y = df["write_bytes"].to_numpy().astype(float)
    t = df["interval_s"].to_numpy().astype(float)
    ones = np.ones(k)
    rate = np.convolve(y, ones, "valid") / np.convolve(t, ones, "valid") / 1e6
    return pl.DataFrame({"step_t_s": df["step_t_s"].to_numpy()[k - 1 :], "write_mbps": rate})


def dip(
    df: pl.DataFrame, *, col: str = "write_mbps", drop: float = 0.7, window: int = 3
) -> tuple[float, int] | None:
    """When a step's level first falls below ``drop`` × its initial level.

    The initial level is the median of the first tenth of the step (at least three
    intervals); the series is a rolling mean of ``window`` intervals. Returns the step time
    (s, end of the interval) and the bytes written in the step up to then, or ``None``.
    """
    df = regular(df)
    if df.height < 2 * window:
        return None
    y = df[col].fill_null(0.0).to_numpy()
    head = max(3, df.height // 10)
    level = float(np.median(y[:head]))
    if level <= 0:
        return None
    smooth = np.convolve(y, np.ones(window) / window, mode="valid")
    below = np.nonzero(smooth < drop * level)[0]
    if below.size == 0:
        return None
    i = int(below[0])  # first interval of the window that falls below
    t = float(df["step_t_s"][i] - df["interval_s"][i])
    written = int(df["write_bytes"][:i].sum())
    return t, written


def three_levels(x: np.ndarray, y: np.ndarray, *, min_size: int = 3) -> tuple[float, float] | None:
    """Two breakpoints of the least-squares fit of exactly three constant levels to ``y(x)``.

    Returns the ``x`` where the second and third segments start, or ``None`` when there are
    fewer than ``3 × min_size`` points. Exhaustive over all pairs (O(n²), n ≈ a few hundred).
    """
    n = len(y)
    if n < 3 * min_size:
        return None
    c1 = np.concatenate([[0.0], np.cumsum(y)])
    c2 = np.concatenate([[0.0], np.cumsum(y * y)])

    def sse(a: int, b: int) -> float:
        s, s2, m = c1[b] - c1[a], c2[b] - c2[a], b - a
        return s2 - s * s / m

    best = (np.inf, 0, 0)
    for i in range(min_size, n - 2 * min_size + 1):
        left = sse(0, i)
        for j in range(i + min_size, n - min_size + 1):
            cost = left + sse(i, j) + sse(j, n)
            if cost < best[0]:
                best = (cost, i, j)
    _, i, j = best
    return float(x[i]), float(x[j])


def rounds_steady(
    values: list[float], *, window: int = 5, band: float = 0.20, slope_band: float = 0.10
) -> bool:
    """SNIA PTS steady state on the last ``window`` rounds: max − min ≤ ``band`` × mean and
    the least-squares line's excursion across the window ≤ ``slope_band`` × mean.

    Uses the analysis package's PTS check (``flashback.analysis.steady_state``) when it is
    installed, this local twin otherwise (the tests hold them to the same verdicts)."""
    if len(values) < window:
        return False
    w = np.asarray(values[-window:], dtype=float)
    shared = _shared_window_check()
    if shared is not None and (window, band, slope_band) == (5, 0.20, 0.10):
        return bool(shared(w, "snia")["ok"])
    mean = float(w.mean())
    if mean <= 0:
        return False
    slope = float(np.polyfit(np.arange(window), w, 1)[0])
    return (w.max() - w.min()) <= band * mean and abs(slope) * (window - 1) <= slope_band * mean


def _shared_window_check():  # type: ignore[no-untyped-def]
    try:
        from flashback.analysis.steady_state import window_check
    except ImportError:
        return None
    return window_check


def duration_row(test: str, seconds: float | None) -> dict:
    """The check that a step ran as long as the review's (seconds at the review's scale)."""
    from flashback.replay.base import check_row

    return check_row(
        test,
        "all",
        "duration_s",
        seconds,
        "s",
        drive=None,
        tolerance=0.02,
        note="at the review drive's scale",
        setting=True,
    )
