"""Decode ``sensors -j`` (lm-sensors) output: the drive chips' temperatures, thresholds and
alarm — ``nvme-*`` chips (feature ``Composite``) and ``drivetemp-*`` chips (SATA, the
kernel's drivetemp driver)."""

from __future__ import annotations

from typing import Any

from flashback.errors import TelemetryFormatError
from flashback.telemetry.snapshot import Snapshot

_DRIVE_CHIPS = ("nvme-", "drivetemp-")


def _feature(chip: dict[str, Any]) -> dict[str, Any] | None:
    if isinstance(chip.get("Composite"), dict):
        return chip["Composite"]
    for k, v in chip.items():
        if k != "Adapter" and isinstance(v, dict) and any(n.endswith("_input") for n in v):
            return v
    return None


def _value(feat: dict[str, Any], suffix: str) -> float | None:
    for k, v in feat.items():
        if k.startswith("temp") and k.endswith(suffix):
            return float(v)
    return None


def decode_sensors(doc: dict[str, Any]) -> dict[str, Snapshot]:
    """Chip name → snapshot, for each drive chip of a parsed ``sensors -j`` document.

    The NVMe driver's hwmon ``temp1_max`` is the controller's warning threshold (WCTEMP)
    and ``temp1_crit`` its critical one (CCTEMP).

    Raises:
        TelemetryFormatError: not a JSON object of chips, or a drive chip with no
            temperature input.
    """
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise TelemetryFormatError("not sensors -j output: expected an object of chips")
    out: dict[str, Snapshot] = {}
    for name, chip in doc.items():
        if not name.startswith(_DRIVE_CHIPS):
            continue
        feat = _feature(chip)
        if feat is None or _value(feat, "_input") is None:
            raise TelemetryFormatError(f"sensors -j: drive chip {name!r} has no temp*_input")
        alarm = _value(feat, "_alarm")
        out[name] = Snapshot(
            source="sensors",
            protocol="NVMe" if name.startswith("nvme-") else "ATA",
            temp_c=_value(feat, "_input"),
            temp_warning_c=_value(feat, "_max"),
            temp_critical_c=_value(feat, "_crit"),
            temp_alarm=None if alarm is None else alarm != 0,
            reasons={
                "host_written_bytes": "hwmon has no write counters",
                "nand_written_bytes": "hwmon has no write counters",
            },
        )
    return out
