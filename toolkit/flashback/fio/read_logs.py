"""fio's sample and histogram logs read into a capture (:func:`read_fio`'s path for logs),
checked against the totals fio printed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from flashback.capture import Capture
from flashback.errors import FioFormatError, ImportFormatError
from flashback.fio import hist as fhist
from flashback.fio import jsonout, logs, normal, series
from flashback.fio import version as fv
from flashback.fio.read_results import _finish, _head, _mark_failed, _meta

DIRS = ("read", "write", "trim")


# the share of a total that integer rounding of log samples may lose, on top of the partial
# windows fio leaves unlogged at each end of a job (see _slack)
_LOG_ROUNDING = 0.005


#: ``meta["column_notes"]`` for a latency mean from window-averaged logs with no I/O counts
_UNWEIGHTED = (
    "plain mean of fio's log_avg_msec window means: no iops log of the same job gives the "
    "windows' I/O counts, so each window counts once (fio's own mean weights by I/O)"
)


#: Most rows an import makes (10 years of 1 s rows would be 3.2e8): beyond it the log's time
#: column is corrupt rather than a real run.
_MAX_ROWS = 1e8


def _decide_modes(
    parsed: list[logs.Log], hists: list, v: fv.Version | None
) -> tuple[fv.Version | None, float | None]:
    """Decides what each log's rows are and the run's latency unit (ns per unit, or None when
    no log needs one), from the version when known, the layout otherwise.

    Raises:
        FioFormatError: the layout contradicts the version, or the unit cannot be told.
    """
    lo: fv.Version = (0, 0)
    hi: fv.Version = (99, 0)
    why: list[str] = []
    for lg in parsed:
        if lg.t_ms.size == 0:
            continue
        if lg.kind in ("bw", "iops") and logs.share_with_bs(lg) > 0.5:
            if v is not None:
                # the version decides; an iops log can still contradict it (per-I/O rows are 1)
                windowed = v < fv.WINDOWED_DEFAULT_LOGS_BEFORE
                if lg.kind == "iops" and lg.value is not None:
                    ones = bool((lg.value == 1).all())
                    fv.check_agrees(
                        v,
                        inferred_ok=windowed != ones,
                        layout="one row per I/O" if ones else "one row per 500 ms window",
                        path=lg.path,
                    )
            else:
                windowed = logs.looks_windowed(lg)
            if windowed:
                lg.mode = "default_window"
                hi = min(hi, fv.WINDOWED_DEFAULT_LOGS_BEFORE)
                why.append(f"{lg.path.name}: windows with bs (fio < 2.10)")
            else:
                lo = max(lo, fv.WINDOWED_DEFAULT_LOGS_BEFORE)
                why.append(f"{lg.path.name}: one row per I/O (fio >= 2.10)")
        elif 1.0 - logs.share_with_bs(lg) > 0.5 or lg.kind in ("bw", "iops"):
            lg.mode, lg.avg_ms = "avg", logs.window_ms(lg)
        if lg.both or logs.fio3_columns(lg):
            layout = "mean and max columns" if lg.both else "priority/issue-time columns"
            if v is not None:
                fv.check_agrees(
                    v, inferred_ok=v >= fv.NANOSECONDS_FROM, layout=layout, path=lg.path
                )
            lo = max(lo, fv.NANOSECONDS_FROM)
            why.append(f"{lg.path.name}: {layout} (fio 3.x)")
    for path, (_t, _d, counts) in hists:
        h_lo, h_hi, _ = fhist.layout_version(counts.shape[1], path)
        if v is not None:
            fv.check_agrees(
                v, inferred_ok=h_lo <= v < h_hi, layout=f"{counts.shape[1]} buckets", path=path
            )
        lo, hi = max(lo, h_lo), min(hi, h_hi)
        why.append(f"{path.name}: {counts.shape[1]} histogram buckets")
    if v is None and lo >= hi:
        raise FioFormatError(
            "the logs were written by different fio versions ("
            + "; ".join(why)
            + "); they are not one run"
        )
    needs_unit = any(lg.kind in ("lat", "clat", "slat") for lg in parsed) or bool(hists)
    if not needs_unit:
        return v, None
    if v is not None:
        return v, fv.latency_unit_ns(v)
    if lo >= fv.NANOSECONDS_FROM:
        return None, 1.0
    if hi <= fv.NANOSECONDS_FROM:
        return None, 1000.0
    raise FioFormatError(
        f"{parsed[0].path if parsed else hists[0][0]}: cannot tell µs (fio 2.x) from ns (fio 3.x) "
        "latency logs; pass fio_version= or the run's JSON/normal output with the logs"
    )


def _read_logs(
    log_files: list[Path],
    others: list[Path],
    v: fv.Version | None,
    prefixes: set[str],
    interval: float,
    window_value: str | None,
    capacity_bytes: int | None,
    combine: str | None = None,
) -> Capture:
    parsed, hists = [], []
    for f in log_files:
        kind = logs.kind_of(f)[0]
        if kind == "clat_hist":
            hists.append((f, fhist.parse_hist(f)))
        else:
            parsed.append(logs.parse_log(f, window_value=window_value))
    v, ns_per_unit = _decide_modes(parsed, [(p, h) for p, h in hists], v)
    for lg in parsed:
        logs.check_one_row_per_window(lg)
        if lg.mode == "per_io" and lg.value is None:
            # no windows: fio writes each I/O's value whatever log_max_value says
            lg.value = lg.value_max
    outputs = ", ".join(str(p) for p in others)
    with jsonout.fields_of(outputs):
        doc = _json_of(others)
        epoch = None if doc is None else jsonout.epoch_logs(doc)
    origin_ms = logs.epoch_origin_ms(parsed, [h[0] for _, h in hists], epoch=epoch)
    if origin_ms:
        for lg in parsed:
            lg.t_ms = np.maximum(lg.t_ms - origin_ms, 0.0)
        for _, h in hists:
            h[0][:] = np.maximum(h[0] - origin_ms, 0.0)
    hist_data = [h for _, h in hists if h[0].size]
    t_end = max(
        [float(lg.t_ms.max()) for lg in parsed if lg.t_ms.size]
        + [float(h[0].max()) for h in hist_data]
        + [0.0]
    )
    if t_end <= 0:
        raise ImportFormatError(
            f"{log_files[0]}: the fio logs hold no samples; run fio longer or check log_avg_msec"
        )
    if t_end / (interval * 1000.0) > _MAX_ROWS:
        raise FioFormatError(
            f"{log_files[0]}: a sample at {t_end / 3.6e6:.3g} h would make "
            f"{t_end / (interval * 1000.0):.3g} intervals of {interval:g} s (at most {_MAX_ROWS:g}); "
            "the time column is corrupt, or pass a longer interval="
        )
    edges = series.edges_ms(t_end, interval * 1000.0)
    n = edges.size - 1
    dt_s = np.diff(edges) / 1000.0
    by = {k: [lg for lg in parsed if lg.kind == k] for k in logs.KINDS}
    cols: dict[str, Any] = {"t_s": edges[1:] / 1000.0, "interval_s": dt_s}
    slack: dict[str, float] = {}  # the totals the logs measure, with their tolerance
    notes: dict[str, str] = {}  # what a column is, where it is not what its name says
    # an empty log (fio writes no slat samples for sync engines) counts nothing
    per_io_kind = next(
        (
            k
            for k in ("lat", "clat", "slat")
            if any(lg.mode == "per_io" and lg.t_ms.size for lg in by[k])
        ),
        None,
    )
    for d, name in enumerate(DIRS):
        ios = series.rate_total(by["iops"], d, edges)
        kib = series.rate_total(by["bw"], d, edges)
        nbytes = None if kib is None else kib * 1024.0
        if ios is not None:
            slack[f"{name}_ios"] = _slack(by["iops"], d)
        if nbytes is not None:
            slack[f"{name}_bytes"] = _slack(by["bw"], d) * 1024.0
        hist = (
            series.hist_latency(hist_data, d, edges, ns_per_unit=ns_per_unit or 1.0)
            if hist_data
            else None
        )
        if ios is None and hist is not None:
            ios = hist[1]
            slack[f"{name}_ios"] = max(float(c.sum(axis=1).max()) for _, _, c in hist_data) * len(
                hist_data
            )
        # per-I/O latency logs hold every I/O once: exact counts and bytes (per_io_kind names
        # a kind with a per-I/O log, so per_io_counts returns counts, never None)
        counted = None if per_io_kind is None else series.per_io_counts(by[per_io_kind], d, edges)
        if counted is not None:
            if ios is None:
                ios, slack[f"{name}_ios"] = counted[0], 0.0
            if nbytes is None:
                nbytes, slack[f"{name}_bytes"] = counted[1], 0.0
        # what no log measures is null, not zero (bw logs alone count no I/Os)
        ios = np.full(n, np.nan) if ios is None else np.round(ios)
        nbytes = np.full(n, np.nan) if nbytes is None else np.round(nbytes)
        cols[f"{name}_ios"] = ios
        cols[f"{name}_bytes"] = nbytes
        cols[f"{name}_iops"] = ios / dt_s
        if name == "trim":
            continue
        cols[f"{name}_mbps"] = nbytes / dt_s / 1e6
        lat = series.latency(
            by["lat"], d, edges, ns_per_unit=ns_per_unit or 1.0, iops_logs=by["iops"]
        )
        clat = series.latency(
            by["clat"], d, edges, ns_per_unit=ns_per_unit or 1.0, iops_logs=by["iops"]
        )
        for key, st in (("lat", lat), ("clat", clat)):
            if st is not None and st.get("weighted_by") == "windows":
                notes[f"{name}_{key}_mean_us"] = _UNWEIGHTED
        if clat is None and hist is not None:
            clat = hist[0]
        for s in series.LAT_STATS:
            cols[f"{name}_lat_{s}_us"] = np.full(n, np.nan) if lat is None else lat[s]
        if clat is not None or by["clat"] or hist_data:
            for s in series.LAT_STATS:
                cols[f"{name}_clat_{s}_us"] = np.full(n, np.nan) if clat is None else clat[s]
    df = _finish(pl.DataFrame(cols).with_columns(pl.lit("fio").alias("step")), log_files[0])
    with jsonout.fields_of(outputs):
        _check_against_printed(df, others, v, prefixes, slack, summed=combine == "sum")
    meta = _meta(log_files + others, v, capacity_bytes, "logs")
    meta["log_modes"] = {lg.path.name: lg.mode for lg in parsed}
    if notes:
        meta["column_notes"] = notes
    if origin_ms:
        meta["log_epoch_origin_ms"] = origin_ms
    if doc is not None:
        with jsonout.fields_of(outputs):
            _mark_failed(meta, doc)
    return Capture(intervals=df, meta=meta)


def _json_of(others: list[Path]) -> dict | None:
    """The (last) JSON document among the run's other outputs, or ``None``."""
    for p in others:
        if '"fio version"' in _head(p):
            return jsonout.load_documents(p)[-1]
    return None


def _slack(lgs: list[logs.Log], d: int) -> float:
    """How much a total from window logs may differ from fio's besides integer rounding: the
    partial windows fio leaves unlogged at the start and end of each job, at most two
    windows at the job's highest rate (in the log's unit·s)."""
    s = 0.0
    for lg in lgs:
        sel = lg.ddir == d
        if lg.mode == "per_io" or not sel.any() or lg.value is None:
            continue
        if lg.mode == "avg":
            window_ms = lg.avg_ms
        else:  # fio < 2.10 windows: bw_avg_time, the usual spacing
            t = np.unique(lg.t_ms[sel])
            window_ms = float(np.median(np.diff(t))) if t.size > 1 else float(t[0])
        s += 2.0 * float(lg.value[sel].max()) * window_ms / 1000.0
    return s


def _check_against_printed(
    df: pl.DataFrame,
    others: list[Path],
    v: fv.Version | None,
    prefixes: set[str],
    slack: dict,
    *,
    summed: bool = False,
) -> None:
    """Compares the import's totals with the totals fio printed in the run's JSON or normal
    output, when given (``summed``: the outputs of runs combined, added up first).

    Raises:
        FioFormatError: a total differs beyond rounding.
    """
    checks: list[tuple[Path, Mapping[str, float], dict[str, float]]] = []
    for p in others:
        head = _head(p)
        rounding: dict[str, float] = {}
        printed: Mapping[str, float]
        if '"fio version"' in head:
            docs = jsonout.load_documents(p)
            pv = jsonout.doc_version(docs[-1], p, v)
            printed = jsonout.printed_totals(docs[-1], p, pv, prefixes=prefixes)
        elif normal.is_normal(head):
            nbytes, rounding = normal.printed_bytes(p)
            printed = {**normal.printed_ios(p)[1], **nbytes}
        else:
            continue
        checks.append((p, printed, rounding))
    if summed and len(checks) > 1:
        total: dict[str, float] = {}
        rounding_total: dict[str, float] = {}
        for _, printed, rounding in checks:
            for k, x in printed.items():
                total[k] = total.get(k, 0) + x
            for k, x in rounding.items():
                rounding_total[k] = rounding_total.get(k, 0.0) + x
        checks = [(Path(", ".join(p.name for p, _, _ in checks)), total, rounding_total)]
    for p, printed, rounding in checks:
        for key, want in printed.items():
            if key not in slack:
                continue  # the logs do not measure it (e.g. bw logs alone give no I/O count)
            got = float(df[key].sum())
            tol = _LOG_ROUNDING * want + slack.get(key, 0.0) + rounding.get(key, 0.0) + 1.0
            if abs(got - want) > tol:
                raise FioFormatError(
                    f"{p}: fio printed {key}={want:.0f} but the logs add up to {got:.0f} "
                    f"({got / want if want else float('inf'):.4g}×); the logs and the output "
                    "are not one run, or the fio version is wrong"
                )
