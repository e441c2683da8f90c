"""Decode ``smartctl -j`` (``--all``/``-x``) JSON of NVMe and ATA drives into a
:class:`~flashback.telemetry.snapshot.Snapshot`."""

from __future__ import annotations

from typing import Any

from flashback.errors import TelemetryFormatError
from flashback.telemetry import ata_units
from flashback.telemetry.snapshot import Snapshot, json_float, json_int, nvme_units_to_bytes


def _int(d: dict[str, Any], key: str, where: str = "") -> int | None:
    return json_int(d, key, f"smartctl JSON: {where}." if where else "smartctl JSON: ")


def _obj(doc: dict[str, Any], key: str) -> dict[str, Any]:
    """The object ``doc[key]`` (``{}`` when absent): smartctl prints these as JSON objects."""
    v = doc.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise TelemetryFormatError(f"smartctl JSON: {key} is {v!r}, not an object")
    return v


def _str(doc: dict[str, Any], key: str) -> str | None:
    v = doc.get(key)
    if v is not None and not isinstance(v, str):
        raise TelemetryFormatError(f"smartctl JSON: {key} is {v!r}, not a string")
    return v


def _version(doc: dict[str, Any]) -> str | None:
    v = _obj(doc, "smartctl").get("version")
    if isinstance(v, list) and v:
        return ".".join(str(x) for x in v)
    return None


def _drivedb(doc: dict[str, Any]) -> str | None:
    """smartctl ≥ 7.3 prints the drive database's version in ``smartctl -j`` under
    ``smartctl.drive_database_version.string``; older versions do not."""
    db = _obj(doc, "smartctl").get("drive_database_version")
    if isinstance(db, dict) and isinstance(db.get("string"), str):
        return db["string"]
    return None


def decode_smartctl_json(doc: dict[str, Any]) -> Snapshot:
    """One snapshot from a parsed ``smartctl -j`` document.

    Raises:
        TelemetryFormatError: not smartctl JSON (no ``smartctl`` or ``device`` object), an
            object, counter or temperature of the wrong type, or a negative count.
    """
    if not isinstance(doc, dict) or "smartctl" not in doc or "device" not in doc:
        raise TelemetryFormatError(
            "not smartctl JSON: no 'smartctl' and 'device' objects; run smartctl -j"
        )
    protocol = _obj(doc, "device").get("protocol")
    common: dict[str, Any] = dict(
        source="smartctl-json",
        protocol=protocol,
        model=_str(doc, "model_name"),
        family=_str(doc, "model_family"),
        serial=_str(doc, "serial_number"),
        firmware=_str(doc, "firmware_version"),
        smartctl_version=_version(doc),
        drivedb_version=_drivedb(doc),
        power_on_hours=_int(_obj(doc, "power_on_time"), "hours", "power_on_time"),
    )
    reasons: dict[str, str] = {}
    if common["drivedb_version"] is None:
        reasons["drivedb_version"] = "this smartctl's JSON does not print it"
    temps = _obj(doc, "temperature")
    temp = json_float(temps, "current", "smartctl JSON: temperature.")
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
            temp_c=temp,
            warning_temp_time_min=_int(log, "warning_temp_time", w),
            critical_temp_time_min=_int(log, "critical_comp_time", w),
            host_written_bytes=host,
            host_written_error_bytes=host_err,
            host_write_commands=_int(log, "host_writes", w),
            percentage_used=_int(log, "percentage_used", w),
            media_errors=_int(log, "media_errors", w),
            reasons=reasons,
        )
    table = _obj(doc, "ata_smart_attributes").get("table") or []
    if not isinstance(table, list) or not all(isinstance(a, dict) for a in table):
        raise TelemetryFormatError(
            "smartctl JSON: ata_smart_attributes.table is not a list of objects"
        )
    attrs: dict[int, tuple[str, int]] = {}
    for a in table:
        raw = a["raw"].get("value") if isinstance(a.get("raw"), dict) else None
        if isinstance(a.get("id"), int) and isinstance(raw, int) and raw >= 0:
            attrs[a["id"]] = (str(a.get("name", "")), raw)
    sector = _int(doc, "logical_block_size") or 512
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
    limit = json_float(temps, "op_limit_max", "smartctl JSON: temperature.")
    if limit is None:
        reasons["temp_warning_c"] = "no SCT temperature limits in this output (smartctl -x)"
    reasons["temp_critical_c"] = "ATA reports no critical temperature"
    return Snapshot(
        **common,
        temp_c=temp,
        temp_warning_c=limit,
        host_written_bytes=host,
        host_written_error_bytes=host_err,
        nand_written_bytes=nand,
        nand_written_error_bytes=nand_err,
        percentage_used=pct,
        reasons=reasons,
    )


def _device_stat(doc: dict[str, Any], name: str) -> int | None:
    pages = _obj(doc, "ata_device_statistics").get("pages") or []
    for page in pages if isinstance(pages, list) else []:
        rows = page.get("table") if isinstance(page, dict) else None
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, dict) and row.get("name") == name:
                return _int(row, "value", f"ata_device_statistics {name!r}")
    return None
