"""A saved replay's files: ``intervals.parquet``, ``steps.columns`` and ``replay.json``
(written by :meth:`Replay.save <flashback.replay.api.Replay.save>`, read by
:meth:`Replay.load <flashback.replay.api.Replay.load>`)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from flashback._io import check_output, write_bytes
from flashback._meta import ReplayMeta
from flashback.errors import CaptureFileError, FlashbackError
from flashback.replay import stepstore

#: Parquet footer key of a saved replay's save id (matched against ``replay.json``'s).
SAVE_ID_KEY = "flashback.replay_save_id"
#: The files a saved replay consists of (``steps.columns`` is a Parquet file; not named
#: ``.parquet`` so that a dataset scan of a tree holding saved replays reads only intervals).
SAVE_FILES = ("intervals.parquet", "steps.columns", "replay.json")
#: Files a replay saved before the step table (flashback 0.1 at 79d544e) consists of.
OLD_SAVE_FILES = ("intervals.parquet", "replay.json")


def check_save_dir(directory: str | os.PathLike[str], *, overwrite: bool) -> Path:
    """Checks, before any long work, that a replay can be saved in ``directory``: absent (its
    parent is then created) or a directory, whose two save files could be written.

    Returns the directory. Raises:
        SafetyError: a save file is refused by the guarded writer (a device node, FIFO, a
            file being written by another flashback process, or an earlier save while
            ``overwrite`` is false).
        CaptureFileError: ``directory`` or a parent is not a directory, or a save file's
            name is taken by a directory.
    """
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise CaptureFileError(
            f"cannot save the replay in {d}: it is not a directory; give a directory name"
        )
    if not d.exists():
        probe = d
        while not probe.exists():
            probe = probe.parent
        if not probe.is_dir():
            raise CaptureFileError(
                f"cannot save the replay in {d}: {probe} is not a directory; give a directory name"
            )
        check_output(probe / f".{d.name}.probe", overwrite=False)
        return d
    for name in SAVE_FILES:
        if (d / name).is_dir():
            raise CaptureFileError(
                f"cannot save the replay in {d}: {d / name} is a directory; give another directory"
            )
        check_output(d / name, overwrite=overwrite)
    return d


def write(
    directory: str | os.PathLike[str],
    *,
    intervals: pl.DataFrame,
    step_records: list[dict[str, Any]],
    meta: Mapping[str, Any],
    overwrite: bool,
) -> Path:
    """Saves a replay's ``intervals``, ``step_records`` and ``meta`` to ``directory``, as
    :meth:`Replay.save <flashback.replay.api.Replay.save>` describes, and returns it.

    Raises:
        CaptureFileError: ``directory`` cannot be created or written (names the reason).
        SafetyError: a file in ``directory`` is a device node, FIFO or socket (or a link to
            one), or it holds a saved replay and ``overwrite`` is false.
        DeviceError: the disk is full (the message names the file and what was kept).
    """
    d = check_save_dir(directory, overwrite=overwrite)
    save_id = uuid.uuid4().hex
    doc = {"save_id": save_id, **replay_document(meta, step_records)}
    table, columns = stepstore.encode(doc.pop("steps"))
    try:
        d.mkdir(parents=True, exist_ok=True)
        # intervals first, replay.json last: replay.json's id is what makes a save whole
        buf = io.BytesIO()
        intervals.write_parquet(buf, metadata={SAVE_ID_KEY: save_id})
        pq = buf.getvalue()
        buf = io.BytesIO()
        table.write_parquet(buf, **stepstore.WRITE_OPTIONS)
        steps_pq = buf.getvalue()
        # checked at load before any parquet reader sees the bytes: a damaged file is
        # refused, never parsed (a reader can abort the process on crafted lengths)
        doc["intervals_sha256"] = hashlib.sha256(pq).hexdigest()
        doc["steps_table"] = {
            "format": stepstore.FORMAT,
            "count": len(step_records),
            "columns": columns,
            "sha256": hashlib.sha256(steps_pq).hexdigest(),
        }
        write_bytes(d / "intervals.parquet", pq, overwrite=overwrite)
        write_bytes(d / "steps.columns", steps_pq, overwrite=overwrite)
        write_bytes(
            d / "replay.json",
            json.dumps(doc, separators=(",", ":")).encode(),
            overwrite=overwrite,
        )
    except FlashbackError:
        raise
    except OSError as e:
        raise CaptureFileError(
            f"cannot save the replay to {d}: {e.strerror or e}; give a writable directory"
        ) from e
    return d


def read(
    directory: str | os.PathLike[str],
) -> tuple[pl.DataFrame, list[dict[str, Any]], ReplayMeta]:
    """A saved replay's intervals, step records and meta, as
    :meth:`Replay.load <flashback.replay.api.Replay.load>` describes.

    Raises:
        CaptureFileError: ``directory`` holds no saved replay, or its files come from
            different saves (a save cut short, or two saves racing) or are damaged.
    """
    d = Path(directory)
    if not (d / "replay.json").exists() or not (d / "intervals.parquet").exists():
        raise CaptureFileError(
            f"{d} holds no saved replay; give a directory written by Replay.save"
        )
    doc = _read_document(d / "replay.json")
    pq = (d / "intervals.parquet").read_bytes()  # id, checksum and rows from one read
    want = doc.get("intervals_sha256")
    if want is not None and hashlib.sha256(pq).hexdigest() != want:
        raise CaptureFileError(
            f"{d} mixes two saves or is damaged: its intervals.parquet does not match the "
            "checksum replay.json holds; save the replay again"
        )
    if "steps_table" in doc:
        doc["steps"] = _read_steps(d, doc["steps_table"])
    try:
        pq_id = pl.read_parquet_metadata(io.BytesIO(pq)).get(SAVE_ID_KEY)
        intervals = pl.read_parquet(io.BytesIO(pq))
    except (Exception, pl.exceptions.PanicException) as e:
        raise CaptureFileError(
            f"{d / 'intervals.parquet'} is damaged ({type(e).__name__}); save the replay again"
        ) from None
    if doc.get("save_id") != pq_id:
        raise CaptureFileError(
            f"{d} mixes two saves: its intervals.parquet and replay.json were written by "
            "different saves (one was cut short); save the replay again"
        )
    return intervals, document_steps(doc), doc["meta"]


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def replay_document(meta: Mapping[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``replay.json`` holds: the meta, and the steps with the capture metadata they share
    stored once (``capture_meta_shared``: every key, at any depth of nested dicts, whose value
    is the same in all steps' ``capture_meta``; each step keeps only what differs). Loads back
    unchanged through :func:`document_steps`."""
    steps = _jsonable(steps)
    metas = [s["capture_meta"] for s in steps if isinstance(s.get("capture_meta"), dict)]
    shared = _common(metas) if len(metas) > 1 else {}
    out = []
    for s in steps:
        cm = s.get("capture_meta")
        if shared and isinstance(cm, dict):
            s = {**s, "capture_meta": _without(cm, shared)}
        out.append(s)
    doc: dict[str, Any] = {"meta": _jsonable(meta), "steps": out}
    if shared:
        doc["capture_meta_shared"] = shared
    return doc


def _common(dicts: list[dict[str, Any]]) -> dict[str, Any]:
    """The part every dict of ``dicts`` shares: equal values, and nested dicts' shared parts."""
    out: dict[str, Any] = {}
    for k, v in dicts[0].items():
        vals = [d.get(k, _MISSING) for d in dicts]
        if all(x == v for x in vals):
            out[k] = v
        elif all(isinstance(x, dict) for x in vals):
            sub = _common(vals)
            if sub:
                out[k] = {_NESTED: sub}
    return out


def _without(d: dict[str, Any], shared: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        s = shared.get(k, _MISSING)
        if isinstance(s, dict) and _NESTED in s and isinstance(v, dict):
            out[k] = _without(v, s[_NESTED])
        elif s is _MISSING or s != v:
            out[k] = v
    return out


def _merged(d: dict[str, Any], shared: dict[str, Any]) -> dict[str, Any]:
    out = dict(d)
    for k, s in shared.items():
        if isinstance(s, dict) and _NESTED in s:
            out[k] = _merged(d.get(k, {}), s[_NESTED])
        else:
            out[k] = s
    return out


_MISSING = object()
#: Marks a shared entry that is the common part of a nested dict, not a value.
_NESTED = "__shared_part__"


def _read_steps(d: Path, table: dict[str, Any]) -> list[dict[str, Any]]:
    """The step records (shared capture metadata not merged yet) from ``d/steps.columns``,
    checked against ``replay.json``'s ``steps_table`` (its sha256 before any Parquet reader
    sees the bytes).

    Raises:
        CaptureFileError: the file is missing, does not match the checksum, or does not decode
            to the steps its column descriptions name.
    """
    path = d / "steps.columns"
    if not path.is_file():
        raise CaptureFileError(
            f"{d} is missing steps.columns, which its replay.json names; save the replay again"
        )
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != table["sha256"]:
        raise CaptureFileError(
            f"{d} mixes two saves or is damaged: its steps.columns does not match the checksum "
            "replay.json holds; save the replay again"
        )
    try:
        specs = stepstore.check_specs(table["columns"], count=table["count"])
        frame = pl.read_parquet(io.BytesIO(data))
        steps = stepstore.decode(frame, specs, count=table["count"])
    except stepstore.StepTableError as e:
        raise CaptureFileError(
            f"{path} does not hold the replay's steps: {e}; save the replay again"
        ) from None
    except (Exception, pl.exceptions.PanicException) as e:
        raise CaptureFileError(
            f"{path} is damaged ({type(e).__name__}); save the replay again"
        ) from None
    _check_steps(
        steps,
        lambda why: CaptureFileError(f"{path} does not hold the replay's steps: {why}"),
    )
    return steps


def _read_document(path: Path) -> dict[str, Any]:
    """``replay.json`` parsed and checked for the shape :meth:`Replay.save` writes: an object
    with a ``meta`` object, a ``steps`` list of objects (each ``capture_meta`` an object or
    null), an optional ``capture_meta_shared`` object and a string ``save_id``.

    Raises:
        CaptureFileError: the file is not that (names the file and what is wrong).
    """

    def bad(why: str) -> CaptureFileError:
        return CaptureFileError(f"{path} is not a saved replay's document: {why}; save it again")

    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise bad(f"it does not parse as JSON ({type(e).__name__})") from None
    if not isinstance(doc, dict):
        raise bad("not a JSON object")
    if not isinstance(doc.get("meta"), dict):
        raise bad("'meta' is not an object")
    if "steps_table" in doc:
        table = doc["steps_table"]
        if "steps" in doc:
            raise bad("it holds both 'steps' and 'steps_table'")
        if not isinstance(table, dict) or table.get("format") != STEPS_FORMAT:
            raise bad(f"'steps_table' is not a {STEPS_FORMAT} table description")
        if not isinstance(table.get("sha256"), str) or "columns" not in table:
            raise bad("'steps_table' has no checksum or no columns")
    else:
        _check_steps(doc.get("steps"), bad)
    if not isinstance(doc.get("capture_meta_shared", {}), dict):
        raise bad("'capture_meta_shared' is not an object")
    if "save_id" in doc and not isinstance(doc["save_id"], str):
        raise bad("'save_id' is not a string")
    if not isinstance(doc.get("intervals_sha256", ""), str):
        raise bad("'intervals_sha256' is not a string")
    return doc


#: ``steps_table.format`` of a replay saved with its steps as a column table.
STEPS_FORMAT = stepstore.FORMAT


def _check_steps(steps: Any, bad: Callable[[str], CaptureFileError]) -> None:
    if not isinstance(steps, list) or not all(isinstance(x, dict) for x in steps):
        raise bad("'steps' is not a list of objects")
    if any(not isinstance(x.get("capture_meta", {}), (dict, type(None))) for x in steps):
        raise bad("a step's 'capture_meta' is neither an object nor null")


def document_steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps of a ``replay.json`` document with the shared capture metadata merged back
    (documents written before it was shared load as they are)."""
    shared = doc.get("capture_meta_shared") or {}
    steps = doc["steps"]
    if not shared:
        return steps
    return [
        {**s, "capture_meta": _merged(s["capture_meta"], shared)}
        if isinstance(s.get("capture_meta"), dict)
        else s
        for s in steps
    ]
