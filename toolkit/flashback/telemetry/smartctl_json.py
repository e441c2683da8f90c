"""Decode ``smartctl -j`` (``--all``/``-x``) JSON of NVMe and ATA drives into a
:class:`~flashback.telemetry.snapshot.Snapshot`."""

from __future__ import annotations

from typing import Any

from flashback.errors import TelemetryFormatError
from flashback.telemetry import ata_units
from flashback.telemetry.snapshot import Snapshot, json_int, nvme_units_to_bytes


def _int(d: dict[str, Any], key: str, where: str) -> int | None:
    return json_int(d, key, f"smartctl JSON: {where}.")


def _version(doc: dict[str, Any]) -> str | None:
    v = (doc.get("smartctl") or {}).get("version")
    if isinstance(v, list) and v:
        return ".".join(str(x) for x in v)
    return None


def _drivedb(doc: dict[str, Any]) -> str | None:
    """smartctl ≥ 7.3 prints the drive database's version in ``smartctl -j`` under
    ``smartctl.drive_database_version.string``; older versions do not."""
    db = (doc.get("smartctl") or {}).get("drive_database_version")
    if isinstance(db, dict):
        return db.get("string")
    return None


def decode_smartctl_json(doc: dict[str, Any]) -> Snapshot:
    """One snapshot from a parsed ``smartctl -j`` document.

    Raises:
        TelemetryFormatError: not smartctl JSON (no ``smartctl`` or ``device`` object), or a
            counter of the wrong type.
    """
    if not isinstance(doc, dict) or "smartctl" not in doc or "device" not in doc:
        raise TelemetryFormatError(
            "not smartctl JSON: no 'smartctl' and 'device' objects; run smartctl -j"
        )
    protocol = (doc.get("device") or {}).get("protocol")
    common: dict[str, Any] = dict(
        source="smartctl-json",
        protocol=protocol,
        model=doc.get("model_name"),
        family=doc.get("model_family"),
        serial=doc.get("serial_number"),
        firmware=doc.get("firmware_version"),
        smartctl_version=_version(doc),
        drivedb_version=_drivedb(doc),
        power_on_hours=(doc.get("power_on_time") or {}).get("hours"),
    )
    reasons: dict[str, str] = {}
    if common["drivedb_version"] is None:
        reasons["drivedb_version"] = "this smartctl's JSON does not print it"
    temp = (doc.get("temperature") or {}).get("current")
    if protocol == "NVMe":
        log = doc.get("nvme_smart_health_information_log")
        if not isinstance(log, dict):
            raise TelemetryFormatError(
                "smartctl JSON of an NVMe drive without nvme_smart_health_information_log; "
                "run smartctl -j -a (or -x)"
            )
        w = "nvme_smart_health_information_log"
        host, host_err = nvme_units_to_bytes(_int(log, "data_units_written", w))
        reasons["nand_written_bytes"] = "the NVMe SMART/Health log has no NAND-write counter"
        for k in ("temp_warning_c", "temp_critical_c", "thermal_transitions", "thermal_time_s"):
            reasons[k] = "not in this smartctl JSON output"
        return Snapshot(
            **common,
            temp_c=None if temp is None else float(temp),
            warning_temp_time_min=_int(log, "warning_temp_time", w),
            critical_temp_time_min=_int(log, "critical_comp_time", w),
            host_written_bytes=host,
            host_written_error_bytes=host_err,
            host_write_commands=_int(log, "host_writes", w),
            percentage_used=_int(log, "percentage_used", w),
            media_errors=_int(log, "media_errors", w),
            reasons=reasons,
        )
    table = (doc.get("ata_smart_attributes") or {}).get("table") or []
    attrs: dict[int, tuple[str, int]] = {}
    for a in table:
        raw = (a.get("raw") or {}).get("value")
        if isinstance(a.get("id"), int) and isinstance(raw, int):
            attrs[a["id"]] = (str(a.get("name", "")), raw)
    sector = int(doc.get("logical_block_size") or 512)
    host, host_err, why_host = ata_units.decode_counter(
        common["family"], attrs, quantity="host", sector_bytes=sector
    )
    nand, nand_err, why_nand = ata_units.decode_counter(
        common["family"], attrs, quantity="nand", sector_bytes=sector
    )
    if why_host:
        reasons["host_written_bytes"] = why_host
    if why_nand:
        reasons["nand_written_bytes"] = why_nand
    pct = _device_stat(doc, "Percentage Used Endurance Indicator")
    if pct is None:
        reasons["percentage_used"] = (
            "no device statistics (GP log 04h) in this output (smartctl -x)"
        )
    limit = (doc.get("temperature") or {}).get("op_limit_max")
    if limit is None:
        reasons["temp_warning_c"] = "no SCT temperature limits in this output (smartctl -x)"
    reasons["temp_critical_c"] = "ATA reports no critical temperature"
    return Snapshot(
        **common,
        temp_c=None if temp is None else float(temp),
        temp_warning_c=None if limit is None else float(limit),
        host_written_bytes=host,
        host_written_error_bytes=host_err,
        nand_written_bytes=nand,
        nand_written_error_bytes=nand_err,
        percentage_used=pct,
        reasons=reasons,
    )


def _device_stat(doc: dict[str, Any], name: str) -> int | None:
    for page in (doc.get("ata_device_statistics") or {}).get("pages") or []:
        for row in page.get("table") or []:
            if row.get("name") == name and isinstance(row.get("value"), int):
                return int(row["value"])
    return None
