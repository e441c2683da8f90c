"""Block-trace replay: fio iolog v2/v3 and blkparse text output, on any target."""

from __future__ import annotations

import os
from collections.abc import Callable

from flashback.capture import Capture
from flashback.errors import ImportFormatError
from flashback.targets import Target, open_target, run_with_progress
from flashback.units import interval_seconds
from flashback.workload import Workload


def replay_trace(
    path: str | os.PathLike[str],
    *,
    target: str | os.PathLike[str] | Target,
    time_scale: float | None = None,
    offset_scale: float = 1.0,
    offset_shift_bytes: int = 0,
    align_bytes: int = 4096,
    iodepth: int = 32,
    jobs: int = 1,
    data: str = "random",
    direct: bool = True,
    loops: int | None = None,
    interval_s: float | None = None,
    seed: int | None = None,
    step: str = "trace",
    capture_path: str | os.PathLike[str] | None = None,
    progress: bool | Callable[[dict], None] | None = None,
    destroy: str | None = None,
    overwrite: bool = False,
) -> Capture:
    """Replays a recorded block trace on ``target`` and returns the capture.

    Args:
        path: a fio iolog (``fio version 2 iolog`` / ``fio version 3 iolog``, as written by
            ``write_iolog``) or blkparse's default text output (``Q`` events are replayed).
        target: file, ``/dev/...`` (with ``destroy=``) or ``sim:`` spec, or an open Target.
        time_scale: ``None`` issues operations as fast as ``iodepth`` allows; ``1.0`` keeps the
            recorded timing, ``0.5`` replays twice as fast.
        offset_scale, offset_shift_bytes: map trace offsets onto the target
            (``offset * offset_scale + offset_shift_bytes``, aligned to ``align_bytes``).
        interval_s: the capture's reporting interval in seconds (default 1.0).
        capture_path, overwrite: stream the capture to this file; an existing regular file
            there is replaced only with ``overwrite`` (see :meth:`flashback.Target.run`).

    Raises:
        ImportFormatError: a malformed trace line (the message names file and line).
        ParameterError: the trace does not fit the target after remapping, a bad factor, or
            an interval that is not a positive duration.
    """
    interval_s = interval_seconds(interval_s, where="replay_trace")
    if not os.path.exists(path):
        raise ImportFormatError(
            f"{path} does not exist; give the path of a fio iolog or blkparse output"
        )
    fields = Workload(
        rw="randrw",
        iodepth=iodepth,
        jobs=jobs,
        data=data,
        direct=direct,
        loops=loops,
        interval=f"{interval_s:.9g}s",
        seed=seed,
    ).fields()
    t = open_target(target, destroy=destroy)
    cap = run_with_progress(
        lambda bar: t._t.run_trace(
            os.fspath(path),
            fields,
            time_scale=time_scale,
            offset_scale=offset_scale,
            offset_shift=offset_shift_bytes,
            align=align_bytes,
            step=step,
            capture_path=None if capture_path is None else os.fspath(capture_path),
            progress=bar,
            overwrite_capture=overwrite,
        ),
        target=t,
        progress=progress,
        workload=Workload(rw="randrw", time=None),
        label=step,
    )
    cap.meta["trace"] = {"path": os.fspath(path), "time_scale": time_scale}
    return cap
