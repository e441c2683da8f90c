"""``fb.replay(name, target=...)``: open the target, scale the procedure, run it."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable
from typing import Any

from flashback.errors import ParameterError, ReplayError, ReplayInterrupted
from flashback.progress import close_progress, make_bar
from flashback.replay.base import Replay, get_protocol
from flashback.replay.runner import Interrupted, Runner
from flashback.replay.scaling import default_scale, parse_scale
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
    size = int(review_bytes * scale) // (1 << 20) * (1 << 20)
    return Target(spec, destroy=destroy, overwrite=overwrite, size=max(size, 1 << 20))


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
            ``target.size_bytes / review capacity``. Spans, byte limits and durations are
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
    meta = {
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
