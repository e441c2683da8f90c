"""``read_fio(..., combine="sum")``: several fio runs that ran at the same time (e.g. CBT's
one fio process per RBD volume) read as one test point, as fio's ``--client`` "All clients"
sums its hosts: each group's jobs of every run together (I/Os and bytes summed, the longest
runtime, I/O-weighted latency means, the largest max, percentiles from summed json+ bins).
Never the default: runs one after another are refused."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from flashback.errors import FioFormatError, ParameterError
from flashback.fio import jsonout
from flashback.fio import version as fv

COMBINE = (None, "sum")


def check_combine(combine: Any) -> str | None:
    """Raises:
    ParameterError: ``combine`` is not ``None`` or ``"sum"``."""
    if combine not in COMBINE:
        raise ParameterError(
            f"read_fio: combine={combine!r} is not one of None or 'sum' (the runs' I/Os added "
            "up, for runs that ran at the same time)"
        )
    return combine


def span_s(doc: dict) -> tuple[float, float] | None:
    """(start, end) of a run in Unix seconds from its JSON (``timestamp_ms`` or
    ``timestamp``: when fio finished; less the longest job direction's runtime), or ``None``
    when the document does not say."""
    end = doc.get("timestamp_ms")
    end_s = float(end) / 1000.0 if isinstance(end, (int, float)) else None
    if end_s is None and isinstance(doc.get("timestamp"), (int, float)):
        end_s = float(doc["timestamp"])
    if end_s is None or not math.isfinite(end_s):
        return None
    runtime_ms = 0.0
    for j in doc["jobs"]:
        for d in jsonout.DIRS:
            x = j.get(d) if isinstance(j, dict) else None
            if isinstance(x, dict) and isinstance(x.get("runtime"), (int, float)):
                runtime_ms = max(runtime_ms, float(x["runtime"]))
    start_s = end_s - runtime_ms / 1000.0
    return (start_s, end_s) if math.isfinite(start_s) else None


def check_overlap(spans: list[tuple[Path, tuple[float, float] | None]]) -> None:
    """Refuses runs known to have run one after another (each run's span from its JSON).

    Raises:
        FioFormatError: a run started after another had ended.
    """
    known = sorted((s, p) for p, s in spans if s is not None)
    for (a, pa), (b, pb) in itertools.pairwise(known):
        if b[0] >= a[1]:
            raise FioFormatError(
                f"{pb}: started {b[0] - a[1]:.0f} s after {pa.name} ended, so the runs did not "
                "run at the same time and combine='sum' does not apply; read them one by one"
            )


def summed_rows(
    docs: list[tuple[Path, dict, fv.Version]],
) -> tuple[list[dict[str, Any]], fv.Version]:
    """One row per group over every run's jobs (group k of each run together).

    Raises:
        FioFormatError: the runs' layouts disagree (fio 2.x KiB/µs vs 3.x bytes/ns), or a
            run's totals are inconsistent (see :func:`jsonout.whole_run_rows`).
    """
    first_path, _, v0 = docs[0]
    for p, _, v in docs[1:]:
        if (v >= fv.NANOSECONDS_FROM) != (v0 >= fv.NANOSECONDS_FROM):
            raise FioFormatError(
                f"{p}: written by {fv.show(v)} but {first_path.name} by {fv.show(v0)}, whose "
                "units differ; combine='sum' needs runs of one fio major version"
            )
    jobs = [j for _, d, _ in docs for j in d["jobs"]]
    rows = jsonout.whole_run_rows({"jobs": jobs}, first_path, v0)
    return rows, v0
