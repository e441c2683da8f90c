"""Purge a drive before a test the way SNIA PTS asks: the drive's own sanitize, format with
user-data erase or ATA secure erase, chosen by its capability bits (the decision, the guard and
the commands live in the native drive layer, ``native/src/drive/purge/``). A device that
offers none gets TRIM (or a zero fill), labelled "not a PTS purge"; a simulated drive gets its
secure-erase model (``sim-secure-erase``).
"""

from __future__ import annotations

import importlib
import os
import time
from typing import TYPE_CHECKING, Any

from flashback import _native
from flashback.errors import ParameterError, SafetyError

if TYPE_CHECKING:  # the targets module pulls in polars; `flashback purge --help` must not
    from flashback.targets import Target

#: The methods ``method=`` accepts, in the order ``auto`` tries the native ones.
METHODS: tuple[str, ...] = ("auto", *_native.purge_methods(), "sim-secure-erase")

#: Blocks read back after a purge to check it erased what it promises.
VERIFY_SAMPLES = 64


def _destroy_list(destroy: str | list[str] | tuple[str, ...] | None) -> list[str]:
    if destroy is None:
        return []
    if isinstance(destroy, str):
        return [d.strip() for d in destroy.split(",") if d.strip()]
    return [str(d) for d in destroy]


def _smart(device: str) -> dict[str, Any] | str:
    """A SMART/health snapshot of ``device`` through ``flashback.telemetry.snapshot`` when
    that hook exists; otherwise why not (the native record keeps the raw NVMe log 02h)."""
    try:
        telemetry = importlib.import_module("flashback.telemetry")
    except ImportError:
        telemetry = None
    snap = getattr(telemetry, "snapshot", None)
    if not callable(snap):
        return "not recorded: flashback.telemetry.snapshot(device) is not available"
    try:
        s = snap(device)
    except Exception as e:  # a snapshot is evidence, never a reason to stop a purge
        return f"not recorded: {type(e).__name__}: {e}"
    return s if isinstance(s, dict) else getattr(s, "__dict__", {"snapshot": repr(s)})


def _sim_purge(t: Target, *, method: str, plan: bool) -> dict[str, Any]:
    if method not in ("auto", "sim-secure-erase"):
        raise SafetyError(
            f"refusing to purge the simulated drive {t.spec} by {method}: a simulated drive "
            "offers only its secure-erase model; use method='auto' or 'sim-secure-erase'"
        )
    rec: dict[str, Any] = {
        "device": t.spec,
        "method": "sim-secure-erase",
        "pts_purge": True,
        "label": "purged by sim-secure-erase",
        "reaches": [t.spec],
        "commands": ["simulated secure erase: every block erased, the mapping table cleared"],
        "refusals": [],
    }
    if plan:
        return rec
    t0 = time.monotonic()
    t.sanitize()
    rec["duration_s"] = time.monotonic() - t0
    rec["verification"] = {
        "expected": "no valid data",
        "host_written_bytes_after": t.host_written_bytes,
        "passed": t.host_written_bytes == 0,
    }
    return rec


def _fallback(t: Target, rec: dict[str, Any]) -> dict[str, Any]:
    """Runs a TRIM or zero-fill fallback through the engine's guarded target."""
    t0 = time.monotonic()
    if rec["method"] == "trim":
        t.sanitize()
    else:
        from flashback.workload import Workload

        t.run(Workload(rw="write", bs="1m", iodepth=8, data="pattern:00"))
    rec["duration_s"] = time.monotonic() - t0
    rec["verification"] = None
    return rec


def purge_target(
    t: Target,
    *,
    destroy: str | list[str] | None = None,
    method: str = "auto",
    plan: bool = False,
    verify_samples: int = VERIFY_SAMPLES,
) -> dict[str, Any]:
    """Purges an opened target (see :func:`purge`); a block device's confirmation defaults to
    the device the target was opened with (it was confirmed then).

    Raises:
        SafetyError, ParameterError, TargetError, DeviceError: as :func:`purge`.
    """
    if method not in METHODS:
        raise ParameterError(f"unknown purge method {method!r}; use one of: {', '.join(METHODS)}")
    if t.kind == "sim":
        return _sim_purge(t, method=method, plan=plan)
    if t.kind == "file":
        if method not in ("auto", "trim"):
            raise SafetyError(
                f"refusing to purge {t.spec} by {method}: a regular file has no drive to "
                "purge; method='auto' or 'trim' punches holes, labelled not a PTS purge"
            )
        rec = {
            "device": t.spec,
            "method": "trim",
            "pts_purge": False,
            "label": "not purged (TRIM only): not a PTS purge",
            "reaches": [t.spec],
            "commands": [f"punch holes over the whole of {t.spec}"],
            "refusals": [],
        }
        return rec if plan else _fallback(t, rec)
    names = _destroy_list(destroy) or [t.spec]
    return _purge_block(
        t.spec, names, method=method, plan=plan, verify_samples=verify_samples, target=t
    )


def _purge_block(
    device: str,
    destroy: list[str],
    *,
    method: str,
    plan: bool,
    verify_samples: int,
    target: Target | None = None,
) -> dict[str, Any]:
    if method == "sim-secure-erase":
        raise SafetyError(
            f"refusing to purge {device} by sim-secure-erase: it is not a simulated drive"
        )
    smart_before = None if plan else _smart(device)
    rec = _native.purge_device(
        device, destroy=destroy, method=method, plan=plan, verify_samples=verify_samples
    )
    if plan:
        return rec
    if "verification" not in rec:  # a TRIM/zero-fill fallback: the engine runs it
        from flashback.targets import Target

        t = target or Target(device, destroy=device)
        rec = _fallback(t, rec)
    rec["smart"] = {"before": smart_before, "after": _smart(device)}
    return rec


def purge(
    target: str | os.PathLike[str] | Target,
    *,
    destroy: str | list[str] | None = None,
    method: str = "auto",
    plan: bool = False,
    verify_samples: int = VERIFY_SAMPLES,
) -> dict[str, Any]:
    """Purges ``target`` with the best method it offers, or plans it (``plan=True``: nothing
    destructive is sent; NVMe drives answer read-only Identify commands, SATA drives
    ``hdparm -I``).

    Args:
        target: ``/dev/...``, a ``sim:`` spec, or an opened :class:`Target`.
        destroy: every block device the purge erases, by name (a list or comma-separated):
            an NVMe sanitize, and a format on a drive whose FNA says so, erase every namespace
            of the controller, and each must be named.
        method: ``"auto"`` or one of :data:`METHODS`.
        plan: only decide and report what would be sent.
        verify_samples: blocks read back (``O_DIRECT``) after the purge, spread over the device.

    Returns:
        dict: ``method``, ``pts_purge``, ``label`` ("purged by …" / "not purged (TRIM only)…"),
        ``reaches``, ``commands``, ``candidates`` (the method table for this drive),
        ``capabilities``, ``refusals`` (a plan lists them); after a purge also ``duration_s``
        (seconds), ``verification`` and ``smart`` (before/after).

    Raises:
        SafetyError: refused (not confirmed by name, a reached device in use, a frozen or
            locked drive, a USB bridge, a method the drive lacks); nothing was sent.
        ParameterError: an unknown method.
        TargetError: the target names nothing usable.
        DeviceError: the drive rejected a command, or the read-back found data it should have
            erased.
    """
    from flashback.targets import Target, parse_sim_spec

    if isinstance(target, Target):
        return purge_target(
            target, destroy=destroy, method=method, plan=plan, verify_samples=verify_samples
        )
    spec = os.fspath(target)
    if method not in METHODS:
        raise ParameterError(f"unknown purge method {method!r}; use one of: {', '.join(METHODS)}")
    if parse_sim_spec(spec) is not None:
        return _sim_purge(Target(spec), method=method, plan=plan)
    if spec.startswith("/dev/"):
        return _purge_block(
            spec, _destroy_list(destroy), method=method, plan=plan, verify_samples=verify_samples
        )
    return purge_target(Target(spec), method=method, plan=plan)
