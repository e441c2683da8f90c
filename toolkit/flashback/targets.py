"""Targets: a regular file, a block device (guarded) or a simulated drive (``sim:...``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from flashback import _native
from flashback._meta import as_capture_meta
from flashback.capture import Capture, from_native
from flashback.errors import ParameterError
from flashback.progress import close_progress, make_progress
from flashback.workload import Workload

#: ``session=`` values of a run on a real target (see :meth:`Target.run`)
SESSIONS = ("own", "shared")


def own_session(session: str) -> bool:
    """Whether ``session`` asks for the job in a child process of a session of its own
    (``"own"``) rather than this process (``"shared"``); see :meth:`Target.run`.

    Raises:
        ParameterError: ``session`` is neither.
    """
    if session not in SESSIONS:
        raise ParameterError(
            f"session={session!r} is not a session; use 'own' (a child process in a "
            "session of its own, as fio runs a job) or 'shared' (this process)"
        )
    return session == "own"


class Target:
    """An opened target that keeps its state across runs (a simulated drive's FTL, a file's
    descriptor, the cumulative host bytes written).

    Args:
        spec: a file path, ``/dev/...``, or ``sim:<preset>[?key=value&...]``.
        destroy: for a block device, the same device path again (confirms data loss).
        overwrite: allow writing over a regular file flashback did not create.
        size: bytes (or a size string) to create a missing regular file with.

    Raises:
        TargetError: the spec names nothing usable.
        SafetyError: writing to it is refused (nothing is written).
        ParameterError: a simulator key is out of range, or ``size`` lies past byte 2^64.
    """

    def __init__(
        self,
        spec: str | os.PathLike[str],
        *,
        destroy: str | None = None,
        overwrite: bool = False,
        size: int | str | None = None,
    ) -> None:
        from flashback.units import parse_size

        create_size = None if size is None else parse_size(size, field="size")
        if create_size is not None and create_size >= 1 << 64:
            raise ParameterError(
                f"size={create_size} bytes (the workload's offset + size) lies past byte 2^64; "
                "use a smaller offset or size"
            )
        self._t = _native.NativeTarget(
            os.fspath(spec), destroy=destroy, overwrite=overwrite, create_size=create_size
        )

    @property
    def spec(self) -> str:
        return self._t.spec

    @property
    def kind(self) -> str:
        """``file``, ``block`` or ``sim``."""
        return self._t.kind

    @property
    def size_bytes(self) -> int:
        """User-visible capacity in bytes."""
        return self._t.size_bytes

    @property
    def host_written_bytes(self) -> int:
        """Host bytes written since opened or sanitized (a sim drive: since secure erase)."""
        return self._t.host_written_bytes

    @property
    def meta(self) -> dict[str, Any]:
        return self._t.meta()

    def run(
        self,
        workload: Workload,
        *,
        step: str = "",
        capture_path: str | os.PathLike[str] | None = None,
        progress: bool | Callable[[dict], None] | None = None,
        stream_only: bool = False,
        overwrite: bool = False,
        session: str = "own",
    ) -> Capture:
        """Runs ``workload`` and returns its capture (also streamed to ``capture_path``).

        ``capture_path`` goes through flashback's guarded writer: it is refused when it is
        (or is a symlink to) a device node, FIFO, socket or directory, when it is this
        target's own file, when another flashback process is writing it, and when it exists
        and ``overwrite`` is false. It is locked for the whole run.

        ``stream_only`` (with ``capture_path``): the intervals go to the file only, so memory
        stays flat however long the run; the returned capture has the metadata (totals,
        status) and no intervals — :func:`flashback.load` the file for them.

        ``progress``: ``True`` for a progress bar (rich in a terminal, tqdm in a notebook),
        a callable to receive each interval as a dict, ``None``/``False`` for nothing.
        The callable may read this target's properties (not run it again).

        ``session``: ``"own"`` (the default) runs a file's or device's job as fio does, in a
        forked child process that calls ``setsid()``. With the kernel's scheduler autogroups
        (``/proc/sys/kernel/sched_autogroup_enabled``), a new session is a scheduling group of
        its own, so CPU-busy work started from the caller's session (a build in the same
        terminal, the other kernels of a Jupyter server) does not share the job's CPU time;
        at QD1 that decides whether the job and the device's completion work take turns on
        one CPU (fio's latency) or not. It costs a ``fork`` of the calling process per run:
        its page tables are copied and the child's exit tears them down, measured 5.5 ms a
        run from a 56 MiB interpreter and 75 ms from one holding 1 GiB
        (``tests/bench/run_session.py``); a replay of thousands of short steps from a large
        process may prefer ``"shared"``. The rows and metadata are those of a run in this
        process; the progress callback runs here, as the child sends each interval. A child
        killed mid-run raises :class:`DeviceError` naming the signal; a streamed
        ``capture_path`` keeps what was written (:func:`flashback.recover`). ``"shared"``
        runs the job on a thread of this process. A ``sim:`` drive always runs here.

        Raises:
            RunInterrupted: Ctrl-C stopped the run within a second; the capture (status
                ``interrupted``, already saved to ``capture_path`` when given) is its
                ``.capture``. It is a ``KeyboardInterrupt``.
            ParameterError: ``session`` is neither ``"own"`` nor ``"shared"``; see
                :class:`Target` for the rest.
            DeviceError: see :class:`Target`; or the run's child process was killed.
        """
        own = own_session(session)
        if workload.ramp_s:  # fio's ramp_time: the same I/O first, not recorded
            from flashback.fio.jobfile import ramp_workload

            self.run(ramp_workload(workload), step="ramp", progress=progress, session=session)
        cap = run_with_progress(
            lambda bar: self._t.run(
                workload.fields(),
                step=step,
                capture_path=None if capture_path is None else os.fspath(capture_path),
                progress=bar,
                stream_only=stream_only and capture_path is not None,
                overwrite_capture=overwrite,
                own_session=own,
            ),
            target=self,
            progress=progress,
            workload=workload,
            label=step or workload.rw,
        )
        if cap.status == "interrupted":
            from flashback.errors import RunInterrupted

            raise RunInterrupted(cap)
        return cap

    def discard(self, *, offset: int | str = 0, size: int | str | None = None) -> None:
        """Discards (TRIM) ``size`` bytes from ``offset`` (``None``: to the end).

        Raises:
            ParameterError: ``offset``/``size`` is not a size, or ``offset`` lies beyond the
                end of the target.
            SafetyError: writing to this target is refused (nothing is discarded).
            TargetError: the file system or device does not support discard.
            DeviceError: the operating system reported an I/O error.
        """
        from flashback.units import parse_size

        self._t.discard(
            parse_size(offset, field="offset"),
            None if size is None else parse_size(size, field="size"),
        )

    def idle(self, seconds: float | str) -> bool:
        """Leaves the drive idle (virtual seconds on a sim drive). False if interrupted.

        Raises:
            ParameterError: ``seconds`` is not a duration of zero or more seconds.
        """
        from flashback.units import parse_duration

        return self._t.idle(parse_duration(seconds, field="idle"))

    def sanitize(self) -> None:
        """Secure erase (sim) or whole-span discard (real); resets host bytes written.

        Raises:
            SafetyError: writing to this target is refused (nothing is discarded).
            TargetError: the file system or device does not support discard.
            DeviceError: the operating system reported an I/O error.
        """
        self._t.sanitize()

    def __repr__(self) -> str:
        return f"Target({self.spec!r}, kind={self.kind!r}, size_bytes={self.size_bytes})"


def parse_sim_spec(spec: str | os.PathLike[str]) -> tuple[str, dict[str, str]] | None:
    """``"sim:<preset>?k=v&..."`` → ``(preset, {key: value})`` in the spec's order; ``None``
    for a target that is not a ``sim:`` spec. The preset and keys are not checked here
    (opening the :class:`Target` does that).

    Raises:
        ParameterError: a ``key`` without ``=value``.
    """
    parts = _native.sim_spec_parse(os.fspath(spec))
    if parts is None:
        return None
    preset, keys = parts
    return preset, dict(keys)


def sim_spec(preset: str, keys: dict[str, object] | None = None) -> str:
    """``"sim:<preset>?k=v&..."`` from a preset name and keys (values turned to ``str``).

    Raises:
        ParameterError: the preset, a key or a value is empty or holds ``?``, ``&`` or ``=``.
    """
    pairs = [(k, str(v)) for k, v in (keys or {}).items()]
    return _native.sim_spec_build(preset, pairs)


def run_with_progress(
    call: Callable[[Any], tuple[Any, dict[str, Any]]],
    *,
    target: Target,
    progress: bool | Callable[[dict], None] | None,
    workload: Workload,
    label: str,
) -> Capture:
    """Starts a native run with a progress bar and returns its capture: makes the bar (see
    :func:`flashback.progress.make_progress`), calls ``call(bar)`` — a native run returning
    ``(table, meta)`` —, closes the bar however the call ends, and records ``target``'s spec
    in the capture's metadata.

    Raises:
        whatever ``call`` raises (the bar is closed first).
    """
    bar = make_progress(progress, workload, target.size_bytes, label=label)
    status = "failed"  # refused or raised: a bar that started says so
    try:
        table, meta = call(bar)
        status = str(meta.get("status", "complete"))
    finally:
        close_progress(bar, status)
    cap = from_native(table, as_capture_meta(meta))
    cap.meta.setdefault("target", {})["spec"] = target.spec
    return cap


def open_target(spec: str | os.PathLike[str] | Target, **kwargs: Any) -> Target:
    """Opens ``spec`` (or returns it if it is already a :class:`Target`); ``kwargs`` are
    :class:`Target`'s (``destroy``, ``overwrite``, ``size``).

    Raises:
        TargetError, SafetyError, ParameterError: see :class:`Target`.
    """
    if isinstance(spec, Target):
        return spec
    return Target(spec, **kwargs)


def run(
    target: str | os.PathLike[str] | Target,
    workload: Workload,
    *,
    step: str = "",
    capture_path: str | os.PathLike[str] | None = None,
    progress: bool | Callable[[dict], None] | None = None,
    destroy: str | None = None,
    overwrite: bool = False,
    stream_only: bool = False,
    session: str = "own",
) -> Capture:
    """Runs ``workload`` on ``target`` and returns the capture (see :meth:`Target.run` for
    ``capture_path``, ``progress``, ``stream_only`` and ``session``).

    A missing regular file is created (and preallocated) to ``offset + size`` of the workload.
    A ``sim:`` string makes a freshly erased simulated drive; pass a :class:`Target` to keep a
    drive's state across runs.

    Raises:
        ParameterError, TargetError, SafetyError, DeviceError: see :class:`Target`.
    """
    if not isinstance(target, Target):
        r = workload.resolved
        size = None
        if r.get("size") is not None:
            size = int(r["offset"]) + int(r["size"])
        target = Target(target, destroy=destroy, overwrite=overwrite, size=size)
    return target.run(
        workload,
        step=step,
        capture_path=capture_path,
        progress=progress,
        stream_only=stream_only,
        overwrite=overwrite,
        session=session,
    )
