"""fio's JSON output as documents: loaded from a file (one document, a ``--status-interval``
stream, or ``--client`` output read as the hosts' jobs), their shape checked, and the fio
version each names checked against its layout."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from flashback.errors import FioFormatError, FlashbackError, ImportFormatError
from flashback.fio import version as fv

DIRS = ("read", "write", "trim")


def load_documents(path: Path) -> list[dict]:
    """The JSON documents in a file (one, or a ``--status-interval`` stream); text before the
    first ``{`` (fio's warnings) and between documents is skipped, and a document identical
    to the one before it is dropped (one run's output kept twice is one document).

    Raises:
        ImportFormatError: invalid JSON (names file and line), or no document with ``jobs``.
    """
    text = path.read_text(errors="replace")
    dec = json.JSONDecoder()
    docs: list[dict[str, Any]] = []
    pos = text.find("{")
    while pos >= 0:
        try:
            doc, end = dec.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise ImportFormatError(
                f"{path} line {e.lineno}: invalid JSON ({e.msg}); is this fio's "
                "--output-format=json?"
            ) from None
        except RecursionError:
            raise ImportFormatError(
                f"{path}: the JSON is nested deeper than Python's parser goes, which fio never "
                "writes; pass fio's unedited --output-format=json output"
            ) from None
        if isinstance(doc, dict) and "jobs" not in doc and "client_stats" in doc:
            doc = _client_jobs(doc, path)
        # a document printed twice (a terminal capture of `fio | tee`) is one document
        if isinstance(doc, dict) and "jobs" in doc and not (docs and doc == docs[-1]):
            docs.append(doc)
        pos = text.find("{", end)
    if not docs or not any(d.get("jobs") for d in docs):
        raise ImportFormatError(
            f"{path}: the JSON has no 'jobs'; pass fio's --output-format=json output"
        )
    for doc in docs:
        _check_shape(doc, path)
        _check_directions(doc, path)
    return docs


def _check_shape(doc: dict, path: Path) -> None:
    """Refuses a document whose containers are not what fio writes: ``jobs`` a list of
    objects, each job's ``read``/``write``/``trim``/``job options`` and the document's
    ``global options`` objects when present.

    Raises:
        ImportFormatError: names the field.
    """
    jobs = doc["jobs"]
    if not isinstance(jobs, list) or not all(isinstance(j, dict) for j in jobs):
        raise ImportFormatError(
            f"{path}: 'jobs' is not a list of job objects; pass fio's unedited "
            "--output-format=json output"
        )
    if not isinstance(doc.get("global options", {}), dict):
        raise ImportFormatError(
            f"{path}: 'global options' is not an object; pass fio's unedited output"
        )
    for j in jobs:
        for key in (*DIRS, "job options"):
            if not isinstance(j.get(key, {}), dict):
                raise ImportFormatError(
                    f"{path}: job {str(j.get('jobname'))[:40]!r}'s {key!r} is not an object; "
                    "pass fio's unedited --output-format=json output"
                )


@contextlib.contextmanager
def fields_of(path: Path | str):
    """Turns a field of the wrong kind met while reading fio's output (a string where fio
    writes a number, a list where it writes an object, an infinite count) into one
    :class:`ImportFormatError` naming the file; flashback's own errors pass through.

    Raises:
        ImportFormatError: a field had the wrong kind.
    """
    try:
        yield
    except FlashbackError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError) as e:
        raise ImportFormatError(
            f"{path}: a field of fio's output has the wrong kind ({type(e).__name__}: "
            f"{str(e)[:80]}); pass fio's unedited output"
        ) from None


def _check_directions(doc: dict, path: Path) -> None:
    """Refuses jobs reported with ``unified_rw_reporting=mixed`` (one ``mixed`` block, no
    read/write/trim blocks), which a capture cannot split into its per-direction columns.

    Raises:
        FioFormatError: a job has a ``mixed`` block and no per-direction block.
    """
    for j in doc["jobs"]:
        if isinstance(j, dict) and "mixed" in j and not any(d in j for d in DIRS):
            raise FioFormatError(
                f"{path}: job {j.get('jobname')!r} reports reads, writes and trims together in "
                "one 'mixed' block (unified_rw_reporting=mixed), which cannot be split into "
                "directions; rerun with unified_rw_reporting=none or both, or pass the logs"
            )


def job_failures(doc: dict) -> list[str]:
    """``"job 'name': error N (strerror)"`` for each job fio reports a non-zero ``error`` for
    (fio stops a job at its first I/O error unless ``continue_on_error`` is set)."""
    out = []
    for j in doc["jobs"]:
        e = j.get("error") if isinstance(j, dict) else None
        if isinstance(e, int) and e != 0:
            out.append(f"job {j.get('jobname')!r}: error {e} ({os.strerror(e)})")
    return out


ALL_CLIENTS = "All clients"


def _client_jobs(doc: dict, path: Path) -> dict:
    """fio ``--client`` JSON (``client_stats``: each host's jobs, then fio's sum over the hosts
    named ``"All clients"``) → a document whose ``jobs`` are the hosts' jobs, checked against
    that sum.

    Raises:
        FioFormatError: the hosts' I/Os or bytes do not add up to fio's "All clients" entry.
    """
    raw = doc["client_stats"]
    stats = [j for j in raw if isinstance(j, dict)] if isinstance(raw, list) else []
    jobs = [j for j in stats if j.get("jobname") != ALL_CLIENTS]
    total = next((j for j in stats if j.get("jobname") == ALL_CLIENTS), None)

    def count(j: dict, d: str, key: str) -> int:
        x = j.get(d)
        return int(x.get(key, 0)) if isinstance(x, dict) else 0

    if total is not None:
        for d in DIRS:
            for key in ("total_ios", "io_bytes"):
                got = sum(count(j, d, key) for j in jobs)
                want = count(total, d, key)
                if got != want:
                    raise FioFormatError(
                        f"{path}: the hosts' {d} {key} add up to {got} but fio printed "
                        f"{want} for {ALL_CLIENTS!r}; the client_stats are incomplete"
                    )
    return {**doc, "jobs": jobs}


def doc_version(doc: dict, path: Path, declared: fv.Version | None = None) -> fv.Version:
    """The fio version a document names, checked against its layout and ``declared``.

    Raises:
        FioFormatError: the layout (ns blocks, ``io_kbytes``) contradicts the version named.
    """
    v = fv.parse_version(doc.get("fio version"))
    d0: dict[str, Any] = next(
        (j.get(d) for j in doc["jobs"] for d in DIRS if isinstance(j.get(d), dict)), {}
    )
    layout3 = "clat_ns" in d0 or "io_kbytes" in d0
    layout2 = "clat" in d0 and "clat_ns" not in d0
    inferred = (3, 0) if layout3 else (2, 0) if layout2 else None
    if declared is not None and v is not None and declared != v:
        raise FioFormatError(
            f"{path}: the JSON says {fv.show(v)} but fio_version={fv.show(declared)} was given"
        )
    v = v or declared
    if v is None:
        if inferred is None:
            raise FioFormatError(
                f"{path}: the JSON names no fio version and its layout does not tell; pass fio_version="
            )
        return inferred
    if inferred is not None:
        fv.check_agrees(
            v,
            inferred_ok=(v >= fv.NANOSECONDS_FROM) == (inferred >= fv.NANOSECONDS_FROM),
            layout="ns latency blocks and io_kbytes" if layout3 else "µs latency blocks",
            path=path,
        )
    return v
