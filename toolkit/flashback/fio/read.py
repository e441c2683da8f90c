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

from flashback.capture import Capture
from flashback.errors import FioFormatError, ImportFormatError
from flashback.fio import combine as fcombine
from flashback.fio import logs, normal, terse
from flashback.fio import version as fv
from flashback.fio.read_logs import _read_logs
from flashback.fio.read_results import _head, _read_result, _read_results_summed
from flashback.units import interval_seconds


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


def _is_fio_output(p: Path) -> bool:
    """Whether a file holds fio's JSON, terse or normal output, by its content."""
    head = _head(p)
    return '"fio version"' in head or terse.is_terse(head) or normal.is_normal(head)


def _is_sample_log(p: Path) -> bool:
    """Whether a file given by name is read as a fio sample log: named ``*.log`` and not
    holding fio's JSON, terse or normal output (``fio … > run.log`` is normal output)."""
    return p.name.endswith(".log") and not _is_fio_output(p)


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
    seen: dict[tuple[str, int, str], Path] = {}
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
