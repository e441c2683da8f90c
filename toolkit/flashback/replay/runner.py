"""The runner a protocol drives: labelled steps on one target, concatenated into one frame.

Every step — a workload run, a discard, an idle period, a secure erase — is recorded with its
label, kind, start time, duration and host bytes before/after. ``host_written_bytes`` in the
intervals counts from the protocol's erase step; ``t_s`` counts from the start of the replay
(idle and discard steps included) and ``step_t_s`` from the start of each step.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from flashback.capture import Capture
from flashback.errors import ReplayError, RunInterrupted
from flashback.replay.scaling import MIB, scaled_bytes, scaled_seconds
from flashback.targets import Target
from flashback.workload import Workload


def step_seed(replay_seed: int, step_seed: int | None) -> int:
    """A step's workload seed under replay seed ``replay_seed``: the step's own seed (0 when it
    has none) and the replay's mixed by SplitMix64's finaliser, so neighbouring replay seeds
    give unrelated streams. Always below 2⁶³."""
    x = (int(replay_seed) * 0x9E3779B97F4A7C15 + int(step_seed or 0)) & (2**64 - 1)
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    return (x ^ (x >> 31)) >> 1


class Interrupted(Exception):
    """A step came back interrupted (Ctrl-C); the replay stops and keeps what it has."""


class Runner:
    """Runs labelled steps on ``target`` at ``scale`` and keeps their captures.

    Args:
        target: the opened target (its state persists across steps).
        scale: target capacity relative to the review drive (see :mod:`scaling`).
        bar: a progress callback (``step(name)`` and ``__call__(row)``) or ``None``.
        interval_s: the reporting interval for runs that ask for a scaled one (``None``:
            ``1 s × scale`` on a simulated drive, whose clock is virtual, 1 s otherwise).
        seed: the replay's seed (``None``: each step's own fixed seed, as the procedure
            states it); otherwise every step's workload seed is mixed with it
            (:func:`step_seed`), so another seed replays the same procedure with other random
            offsets and data.
    """

    def __init__(
        self,
        target: Target,
        *,
        scale: float,
        bar: Any = None,
        interval_s: float | None = None,
        seed: int | None = None,
    ) -> None:
        self.target = target
        self.seed = seed
        self.scale = scale
        self.bar = bar
        self.size_bytes = target.size_bytes
        self._interval_s = interval_s
        self._frames: list[pl.DataFrame] = []
        self._offsets: list[tuple[float, int]] = []
        self.steps: list[dict[str, Any]] = []
        self._names: set[str] = set()
        self._t_s = 0.0
        self._base_written = target.host_written_bytes
        self.status = "complete"

    # ---- scaling helpers -------------------------------------------------------------
    def bytes(self, full_bytes: float, *, align: int = MIB, minimum: int | None = None) -> int:
        """A review's byte count at this target's scale, aligned (default 1 MiB)."""
        return scaled_bytes(full_bytes, self.scale, align=align, minimum=minimum)

    def seconds(self, full_s: float, *, minimum: float = 0.0) -> float:
        """A review's duration at this target's scale."""
        return scaled_seconds(full_s, self.scale, minimum=minimum)

    @property
    def interval_s(self) -> float:
        """The reporting interval for runs whose time axis is scaled."""
        if self._interval_s is not None:
            return self._interval_s
        if self.target.kind == "sim":
            return max(min(1.0, self.scale), 0.001)
        return 1.0

    @property
    def written_bytes(self) -> int:
        """Host bytes written since the protocol's erase step."""
        return self.target.host_written_bytes - self._base_written

    # ---- steps -----------------------------------------------------------------------
    def erase(self, name: str = "secure_erase", **labels: Any) -> None:
        """Purges the drive (:func:`flashback.purge.purge_target`: the drive's own sanitize,
        format or secure erase; a sim drive's secure-erase model; TRIM, labelled not a PTS
        purge, where nothing else exists); host bytes count from here. The step keeps the
        purge record under ``purge``.

        Raises:
            ReplayError: ``name`` labels an earlier step.
            SafetyError, TargetError, DeviceError: as :func:`flashback.purge.purge`.
        """
        from flashback.purge import purge_target

        t0 = time.monotonic()
        rec = purge_target(self.target)
        self._base_written = self.target.host_written_bytes
        labels = {**labels, "purge_method": rec["method"]}
        step = self._record(name, "erase", time.monotonic() - t0, None, labels, virtual=True)
        step["purge"] = rec

    def run(self, name: str, workload: Workload, **labels: Any) -> pl.DataFrame:
        """Runs ``workload`` as step ``name``; returns the step's intervals as captured
        (``t_s`` from the step's start, ``host_written_bytes`` as the target counts).

        Raises:
            Interrupted: Ctrl-C stopped the step; its intervals are kept.
            ReplayError: the step failed, or ``name`` labels an earlier step.
            ParameterError, DeviceError: as :meth:`flashback.Target.run`.
        """
        self._label(name)
        if self.seed is not None:
            workload = workload.replace(seed=step_seed(self.seed, workload.seed))
        before = self.written_bytes
        # the bound method, not the bar: Target.run closes a progress object it is given
        on_row = None if self.bar is None else self.bar.__call__
        try:
            cap: Capture = self.target.run(workload, step=name, progress=on_row)
        except RunInterrupted as e:  # keep the step's intervals, then stop below
            cap = e.capture
        df = cap.intervals
        if "step" not in df.columns:
            df = df.with_columns(pl.lit(name).alias("step"))
        duration = float(df["interval_s"].sum()) if df.height else 0.0
        # rebased in one pass when the frames are concatenated (see intervals())
        self._offsets.append((self._t_s, self._base_written))
        self._frames.append(df)
        step = self._record(name, "run", duration, workload, labels, meta=cap.meta, before=before)
        step["status"] = cap.status
        if cap.status == "interrupted":
            self.status = "interrupted"
            raise Interrupted(name)
        if cap.status.startswith("failed"):
            raise ReplayError(f"step {name!r} failed ({cap.status}); the replay stopped there")
        return df

    def discard(
        self, name: str, *, offset: int = 0, size: int | None = None, **labels: Any
    ) -> None:
        """Discards (TRIM) ``size`` bytes from ``offset`` (``None``: to the end).

        Raises:
            ReplayError: ``name`` labels an earlier step.
            ParameterError, SafetyError, TargetError, DeviceError: as
                :meth:`flashback.Target.discard`.
        """
        self._label(name)
        t0 = time.monotonic()
        self.target.discard(offset=offset, size=size)
        span = (self.size_bytes - offset) if size is None else size
        labels = {"offset_bytes": offset, "size_bytes": span, **labels}
        self._record(name, "discard", time.monotonic() - t0, None, labels, virtual=True)

    def idle(self, name: str, seconds: float, **labels: Any) -> None:
        """Leaves the target idle ``seconds`` (virtual on a sim drive, wall clock otherwise).

        Raises:
            Interrupted: Ctrl-C cut the idle short (the step is recorded first).
            ReplayError: ``name`` labels an earlier step.
            ParameterError: ``seconds`` is not a duration of zero or more seconds.
        """
        self._label(name)
        t0 = time.monotonic()
        finished = self.target.idle(seconds)
        wall = time.monotonic() - t0
        elapsed = seconds if (finished or self.target.kind == "sim") else wall
        self._record(name, "idle", elapsed, None, {"idle_s": seconds, **labels})
        if not finished:
            self.status = "interrupted"
            raise Interrupted(name)

    # ---- bookkeeping -----------------------------------------------------------------
    def _label(self, name: str) -> None:
        if self.bar is not None and hasattr(self.bar, "step"):
            self.bar.step(name)

    def _record(
        self,
        name: str,
        kind: str,
        duration_s: float,
        workload: Workload | None,
        labels: dict[str, Any],
        *,
        meta: Mapping[str, Any] | None = None,
        before: int | None = None,
        virtual: bool = False,
    ) -> dict[str, Any]:
        if name in self._names:
            raise ReplayError(f"step label {name!r} is used twice; every step needs its own label")
        if virtual and self.target.kind == "sim":
            duration_s = 0.0  # instantaneous on the simulated clock
        after = self.written_bytes
        step = {
            "step": name,
            "kind": kind,
            "t_start_s": self._t_s,
            "duration_s": duration_s,
            "host_written_start_bytes": after if before is None else before,
            "host_written_end_bytes": after,
            "workload": None if workload is None else workload.describe(),
            "status": "complete",
            "labels": labels,
            "capture_meta": meta,
        }
        self._t_s += duration_s
        self.steps.append(step)
        self._names.add(name)
        return step

    def intervals(self) -> pl.DataFrame:
        """All run steps' intervals, in order (empty frame if none ran): ``t_s`` from the
        start of the replay, ``step_t_s`` from the start of each step, ``host_written_bytes``
        from the last erase step before each run.

        Steps without intervals are left out.
        """
        keep = [(f, o) for f, o in zip(self._frames, self._offsets, strict=True) if f.height]
        if not keep:
            return pl.DataFrame()
        df = pl.concat([f for f, _ in keep], how="diagonal_relaxed")
        heights = [f.height for f, _ in keep]
        t_off = np.repeat(np.array([o[0] for _, o in keep], dtype=np.float64), heights)
        base = np.repeat(np.array([o[1] for _, o in keep], dtype=np.int64), heights)
        t = df["t_s"].to_numpy()
        written = df["host_written_bytes"].to_numpy().astype(np.int64) - base
        return df.with_columns(
            pl.Series("step_t_s", t),
            pl.Series("t_s", t + t_off),
            pl.Series("host_written_bytes", np.clip(written, 0, None).astype(np.uint64)),
        )
