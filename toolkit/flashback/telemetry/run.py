"""A capture's SMART snapshots (``meta['smart_start']``, ``meta['smart_end']``) as
:class:`~flashback.telemetry.snapshot.Snapshot` records, and the run's write amplification
between them."""

from __future__ import annotations

from typing import Any

from flashback.errors import TelemetryFormatError
from flashback.telemetry.smartctl_json import decode_smartctl_json
from flashback.telemetry.snapshot import Snapshot
from flashback.telemetry.wa import WriteAmplification, between


def snapshot_of(doc: Any) -> Snapshot | str:
    """The snapshot in one ``smart_start``/``smart_end`` entry (``smartctl -j`` output as
    the engine recorded it, or a simulated drive's counters), or the reason there is none.

    Raises:
        TelemetryFormatError: an entry that is none of these.
    """
    if not isinstance(doc, dict):
        return "no SMART snapshot in this capture"
    if "error" in doc:
        return str(doc["error"])
    if doc.get("source") == "sim":
        return Snapshot(
            source="sim",
            host_written_bytes=doc.get("host_written_bytes"),
            host_written_error_bytes=doc.get("host_written_error_bytes"),
            nand_written_bytes=doc.get("nand_written_bytes"),
            nand_written_error_bytes=doc.get("nand_written_error_bytes"),
            reasons={"temp_c": "the simulated drive has no thermal model"},
        )
    if "smartctl" in doc:
        return decode_smartctl_json(doc)
    raise TelemetryFormatError("a SMART snapshot that is neither smartctl -j output nor a sim's")


def run_snapshots(cap: Any) -> tuple[Snapshot | str, Snapshot | str]:
    """``(start, end)`` snapshots of a capture (each a reason string where there is none).

    Raises:
        TelemetryFormatError: a snapshot entry of an unknown kind.
    """
    meta = getattr(cap, "meta", None) or {}
    return snapshot_of(meta.get("smart_start")), snapshot_of(meta.get("smart_end"))


def run_write_amplification(cap: Any) -> WriteAmplification:
    """Write amplification of the whole run from its start and end SMART snapshots (the
    drive's counters; ± one unit of each), or ``None`` with the reason.

    Raises:
        AnalysisError: a counter ran backwards between the snapshots.
    """
    a, b = run_snapshots(cap)
    for s in (a, b):
        if isinstance(s, str):
            return WriteAmplification(
                wa=None, wa_lo=None, wa_hi=None, host_bytes=None, nand_bytes=None,
                host_error_bytes=None, nand_error_bytes=None, reason=s,
            )  # fmt: skip
    return between(a, b)  # type: ignore[arg-type]
