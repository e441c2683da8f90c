"""The metadata every capture file carries — an Arrow stream's schema, a Parquet footer, a
dataset's file — under one key, as strict JSON. Below :mod:`flashback.capture` and
:mod:`flashback.dataset.write`, which both write it."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Required, TypedDict, cast

#: the schema/footer metadata key holding a capture's metadata JSON
META_KEY = "flashback.meta"


def _json_safe(v: Any) -> Any:
    """``v`` with every non-finite float (NaN, ±inf) as None: strict JSON, which the
    metadata check of every reader requires."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return v


def meta_to_json(meta: Mapping[str, Any]) -> str:
    """A capture's metadata as strict JSON (non-finite floats as null), as every file
    flashback writes stores it and every reader checks it."""
    return json.dumps(_json_safe(meta), allow_nan=False)


class CaptureMeta(TypedDict, total=False):
    """The keys a capture's metadata (``Capture.meta``, ``fb.load(...).meta``) can hold.

    Every key can be missing (files from older versions, fio imports, replays turned into
    captures) and readers take missing as unknown; a file may hold keys not listed here.
    The reader checks the types of the first fourteen (``META_TYPES`` in
    ``native/src/capture/read.rs``), and any of them may be null.
    """

    # checked by the reader
    status: str  # "complete", "interrupted", "failed: ..."
    step: str  # the replay step the run was ("" outside a replay)
    format: str  # "flashback-capture/2"; "flashback-capture/1" in older files
    run_id: str
    start_time: str  # ISO 8601, UTC
    end_time: str
    flashback_version: str | None  # None in a replay turned into a capture without a run step
    workload: dict[str, Any]  # the Workload's fields (rw, bs, iodepth, size, ...)
    target: dict[str, Any]  # kind, spec, size_bytes, model, serial, ... (per target kind)
    host: dict[str, Any]  # hostname, kernel, cpu, cpus
    totals: dict[str, Any]  # {read,write,trim}_{ios,bytes} over the whole run
    latency: dict[str, Any]  # whole-run latency stats per direction ("read", "write"), µs
    cumulative_start: dict[str, Any]  # the running totals' values when the run began
    duration_s: float
    # real runs: wall s the run's thread spent in the progress callback and Ctrl-C polls
    observer_s: float
    # written by flashback's engine and the simulator
    data_compress_ratio: float
    engine: str  # "io_uring" or "psync"
    engine_note: str | None
    iodepth_effective: int
    span: dict[str, Any]  # offset and size of the region the run used, bytes
    host_written_start_bytes: int
    device: dict[str, Any]
    telemetry: dict[str, Any]
    smart_start: dict[str, Any]
    smart_end: dict[str, Any]
    events: list[Any]
    # fio imports
    source: str  # "fio"
    fio_format: str  # "json", "json-stream", "normal", "terse", "logs"
    fio_version: str | None
    files: list[str]
    combine: str
    jobs: list[dict[str, Any]]
    log_modes: dict[str, str]  # log file name -> how its rows were read
    column_notes: dict[str, str]
    log_epoch_origin_ms: float
    # salvaged files (fb.recover)
    recovered: dict[str, Any]
    # trace replays (fb.replay_trace)
    trace: dict[str, Any]  # path and time_scale of the trace
    # a saved replay read by `flashback analyze`
    replay: bool


def as_capture_meta(meta: Mapping[str, Any]) -> CaptureMeta:
    """``meta`` (a JSON object read back, or a dict built by an importer) typed as capture
    metadata. Annotation only, no check and no copy: the native reader has checked the types
    of the keys it knows (``META_TYPES``), the importers write the keys listed in
    :class:`CaptureMeta`, and a capture may carry keys the class does not list."""
    return cast(CaptureMeta, meta)


class ReplayMeta(TypedDict, total=False):
    """The keys of a replay's metadata (``Replay.meta``, ``replay.json``'s ``meta``).

    ``protocol`` and ``scale`` are in every replay; the others can be missing from replays
    saved by older versions.
    """

    format: str  # "flashback-replay/1"
    protocol: Required[str]  # the protocol's registry name
    title: str
    source: str  # the review the protocol follows
    params: dict[str, Any]  # the protocol's parameters after defaults and scaling
    scale: Required[float]  # the replay's size against the review's drive
    scale_given: bool  # the scale was passed, not chosen from the target's size
    seed: int | None
    review_capacity_bytes: int | None
    drive: str  # the review drive whose numbers the replay is compared with
    target_is_review_drive: bool
    target_spec: str
    target_kind: str  # "sim", "block", "file", ...
    target_size_bytes: int
    target: dict[str, Any]  # the target's metadata, with spec and size_bytes
    interval_s: float  # the reporting interval the run steps used
    host_written_bytes: int
    start_time: str  # ISO 8601, UTC
    end_time: str
    status: str  # "complete", "interrupted", "failed"
