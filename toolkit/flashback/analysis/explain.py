"""Explain the drops: for each change point of a capture, what coincides with it — a
thermal-throttle transition or a temperature at the drive's limit, host bytes written ≈ the
SLC cache or ≈ a whole number of drive fills, write amplification rising across it, an idle
gap — as evidence beside the breakpoint. Coincidence, not proof: each item says what was
seen and where.

Columns read (all optional): ``drive_temp_c``, ``drive_throttle`` (throttle state over
the last sample period), ``drive_host_written_bytes`` / ``drive_nand_written_bytes`` (the drive's
counters; on a simulated drive the simulator's ``nand_written_bytes`` when those are absent,
labelled ground truth), ``host_written_bytes``, ``*_ios``, ``t_s``, ``interval_s``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from flashback.errors import AnalysisError
from flashback.telemetry.wa import ratio_bounds

#: a temperature within this many °C of the drive's warning threshold counts as "at it"
TEMP_MARGIN_C = 3.0
#: host bytes within this fraction of the SLC cache size count as "≈ the cache"
SLC_REL_TOL = 0.15
#: a drive's write cliff comes after a fill plus its spare area (over-provisioning and SLC
#: cache, where known): host bytes between (k − FILL_BELOW)·capacity and
#: k·capacity + spare + FILL_BELOW·capacity count as "≈ k fills"; with the spare unknown it is
#: taken as FILL_SPARE_UNKNOWN·capacity
FILL_BELOW, FILL_SPARE_UNKNOWN = 0.10, 0.30
#: write amplification "rises" across a change when the lower bound after exceeds the upper
#: bound before by this factor
WA_RISE = 1.10
#: rows either side of a breakpoint's uncertainty interval searched for evidence
PAD_ROWS = 2

NO_EVIDENCE = "no coincident telemetry evidence"


def _meta_num(meta: dict[str, Any], *paths: tuple[str, ...]) -> float | None:
    for path in paths:
        v: Any = meta
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    return None


def _gb(b: float) -> str:
    return f"{b / 1e9:.3g} GB"


def _wa(df: pl.DataFrame, a: int, b: int, cols: tuple[str, str], units: tuple[float, float]):
    """(wa, lo, hi) of rows a..b (end values of row a-1 .. row b), or None."""
    h, n = cols
    if b <= a:
        return None
    hv, nv = df[h].to_numpy(), df[n].to_numpy()
    h0, h1, n0, n1 = hv[a], hv[b], nv[a], nv[b]
    if any(v is None or not np.isfinite(float(v)) for v in (h0, h1, n0, n1)):
        return None
    w = ratio_bounds(
        host_bytes=float(h1) - float(h0),
        nand_bytes=float(n1) - float(n0),
        host_error_bytes=units[0],
        nand_error_bytes=units[1],
    )
    return None if w.wa is None else (w.wa, w.wa_lo, w.wa_hi)


def explain(
    cap: Any,
    segments: Any,
    *,
    slc_cache_bytes: float | None = None,
    capacity_bytes: float | None = None,
    temp_limit_c: float | None = None,
) -> pl.DataFrame:
    """Evidence beside each breakpoint of ``segments`` (from :func:`flashback.changepoints`
    on ``cap``).

    Args:
        cap: the capture segmented (``.intervals``, ``.meta``).
        segments: its :class:`~flashback.analysis.segments.Segments` (no ``by=`` groups).
        slc_cache_bytes: the drive's SLC cache, bytes (default: a simulated drive's
            ``slc_cache``; else not used).
        capacity_bytes: one drive fill, bytes (default: the target's size).
        temp_limit_c: the drive's warning temperature, °C (default: from the metadata's
            telemetry or SMART snapshot).

    Returns:
        One row per breakpoint: ``x``, ``x_lo``, ``x_hi``, ``t_s``, ``host_written_bytes``,
        ``causes`` (list of ``throttle``, ``temperature``, ``slc_cache``, ``drive_fill``,
        ``wa_rising``, ``idle_gap``, ``sim_event``), ``evidence`` (one sentence per cause,
        ``; ``-joined, or ``"no coincident telemetry evidence"``).

    Raises:
        AnalysisError: ``segments`` was computed with ``by=`` (explain each group's capture
            on its own), or its x column is not in the capture.
    """
    df: pl.DataFrame = cap.intervals
    meta: dict[str, Any] = getattr(cap, "meta", None) or {}
    if "group" in segments.frame.columns:
        raise AnalysisError("explain: segments with by= groups; explain each group on its own")
    if segments.x not in df.columns:
        raise AnalysisError(f"explain: the capture has no column {segments.x!r}")
    x = df[segments.x].cast(pl.Float64).to_numpy()
    n = len(x)
    slc = slc_cache_bytes or _meta_num(meta, ("target", "config", "features", "slc_cache"))
    cap_b = capacity_bytes or _meta_num(
        meta, ("target", "size_bytes"), ("target", "config", "capacity")
    )
    tlim = temp_limit_c or _meta_num(
        meta, ("telemetry", "temp_warning_c"), ("smart_start", "temp_warning_c")
    )
    op = _meta_num(meta, ("target", "config", "op"))
    if op is not None and cap_b:
        spare = op * cap_b + (slc or 0.0)
    else:
        spare = FILL_SPARE_UNKNOWN * (cap_b or 0.0)
    host = (
        df["host_written_bytes"].cast(pl.Float64).to_numpy()
        if "host_written_bytes" in df.columns
        else None
    )
    wa_cols, wa_units, wa_label = _wa_source(df, meta)
    bps = list(segments.breakpoints)
    rows = []
    for j, (bp, (lo, hi)) in enumerate(zip(bps, segments.intervals, strict=True)):
        i = int(min(np.searchsorted(x, bp, side="left"), n - 1))
        a = max(int(np.searchsorted(x, lo, side="left")) - PAD_ROWS, 0)
        b = min(int(np.searchsorted(x, hi, side="right")) + PAD_ROWS, n - 1)
        causes: list[str] = []
        ev: list[str] = []
        hb = float(host[i]) if host is not None else None
        _throttle(df, a, b, causes, ev)
        _temperature(df, a, b, tlim, causes, ev)
        if hb is not None and slc and abs(hb - slc) <= SLC_REL_TOL * slc:
            causes.append("slc_cache")
            ev.append(f"host written {_gb(hb)} ≈ the SLC cache ({_gb(slc)})")
        if hb is not None and cap_b:
            fills = hb / cap_b
            k = int(np.floor(fills + FILL_BELOW))
            if k >= 1 and hb <= k * cap_b + spare + FILL_BELOW * cap_b:
                causes.append("drive_fill")
                ev.append(
                    f"host written {_gb(hb)} = {fills:.2f} × the capacity ({_gb(cap_b)}): "
                    f"{k} drive fill(s)"
                    + (f" plus spare area (≤ {_gb(spare)})" if fills > k else "")
                )
        if wa_cols:
            prev = 0 if j == 0 else int(np.searchsorted(x, bps[j - 1], side="left"))
            nxt = n - 1 if j + 1 == len(bps) else int(np.searchsorted(x, bps[j + 1], side="left"))
            before = _wa(df, prev, max(i - 1, prev), wa_cols, wa_units)
            after = _wa(df, i, nxt, wa_cols, wa_units)
            if before and after and after[1] > before[2] * WA_RISE:
                causes.append("wa_rising")
                ev.append(f"write amplification {before[0]:.2f} → {after[0]:.2f} ({wa_label})")
        _idle(df, a, b, causes, ev)
        for e in meta.get("events") or []:
            eh = e.get("host_written_bytes")
            if (
                isinstance(eh, (int, float))
                and host is not None
                and host[a] - _step(df, a) <= eh <= host[b]
            ):
                causes += [] if "sim_event" in causes else ["sim_event"]
                ev.append(f"simulator event {e.get('name')} at {_gb(eh)}")
        rows.append(
            dict(
                x=float(bp),
                x_lo=float(lo),
                x_hi=float(hi),
                t_s=float(df["t_s"][i]),
                host_written_bytes=hb,
                causes=causes,
                evidence="; ".join(ev) or NO_EVIDENCE,
            )
        )
    return pl.DataFrame(
        rows,
        schema={
            "x": pl.Float64,
            "x_lo": pl.Float64,
            "x_hi": pl.Float64,
            "t_s": pl.Float64,
            "host_written_bytes": pl.Float64,
            "causes": pl.List(pl.String),
            "evidence": pl.String,
        },
    )


def _step(df: pl.DataFrame, i: int) -> float:
    return float(df["write_bytes"][i] or 0) if "write_bytes" in df.columns else 0.0


def _wa_source(df: pl.DataFrame, meta: dict[str, Any]):
    tel = meta.get("telemetry") or {}
    dh, dn = "drive_host_written_bytes", "drive_nand_written_bytes"
    if dh in df.columns and dn in df.columns and df[dn].null_count() < df.height:
        units = (float(tel.get("host_unit_bytes") or 0), float(tel.get("nand_unit_bytes") or 0))
        return (dh, dn), units, "the drive's counters"
    if "nand_written_bytes" in df.columns and "host_written_bytes" in df.columns:
        return ("host_written_bytes", "nand_written_bytes"), (0.0, 0.0), "simulator ground truth"
    return None, (0.0, 0.0), ""


def _throttle(df: pl.DataFrame, a: int, b: int, causes: list, ev: list) -> None:
    """``drive_throttle`` is the drive's throttle state over its last sample period (0 =
    none, 1 = light (NVMe TMT1), 2 = heavy (TMT2)): a change to a non-zero state within the
    window is evidence."""
    if "drive_throttle" not in df.columns:
        return
    v = df["drive_throttle"][max(a - 1, 0) : b + 1].drop_nulls()
    if not v.len():
        return
    top = float(v.max())  # type: ignore[arg-type]  # a numeric column, not empty
    if top > 0 and (v[0] != top or a == 0):
        causes.append("throttle")
        ev.append(f"the drive reports thermal throttling (level {int(top)})")


def _temperature(
    df: pl.DataFrame, a: int, b: int, tlim: float | None, causes: list, ev: list
) -> None:
    if "drive_temp_c" not in df.columns or tlim is None:
        return
    v = df["drive_temp_c"][a : b + 1].drop_nulls()
    if not v.len():
        return
    top = float(v.max())  # type: ignore[arg-type]  # a numeric column, not empty
    if top >= tlim - TEMP_MARGIN_C:
        causes.append("temperature")
        ev.append(f"drive at {top:.0f} °C, its warning threshold is {tlim:.0f} °C")


def _idle(df: pl.DataFrame, a: int, b: int, causes: list, ev: list) -> None:
    ios = [c for c in ("read_ios", "write_ios", "trim_ios") if c in df.columns]
    part = df[a : b + 1]
    idle_s = 0.0
    if ios:
        quiet = part.filter(pl.sum_horizontal(ios) == 0)
        idle_s += float(quiet["interval_s"].sum()) if "interval_s" in quiet.columns else 0.0
    if "interval_s" in part.columns and part.height > 1:
        gaps = part["t_s"].diff().drop_nulls() - part["interval_s"][1:]
        idle_s += float(gaps.filter(gaps > 1e-6).sum())
    if idle_s > 0:
        causes.append("idle_gap")
        ev.append(f"{idle_s:.3g} s without I/O next to the change")
