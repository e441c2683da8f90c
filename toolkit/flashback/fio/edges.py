"""The edges of fio's window-averaged rate logs (iops, bw ``log_avg_msec``), from the totals
fio printed.

fio's rate log may lack the job's first window and closes its windows on another clock than
the latency logs', so it stops up to a window before the job ends: the I/Os before its first
sample and after its last one are not in it. With the job's printed total the gaps are
filled: before the first sample the job runs at its first rate (the run is going), and after
the last one it did what the total leaves, spread evenly to the job's last log sample. Both
the ``*_ios``/``*_bytes`` columns and the I/O weights of latency windows use the filled
curve. A run whose printed output cannot be matched to each job's logs (several jobs in one
``group_reporting`` entry, several outputs) keeps the first and last rates, and says so.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from flashback.fio import jsonout, normal
from flashback.fio import version as fv
from flashback.fio.logs import Log
from flashback.fio.read_results import _head

#: ``meta["column_notes"]`` for counts whose edges no printed per-job total fixes
ESTIMATED = (
    "fio's rate logs miss the I/Os before their first sample and after their last one; no "
    "printed total of each job fills them (several jobs, or one output for several runs), so "
    "the edges are estimates: the first and last rates extrapolated"
)

#: (run prefix, job number) of a log, as ``x_iops.2.log`` names it
Key = tuple[str, int]

_LOG_OPTIONS = ("write_iops_log", "write_bw_log", "write_lat_log", "write_hist_log")


@dataclasses.dataclass(frozen=True)
class Printed:
    """One job's printed total for one direction, in the rate log's unit (I/Os for an iops
    log, KiB for a bw log), and the job's end: its last sample in any log (ms)."""

    total: float
    end_ms: float


def prefix_of(lg: Log) -> str:
    """The run prefix of a log's file name (``x`` for ``x_clat.2.log``)."""
    name = lg.path.name
    return name[: name.rfind(f"_{lg.kind}")]


def cumulative(
    t_ms: np.ndarray, rate: np.ndarray, *, avg_ms: float
) -> tuple[np.ndarray, np.ndarray]:
    """The running integral of window-averaged rates (rate·ms) as a piecewise-linear curve
    ``(xs, ys)`` for :func:`numpy.interp`, each sample spread over the window it covers (see
    :func:`flashback.fio.series.window_integral`)."""
    order = np.argsort(t_ms, kind="stable")
    t, r = t_ms[order], rate[order]
    prev = np.concatenate([[0.0 if np.isinf(avg_ms) else max(t[0] - avg_ms, 0.0)], t[:-1]])
    start = np.where(t - prev > 1.5 * avg_ms, t - avg_ms, prev)
    cum = np.concatenate([[0.0], np.cumsum(r * (t - start))])
    xs = np.empty(2 * t.size)
    ys = np.empty(2 * t.size)
    xs[0::2], xs[1::2] = start, t
    ys[0::2], ys[1::2] = cum[:-1], cum[1:]
    return np.maximum.accumulate(xs), ys


def extrapolated(x: np.ndarray, xs: np.ndarray, ys: np.ndarray, first: float, last: float):
    """``np.interp(x, xs, ys)`` continued linearly with slope ``first`` before ``xs[0]`` and
    ``last`` after ``xs[-1]``."""
    y = np.interp(x, xs, ys)
    y = np.where(x < xs[0], ys[0] - first * (xs[0] - x), y)
    return np.where(x > xs[-1], ys[-1] + last * (x - xs[-1]), y)


def filled(
    t_ms: np.ndarray, rate: np.ndarray, *, avg_ms: float, printed: Printed
) -> tuple[np.ndarray, np.ndarray]:
    """The running count (I/Os or KiB) of a rate log's samples (:func:`cumulative`) from 0 to
    ``printed.end_ms``: before the first sample's window at the first rate (at most what the
    total leaves), after the last sample what the total still leaves, evenly (into the last
    window when the log ends at the job's end). Never less than the log counts: a total
    below it adds nothing."""
    xs, ys = cumulative(t_ms, rate, avg_ms=avg_ms)
    first_per_s = float(rate[np.argmin(t_ms)])
    ys = ys / 1000.0
    covered = float(ys[-1])
    pre = min(first_per_s * float(xs[0]) / 1000.0, max(printed.total - covered, 0.0))
    post = max(printed.total - covered - pre, 0.0)
    xs = np.concatenate([[0.0], xs])
    ys = np.concatenate([[0.0], ys + pre])
    if printed.end_ms > xs[-1]:
        return np.append(xs, printed.end_ms), np.append(ys, ys[-1] + post)
    ys[-1] += post
    return xs, ys


def printed_by_job(
    parsed: list[Log], others: list[Path], v: fv.Version | None
) -> tuple[dict[str, dict[Key, Printed]], bool]:
    """``({column: {job key: Printed}}, estimated)`` for the window-averaged rate logs among
    ``parsed``: each job's totals from the run's JSON output (``jobs[k]`` holds the job of
    ``.{k+1}.log``; with several outputs, the one whose job names the log's prefix) or, for a
    single job, its normal output; columns are ``{dir}_ios`` (iops logs) and ``{dir}_bytes``
    (bw logs, in KiB). ``estimated`` is true when a printed output is given but some job's
    logs have no printed total of their own (the edges stay extrapolated).

    Raises:
        FioFormatError: the JSON output is inconsistent (see
            :func:`flashback.fio.jsonout.direction_totals`).
    """
    rate = [lg for lg in parsed if lg.kind in ("iops", "bw") and lg.mode != "per_io"]
    rate = [lg for lg in rate if lg.t_ms.size and lg.value is not None]
    outputs = [(p, h) for p in others if _is_printed(h := _head(p))]
    if not rate or not outputs:
        return {}, False
    keys = {(prefix_of(lg), lg.job) for lg in rate}
    totals: dict[Key, dict[str, float]] = {}
    for p, head in outputs:
        found = _job_totals(p, head, keys, v, named_only=len(outputs) > 1)
        if found is None or set(found) & set(totals):
            return {}, True
        totals.update(found)
    if set(totals) != keys:
        return {}, True
    end_ms = job_ends_ms(parsed)
    out: dict[str, dict[Key, Printed]] = {}
    for k, cols in totals.items():
        for col, x in cols.items():
            unit = 1024.0 if col.endswith("_bytes") else 1.0
            out.setdefault(col, {})[k] = Printed(total=x / unit, end_ms=end_ms[k])
    return out, False


def job_ends_ms(parsed: list[Log]) -> dict[Key, float]:
    """Each job's end as its logs see it: its last sample in any log (ms)."""
    end_ms: dict[Key, float] = {}
    for lg in parsed:
        if lg.t_ms.size:
            k = (prefix_of(lg), lg.job)
            end_ms[k] = max(end_ms.get(k, 0.0), float(lg.t_ms.max()))
    return end_ms


def _merged(opts: dict, n_entries: int, keys: set[Key]) -> bool:
    """Whether a JSON job entry may sum several jobs: ``group_reporting`` unless the document
    has one entry, of one job (``numjobs`` 1), and the logs are those of job 1 only."""
    if str(opts.get("group_reporting", "0")).strip() in ("0", ""):
        return False
    one = n_entries == 1 and str(opts.get("numjobs", "1")).strip() == "1"
    return not (one and {k[1] for k in keys} == {1})


def _is_printed(head: str) -> bool:
    return '"fio version"' in head or normal.is_normal(head)


def _job_totals(
    p: Path, head: str, keys: set[Key], v: fv.Version | None, *, named_only: bool
) -> dict[Key, dict[str, float]] | None:
    """The printed I/Os and bytes per direction of each job of ``keys`` that the output
    reports on its own (``named_only``: only jobs whose options name the log's prefix, or its
    end), or ``None`` when it may report jobs merged (``group_reporting``, see
    :func:`_merged`; a normal output of several jobs)."""
    if '"fio version"' not in head:
        text = p.read_text(errors="replace")
        jobs = re.findall(r"\(groupid=\d+, jobs=(\d+)\)", text)
        if len(keys) != 1 or jobs != ["1"] or named_only:
            return None
        nbytes, _ = normal.printed_bytes(p)
        return {next(iter(keys)): {**normal.printed_ios(p)[1], **nbytes}}
    doc = jsonout.load_documents(p)[-1]
    pv = jsonout.doc_version(doc, p, v)
    jobs = doc.get("jobs") or []
    glob = doc.get("global options") or {}
    if not named_only and len({k[1] for k in keys}) < len(keys):
        return None  # logs of two runs with one job number: which one the output is, is unknown
    out: dict[Key, dict[str, float]] = {}
    for prefix, job in keys:
        if job > len(jobs):
            continue
        j = jobs[job - 1]
        opts = {**glob, **(j.get("job options") or {})}
        if _merged(opts, len(jobs), keys):
            return None
        named = {Path(str(opts[o])).name for o in _LOG_OPTIONS if o in opts}
        # one output: jobs[k] is the job of .{k+1}.log whatever the files were renamed to
        # (as printed_totals reads it); several: the output whose job names the prefix
        if named_only and not any(prefix.endswith(n) for n in named if n):
            continue
        cols: dict[str, float] = {}
        for d in ("read", "write", "trim"):
            i, b, _ = jsonout.direction_totals(j.get(d) or {}, pv, p, str(j.get("jobname")))
            cols[f"{d}_ios"], cols[f"{d}_bytes"] = float(i), float(b)
        out[(prefix, job)] = cols
    return out
