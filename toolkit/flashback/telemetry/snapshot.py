"""``Snapshot``: one reading of a drive's own health and write counters, whatever tool
produced it (``smartctl -j``, ``smartctl --all`` text, ``nvme smart-log -o json``,
``sensors -j``), in one normalised record.

A field the source does not carry is ``None`` and :attr:`Snapshot.reasons` says why; a
missing counter is never replaced by a default (in particular a missing NAND counter never
becomes "write amplification 1.0").
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from flashback.errors import TelemetryFormatError

#: an NVMe "Data Unit" is 1000 units of 512 bytes (NVMe base spec, SMART/Health log 02h,
#: bytes 48-63: "reported in thousands of units of 512 bytes ... rounded up")
NVME_DATA_UNIT_BYTES = 512_000


@dataclasses.dataclass(frozen=True, kw_only=True)
class Snapshot:
    """A drive's telemetry at one instant.

    Attributes:
        source: the tool and layout decoded (``smartctl-json``, ``smartctl-text``,
            ``nvme-cli-2.3``, ``nvme-cli-2.11``, ``sensors``).
        protocol: ``NVMe`` or ``ATA`` (``None`` where the source does not say).
        model, family, serial, firmware: identity as the tool printed it; ``family`` is
            smartctl's drive-database family (the key of the ATA unit table).
        temp_c: composite / drive temperature, °C.
        temp_warning_c, temp_critical_c: the drive's thresholds, °C (NVMe WCTEMP/CCTEMP;
            hwmon ``temp*_max``/``temp*_crit``; ATA: the specified maximum operating
            temperature as warning).
        temp_alarm: hwmon's alarm flag (``sensors``), else ``None``.
        thermal_transitions: NVMe thermal-management transition counts (TMT1, TMT2), or
            the ATA throttle-event count as ``(n, None)`` where the family has one.
        thermal_time_s: NVMe total time in thermal management (TMT1, TMT2), seconds.
        warning_temp_time_min, critical_temp_time_min: NVMe minutes above WCTEMP/CCTEMP.
        host_written_bytes: bytes the host wrote, from the drive's counter.
        host_written_error_bytes: the counter's resolution (one unit, each reading): the true
            value lies within ± this of ``host_written_bytes``.
        host_write_commands: NVMe write commands completed.
        nand_written_bytes, nand_written_error_bytes: bytes written to flash, where the
            drive has a counter (ATA vendor attributes; the standard NVMe log has none).
        power_on_hours, percentage_used, media_errors: as reported.
        smartctl_version, drivedb_version: versions of the decoder that produced the
            source (attribute meanings depend on both); ``None`` where not printed.
        reasons: field name → why it is ``None``.
    """

    source: str
    protocol: str | None = None
    model: str | None = None
    family: str | None = None
    serial: str | None = None
    firmware: str | None = None
    temp_c: float | None = None
    temp_warning_c: float | None = None
    temp_critical_c: float | None = None
    temp_alarm: bool | None = None
    thermal_transitions: tuple[int | None, int | None] | None = None
    thermal_time_s: tuple[int | None, int | None] | None = None
    warning_temp_time_min: int | None = None
    critical_temp_time_min: int | None = None
    host_written_bytes: int | None = None
    host_written_error_bytes: int | None = None
    host_write_commands: int | None = None
    nand_written_bytes: int | None = None
    nand_written_error_bytes: int | None = None
    power_on_hours: int | None = None
    percentage_used: int | None = None
    media_errors: int | None = None
    smartctl_version: str | None = None
    drivedb_version: str | None = None
    reasons: dict[str, str] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as a JSON-able dict (for capture metadata ``smart_start``/``smart_end``)."""
        d = dataclasses.asdict(self)
        for k in ("thermal_transitions", "thermal_time_s"):
            if d[k] is not None:
                d[k] = list(d[k])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Snapshot:
        """Inverse of :meth:`to_dict`.

        Raises:
            TypeError: a key that is not a field.
        """
        d = dict(d)
        for k in ("thermal_transitions", "thermal_time_s"):
            if d.get(k) is not None:
                d[k] = tuple(d[k])
        return cls(**d)


def nvme_units_to_bytes(units: int | None) -> tuple[int | None, int | None]:
    """``(bytes, error_bytes)`` of an NVMe Data Units counter: ``units × 512,000`` and one
    unit (the drive rounds up to whole thousands of 512-byte sectors).

    ``None`` stays ``None``.
    """
    if units is None:
        return None, None
    return int(units) * NVME_DATA_UNIT_BYTES, NVME_DATA_UNIT_BYTES


def kelvin_to_c(k: float | None) -> float | None:
    """°C of a temperature in whole kelvin as the NVMe log stores it (0 = not reported):
    ``k − 273``, as smartctl and nvme-cli convert it, so a decoded nvme-cli reading and
    smartctl's own °C agree.
    """
    if k is None or k == 0:
        return None
    return float(k) - 273.0


def json_int(d: dict[str, Any], key: str, label: str) -> int | None:
    """``d[key]`` of a tool's JSON as a count: ``None`` when absent, else a non-negative
    integer (``label`` names the tool and object in the error).

    Raises:
        TelemetryFormatError: anything else (a string, a bool, a float, a negative number).
    """
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise TelemetryFormatError(f"{label}{key} is {v!r}, not an integer")
    if v < 0:
        raise TelemetryFormatError(f"{label}{key} is {v!r}, a negative count")
    return v


def json_float(d: dict[str, Any], key: str, label: str) -> float | None:
    """``d[key]`` of a tool's JSON as a finite number (a temperature): ``None`` when absent.

    Raises:
        TelemetryFormatError: not a finite int or float (a string, a bool, NaN).
    """
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise TelemetryFormatError(f"{label}{key} is {v!r}, not a number")
    return float(v)
