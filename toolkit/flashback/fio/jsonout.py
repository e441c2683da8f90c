"""fio ``--output-format=json`` / ``json+`` → one capture row per job."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from flashback.capture import Capture
from flashback.errors import ImportFormatError

_PCT = {"p50": "50.000000", "p99": "99.000000", "p999": "99.900000"}


def _lat(d: dict) -> dict[str, float | None]:
    c = d.get("clat_ns") or d.get("lat_ns") or {}
    if not c or not c.get("N"):
        return dict.fromkeys(("mean", "p50", "p99", "p999", "max"))
    out = {"mean": c.get("mean"), "max": c.get("max")}
    bins = c.get("bins")
    if bins:  # json+: exact bucket values
        v = np.array([float(k) for k in bins])
        n = np.array([float(x) for x in bins.values()])
        o = np.argsort(v)
        v, cdf = v[o], np.cumsum(n[o]) / n.sum()
        for k, p in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999)):
            out[k] = float(v[min(int(np.searchsorted(cdf, p)), v.size - 1)])
    else:
        pct = c.get("percentile") or {}
        for k, key in _PCT.items():
            out[k] = pct.get(key)
    return {k: (None if x is None else float(x) / 1000.0) for k, x in out.items()}


def _rows(jobs: list) -> pl.DataFrame:
    """One row per job; raises TypeError/ValueError/... on a malformed field."""
    if not isinstance(jobs, list):
        raise TypeError("'jobs' is not a list")
    rows, t = [], 0.0
    for j in jobs:
        runtime_s = max(float(j.get("job_runtime") or j.get("elapsed", 0) * 1000) / 1000.0, 1e-9)
        t += runtime_s
        r = {"t_s": t, "interval_s": runtime_s, "step": str(j.get("jobname", ""))}
        for d in ("read", "write", "trim"):
            x = j.get(d) or {}
            r[f"{d}_ios"] = int(x.get("total_ios", 0))
            r[f"{d}_bytes"] = int(x.get("io_bytes", 0))
            r[f"{d}_iops"] = r[f"{d}_ios"] / runtime_s
            if d != "trim":
                r[f"{d}_mbps"] = r[f"{d}_bytes"] / runtime_s / 1e6
                for k, v in _lat(x).items():
                    r[f"{d}_lat_{k}_us"] = v
        rows.append(r)
    df = pl.DataFrame(rows, infer_schema_length=None)
    return df.with_columns(pl.col("write_bytes").cum_sum().alias("host_written_bytes"))


def read_json(path: Path, *, capacity_bytes: int | None = None) -> Capture:
    """Reads fio's JSON output (text before the first ``{`` is skipped, as fio prints warnings
    there).

    Raises:
        ImportFormatError: invalid JSON (names file and line) or no ``jobs``.
    """
    text = path.read_text(errors="replace")
    start = text.find("{")
    skipped = text[: max(start, 0)].count("\n")
    try:
        doc = json.loads(text[start:] if start >= 0 else text)
    except json.JSONDecodeError as e:
        raise ImportFormatError(
            f"{path} line {e.lineno + skipped}: invalid JSON ({e.msg}); is this fio's --output-format=json?"
        ) from None
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not jobs:
        raise ImportFormatError(
            f"{path}: the JSON has no 'jobs'; pass fio's --output-format=json output"
        )
    try:
        df = _rows(jobs)
    except (
        TypeError,
        ValueError,
        AttributeError,
        KeyError,
        OverflowError,
        pl.exceptions.PolarsError,
    ) as e:
        raise ImportFormatError(
            f"{path}: a job has a malformed field ({type(e).__name__}: {e}); pass fio's --output-format=json output"
        ) from None
    meta = {
        "source": "fio",
        "fio_version": doc.get("fio version"),
        "files": [str(path)],
        "status": "complete",
        "target": {"kind": "fio", "size_bytes": capacity_bytes},
        "jobs": [{"jobname": j.get("jobname"), "options": j.get("job options")} for j in jobs],
    }
    return Capture(intervals=df, meta=meta)
