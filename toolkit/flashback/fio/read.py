"""``read_fio``: fio's logs, JSON/json+ (one document or a ``--status-interval`` stream) or
terse output → a :class:`~flashback.Capture`, checked against the totals fio printed.

Latency columns: fio's ``lat`` (submission to completion) goes to ``{read,write}_lat_*_us``,
fio's ``clat`` (logs, histogram logs, JSON blocks) to ``{read,write}_clat_*_us``; a clat
value never fills a lat column.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from flashback.capture import Capture
from flashback.errors import FioFormatError, ImportFormatError
from flashback.fio import combine as fcombine
from flashback.fio import hist as fhist
from flashback.fio import jsonout, logs, normal, series, terse
from flashback.fio import version as fv
from flashback.units import interval_seconds

DIRS = ("read", "write", "trim")
# the share of a total that integer rounding of log samples may lose, on top of the partial
# windows fio leaves unlogged at each end of a job (see _slack)
_LOG_ROUNDING = 0.005


def _inputs(source: Any) -> tuple[list[Path], list[Path]]:
    """(log files, other fio output files of the same run).

    Raises:
        ImportFormatError: nothing found.
    """
    if isinstance(source, (list, tuple)):
        ps = [Path(p) for p in source]
        for x in ps:
            if x.name.endswith(".log.fz"):
                _refuse_compressed(x)
        lg = [p for p in ps if _is_sample_log(p)]
        return lg, [p for p in ps if p not in lg]
    p = Path(source)
    if p.is_dir():
        files = sorted(x for x in p.iterdir() if x.is_file())
        lg = [x for x in files if logs.is_log_name(x.name) and not _is_fio_output(x)]
        others = [x for x in files if x not in lg and _is_fio_output(x)]
        found: tuple[list[Path], list[Path]] = (lg, others)
    elif p.exists():
        found = ([p], []) if _is_sample_log(p) else ([], [p])
    else:
        lg = sorted(Path(f) for f in glob.glob(glob.escape(os.fspath(p)) + "_*.log"))
        d = p.parent if str(p.parent) else Path(".")
        same_dir = [x for x in d.iterdir() if logs.is_log_name(x.name)] if d.is_dir() else []
        one_run = {logs.kind_of(x)[2] for x in same_dir} == {p.name}
        others = (
            [x for x in sorted(d.iterdir()) if x.is_file() and x not in lg and _is_fio_output(x)]
            if one_run
            else []
        )
        found = (lg, others)
    if not found[0]:
        _refuse_compressed(p)
    if not found[0] and not found[1]:
        raise ImportFormatError(
            f"{source}: no fio logs or JSON found; pass a log, a directory or a log prefix"
        )
    return found


def _refuse_compressed(p: Path) -> None:
    """Refuses fio's compressed logs (``log_store_compressed=1``: ``PREFIX_bw.1.log.fz``,
    zlib chunks of fio's in-memory sample structs), given as a file, in a directory, or
    under a log prefix, when no plain-text log is given with them.

    Raises:
        FioFormatError: naming the first compressed log and the command that inflates it.
    """
    if p.is_file():
        fz = [p] if p.name.endswith(".log.fz") else []
    elif p.is_dir():
        fz = sorted(x for x in p.iterdir() if x.name.endswith(".log.fz"))
    else:
        fz = sorted(Path(f) for f in glob.glob(glob.escape(os.fspath(p)) + "_*.log.fz"))
    if fz:
        f = fz[0]
        raise FioFormatError(
            f"{f}: a compressed fio log (log_store_compressed=1, fio's binary samples) is not "
            f"read; inflate it first with `fio --inflate-log={f.name} > {f.name[:-3]}` and "
            "import the .log files"
        )


def _head(p: Path) -> str:
    """The first 8 KiB of a file as text ("" when unreadable)."""
    try:
        with p.open("rb") as f:
            return f.read(8192).decode("utf-8", "replace")
    except OSError:
        return ""


def _is_fio_output(p: Path) -> bool:
    """Whether a file holds fio's JSON, terse or normal output, by its content."""
    head = _head(p)
    return '"fio version"' in head or terse.is_terse(head) or normal.is_normal(head)


def _is_sample_log(p: Path) -> bool:
    """Whether a file given by name is read as a fio sample log: named ``*.log`` and not
    holding fio's JSON, terse or normal output (``fio … > run.log`` is normal output)."""
    return p.name.endswith(".log") and not _is_fio_output(p)


#: ``meta["column_notes"]`` for a latency mean from window-averaged logs with no I/O counts
_UNWEIGHTED = (
    "plain mean of fio's log_avg_msec window means: no iops log of the same job gives the "
    "windows' I/O counts, so each window counts once (fio's own mean weights by I/O)"
)

#: Most rows an import makes (10 years of 1 s rows would be 3.2e8): beyond it the log's time
#: column is corrupt rather than a real run.
_MAX_ROWS = 1e8


def read_fio(
    source: str | os.PathLike[str] | list[str | os.PathLike[str]],
    *,
    interval_s: float | None = None,
    window_value: str | None = None,
    log_offset: bool | None = None,
    fio_version: str | None = None,
    capacity_bytes: int | None = None,
    combine: str | None = None,
) -> Capture:
    """Reads fio output into a capture, knowing each fio version's formats.

    ``source``: fio's JSON/json+ output (one document, or a ``--status-interval`` stream →
    one row per status report), terse output (one row per group), normal output (one row
    per group, read as its JSON is: I/Os from each job's ``issued`` line, checked against
    the group's "Run status" line; percentiles p50/p99/p99.9 as printed), one log, a list of files
    (logs of one run plus, optionally, its JSON or normal output), a directory holding one
    run, or the log prefix given to ``write_*_log`` (``PREFIX_bw.1.log`` ...).

    Logs are binned into ``interval_s``-second rows (default 1.0); the last row keeps its
    true length.
    Per-job logs (``.1`` … ``.N``) are summed. Latency means from window-averaged logs
    (``log_avg_msec``) weight each window by its I/O count, read from the same job's iops
    log, as fio's own mean does; given latency logs without their iops logs, each window
    counts once (a plain mean of window means, biased toward slow windows) and
    ``meta["column_notes"]`` says so for each such column. ``fio_version`` (e.g. ``"2.2.10"``) is only
    needed when no JSON/normal output of the run is given and the layout cannot tell
    (fio 2.x latency logs are in µs, 3.x in ns). ``window_value``: ``"both"`` or ``"max"``
    for logs written with ``log_window_value``/``log_max_value`` when the layout cannot tell;
    ``log_offset`` is accepted for compatibility and not needed. Logs written with
    ``log_unix_epoch=1``/``log_alternate_epoch=1`` are made job-relative (the clock time
    taken as the run's start is ``meta["log_epoch_origin_ms"]``; without the run's JSON,
    only logs whose first sample is an hour or more in are recognised). A JSON job that
    fio stopped with an error gives ``meta["status"] = "failed: fio job …"``.

    ``combine="sum"`` (never the default) reads several runs that ran at the same time —
    CBT's one fio process per volume, several JSON/normal outputs or several runs' logs
    (prefixes) — as one test point, as fio's ``--client`` "All clients" sums its hosts:
    group k of every run together, I/Os and bytes added, I/O-weighted latency means; runs
    whose JSON shows them one after another are refused. Each run's logs count from its own
    start, so summed logs line up only for runs started together.

    Raises:
        ImportFormatError: a malformed line (names file and line), unknown file names, no data.
        FioFormatError: the layout contradicts the fio version, units cannot be told apart,
            two runs are mixed, a negative value, or the totals disagree with fio's; also
            compressed ``.log.fz`` logs, directions merged by ``unified_rw_reporting=mixed``,
            ``log_compression`` with ``log_avg_msec`` logs (fio#1746), and I/Os fio counted
            in a runtime of 0 ms.
        ParameterError: ``interval_s`` is not a positive number of seconds, or ``combine`` is
            not None/"sum".
    """
    del log_offset
    combine = fcombine.check_combine(combine)
    interval_s = interval_seconds(interval_s, where="read_fio")
    declared = fv.parse_version(fio_version) if fio_version else None
    if fio_version and declared is None:
        raise FioFormatError(f"fio_version={fio_version!r} is not a version such as '3.1'")
    log_files, others = _inputs(source)
    if not log_files:
        jsons = [p for p in others if '"fio version"' in _head(p)]
        if len(others) > 1 and len(jsons) == 1:
            fv.printed_in(others)  # the other files (normal/terse output) must name its version
            others = jsons
        if len(others) > 1 and combine == "sum":
            return _read_results_summed(others, declared, capacity_bytes)
        if len(others) > 1:
            raise FioFormatError(
                f"{source}: holds {len(others)} fio outputs ({', '.join(p.name for p in others[:4])}); "
                "pass one file, or combine='sum' for runs that ran at the same time (they are "
                "not summed by default)"
            )
        return _read_result(others[0], declared, capacity_bytes)
    seen: dict[tuple[str, int], Path] = {}
    for p in log_files:
        kind, job, prefix = logs.kind_of(p)
        key = (kind, job, prefix if combine == "sum" else "")
        if key in seen:
            raise FioFormatError(
                f"{source}: {seen[key].name} and {p.name} are both job {job}'s {kind} log, "
                "so the files hold more than one run; pass one run, or combine='sum' for runs "
                "that ran at the same time (runs are not summed by default)"
            )
        seen[key] = p
    prefixes = {logs.kind_of(p)[2] for p in log_files}
    printed, printed_at = fv.printed_in(others)
    if declared and printed and declared != printed:
        raise FioFormatError(
            f"{printed_at}: says {fv.show(printed)} but fio_version={fv.show(declared)} was given"
        )
    v = declared or printed
    return _read_logs(
        log_files, others, v, prefixes, interval_s, window_value, capacity_bytes, combine
    )


def _read_result(path: Path, declared: fv.Version | None, capacity_bytes: int | None) -> Capture:
    """One JSON/json+/terse result file → a capture.

    Raises:
        ImportFormatError: not fio output, or a field of the wrong kind (``"total_ios": ""``,
            a non-string version...), named with the file.
        FioFormatError: see :func:`read_fio`.
    """
    try:
        return _read_result_unchecked(path, declared, capacity_bytes)
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError) as e:
        if isinstance(e, ImportFormatError):
            raise
        raise ImportFormatError(
            f"{path}: a field of fio's output has the wrong kind ({type(e).__name__}: {e}); "
            "pass fio's unedited --output-format=json or terse output"
        ) from None
    except pl.exceptions.PolarsError as e:
        raise ImportFormatError(
            f"{path}: fio's output has fields polars cannot tabulate ({type(e).__name__}); "
            "pass fio's unedited --output-format=json or terse output"
        ) from None


def _read_results_summed(
    paths: list[Path], declared: fv.Version | None, capacity_bytes: int | None
) -> Capture:
    """Several JSON/normal outputs of runs that ran at the same time → one capture, each
    group's jobs of every run summed (see :mod:`flashback.fio.combine`).

    Raises:
        ImportFormatError: a file is not JSON or normal output, or a field has the wrong kind.
        FioFormatError: the runs ran one after another, or their layouts disagree.
    """
    docs, spans = [], []
    for p in paths:
        head = _head(p)
        with jsonout.fields_of(p):
            if normal.is_normal(head) and '"fio version"' not in head:
                _, v, doc = normal.read_normal(p, declared)
                layout = max(v, fv.NANOSECONDS_FROM)
            elif "{" in head:
                doc = jsonout.load_documents(p)[-1]
                layout = v = jsonout.doc_version(doc, p, declared)
            else:
                raise ImportFormatError(
                    f"{p}: combine='sum' reads fio's JSON or normal output; pass those files"
                )
        docs.append((p, doc, layout))
        spans.append((p, fcombine.span_s(doc)))
    fcombine.check_overlap(spans)
    with jsonout.fields_of(", ".join(str(p) for p in paths)):
        rows, _ = fcombine.summed_rows(docs)
    df = _finish(pl.DataFrame(rows, infer_schema_length=None), paths[0])
    meta = _meta(paths, docs[0][2], capacity_bytes, "summed")
    meta["fio_version"] = ", ".join(sorted({str(d.get("fio version")) for _, d, _ in docs}))
    meta["combine"] = "sum"
    meta["jobs"] = [
        {"jobname": j.get("jobname"), "options": j.get("job options"), "file": str(p)}
        for p, d, _ in docs
        for j in d["jobs"]
    ]
    _mark_failed(meta, {"jobs": [j for _, d, _ in docs for j in d["jobs"]]})
    return Capture(intervals=df, meta=meta)


def _read_result_unchecked(
    path: Path, declared: fv.Version | None, capacity_bytes: int | None
) -> Capture:
    head = _head(path)
    if terse.is_terse(head) and not head.lstrip().startswith("{"):
        rows, v = terse.read_terse(path, declared)
        kind = "terse"
    elif normal.is_normal(head) and '"fio version"' not in head:
        rows, v, ndoc = normal.read_normal(path, declared)
        docs, kind = [ndoc], "normal"
    elif "{" in head:
        docs = jsonout.load_documents(path)
        v = jsonout.doc_version(docs[-1], path, declared)
        if len(docs) > 1:
            rows, kind = jsonout.stream_rows(docs, path, v), "json-stream"
        else:
            rows, kind = jsonout.whole_run_rows(docs[0], path, v), "json"
    else:
        raise ImportFormatError(
            f"{path}: not fio output (JSON, terse or normal); pass fio's own output file "
            "or its logs"
        )
    df = pl.DataFrame(rows, infer_schema_length=None)
    df = _finish(df, path)
    meta = _meta([path], v, capacity_bytes, kind)
    if kind.startswith("json") or kind == "normal":
        meta["jobs"] = [
            {"jobname": j.get("jobname"), "options": j.get("job options")} for j in docs[-1]["jobs"]
        ]
    _mark_failed(meta, {"jobs": terse.job_errors(path)} if kind == "terse" else docs[-1])
    return Capture(intervals=df, meta=meta)


def _finish(df: pl.DataFrame, source: Path) -> pl.DataFrame:
    """Column types of a capture; counts become unsigned integers.

    Raises:
        FioFormatError: a count adds up beyond 2⁶⁴ (a corrupt file).
    """
    counts = [c for c in df.columns if c.endswith("_ios") or c.endswith("_bytes")]
    floats = [c for c in counts if df[c].dtype.is_float()]
    if floats:
        df = df.with_columns(pl.col(c).fill_nan(None) for c in floats)
        tops = df.select(pl.col(c).max() for c in floats).row(0)
        for c, top in zip(floats, tops):
            if top is not None and top >= 2.0**64:
                raise FioFormatError(
                    f"{source}: {c} adds up to {top:.3g} in one interval, beyond any run; "
                    "the file is corrupt"
                )
    rates = [c for c in df.columns if c.endswith(("_us", "_iops", "_mbps")) and c not in counts]
    df = df.with_columns(
        [pl.col(c).cast(pl.UInt64) for c in counts]
        + [pl.col(c).cast(pl.Float64).fill_nan(None) for c in rates]
    )
    return df.with_columns(pl.col("write_bytes").cum_sum().alias("host_written_bytes"))


def _meta(files: list[Path], v: fv.Version | None, capacity_bytes: int | None, kind: str) -> dict:
    return {
        "source": "fio",
        "fio_format": kind,
        "fio_version": fv.show(v) if v else None,
        "files": [str(f) for f in files],
        "status": "complete",
        "target": {"kind": "fio", "size_bytes": capacity_bytes},
    }


def _decide_modes(
    parsed: list[logs.Log], hists: list, v: fv.Version | None
) -> tuple[fv.Version | None, float | None]:
    """Decides what each log's rows are and the run's latency unit (ns per unit, or None when
    no log needs one), from the version when known, the layout otherwise.

    Raises:
        FioFormatError: the layout contradicts the version, or the unit cannot be told.
    """
    lo, hi, why = (0, 0), (99, 0), []
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
        h = (
            series.hist_latency(hist_data, d, edges, ns_per_unit=ns_per_unit or 1.0)
            if hist_data
            else None
        )
        if ios is None and h is not None:
            ios = h[1]
            slack[f"{name}_ios"] = max(float(c.sum(axis=1).max()) for _, _, c in hist_data) * len(
                hist_data
            )
        if per_io_kind is not None:
            # per-I/O latency logs hold every I/O once: exact counts and bytes
            counted = series.per_io_counts(by[per_io_kind], d, edges)
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
        if clat is None and h is not None:
            clat = h[0]
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


def _mark_failed(meta: dict[str, Any], doc: dict) -> None:
    """Sets ``meta["status"]`` to ``failed: fio job …`` when a job of ``doc`` (fio JSON, or
    ``{"jobs": terse.job_errors(...)}``) reports an error."""
    failed = jsonout.job_failures(doc)
    if failed:
        meta["status"] = "failed: fio " + "; ".join(failed)


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
    checks = []
    for p in others:
        head = _head(p)
        rounding: dict[str, float] = {}
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
