"""fio's sample and histogram logs read into a capture (:func:`read_fio`'s path for logs),
checked against the totals fio printed."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from flashback.capture import Capture
from flashback.errors import FioFormatError, ImportFormatError
from flashback.fio import edges as fedges
from flashback.fio import hist as fhist
from flashback.fio import jsonout, logs, modes, normal, series
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
    parsed, hists = _parse(log_files, window_value)
    v, ns_per_unit = modes.decide_modes(parsed, [(p, h) for p, h in hists], v)
    for lg in parsed:
        logs.check_one_row_per_window(lg)
        if lg.mode == "per_io" and lg.value is None:
            # no windows: fio writes each I/O's value whatever log_max_value says
            lg.value = lg.value_max
    outputs = ", ".join(str(p) for p in others)
    with jsonout.fields_of(outputs):
        doc = _json_of(others)
        epoch = None if doc is None else jsonout.epoch_logs(doc)
        printed, estimated = fedges.printed_by_job(parsed, others, v)
    origin_ms = logs.epoch_origin_ms(parsed, [h[0] for _, h in hists], epoch=epoch)
    if origin_ms:
        for lg in parsed:
            lg.t_ms = np.maximum(lg.t_ms - origin_ms, 0.0)
        for _, h in hists:
            h[0][:] = np.maximum(h[0] - origin_ms, 0.0)
    hist_data = [h for _, h in hists if h[0].size]
    edges = _edges(parsed, hist_data, log_files, interval)
    dt_s = np.diff(edges) / 1000.0
    cols: dict[str, Any] = {"t_s": edges[1:] / 1000.0, "interval_s": dt_s}
    cols_of = _Columns(
        by={k: [lg for lg in parsed if lg.kind == k] for k in logs.KINDS},
        hist_data=hist_data,
        edges=edges,
        ns_per_unit=ns_per_unit or 1.0,
        printed=printed,
        estimated=estimated,
        job_ends_ms=fedges.job_ends_ms(parsed),
    )
    for d, name in enumerate(DIRS):
        cols.update(cols_of.direction(d, name, dt_s))
    df = _finish(pl.DataFrame(cols).with_columns(pl.lit("fio").alias("step")), log_files[0])
    with jsonout.fields_of(outputs):
        _check_against_printed(
            df,
            others,
            v,
            prefixes,
            cols_of.slack,
            summed=combine == "sum",
            counted=cols_of.log_sums,
        )
    meta = _meta(log_files + others, v, capacity_bytes, "logs")
    meta["log_modes"] = {lg.path.name: lg.mode for lg in parsed}
    if cols_of.notes:
        meta["column_notes"] = cols_of.notes
    if origin_ms:
        meta["log_epoch_origin_ms"] = origin_ms
    if doc is not None:
        with jsonout.fields_of(outputs):
            _mark_failed(meta, doc)
    return Capture(intervals=df, meta=meta)


def _parse(log_files: list[Path], window_value: str | None) -> tuple[list[logs.Log], list]:
    """(sample logs, ``(path, histogram)`` of each clat_hist log), in file order.

    Raises:
        ImportFormatError: a malformed log (names file and line).
        FioFormatError: a negative value, or a malformed histogram log.
    """
    parsed, hists = [], []
    for f in log_files:
        kind = logs.kind_of(f)[0]
        if kind == "clat_hist":
            hists.append((f, fhist.parse_hist(f)))
        else:
            parsed.append(logs.parse_log(f, window_value=window_value))
    return parsed, hists


def _edges(
    parsed: list[logs.Log], hist_data: list, log_files: list[Path], interval: float
) -> np.ndarray:
    """The interval edges (ms) from 0 to the last sample of any log.

    Raises:
        ImportFormatError: the logs hold no samples, or only samples at 0 ms (a job that ran
            under a millisecond: fio's ms timestamps cannot time it).
        FioFormatError: more than :data:`_MAX_ROWS` intervals (a corrupt time column).
    """
    t_end = max(
        [float(lg.t_ms.max()) for lg in parsed if lg.t_ms.size]
        + [float(h[0].max()) for h in hist_data]
        + [0.0]
    )
    if t_end <= 0:
        n = sum(lg.t_ms.size for lg in parsed) + sum(h[0].size for h in hist_data)
        if n:
            raise ImportFormatError(
                f"{log_files[0]}: all {n} samples of the fio logs are at 0 ms: the job ran "
                "under a millisecond, which fio's ms timestamps cannot time; run it longer "
                "(a larger size= or a runtime=)"
            )
        raise ImportFormatError(
            f"{log_files[0]}: the fio logs hold no samples; run fio longer or check log_avg_msec"
        )
    if t_end / (interval * 1000.0) > _MAX_ROWS:
        raise FioFormatError(
            f"{log_files[0]}: a sample at {t_end / 3.6e6:.3g} h would make "
            f"{t_end / (interval * 1000.0):.3g} intervals of {interval:g} s (at most {_MAX_ROWS:g}); "
            "the time column is corrupt, or pass a longer interval="
        )
    return series.edges_ms(t_end, interval * 1000.0)


@dataclasses.dataclass
class _Columns:
    """A direction's capture columns from the run's logs (``by``: the sample logs by kind;
    ``hist_data``: the clat histograms with samples), collecting what the totals fio printed
    are checked with (``slack``: the totals the logs measure, with their tolerance) and what
    a column is where it is not what its name says (``notes``). ``printed``: each job's
    printed totals by column, which fill the rate logs' edges (:mod:`flashback.fio.edges`);
    ``estimated``: a printed output is given but not per job, so the edges are estimates."""

    by: dict[str, list[logs.Log]]
    hist_data: list
    edges: np.ndarray
    ns_per_unit: float
    printed: dict[str, dict[fedges.Key, fedges.Printed]] = dataclasses.field(default_factory=dict)
    estimated: bool = False
    log_sums: dict[str, float] = dataclasses.field(default_factory=dict)
    job_ends_ms: dict[fedges.Key, float] = dataclasses.field(default_factory=dict)
    slack: dict[str, float] = dataclasses.field(default_factory=dict)
    notes: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        # an empty log (fio writes no slat samples for sync engines) counts nothing
        self.per_io_kind = next(
            (
                k
                for k in ("lat", "clat", "slat")
                if any(lg.mode == "per_io" and lg.t_ms.size for lg in self.by[k])
            ),
            None,
        )

    def direction(self, d: int, name: str, dt_s: np.ndarray) -> dict[str, np.ndarray]:
        """The I/O, byte, rate and latency columns of direction ``d`` (named ``name``)."""
        n = self.edges.size - 1
        hist = (
            series.hist_latency(self.hist_data, d, self.edges, ns_per_unit=self.ns_per_unit)
            if self.hist_data
            else None
        )
        ios, nbytes = self._counts(d, name, hist)
        # what no log measures is null, not zero (bw logs alone count no I/Os)
        ios = np.full(n, np.nan) if ios is None else np.round(ios)
        nbytes = np.full(n, np.nan) if nbytes is None else np.round(nbytes)
        cols = {f"{name}_ios": ios, f"{name}_bytes": nbytes, f"{name}_iops": ios / dt_s}
        if name == "trim":
            return cols
        cols[f"{name}_mbps"] = nbytes / dt_s / 1e6
        cols.update(self._latency(d, name, hist))
        return cols

    def _counts(
        self, d: int, name: str, hist: tuple[dict, np.ndarray] | None
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(I/Os, bytes) per interval of direction ``d`` from the iops and bw logs, else the
        histograms' counts, else the per-I/O latency logs (None where nothing counts them);
        records each one's slack."""
        ios = series.rate_total(
            self.by["iops"], d, self.edges, printed=self.printed.get(f"{name}_ios")
        )
        kib = series.rate_total(
            self.by["bw"], d, self.edges, printed=self.printed.get(f"{name}_bytes")
        )
        nbytes = None if kib is None else kib * 1024.0
        for key, got, kind in ((f"{name}_ios", ios, "iops"), (f"{name}_bytes", nbytes, "bw")):
            if got is None:
                continue
            unit = 1024.0 if kind == "bw" else 1.0
            self.slack[key] = _slack(self.by[kind], d, self.job_ends_ms) * unit
            if self.estimated and _windowed(self.by[kind], d):
                self.notes[key] = fedges.ESTIMATED
            if self.printed.get(key):
                # the totals are checked on what the logs count, not on the edges filled
                # from the totals themselves
                plain = series.rate_total(self.by[kind], d, self.edges)
                self.log_sums[key] = (
                    float(np.round(plain * unit).sum()) if plain is not None else 0.0
                )
        if ios is None and hist is not None:
            ios = hist[1]
            self.slack[f"{name}_ios"] = max(
                float(c.sum(axis=1).max()) for _, _, c in self.hist_data
            ) * len(self.hist_data)
        # per-I/O latency logs hold every I/O once: exact counts and bytes (per_io_kind names
        # a kind with a per-I/O log, so per_io_counts returns counts, never None)
        counted = (
            None
            if self.per_io_kind is None
            else series.per_io_counts(self.by[self.per_io_kind], d, self.edges)
        )
        if counted is not None:
            if ios is None:
                ios, self.slack[f"{name}_ios"] = counted[0], 0.0
            if nbytes is None:
                nbytes, self.slack[f"{name}_bytes"] = counted[1], 0.0
        return ios, nbytes

    def _latency(
        self, d: int, name: str, hist: tuple[dict, np.ndarray] | None
    ) -> dict[str, np.ndarray]:
        """The ``lat`` and ``clat`` statistics columns of direction ``d`` (``clat`` from the
        histograms when no clat log has it)."""
        n = self.edges.size - 1
        lat, clat = (
            series.latency(
                self.by[kind],
                d,
                self.edges,
                ns_per_unit=self.ns_per_unit,
                iops_logs=self.by["iops"],
                printed=self.printed.get(f"{name}_ios"),
            )
            for kind in ("lat", "clat")
        )
        for key, st in (("lat", lat), ("clat", clat)):
            if st is not None and st.get("weighted_by") == "windows":
                self.notes[f"{name}_{key}_mean_us"] = _UNWEIGHTED
        if clat is None and hist is not None:
            clat = hist[0]
        cols = {}
        for s in series.LAT_STATS:
            cols[f"{name}_lat_{s}_us"] = np.full(n, np.nan) if lat is None else lat[s]
        if clat is not None or self.by["clat"] or self.hist_data:
            for s in series.LAT_STATS:
                cols[f"{name}_clat_{s}_us"] = np.full(n, np.nan) if clat is None else clat[s]
        return cols


def _json_of(others: list[Path]) -> dict | None:
    """The (last) JSON document among the run's other outputs, or ``None``."""
    for p in others:
        if '"fio version"' in _head(p):
            return jsonout.load_documents(p)[-1]
    return None


def _windowed(lgs: list[logs.Log], d: int) -> bool:
    """Whether some window-averaged log of ``lgs`` has samples in direction ``d``."""
    return any(lg.mode != "per_io" and bool((lg.ddir == d).any()) for lg in lgs)


#: How far above its logs' highest window a job may run where it is unlogged: fio's rate
#: limiter makes up a slow window's deficit afterwards, so an edge can outrun every logged
#: window (tests/data/fio flk-r24: 1.04× at ``rate_iops=1000``, logged windows 840–1,020/s).
_EDGE_RATE_X = 1.25


def _slack(lgs: list[logs.Log], d: int, ends_ms: Mapping[fedges.Key, float]) -> float:
    """How much a total from window logs may differ from fio's besides integer rounding: the
    partial windows fio leaves unlogged at the start and end of each job, at up to
    ``_EDGE_RATE_X`` times the job's highest logged rate (in the log's unit·s): two windows,
    or the time the log leaves uncovered when longer (fio 3.33's iops log lacks the first
    window and its windows close up to one before the job's end, ``ends_ms``: its last sample
    in any log; a loaded machine makes them later still)."""
    s = 0.0
    for lg in lgs:
        sel = lg.ddir == d
        if lg.mode == "per_io" or not sel.any() or lg.value is None:
            continue
        t = np.unique(lg.t_ms[sel])
        if lg.mode == "avg":
            window_ms = lg.avg_ms
        else:  # fio < 2.10 windows: bw_avg_time, the usual spacing
            window_ms = float(np.median(np.diff(t))) if t.size > 1 else float(t[0])
        end_ms = ends_ms.get((fedges.prefix_of(lg), lg.job), float(t[-1]))
        uncovered_ms = max(float(t[0]) - window_ms, 0.0) + max(end_ms - float(t[-1]), 0.0)
        rate = _EDGE_RATE_X * float(lg.value[sel].max())
        s += max(2.0 * window_ms, uncovered_ms) * rate / 1000.0
    return s


def _check_against_printed(
    df: pl.DataFrame,
    others: list[Path],
    v: fv.Version | None,
    prefixes: set[str],
    slack: dict,
    *,
    summed: bool = False,
    counted: Mapping[str, float] | None = None,
) -> None:
    """Compares the import's totals with the totals fio printed in the run's JSON or normal
    output, when given (``summed``: the outputs of runs combined, added up first;
    ``counted``: a column's total as the logs alone count it, where the column also holds
    edges filled from the printed totals).

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
            got = (counted or {}).get(key, float(df[key].sum()))
            tol = _LOG_ROUNDING * want + slack.get(key, 0.0) + rounding.get(key, 0.0) + 1.0
            if abs(got - want) > tol:
                raise FioFormatError(
                    f"{p}: fio printed {key}={want:.0f} but the logs add up to {got:.0f} "
                    f"({got / want if want else float('inf'):.4g}×); the logs and the output "
                    "are not one run, or the fio version is wrong"
                )
