"""Decode ``nvme smart-log -o json`` (nvme-cli 2.x: the flat 2.3 layout and the 2.11 layout
with ``critical_warning`` as an object) into a :class:`~flashback.telemetry.snapshot.Snapshot`.

Both layouts print the composite temperature in kelvin, as the log page stores it."""

from __future__ import annotations

from typing import Any

from flashback.errors import TelemetryFormatError
from flashback.telemetry.snapshot import Snapshot, json_int, kelvin_to_c, nvme_units_to_bytes

_REQUIRED = ("temperature", "data_units_written", "power_on_hours")


def _int(doc: dict[str, Any], key: str) -> int | None:
    return json_int(doc, key, "nvme smart-log JSON: ")


def decode_nvme_cli(doc: dict[str, Any]) -> Snapshot:
    """One snapshot from a parsed ``nvme smart-log -o json`` document.

    Raises:
        TelemetryFormatError: a required field (``temperature``, ``data_units_written``,
            ``power_on_hours``) missing, or a counter of the wrong type.
    """
    if not isinstance(doc, dict) or any(k not in doc for k in _REQUIRED):
        raise TelemetryFormatError(
            "not nvme smart-log JSON: needs temperature, data_units_written and "
            "power_on_hours; run nvme smart-log -o json /dev/nvmeX"
        )
    layout = "nvme-cli-2.11" if isinstance(doc.get("critical_warning"), dict) else "nvme-cli-2.3"
    host, err = nvme_units_to_bytes(_int(doc, "data_units_written"))
    trans = (_int(doc, "thm_temp1_trans_count"), _int(doc, "thm_temp2_trans_count"))
    times = (_int(doc, "thm_temp1_total_time"), _int(doc, "thm_temp2_total_time"))
    reasons = {
        "nand_written_bytes": "the NVMe SMART/Health log has no NAND-write counter",
        "smartctl_version": "not smartctl output",
        "drivedb_version": "not smartctl output",
        "temp_warning_c": "nvme smart-log does not print WCTEMP (it is in Identify Controller)",
        "temp_critical_c": "nvme smart-log does not print CCTEMP (it is in Identify Controller)",
    }
    return Snapshot(
        source=layout,
        protocol="NVMe",
        temp_c=kelvin_to_c(_int(doc, "temperature")),
        thermal_transitions=None if trans == (None, None) else trans,
        thermal_time_s=None if times == (None, None) else times,
        warning_temp_time_min=_int(doc, "warning_temp_time"),
        critical_temp_time_min=_int(doc, "critical_comp_time"),
        host_written_bytes=host,
        host_written_error_bytes=err,
        host_write_commands=_int(doc, "host_write_commands"),
        power_on_hours=_int(doc, "power_on_hours"),
        percentage_used=_int(doc, "percent_used"),
        media_errors=_int(doc, "media_errors"),
        reasons=reasons,
    )
