"""A capture's identity as flat columns: the one rule that turns a capture's metadata into
the ``model``, ``serial``, ``firmware``, ``host``, workload... columns of a dataset.

Every capture gets every column (null when unknown), with the same type, so frames of many
captures concatenate without surprises.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import polars as pl

#: identity columns, in order, with their types
IDENTITY_SCHEMA: dict[str, pl.DataType] = {
    "capture_id": pl.String(),
    "capture_path": pl.String(),
    "model": pl.String(),
    "serial": pl.String(),
    "firmware": pl.String(),
    "host": pl.String(),
    "kernel": pl.String(),
    "flashback_version": pl.String(),
    "target_spec": pl.String(),
    "target_kind": pl.String(),
    "capacity_bytes": pl.Int64(),
    "test": pl.String(),
    "status": pl.String(),
    "start_time": pl.String(),
    "workload_rw": pl.String(),
    "workload_bs_bytes": pl.Int64(),
    "workload_iodepth": pl.Int64(),
    "workload_jobs": pl.Int64(),
    "workload_rwmix_read": pl.Int64(),
    "workload_offset_bytes": pl.Int64(),
    "workload_size_bytes": pl.Int64(),
    "workload_time_s": pl.Float64(),
    "workload_written_bytes": pl.Int64(),
    "workload_loops": pl.Int64(),
    "workload_data": pl.String(),
    "workload_random": pl.String(),
    "workload_direct": pl.Boolean(),
    "workload_engine": pl.String(),
    "workload_interval_s": pl.Float64(),
    "workload_seed": pl.UInt64(),
    "workload_cpus_allowed": pl.String(),
    "workload_cpus_allowed_policy": pl.String(),
}

#: identity column <- key of the capture's ``meta["workload"]``
_WORKLOAD_KEYS = {
    "workload_rw": "rw",
    "workload_bs_bytes": "bs",
    "workload_iodepth": "iodepth",
    "workload_jobs": "jobs",
    "workload_rwmix_read": "rwmix_read",
    "workload_offset_bytes": "offset",
    "workload_size_bytes": "size",
    "workload_time_s": "time_s",
    "workload_written_bytes": "written",
    "workload_loops": "loops",
    "workload_data": "data",
    "workload_random": "random",
    "workload_direct": "direct",
    "workload_engine": "engine",
    "workload_interval_s": "interval_s",
    "workload_seed": "seed",
    "workload_cpus_allowed": "cpus_allowed",
    "workload_cpus_allowed_policy": "cpus_allowed_policy",
}


def capture_id(meta: Mapping[str, Any]) -> str:
    """A stable 16-hex-digit id of a capture: a hash of its metadata (which holds its target,
    workload, host and start time), so the same capture always gets the same id.

    Values JSON cannot hold are hashed by their ``str()``.
    """
    text = json.dumps(meta, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _test_name(meta: Mapping[str, Any]) -> str | None:
    """The replay protocol's name, else a short workload label (``randwrite-4k-qd32``)."""
    if meta.get("protocol"):
        return str(meta["protocol"])
    w = meta.get("workload") or {}
    if not w.get("rw"):
        return None
    bs = w.get("bs")
    size = f"{bs // 1024}k" if isinstance(bs, int) and bs % 1024 == 0 else f"{bs}"
    qd = f"qd{w.get('iodepth') or 1}"
    return "-".join([str(w["rw"]), *([size] if bs else []), qd])


def identity(meta: Mapping[str, Any], *, path: str | None = None) -> dict[str, Any]:
    """The identity columns of one capture (keys and order of :data:`IDENTITY_SCHEMA`).

    ``model`` is the device's model from sysfs, or ``sim:<preset>`` for a simulated drive;
    ``test`` is the replay protocol, or ``<rw>-<bs>-qd<iodepth>`` for a single run.

    A key missing from ``meta`` gives a null column.
    """
    t = meta.get("target") or {}
    h = meta.get("host") or {}
    w = meta.get("workload") or {}
    kind = t.get("kind") or meta.get("target_kind")
    model = f"sim:{t['preset']}" if kind == "sim" and t.get("preset") else t.get("model")
    size = t.get("size_bytes") or meta.get("target_size_bytes")
    row: dict[str, Any] = {
        "capture_id": capture_id(meta),
        "capture_path": path,
        "model": model,
        "serial": t.get("serial"),
        "firmware": t.get("firmware"),
        "host": h.get("hostname"),
        "kernel": h.get("kernel"),
        "flashback_version": meta.get("flashback_version"),
        "target_spec": t.get("spec") or meta.get("target_spec"),
        "target_kind": kind,
        "capacity_bytes": int(size) if size else None,
        "test": _test_name(meta),
        "status": meta.get("status"),
        "start_time": meta.get("start_time"),
    }
    for col, key in _WORKLOAD_KEYS.items():
        row[col] = w.get(key)
    for col, dtype in IDENTITY_SCHEMA.items():
        v = row[col]
        if v is not None and dtype == pl.String():
            row[col] = str(v)
    return row


def identity_columns(meta: Mapping[str, Any], *, path: str | None = None) -> list[pl.Expr]:
    """:func:`identity` as typed literal expressions, for ``with_columns``."""
    return [
        pl.lit(v, dtype=IDENTITY_SCHEMA[k]).alias(k) for k, v in identity(meta, path=path).items()
    ]
