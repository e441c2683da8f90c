"""A SMART/health snapshot read from a drive now, through ``smartctl -j -a`` (smartmontools,
installed by the Makefile): what a purge records before and after it erases."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from typing import Any

from flashback.errors import DeviceError
from flashback.telemetry.smartctl_json import decode_smartctl_json

#: smartctl's exit status is a bit mask; these two bits mean nothing was read from the drive
#: (bit 0: the command line did not parse; bit 1: the device could not be opened or identified)
_FATAL_BITS = 0b11


def snapshot(device: str, *, timeout_s: float = 60.0) -> dict[str, Any]:
    """The drive's SMART/health snapshot now: ``smartctl -j -a DEVICE`` decoded into the
    fields of :class:`~flashback.telemetry.Snapshot` (bytes, °C, seconds; ``reasons`` says
    why a field is empty), with ``smartctl_exit_status`` (smartctl's bit mask: bits 2–7 flag
    the drive's own warnings, kept as evidence).

    Raises:
        DeviceError: smartctl is not installed, timed out, or read nothing from ``device``
            (its own message is given).
        TelemetryFormatError: what smartctl printed is not smartctl JSON, or a number in it
            is of the wrong type (see :func:`~flashback.telemetry.decode_smartctl_json`).
    """
    exe = shutil.which("smartctl")
    if exe is None:
        raise DeviceError(
            "smartctl is not installed, so no SMART snapshot can be taken; install smartmontools "
            "(`make setup` does)"
        )
    try:
        r = subprocess.run(
            [exe, "-j", "-a", device], capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        raise DeviceError(f"smartctl -a {device} did not answer within {timeout_s:g} s") from None
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict) or r.returncode & _FATAL_BITS:
        msgs = []
        head = doc.get("smartctl") if isinstance(doc, dict) else None
        got = head.get("messages") if isinstance(head, dict) else None
        if isinstance(got, list):
            msgs = [m.get("string") for m in got if isinstance(m, dict)]
        why = "; ".join(m for m in msgs if isinstance(m, str) and m) or (
            r.stderr.strip() or f"exit status {r.returncode}"
        )
        raise DeviceError(f"smartctl read nothing from {device}: {why}")
    snap = dataclasses.asdict(decode_smartctl_json(doc))
    snap["smartctl_exit_status"] = r.returncode
    return snap
