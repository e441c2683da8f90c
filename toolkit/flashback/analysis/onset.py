"""``steady_state_onset``: where a write run levels off, from a piecewise-linear segmentation in
the bytes-written domain (a cliff is a step, the slide after it a ramp, steady state a flat
line), with a confidence interval for the onset."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import polars as pl

from flashback import _native
from flashback.analysis import blocks, frames, noise
from flashback.analysis.changepoints import (
    CAPTURE_SUFFIXES,
    LINEAR_PENALTY_FACTOR,
    explicit_penalty,
)
from flashback.errors import AnalysisError, ParameterError

#: a segment is flat when its line changes by at most this fraction across it (the PTS
#: slope limit)
FLAT_FRACTION = 0.10

#: bins the series is averaged into before the search
DEFAULT_BINS = 1000

#: running-median window (intervals) stalls are clipped around before binning: longer than
#: the longest stalls (Pareto-length stalls of tens of seconds)
STALL_WINDOW = 121


@dataclasses.dataclass(kw_only=True)
class Onset:
    """Where the series levels off.

    Attributes:
        reached: whether the last segment is flat (changes by at most 10 % across it).
        x, lo, hi: onset and its confidence interval on the ``x`` axis (None if not reached).
        bytes, lo_bytes, hi_bytes: the same in host bytes written (NaN without that column).
        seconds: the onset in seconds (NaN without ``t_s``).
        level: mean of ``y`` from the onset on.
        level_pct: confidence level of ``lo``/``hi``.
        penalty: penalty of the piecewise-linear search (squared units of the binned signal).
        segments: one row per linear segment: ``x_start``, ``x_end``, ``start``, ``end``
            (levels of ``y`` at its two ends, back-transformed), ``change_frac``.
    """

    reached: bool
    x: float | None
    lo: float | None
    hi: float | None
    bytes: float
    lo_bytes: float
    hi_bytes: float
    seconds: float
    level: float
    level_pct: float
    penalty: float
    x_name: str
    y_name: str
    segments: pl.DataFrame

    def __bool__(self) -> bool:
        return self.reached

    def describe(self) -> str:
        """One line: where the series levels off (bytes, with its interval), or that it does not."""
        if not self.reached:
            return f"{self.y_name} has not levelled off (its last segment still slopes)"
        gb = f"{self.bytes / 1e9:.4g} GB [{self.lo_bytes / 1e9:.4g}, {self.hi_bytes / 1e9:.4g}]"
        return (
            f"{self.y_name} levels off at {gb} written ({100 * self.level_pct:.0f} % CI), "
            f"{self.seconds:.0f} s; level {self.level:.4g} from there on"
        )


def _lr_threshold(level: float) -> float:
    """Likelihood-ratio threshold of a break-location interval (Hansen 2000:
    −2 ln(1 − √level))."""
    return -2.0 * math.log(1.0 - math.sqrt(level))


def steady_state_onset(
    data: Any,
    *,
    x: str = "host_written_bytes",
    y: str = "write_mbps",
    transform: str | None = "auto",
    bins: int = DEFAULT_BINS,
    penalty: float | str = "auto",
    confidence: float = 0.95,
) -> Onset:
    """Finds where ``y`` levels off along ``x``: the start of the last segment of a
    piecewise-linear segmentation (native exact PELT, each segment its own line), if that
    segment is flat.

    The series is averaged into ``bins`` bins of equal numbers of intervals (stalls clipped
    to 2 σ̂ of a running median first), so the search costs the same for 10,000 and 400,000
    intervals. The interval is read from the profile of a two-line fit over the last two
    segments: every split whose cost is within the likelihood-ratio threshold
    (Hansen 2000: −2 ln(1 − √confidence)) times the long-run variance of the bins.

    Args:
        x: the axis (``host_written_bytes``, ``t_s``...), non-decreasing.
        y: the series; ``transform`` ``"auto"`` segments log(y) for ``*_mbps``, ``*_iops``
            and ``*_us`` columns.
        bins: number of bins (at most the number of rows).
        penalty: ``"auto"`` = 4 · ln K · long-run variance of the K bins, or a number.
        confidence: confidence level of the interval (0 < confidence < 1).

    Raises:
        AnalysisError: bad input (see :func:`flashback.changepoints`), fewer than 20 rows, a
            bad ``bins``, ``penalty`` or ``confidence``.
    """
    df, _meta = frames.as_frame(data)
    xs = frames.column(df, x, role="x")
    frames.check_x(xs, x)
    raw = frames.column(df, y, role="y")
    frames.need_rows(raw.size, 20, "a steady-state onset")
    confidence = frames.confidence_level(confidence)
    if int(bins) < 20:
        raise AnalysisError(f"bins must be at least 20, got {bins!r}")
    if transform == "auto":
        transform = "log" if y.endswith(CAPTURE_SUFFIXES) and (raw > 0).mean() > 0.5 else None
    sig = frames.transformed(raw, transform, y)
    n = sig.size
    sigma, _rho = noise.residual_scale(sig, window=STALL_WINDOW)
    work = noise.huberize(sig, sigma, window=STALL_WINDOW) if sigma > 0 else sig
    edges = blocks.bin_edges(n, int(bins))
    ybin = blocks.bin_means(work, edges)
    xbin = blocks.bin_means(xs, edges)
    k = ybin.size
    lrv = max(noise.long_run_variance(ybin, min_blocks=16), 1e-12 * max(1.0, float(np.var(ybin))))
    if penalty == "auto":
        pen = LINEAR_PENALTY_FACTOR * math.log(k) * lrv
    else:
        pen = explicit_penalty(penalty)
    m = max(3, k // 50)
    try:
        ends = list(_native.pelt_linear_search(xbin, ybin, pen, m))
    except (ParameterError, OverflowError) as err:
        raise AnalysisError(str(err)) from None
    starts = [0] + ends[:-1]
    back = (lambda v: float(np.exp(v))) if transform == "log" else float
    seg_rows = []
    lines = []
    for s, e in zip(starts, ends, strict=True):
        xx, yy = xbin[s:e], ybin[s:e]
        xc = xx - xx.mean()
        den = float(np.dot(xc, xc))
        slope = float(np.dot(xc, yy - yy.mean()) / den) if den > 0 else 0.0
        y0 = float(yy.mean() + slope * (xx[0] - xx.mean()))
        y1 = float(yy.mean() + slope * (xx[-1] - xx.mean()))
        a, b = back(y0), back(y1)
        change = abs(b - a) / max(abs(a), abs(b), 1e-300)
        lines.append(change)
        seg_rows.append(
            {
                "x_start": float(xs[edges[s]] if edges[s] == 0 else xs[edges[s] - 1]),
                "x_end": float(xs[edges[e] - 1]),
                "start": a,
                "end": b,
                "change_frac": change,
            }
        )
    # the steady segment is the last one; the onset is where it starts
    last_start = starts[-1]
    reached = lines[-1] <= FLAT_FRACTION
    hb = (
        frames.column(df, "host_written_bytes", role="host_written_bytes")
        if ("host_written_bytes" in df.columns)
        else None
    )
    t = frames.column(df, "t_s", role="t_s") if "t_s" in df.columns else None
    nan = float("nan")

    def row_start(i_bin: int, col: np.ndarray | None, name: str) -> float:
        """Value of ``col`` where bin ``i_bin`` starts (the end of the row before)."""
        if col is None:
            return nan
        r = int(edges[i_bin])
        if r > 0:
            return float(col[r - 1])
        inc = {"host_written_bytes": "write_bytes", "t_s": "interval_s"}.get(name)
        first = float(df.get_column(inc)[0]) if inc and inc in df.columns else 0.0
        return float(col[0]) - first

    level_y = float(raw[edges[last_start] :].mean())
    if not reached or len(starts) < 2:
        xo = row_start(last_start, xs, x) if reached else None
        return Onset(
            reached=reached,
            x=xo,
            lo=xo,
            hi=xo,
            bytes=row_start(last_start, hb, "host_written_bytes") if reached else nan,
            lo_bytes=row_start(last_start, hb, "host_written_bytes") if reached else nan,
            hi_bytes=row_start(last_start, hb, "host_written_bytes") if reached else nan,
            seconds=row_start(last_start, t, "t_s") if reached else nan,
            level=level_y,
            level_pct=confidence,
            penalty=pen,
            x_name=x,
            y_name=y,
            segments=pl.DataFrame(seg_rows),
        )
    a = starts[-2]
    xx, yy = xbin[a:], ybin[a:]
    lo_k, hi_k = 2, yy.size - 2
    costs = np.asarray(_native.linear_split_costs(xx, yy, lo_k, hi_k))
    ok = np.flatnonzero(costs - costs.min() <= _lr_threshold(confidence) * lrv) + lo_k
    i_lo, i_hi = a + int(ok.min()), a + int(ok.max())
    i_lo, i_hi = min(i_lo, last_start), max(i_hi, last_start)
    return Onset(
        reached=True,
        x=row_start(last_start, xs, x),
        lo=row_start(i_lo, xs, x),
        hi=row_start(i_hi, xs, x),
        bytes=row_start(last_start, hb, "host_written_bytes"),
        lo_bytes=row_start(i_lo, hb, "host_written_bytes"),
        hi_bytes=row_start(i_hi, hb, "host_written_bytes"),
        seconds=row_start(last_start, t, "t_s"),
        level=level_y,
        level_pct=confidence,
        penalty=pen,
        x_name=x,
        y_name=y,
        segments=pl.DataFrame(seg_rows),
    )
