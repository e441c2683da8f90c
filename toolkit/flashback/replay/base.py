"""Protocols (a review's procedure), their registry, and the :class:`Replay` result."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from flashback._io import check_output, write_bytes
from flashback.capture import Capture, summarize
from flashback.errors import (
    CaptureFileError,
    FlashbackError,
    ParameterError,
    ReplayError,
)
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


@dataclasses.dataclass(frozen=True, kw_only=True)
class Protocol:
    """One review's test procedure, runnable on any target.

    Attributes:
        name: the registry name (``puget-cdm-loop``).
        title: one line naming the review and test.
        source: the seed document the procedure and numbers come from.
        review_capacity_bytes: the review drive's user capacity (the default scale divides
            the target's capacity by it); ``None`` when the protocol is not tied to a drive.
        default_target: the review drive's simulated preset.
        drives: ``sim:`` preset name → (the drive's name in the published numbers, its user
            capacity in bytes); the default target's preset must be one of them.
        params: parameter → (default, one-line meaning, converter from
            :mod:`flashback.replay.params` giving its type and range).
        procedure: the steps, one per line, as the review states them (and what is assumed).
        run: ``run(runner, params)`` executes the steps.
        checks: ``checks(replay)`` → rows for :meth:`Replay.compare`.
        unstated: parameter → plausible values, for the parameters the review does not state
            (an idle gap, a measurement length); ``compare(sensitivity=True)`` replays each.
        headline: the review's headline number as ``(test, condition, metric)`` of a compare
            row, or a sentence saying why the replay cannot compare it.
    """

    name: str
    title: str
    source: str
    review_capacity_bytes: int | None
    default_target: str
    drives: dict[str, tuple[str, int]]
    params: dict[str, tuple[Any, str, Callable[[str, Any], Any]]]
    procedure: str
    run: Callable[[Any, dict[str, Any]], None]
    checks: Callable[[Replay], list[dict[str, Any]]]
    estimate_written_bytes: Callable[[int, float, dict[str, Any]], float] | None = None
    pair_checks: Callable[[Replay, Replay], list[dict[str, Any]]] | None = None
    unstated: dict[str, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    headline: tuple[str, str, str] | str = ""

    def describe(self) -> str:
        """A multi-line description: review, default target, steps and parameters."""
        lines = [f"{self.name}: {self.title}", f"  source: {self.source}"]
        lines.append(f"  default target: {self.default_target}")
        if self.review_capacity_bytes:
            lines.append(
                f"  scale: target capacity / {self.review_capacity_bytes / 1e9:g} GB "
                "(spans, byte limits and durations scale with it)"
            )
        lines += ["  steps:"] + [f"    {s}" for s in self.procedure.strip().splitlines()]
        if self.params:
            lines.append("  parameters:")
            for k, (v, meaning, *_) in self.params.items():
                lines.append(f"    {k}={v!r}: {meaning}")
        if self.unstated:
            lines.append("  not stated by the review (compare(sensitivity=True) replays each):")
            for k, values in self.unstated.items():
                lines.append(f"    {k}: {', '.join(f'{v:g}' for v in values)}")
        return "\n".join(lines)

    def resolve(self, params: dict[str, Any]) -> dict[str, Any]:
        """Defaults with ``params`` applied, each converted to its declared type and checked
        against its range (text such as ``"False"`` or ``"3"`` from ``--param`` included).

        Raises:
            ParameterError: a parameter this protocol does not have, or a value of the wrong
                type or out of range.
        """
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            allowed = ", ".join(self.params) or "none"
            raise ParameterError(
                f"{self.name} has no parameter {unknown[0]!r}; its parameters are: {allowed}"
            )
        out = {k: v for k, (v, *_) in self.params.items()}
        for k, value in params.items():
            convert = self.params[k][2] if len(self.params[k]) > 2 else None
            if convert is None:
                out[k] = value
                continue
            try:
                out[k] = convert(k, value)
            except ParameterError as e:
                raise ParameterError(f"{self.name}: {e}") from None
        return out

    def drive_for(self, spec: str) -> tuple[str, int | None, bool]:
        """The published drive a target stands for, that drive's capacity in bytes, and
        whether the target is that drive's preset (else the default target's drive).

        Raises:
            ParameterError: a ``sim:`` spec with a key that has no ``=value``; any other
                spec that is not a known ``sim:`` preset gives the default drive.
        """
        from flashback.targets import parse_sim_spec

        parts = parse_sim_spec(spec)
        preset = parts[0] if parts else None
        if preset in self.drives:
            name, capacity = self.drives[preset]
            return name, capacity, True
        default_parts = parse_sim_spec(self.default_target)
        default = default_parts[0] if default_parts else self.default_target
        name, capacity = self.drives.get(default, (default, self.review_capacity_bytes))
        return name, capacity, False


_REGISTRY: dict[str, Protocol] = {}


def _load() -> None:
    """Imports the procedures package, which registers every protocol."""
    import importlib

    importlib.import_module("flashback.replay.procedures")


def register(protocol: Protocol) -> Protocol:
    """Adds ``protocol`` to the registry (by name) and returns it."""
    _REGISTRY[protocol.name] = protocol
    return protocol


def get_protocol(name: str) -> Protocol:
    """The registered protocol called ``name``.

    Raises:
        ReplayError: no protocol has that name (the message lists them).
    """
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        names = ", ".join(sorted(_REGISTRY))
        raise ReplayError(f"there is no protocol {name!r}; choose one of: {names}") from None


def registered() -> list[Protocol]:
    """Every registered protocol, in registration order."""
    _load()
    return list(_REGISTRY.values())


def protocols() -> pl.DataFrame:
    """The protocols: ``name``, ``title``, ``source``, ``default_target``, ``parameters``."""
    _load()
    return pl.DataFrame(
        [
            {
                "name": p.name,
                "title": p.title,
                "source": p.source,
                "default_target": p.default_target,
                "parameters": ", ".join(f"{k}={v!r}" for k, (v, *_) in p.params.items()),
            }
            for p in _REGISTRY.values()
        ]
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


class Replay:
    """A protocol replayed on a target.

    Attributes:
        intervals: every run step's intervals in one frame; ``step`` labels them,
            ``host_written_bytes`` counts from the protocol's erase step, ``t_s`` from the start
            of the replay and ``step_t_s`` from the start of each step.
        step_records: one dict per step (label, kind, start, duration, host bytes before and
            after, workload, status, the protocol's labels and the step capture's metadata).
        meta: protocol, parameters, scale, target, status and times.

    The constructor only stores its arguments: :func:`flashback.replay` and :meth:`Replay.load`
    build replays.
    """

    def __init__(self, intervals: pl.DataFrame, step_records: list[dict], meta: dict) -> None:
        self.intervals = intervals
        self.step_records = step_records
        self.meta = meta
        self._steps: tuple[pl.DataFrame, list[dict], int, pl.DataFrame] | None = None

    @property
    def protocol(self) -> Protocol:
        return get_protocol(self.meta["protocol"])

    @property
    def scale(self) -> float:
        """Target capacity relative to the review drive (or as given)."""
        return float(self.meta["scale"])

    @property
    def status(self) -> str:
        return str(self.meta.get("status", "unknown"))

    @property
    def steps(self) -> pl.DataFrame:
        """One row per step: label, kind, labels (``condition``, ``loop``, ``test``...), start,
        duration, host bytes, and for runs the totals (GB, MB/s, IOPS, mean latency).

        Built once and kept while ``intervals`` and ``step_records`` are the same objects with
        as many steps (the checks and the report read it several times per replay); a step
        record changed in place is seen after ``step_records`` is assigned again."""
        c = self._steps
        if not (
            c is not None
            and c[0] is self.intervals
            and c[1] is self.step_records
            and c[2] == len(self.step_records)
        ):
            c = self._steps = (
                self.intervals,
                self.step_records,
                len(self.step_records),
                self._build_steps(),
            )
        return c[3].clone()

    def _build_steps(self) -> pl.DataFrame:
        rows = []
        for i, s in enumerate(self.step_records):
            row = {
                k: s[k] for k in ("step", "kind", "t_start_s", "duration_s", "workload", "status")
            }
            row["index"] = i
            row["host_written_start_bytes"] = s["host_written_start_bytes"]
            row["host_written_end_bytes"] = s["host_written_end_bytes"]
            for k, v in (s.get("labels") or {}).items():
                row[k] = v if isinstance(v, (str, int, float, bool)) or v is None else str(v)
            rows.append(row)
        if not rows:
            return pl.DataFrame()
        frame = pl.DataFrame(rows, infer_schema_length=None)
        if self.intervals.height:
            per = summarize(self.intervals)
            lat = self.intervals.group_by("step", maintain_order=True).agg(
                pl.col("write_lat_mean_us").mean().alias("write_lat_mean_us"),
                pl.col("read_lat_mean_us").mean().alias("read_lat_mean_us"),
            )
            frame = frame.join(per.join(lat, on="step", how="left"), on="step", how="left")
        return frame.sort("index").drop("index")

    def step(self, name: str) -> pl.DataFrame:
        """The intervals of one step (empty if it has none).

        An unknown step name gives an empty frame.
        """
        return (
            self.intervals.filter(pl.col("step") == name)
            if self.intervals.height
            else self.intervals
        )

    def capture(self) -> Capture:
        """The whole replay as one :class:`Capture` (for the analysis functions).

        The capture shares this replay's intervals and a copy of its metadata.
        """
        meta = dict(self.meta)
        meta.setdefault("target", {})
        return Capture(intervals=self.intervals, meta=meta)

    def compare(
        self,
        published: pl.DataFrame | None = None,
        *,
        other: Replay | None = None,
        sensitivity: bool = False,
        seeds: int | None = None,
    ) -> pl.DataFrame:
        """Published vs replayed for every published number this replay can check.

        Columns: ``metric``, ``condition``, ``published``, ``replayed``, ``unit``,
        ``rel_error`` ((replayed − published) / published), ``source``, ``test``, ``drive``,
        ``tolerance`` (relative), ``within_tolerance``, ``status``, ``note``. Replayed bytes
        and seconds are quoted at the review drive's scale (divided by :attr:`scale`).
        ``status`` is ``within tolerance`` / ``outside tolerance`` / ``no tolerance`` for a
        published number compared with a replayed one; ``documented, not modelled`` (the
        note says why), ``setting`` (a procedure setting echoed back), ``sensitivity`` (see
        below), ``no published value`` or ``not replayed`` otherwise — those rows have
        ``within_tolerance`` null.

        ``other``: a replay of the same protocol with another setting (Puget: the other data
        type, or TRIM off) adds the numbers that compare two runs (compressible vs
        incompressible reads, TRIM on vs off).

        ``sensitivity``: for each parameter the review leaves unstated (the protocol's
        ``unstated``: AnandTech's idle gap, X-bit's measurement length), replays the procedure
        at the other plausible values on the same simulated target and adds one row per
        checked number and value, status ``sensitivity`` (``condition`` ends ``@param=value``;
        the note gives the move). Off by default because it replays the procedure again (one
        more replay per value, cheap at test scales); the HTML report turns it on.

        ``seeds=N``: replays the procedure with N − 1 further seeds (``other`` alike) and gives
        each row its spread (``replayed_lo``, ``replayed_hi``, ``seeds``); a row is within
        tolerance only if its whole spread is, ``borderline`` if the spread straddles it.

        Raises:
            ReplayError: ``other`` is a replay of another protocol, or ``sensitivity`` or
                ``seeds`` on a replay whose target is not a ``sim:`` drive.
            ParameterError: ``seeds`` is not an integer of 2 or more.
        """
        from flashback.replay.compare import compare

        return compare(self, published=published, other=other, sensitivity=sensitivity, seeds=seeds)

    def conformance(self) -> dict[str, Any]:
        """Was this replay run as SNIA PTS requires? The purge of each erase step, the write
        cache state and the protocol's own steady-state verdict (a check whose note says
        "steady state reached"/"not reached"; none for protocols without one). See
        :func:`flashback.replay.conformance.conformance`.

        Missing facts are listed as departures.
        """
        from flashback.errors import FlashbackError
        from flashback.replay.conformance import conformance

        try:
            notes = self.compare()["note"].to_list() if self.step_records else []
        except FlashbackError:  # nothing to compare with: no steady-state verdict either
            notes = []
        steady = (
            True
            if "steady state reached" in notes
            else (False if "steady state not reached" in notes else None)
        )
        return conformance(self.step_records, self.meta, steady_state_reached=steady)

    def save(self, directory: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
        """Writes ``intervals.parquet``, ``steps.columns`` (the step records as one column
        table, see :mod:`flashback.replay.stepstore`) and ``replay.json`` (meta, the capture
        metadata every step shares, the step table's column descriptions and both files'
        sha256) to ``directory`` through flashback's guarded writer (each file appears whole
        or not at all; no temporary is left by a crash). ``replay.json`` is written last and
        names a fresh save id and the other files' checksums, and :meth:`load` refuses a
        directory whose files do not match it, so a save cut between its files is never
        loaded as one replay. An earlier save there is replaced unless ``overwrite=False``.

        Raises:
            CaptureFileError: ``directory`` cannot be created or written (names the reason).
            SafetyError: a file in ``directory`` is a device node, FIFO or socket (or a link to
                one), or it holds a saved replay and ``overwrite`` is false.
            DeviceError: the disk is full (the message names the file and what was kept).
        """
        d = check_save_dir(directory, overwrite=overwrite)
        save_id = uuid.uuid4().hex
        doc = {"save_id": save_id, **replay_document(self.meta, self.step_records)}
        table, columns = stepstore.encode(doc.pop("steps"))
        try:
            d.mkdir(parents=True, exist_ok=True)
            # intervals first, replay.json last: replay.json's id is what makes a save whole
            buf = io.BytesIO()
            self.intervals.write_parquet(buf, metadata={SAVE_ID_KEY: save_id})
            pq = buf.getvalue()
            buf = io.BytesIO()
            table.write_parquet(buf, **stepstore.WRITE_OPTIONS)
            steps_pq = buf.getvalue()
            # checked at load before any parquet reader sees the bytes: a damaged file is
            # refused, never parsed (a reader can abort the process on crafted lengths)
            doc["intervals_sha256"] = hashlib.sha256(pq).hexdigest()
            doc["steps_table"] = {
                "format": stepstore.FORMAT,
                "count": len(self.step_records),
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

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Replay:
        """Reads a replay written by :meth:`save`, or by flashback before the step table
        (``intervals.parquet`` and a ``replay.json`` holding every step; loaded as it was).

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
        except (Exception, pl.exceptions.PanicException) as e:  # any reader failure
            raise CaptureFileError(
                f"{d / 'intervals.parquet'} is damaged ({type(e).__name__}); save the replay again"
            ) from None
        if doc.get("save_id") != pq_id:
            raise CaptureFileError(
                f"{d} mixes two saves: its intervals.parquet and replay.json were written by "
                "different saves (one was cut short); save the replay again"
            )
        return cls(intervals, document_steps(doc), doc["meta"])

    def __repr__(self) -> str:
        return (
            f"Replay({self.meta.get('protocol')!r}, target={self.meta.get('target_spec')!r}, "
            f"scale={self.scale:.6g}, steps={len(self.step_records)}, status={self.status!r})"
        )


def replay_document(meta: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
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
    except (Exception, pl.exceptions.PanicException) as e:  # any reader failure
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


def check_row(
    test: str,
    condition: str,
    metric: str,
    replayed: float | None,
    unit: str,
    *,
    drive: str | None,
    tolerance: float | None = None,
    seed_value: float | None = None,
    bound: str = "value",
    note: str = "",
    reproducible: bool = True,
    unmodelled: str = "",
    setting: bool = False,
    effect: tuple[str, tuple[str, str, str], tuple[str, str, str]] | None = None,
) -> dict[str, Any]:
    """One row for :meth:`Replay.compare`.

    ``(test, condition, metric, drive)`` use the published data set's vocabulary and select
    its row (``drive=None``: a row about the procedure or every drive). ``seed_value`` is used
    only when no published row matches. ``bound``: ``value`` (within ``tolerance`` relative),
    ``min`` / ``max`` (the published number is a lower / upper bound, loosened by
    ``tolerance``). ``unmodelled``: the key of the documented mechanism
    (:mod:`flashback.replay.mechanisms`) without which the model cannot reproduce this number;
    the row is "documented, not modelled" only while the replayed drive lacks it, and compared
    as usual otherwise. ``reproducible=False``: the row is never compared (the reason in
    ``note``). ``effect=(kind, a, b)``: the row compares an effect (``kind`` ``drop_pct``:
    100 × (1 − b/a); ``ratio_pct``: 100 × b/a) whose published value is derived from the
    published rows ``a`` and ``b``, each ``(test, condition, metric)`` of the same drive.
    ``setting=True``: the replayed value is a setting of the procedure
    echoed back (a block size, a duration, a span), which checks the replay but matches
    nothing the drive did.
    """
    if replayed is not None and replayed != replayed:  # NaN
        replayed = None
    if unmodelled:
        from flashback.replay.mechanisms import get

        get(unmodelled)  # a row names a declared mechanism, or fails here
    if effect is not None and effect[0] not in EFFECTS:
        raise ReplayError(f"effect kind {effect[0]!r} is not one of {', '.join(EFFECTS)}")
    return {
        "test": test,
        "condition": condition,
        "metric": metric,
        "replayed": None if replayed is None else float(replayed),
        "unit": unit,
        "drive": drive,
        "tolerance": tolerance,
        "seed_value": seed_value,
        "bound": bound,
        "note": note,
        "reproducible": reproducible,
        "unmodelled": unmodelled,
        "setting": setting,
        "effect": effect,
    }


#: How an effect's published value follows from the two published levels ``a`` and ``b``.
EFFECTS: dict[str, Callable[[float, float], float]] = {
    "drop_pct": lambda a, b: 100.0 * (1.0 - b / a),
    "ratio_pct": lambda a, b: 100.0 * b / a,
}


def require(condition: bool, message: str) -> None:
    """Raises :class:`ReplayError` with ``message`` unless ``condition``."""
    if not condition:
        raise ReplayError(message)
