"""``read_fio``: fio's logs or JSON output → a :class:`~flashback.Capture` in the capture
schema (KiB/s and ns converted, directions split, jobs merged, regular intervals)."""

from __future__ import annotations

import glob
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from flashback.capture import Capture
from flashback.errors import ImportFormatError
from flashback.fio import logs
from flashback.fio.jsonout import read_json

DIRS = ("read", "write", "trim")


def _files(source: Any) -> list[Path]:
    if isinstance(source, (list, tuple)):
        return [Path(p) for p in source]
    p = Path(source)
    if p.is_dir():
        out = sorted(p.glob("*.log"))
    elif p.exists():
        out = [p]
    else:
        out = sorted(Path(f) for f in glob.glob(os.fspath(p) + "_*.log*"))
    if not out:
        raise ImportFormatError(
            f"{source}: no fio logs or JSON found; pass a log, a directory or a log prefix"
        )
    return out


def _integral_bins(
    t_ms: np.ndarray, rate: np.ndarray, edges_ms: np.ndarray, avg_ms: float
) -> np.ndarray:
    """Integrates a window-averaged rate (each sample covers (t − avg, t]) over bins."""
    order = np.argsort(t_ms, kind="stable")
    t, r = t_ms[order], rate[order]
    prev = np.concatenate([[t[0] - avg_ms], t[:-1]])
    start = np.maximum(prev, t - avg_ms)
    area = r * (t - start)
    cum = np.concatenate([[0.0], np.cumsum(area)])
    xs = np.empty(2 * t.size)
    ys = np.empty(2 * t.size)
    xs[0::2], xs[1::2] = start, t
    ys[0::2], ys[1::2] = cum[:-1], cum[1:]
    xs = np.maximum.accumulate(xs)
    c = np.interp(edges_ms, xs, ys, left=0.0, right=cum[-1])
    return np.diff(c)


def _hist_stats(counts: np.ndarray) -> dict[str, float]:
    total = counts.sum()
    if total <= 0:
        return {}
    vals = logs.plat_idx_to_val(np.arange(counts.size))
    cdf = np.cumsum(counts) / total
    q = {
        p: float(vals[min(int(np.searchsorted(cdf, p)), counts.size - 1)])
        for p in (0.5, 0.99, 0.999)
    }
    return {
        "ios": float(total),
        "mean": float((vals * counts).sum() / total),
        "p50": q[0.5],
        "p99": q[0.99],
        "p999": q[0.999],
        "max": float(vals[np.nonzero(counts)[0].max()]),
    }


#: intervals one import may make (10⁷: 115 days of 1 s intervals); a time column beyond that is
#: a damaged log, and would otherwise exhaust memory
MAX_INTERVALS = 10_000_000


def read_fio(
    source: str | os.PathLike[str] | list[str | os.PathLike[str]],
    *,
    interval: float = 1.0,
    window_value: str | None = None,
    log_offset: bool | None = None,
    capacity_bytes: int | None = None,
) -> Capture:
    """Reads fio output into a capture.

    ``source``: fio's JSON/json+ output file, one log, a list of logs, a directory of logs,
    or the log prefix given to ``write_*_log`` (``PREFIX_bw.1.log`` ...). Averaged logs
    (``log_avg_msec``) are integrated over regular ``interval``-second intervals; per-I/O
    logs are counted; clat histogram logs give exact-bucket percentiles; jobs are summed
    (rates) or averaged (latencies); intervals without samples are zero.

    Raises:
        ImportFormatError: a malformed line (names file and line), unknown file names, or
            no data.
    """
    files = _files(source)
    if len(files) == 1 and (
        files[0].suffix == ".json" or files[0].read_bytes()[:200].lstrip().startswith(b"{")
    ):
        return read_json(files[0], capacity_bytes=capacity_bytes)
    parsed: dict[str, list[pl.DataFrame]] = {k: [] for k in logs.KINDS}
    hists = []
    for f in files:
        kind, _job = logs.kind_of(f)
        if kind == "clat_hist":
            hists.append(logs.parse_hist(f))
        else:
            parsed[kind].append(logs.parse_log(f, window_value=window_value, log_offset=log_offset))
    t_max = max(
        [float(d["time_ms"].max()) for v in parsed.values() for d in v if d.height]
        + [float(h[0].max()) for h in hists if h[0].size]
        + [0.0]
    )
    if t_max <= 0:
        raise ImportFormatError(
            f"{files[0]}: the fio logs hold no samples; run fio longer or check log_avg_msec"
        )
    iv_ms = interval * 1000.0
    n = max(1, math.ceil(t_max / iv_ms - 1e-9))
    if not math.isfinite(t_max) or n > MAX_INTERVALS:
        raise ImportFormatError(
            f"{files[0]}: a sample at {t_max:g} ms would make {n:g} intervals of {interval:g} s "
            f"(at most {MAX_INTERVALS:,}); check the log's time column or pass a longer interval"
        )
    edges = np.arange(n + 1) * iv_ms
    cols: dict[str, Any] = {
        "t_s": (np.arange(n) + 1) * interval,
        "interval_s": np.full(n, interval),
    }
    for d, name in enumerate(DIRS):
        ios, nbytes = (
            _rate_series(parsed["iops"], d, edges, iv_ms, unit=1.0),
            _rate_series(parsed["bw"], d, edges, iv_ms, unit=1024.0),
        )
        lat_src = parsed["clat"] or parsed["lat"]
        lat = _lat_series(lat_src, d, edges)
        hist = [h for h in hists if h[0].size]
        if hist:
            lat_h, ios_h = _hist_series(hist, d, edges)
            if ios is None:
                ios = ios_h
            if name != "trim":
                lat = lat_h if lat is None or not parsed["clat"] else lat
        if ios is None:
            ios = _count_series(lat_src, d, edges)
        if nbytes is None:
            nbytes = _bytes_series(lat_src + parsed["iops"], d, edges)
        ios = np.zeros(n) if ios is None else ios
        nbytes = np.zeros(n) if nbytes is None else nbytes
        cols[f"{name}_ios"] = np.round(ios).astype(np.uint64)
        cols[f"{name}_bytes"] = np.round(nbytes).astype(np.uint64)
        cols[f"{name}_iops"] = ios / interval
        if name != "trim":
            cols[f"{name}_mbps"] = nbytes / interval / 1e6
            for s in ("mean", "p50", "p99", "p999", "max"):
                v = None if lat is None else lat.get(s)
                cols[f"{name}_lat_{s}_us"] = np.full(n, np.nan) if v is None else v / 1000.0
    df = pl.DataFrame(cols)
    df = df.with_columns([pl.col(c).fill_nan(None) for c in df.columns if "_lat_" in c])
    df = df.with_columns(
        pl.col("write_bytes").cum_sum().alias("host_written_bytes"), pl.lit("fio").alias("step")
    )
    meta = {
        "source": "fio",
        "files": [str(f) for f in files],
        "status": "complete",
        "target": {"kind": "fio", "size_bytes": capacity_bytes},
    }
    return Capture(intervals=df, meta=meta)


def _dir_frames(frames: list[pl.DataFrame], d: int) -> list[pl.DataFrame]:
    return [f.filter(pl.col("ddir") == d) for f in frames]


def _per_io(f: pl.DataFrame) -> bool:
    return f.height > 0 and float((f["bs"] > 0).mean()) > 0.5


def _avg_ms(f: pl.DataFrame) -> float:
    t = np.unique(f["time_ms"].to_numpy())
    # The smallest spacing is log_avg_msec; longer gaps are windows without samples.
    return float(np.diff(t).min()) if t.size > 1 else float(t[0] or 1.0)


def _rate_series(frames, d, edges, iv_ms, *, unit):
    fs = [f for f in _dir_frames(frames, d) if f.height]
    if not frames:
        return None
    total = np.zeros(edges.size - 1)
    for f in fs:
        t = f["time_ms"].to_numpy()
        if _per_io(f):
            if unit == 1.0:
                total += np.histogram(t, bins=edges)[0] * 1000.0 / iv_ms
            else:
                total += (
                    np.histogram(t, bins=edges, weights=f["bs"].to_numpy())[0]
                    * 1000.0
                    / iv_ms
                    / unit
                )
        else:
            total += _integral_bins(t, f["value"].to_numpy(), edges, _avg_ms(f)) / iv_ms
    return total * unit * iv_ms / 1000.0


def _lat_series(frames, d, edges):
    fs = [f for f in _dir_frames(frames, d) if f.height]
    if not fs:
        return None
    t = np.concatenate([f["time_ms"].to_numpy() for f in fs])
    v = np.concatenate([f["value"].to_numpy() for f in fs])
    vmax = np.concatenate([f["value_max"].to_numpy() for f in fs])
    b = np.clip(np.searchsorted(edges, t, side="left") - 1, 0, edges.size - 2)
    n = edges.size - 1
    out = {k: np.full(n, np.nan) for k in ("mean", "p50", "p99", "p999", "max")}
    order = np.argsort(b, kind="stable")
    b, v, vmax = b[order], v[order], vmax[order]
    splits = np.flatnonzero(np.diff(b)) + 1
    for idx, vv, mm in zip(np.split(b, splits), np.split(v, splits), np.split(vmax, splits)):
        i = idx[0]
        out["mean"][i] = vv.mean()
        out["p50"][i], out["p99"][i], out["p999"][i] = np.percentile(vv, [50, 99, 99.9])
        out["max"][i] = mm.max()
    return out


def _hist_series(hists, d, edges):
    n = edges.size - 1
    acc: dict[int, np.ndarray] = {}
    for t, dd, counts in hists:
        sel = dd == d
        b = np.clip(np.searchsorted(edges, t[sel], side="left") - 1, 0, n - 1)
        for i, c in zip(b, counts[sel]):
            acc[i] = acc.get(i, 0) + c
    out = {k: np.full(n, np.nan) for k in ("mean", "p50", "p99", "p999", "max")}
    ios = np.zeros(n)
    for i, c in acc.items():
        s = _hist_stats(np.asarray(c))
        if s:
            ios[i] = s["ios"]
            for k in out:
                out[k][i] = s[k]
    return out, ios


def _count_series(frames, d, edges):
    fs = [f for f in _dir_frames(frames, d) if _per_io(f)]
    if not fs:
        return None
    return sum(np.histogram(f["time_ms"].to_numpy(), bins=edges)[0] for f in fs).astype(float)


def _bytes_series(frames, d, edges):
    fs = [f for f in _dir_frames(frames, d) if _per_io(f)]
    if not fs:
        return None
    return sum(
        np.histogram(f["time_ms"].to_numpy(), bins=edges, weights=f["bs"].to_numpy())[0] for f in fs
    )
