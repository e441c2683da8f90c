"""fio's JSON/json+, terse and normal output read into a capture (:func:`read_fio`'s path
for outputs), and the capture helpers the log path shares."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from flashback._meta import CaptureMeta
from flashback.capture import Capture
from flashback.errors import FioFormatError, ImportFormatError
from flashback.fio import combine as fcombine
from flashback.fio import jsonout, normal, terse
from flashback.fio import version as fv


def _head(p: Path) -> str:
    """The first 8 KiB of a file as text ("" when unreadable)."""
    try:
        with p.open("rb") as f:
            return f.read(8192).decode("utf-8", "replace")
    except OSError:
        return ""


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
        for c, top in zip(floats, tops, strict=True):
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


def _meta(
    files: list[Path], v: fv.Version | None, capacity_bytes: int | None, kind: str
) -> CaptureMeta:
    return {
        "source": "fio",
        "fio_format": kind,
        "fio_version": fv.show(v) if v else None,
        "files": [str(f) for f in files],
        "status": "complete",
        "target": {"kind": "fio", "size_bytes": capacity_bytes},
    }


def _mark_failed(meta: CaptureMeta, doc: dict) -> None:
    """Sets ``meta["status"]`` to ``failed: fio job …`` when a job of ``doc`` (fio JSON, or
    ``{"jobs": terse.job_errors(...)}``) reports an error."""
    failed = jsonout.job_failures(doc)
    if failed:
        meta["status"] = "failed: fio " + "; ".join(failed)
