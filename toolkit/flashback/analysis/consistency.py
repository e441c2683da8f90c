"""``consistency``: the reviews' performance-consistency metrics over the last part of a run."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from flashback.analysis import frames


def consistency(
    data: Any,
    *,
    y: str = "write_iops",
    last_s: float = 400.0,
    band: float = 0.10,
    stall_frac: float = 0.10,
    step: str | None = None,
) -> dict[str, float]:
    """Consistency of ``y`` over the last ``last_s`` seconds (AnandTech/TweakTown style).

    Returns a dict: ``seconds``, ``mean``, ``sd``, ``mean_per_sd`` (IOPS/SD; higher is
    steadier), ``cv``, ``min`` (worst interval), ``p1`` (1st percentile),
    ``pct_within_band`` (% of intervals within ±``band`` of the mean), ``stall_seconds``
    (seconds below ``stall_frac`` × mean), and, when the capture has them, ``lat_p99_us`` and
    ``lat_p999_us`` (median of the per-interval percentiles of the matching direction) and
    ``lat_max_us`` (largest per-interval maximum).

    Raises:
        AnalysisError: bad input (empty, NaN, missing column, unknown step).
    """
    df, _ = frames.as_frame(data)
    if step is not None:
        df = df.filter(pl.col("step") == step) if "step" in df.columns else df.clear()
    frames.need_rows(df.height, 2, "consistency")
    t = (
        frames.column(df, "t_s", role="t_s")
        if "t_s" in df.columns
        else np.arange(df.height, dtype=float)
    )
    keep = t > t[-1] - last_s
    part = df.filter(pl.Series(keep))
    v = frames.column(part, y, role="y")
    dt = part["interval_s"].to_numpy() if "interval_s" in part.columns else np.ones(v.size)
    mean = float(v.mean())
    sd = float(v.std(ddof=1)) if v.size > 1 else 0.0
    out = {
        "seconds": float(dt.sum()),
        "mean": mean,
        "sd": sd,
        "mean_per_sd": mean / sd if sd > 0 else float("inf"),
        "cv": sd / mean if mean else float("nan"),
        "min": float(v.min()),
        "p1": float(np.percentile(v, 1)),
        "pct_within_band": 100.0 * float(np.mean(np.abs(v - mean) <= band * abs(mean))),
        "stall_seconds": float(dt[v < stall_frac * mean].sum()),
    }
    d = y.split("_")[0] if y.split("_")[0] in ("read", "write") else "write"
    for col, key, agg in (
        (f"{d}_lat_p99_us", "lat_p99_us", "median"),
        (f"{d}_lat_p999_us", "lat_p999_us", "median"),
        (f"{d}_lat_max_us", "lat_max_us", "max"),
    ):
        if col in part.columns:
            s = (
                part[col].drop_nulls().drop_nans()
                if part[col].dtype.is_float()
                else part[col].drop_nulls()
            )
            out[key] = float(getattr(s, agg)()) if s.len() else float("nan")
    return out
