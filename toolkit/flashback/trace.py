"""Block-trace replay: fio iolog v2/v3 and blkparse text output, on any target."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

from flashback._options import given_options
from flashback.capture import Capture
from flashback.errors import ImportFormatError, ParameterError
from flashback.targets import Target, open_target, own_session, run_with_progress
from flashback.units import interval_seconds
from flashback.workload import Workload


@dataclasses.dataclass(frozen=True, kw_only=True)
class Remap:
    """How a trace's times and offsets map onto the target, as one value passed to
    :func:`replay_trace` as ``remap=`` in place of the four keywords of the same names (which
    stay accepted). The Rust core groups the same fields as ``trace::Remap``.

    The values are checked when the trace is replayed, exactly as the keywords are: a
    ``time_scale`` or ``offset_scale`` that is not a positive finite factor is a
    :class:`~flashback.ParameterError` from :func:`replay_trace`.

    Attributes:
        time_scale: ``None`` issues operations as fast as ``iodepth`` allows; ``1.0`` keeps the
            recorded timing, ``0.5`` replays twice as fast (a factor on recorded seconds).
        offset_scale: factor on trace offsets and lengths (``0.5`` fits a trace into half its
            span).
        offset_shift_bytes: bytes added to every offset after scaling.
        align_bytes: alignment in bytes of the remapped offsets and lengths (direct I/O needs
            512 or 4096).
    """

    time_scale: float | None = None
    offset_scale: float = 1.0
    offset_shift_bytes: int = 0
    align_bytes: int = 4096


def _given_remap(remap: object, keywords: dict[str, object]) -> Remap:
    """``remap``, checked against the remap ``keywords`` :func:`replay_trace` was called with
    (name -> value), which must all be at their defaults.

    Raises:
        ParameterError: ``remap`` is not a :class:`Remap`, or a keyword is set to something
            other than its default beside it.
    """
    return given_options(
        remap, keywords, cls=Remap, name="remap", label="flashback.Remap",
        what="the remapping", error=ParameterError,
    )  # fmt: skip


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
    remap: Remap | None = None,
    session: str = "own",
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
        remap: ``time_scale``, ``offset_scale``, ``offset_shift_bytes`` and ``align_bytes`` as
            one :class:`Remap` (those keywords then left at their defaults).
        session: ``"own"`` (default) replays a file's or device's trace in a child process of
            a session of its own, as fio runs a job; ``"shared"`` in this process (see
            :meth:`flashback.Target.run`).

    Raises:
        ImportFormatError: a malformed trace line (the message names file and line).
        ParameterError: the trace does not fit the target after remapping, a bad factor, a
            shift or alignment that is not a whole number of bytes from 0 to 2^64 − 1, an
            interval that is not a positive duration, ``remap`` that is not a :class:`Remap`,
            or ``remap`` given with one of its keywords changed from its default, or a
            ``session`` that is neither ``"own"`` nor ``"shared"``.
    """
    if remap is not None:
        opts = _given_remap(
            remap,
            {
                "time_scale": time_scale,
                "offset_scale": offset_scale,
                "offset_shift_bytes": offset_shift_bytes,
                "align_bytes": align_bytes,
            },
        )
    else:
        opts = Remap(
            time_scale=time_scale,
            offset_scale=offset_scale,
            offset_shift_bytes=offset_shift_bytes,
            align_bytes=align_bytes,
        )
    for name, v in (("offset_shift_bytes", opts.offset_shift_bytes),
                    ("align_bytes", opts.align_bytes)):  # fmt: skip
        # the core takes them as u64: outside it, PyO3 would raise a bare OverflowError
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 64:
            raise ParameterError(
                f"{name} must be a whole number of bytes from 0 to 2^64 - 1, got {v!r}"
            )
    interval_s = interval_seconds(interval_s, where="replay_trace")
    own = own_session(session)
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
            time_scale=opts.time_scale,
            offset_scale=opts.offset_scale,
            offset_shift=opts.offset_shift_bytes,
            align=opts.align_bytes,
            step=step,
            capture_path=None if capture_path is None else os.fspath(capture_path),
            progress=bar,
            overwrite_capture=overwrite,
            own_session=own,
        ),
        target=t,
        progress=progress,
        workload=Workload(rw="randrw", time=None),
        label=step,
    )
    cap.meta["trace"] = {"path": os.fspath(path), "time_scale": opts.time_scale}
    return cap
