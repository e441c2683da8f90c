"""A sweep's jobs: what one run is, and what a worker does with it."""

from __future__ import annotations

import dataclasses
import io
import json
import os
from pathlib import Path
from typing import Any, cast

import polars as pl

from flashback.capture import Capture
from flashback.errors import ParameterError
from flashback.workload import Workload


@dataclasses.dataclass(frozen=True)
class Job:
    """One run of a sweep: a workload, or a replayed protocol, on a target.

    Args:
        target: a target string (``"sim:generic?op=0.28&gc=fifo&seed=3"``, a file path...).
            It is opened afresh by the worker (an open :class:`~flashback.Target` cannot
            travel to another process or machine).
        workload: the :class:`~flashback.Workload` to run, or
        replay: the name of a protocol to replay (:func:`flashback.protocols`), with
        params: its parameters and ``scale`` (as :func:`flashback.replay` takes them).
        label: a name for progress reports and results (default: target and workload).

    A simulated target with a seeded workload gives the same capture wherever it runs.

    Raises:
        ParameterError: ``target`` is not a target string, not exactly one of ``workload`` and
            ``replay`` is given, or ``workload`` is not a :class:`~flashback.Workload`.
        ReplayError: ``replay`` names no protocol (the message lists them).
    """

    target: str
    workload: Workload | None = None
    replay: str | None = None
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.target, (str, os.PathLike)):
            raise ParameterError(
                f"a sweep job's target must be a target string, not a {type(self.target).__name__}"
            )
        object.__setattr__(self, "target", os.fspath(self.target))
        if (self.workload is None) == (self.replay is None):
            raise ParameterError(
                f"the job on {self.target} needs exactly one of workload= or replay="
            )
        if self.workload is not None and not isinstance(self.workload, Workload):
            raise ParameterError(
                f"workload= must be a flashback Workload, not a {type(self.workload).__name__}"
            )
        if self.replay is not None:
            from flashback.replay.base import get_protocol

            get_protocol(self.replay)  # ReplayError names the known protocols
        if not self.label:
            what = self.workload.describe() if self.workload is not None else self.replay
            object.__setattr__(self, "label", f"{self.target} {what}")

    def run(self) -> Capture:
        """Runs the job here, in this process, and returns its capture.

        Raises:
            FlashbackError: as :func:`flashback.run` or :func:`flashback.replay` raise.
        """
        from flashback.targets import run

        if self.workload is not None:
            return run(self.target, self.workload)
        from flashback.replay import replay

        # a Job holds a workload or a protocol's name (checked when it is made)
        rep = replay(cast(str, self.replay), target=self.target, **self.params)
        cap = rep.capture()
        # A replay's metadata has no host or version of its own: its run steps carry them.
        for step in rep.step_records:
            m = step.get("capture_meta") or {}
            if m.get("host"):
                cap.meta.setdefault("host", m["host"])
                cap.meta.setdefault("flashback_version", m.get("flashback_version"))
                break
        return cap


def as_job(spec: Any) -> Job:
    """A :class:`Job` from a Job, a ``(target, workload)`` or ``(target, protocol[, params])``
    tuple, or a dict of Job fields.

    Raises:
        ParameterError: anything else.
    """
    if isinstance(spec, Job):
        return spec
    if isinstance(spec, dict):
        unknown = set(spec) - {f.name for f in dataclasses.fields(Job)}
        if unknown:
            raise ParameterError(
                f"a sweep job has no field {sorted(unknown)[0]!r}; use target, workload, "
                "replay, params and label"
            )
        return Job(**spec)
    if isinstance(spec, tuple) and len(spec) in (2, 3):
        target, what, *params = spec
        if isinstance(what, Workload) and not params:
            return Job(target, workload=what)
        if isinstance(what, str):
            return Job(target, replay=what, params=dict(params[0]) if params else {})
    raise ParameterError(
        f"cannot make a sweep job of {spec!r}; pass a Job, (target, workload) or "
        "(target, protocol, params)"
    )


def run_job(job: Job, out: str | None) -> tuple[str, Any]:
    """What a worker runs: the job, then its capture as ``("ipc", (bytes, meta_json))`` or,
    with ``out``, saved there as Parquet and returned as ``("path", path)``."""
    cap = job.run()
    if out is not None:
        from flashback.dataset.identity import capture_id

        path = Path(out) / f"{capture_id(cap.meta)}.parquet"
        cap.save(path)
        return "path", str(path)
    buf = io.BytesIO()
    cap.intervals.write_ipc_stream(buf)
    return "ipc", (buf.getvalue(), json.dumps(cap.meta))


def from_ipc(payload: tuple[bytes, str]) -> Capture:
    data, meta_json = payload
    return Capture(intervals=pl.read_ipc_stream(io.BytesIO(data)), meta=json.loads(meta_json))
