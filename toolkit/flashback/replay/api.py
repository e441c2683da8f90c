"""``fb.replay(name, target=...)``: open the target, scale the procedure, run it; and the
:class:`Replay` it returns (which can replay itself again for ``compare(seeds=,
sensitivity=)``, so the two live in one module)."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from flashback._meta import ReplayMeta, as_capture_meta
from flashback.capture import Capture, summarize
from flashback.errors import FlashbackError, ParameterError, ReplayError, ReplayInterrupted
from flashback.progress import close_progress, make_bar
from flashback.replay import saved
from flashback.replay.base import Protocol, get_protocol
from flashback.replay.compare import compare
from flashback.replay.conformance import conformance
from flashback.replay.runner import Interrupted, Runner
from flashback.replay.scaling import created_bytes, default_scale, parse_scale
from flashback.targets import Target, parse_sim_spec, sim_spec


def _open(
    spec: Any,
    *,
    review_bytes: int | None,
    scale: float | None,
    destroy: str | None,
    overwrite: bool,
) -> Target:
    if isinstance(spec, Target):
        return spec
    spec = os.fspath(spec)
    if parse_sim_spec(spec) is not None or spec.startswith("/dev/") or os.path.exists(spec):
        return Target(spec, destroy=destroy, overwrite=overwrite)
    if scale is None or not review_bytes:
        raise ReplayError(
            f"{spec} does not exist; create it first or give scale= so the replay can create it "
            "at the review drive's capacity times scale"
        )
    return Target(
        spec, destroy=destroy, overwrite=overwrite, size=created_bytes(review_bytes, scale)
    )


def replay(
    name: str,
    *,
    target: str | os.PathLike[str] | Target | None = None,
    scale: float | str | None = None,
    destroy: str | None = None,
    overwrite: bool = False,
    progress: bool | Callable[[dict], None] | None = False,
    seed: int | None = None,
    **params: Any,
) -> Replay:
    """Replays protocol ``name`` on ``target`` and returns the :class:`Replay`.

    Args:
        name: a protocol (``flashback replay --list`` / :func:`protocols`).
        target: a file path, ``/dev/...`` (with ``destroy=``), a ``sim:`` string or an open
            :class:`Target`; default: the review drive's simulated preset.
        scale: target capacity relative to the review drive (``"1/64"``, ``0.25``); default
            ``target.size_bytes / review capacity`` (for the review drive's own ``sim:``
            preset, that spec's ``scale=`` key). Spans, byte limits and durations are
            multiplied by it. A missing file is created at review capacity × ``scale``; a
            ``sim:`` preset without its own ``scale=`` key is shrunk by ``scale``.
        destroy: for a block device, the device path again (confirms its data is lost).
        overwrite: allow writing over a regular file flashback did not create.
        progress: ``True`` for one progress bar (GB written, current step), or a callable
            receiving each interval as a dict.
        seed: replays the procedure with other random offsets and data: every step's
            workload seed is mixed with it, and a ``sim:`` target without its own ``seed=``
            key gets ``seed`` (GC and TRIM randomness). ``None`` (default): the procedure's
            own fixed seeds, as every earlier replay.
        params: the protocol's parameters (see its ``describe()``).

    Raises:
        ReplayInterrupted: Ctrl-C stopped the replay; the steps done so far are its
            ``.replay`` (status ``interrupted``). It is a ``KeyboardInterrupt``, as from
            :func:`flashback.run`, so a loop of replays stops.
        ReplayError: unknown protocol, or a target too small for the procedure.
        ParameterError: an unknown parameter, a bad scale, or a seed that is not an integer
            from 0 to 2⁶³ − 1.
        TargetError, SafetyError, DeviceError: from opening or using the target.
    """
    proto = get_protocol(name)
    resolved = proto.resolve(params)
    scale_v = parse_scale(scale)
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63
    ):
        raise ParameterError(f"seed={seed!r} is not an integer from 0 to 2**63 - 1; pass one")
    if target is None:
        target = proto.default_target  # the review's drive, simulated
    sim = parse_sim_spec(target) if isinstance(target, str) else None
    if sim is not None and scale_v is not None and scale_v < 1 and "scale" not in sim[1]:
        # A scaled procedure on a simulated drive gets the drive shrunk alike.
        target = sim_spec(sim[0], {**sim[1], "scale": repr(scale_v)})
        sim = parse_sim_spec(target)
    if sim is not None and seed is not None and "seed" not in sim[1]:
        target = sim_spec(sim[0], {**sim[1], "seed": str(seed)})
    t = _open(
        target,
        review_bytes=proto.review_capacity_bytes,
        scale=scale_v,
        destroy=destroy,
        overwrite=overwrite,
    )
    drive, drive_bytes, is_review_drive = proto.drive_for(t.spec)
    review_bytes = drive_bytes or proto.review_capacity_bytes
    if scale_v is None and is_review_drive and t.kind == "sim":
        # The review drive's own preset with its own scale= key is that drive at that scale:
        # its capacity is rounded down to whole pages, so the capacity ratio came out a hair
        # under and every MiB-aligned byte count a whole MiB short (AS-SSD's file 15 MiB
        # instead of 16 at 1/64: 75.5 MB/s after torture against 58.7 with scale="1/64").
        scale_v = float((t.meta or {}).get("config", {}).get("scale", 0.0)) or None
    if scale_v is None:
        scale_v = default_scale(t.size_bytes, review_bytes)
    total = None
    if proto.estimate_written_bytes is not None:
        total = round(proto.estimate_written_bytes(t.size_bytes, scale_v, resolved) / 1e9, 2)
    bar = make_bar(progress, total_gb=total, label=name)
    runner = Runner(t, scale=scale_v, bar=bar, interval_s=resolved.get("interval_s"), seed=seed)
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    status = "complete"
    try:
        proto.run(runner, resolved)
    except (Interrupted, KeyboardInterrupt):
        status = "interrupted"  # the steps done so far are kept
    except BaseException:
        status = "failed"
        raise
    finally:
        close_progress(bar, status)
    meta: ReplayMeta = {
        "format": "flashback-replay/1",
        "protocol": proto.name,
        "title": proto.title,
        "source": proto.source,
        "params": resolved,
        "scale": scale_v,
        "scale_given": scale is not None,
        "seed": seed,
        "review_capacity_bytes": review_bytes,
        "drive": drive,
        "target_is_review_drive": is_review_drive,
        "target_spec": t.spec,
        "target_kind": t.kind,
        "target_size_bytes": t.size_bytes,
        "target": {**(t.meta or {}), "spec": t.spec, "size_bytes": t.size_bytes},
        "interval_s": runner.interval_s,
        "host_written_bytes": runner.written_bytes,
        "start_time": started,
        "end_time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "status": status,
    }
    rep = Replay(runner.intervals(), runner.steps, meta)
    if status == "interrupted":
        raise ReplayInterrupted(rep)
    return rep


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

    def __init__(self, intervals: pl.DataFrame, step_records: list[dict], meta: ReplayMeta) -> None:
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
        meta: dict[str, Any] = dict(self.meta)
        meta.setdefault("target", {})
        return Capture(intervals=self.intervals, meta=as_capture_meta(meta))

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
        published number compared with a replayed one (a published number with a tolerance
        the replay did not produce is outside tolerance, a miss); ``documented, not
        modelled`` (the note names the mechanism and the review documenting it), ``setting``
        (a procedure setting echoed back), ``sensitivity`` (see below), ``below held scale``
        (a simulated replay below its protocol's ``min_held_scale``, the smallest scale the
        tests hold its rows at: the value is shown, no within/outside), ``no published
        value`` or ``not replayed`` otherwise — those rows have ``within_tolerance`` null. The review's headline number always has a row: compared,
        or with a ``not compared: …`` status saying why, computed from the published data
        (:mod:`flashback.replay.headline`).

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
        return compare(
            self,
            published=published,
            other=other,
            sensitivity=sensitivity,
            seeds=seeds,
            rerun=replay,
        )

    def conformance(self) -> dict[str, Any]:
        """Was this replay run as SNIA PTS requires? The purge of each erase step, the write
        cache state and the protocol's own steady-state verdict (a check whose note says
        "steady state reached"/"not reached"; none for protocols without one). See
        :func:`flashback.replay.conformance.conformance`.

        Missing facts are listed as departures.
        """
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
        return saved.write(
            directory,
            intervals=self.intervals,
            step_records=self.step_records,
            meta=self.meta,
            overwrite=overwrite,
        )

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Replay:
        """Reads a replay written by :meth:`save`, or by flashback before the step table
        (``intervals.parquet`` and a ``replay.json`` holding every step; loaded as it was).

        Raises:
            CaptureFileError: ``directory`` holds no saved replay, or its files come from
                different saves (a save cut short, or two saves racing) or are damaged.
        """
        intervals, step_records, meta = saved.read(directory)
        return cls(intervals, step_records, meta)

    def __repr__(self) -> str:
        return (
            f"Replay({self.meta.get('protocol')!r}, target={self.meta.get('target_spec')!r}, "
            f"scale={self.scale:.6g}, steps={len(self.step_records)}, status={self.status!r})"
        )
