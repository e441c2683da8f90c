"""Decode ``smartctl --all`` / ``-a`` / ``-x`` text of NVMe and ATA drives into a
:class:`~flashback.telemetry.snapshot.Snapshot`.

smartctl prints the NVMe thermal-management counters ("Thermal Temp. 1 Transition Count"
...) only when they are non-zero, so a health section without them reads as 0."""

from __future__ import annotations

import re

from flashback.errors import TelemetryFormatError
from flashback.telemetry import ata_units
from flashback.telemetry.snapshot import Snapshot, nvme_units_to_bytes

_HEADER = re.compile(r"^smartctl (\d+\.\d+)\b", re.M)
_DRIVEDB = re.compile(r"^Device is:\s+In smartctl database (\d+\.\d+/\d+)", re.M)
_KV = re.compile(r"^([A-Za-z][A-Za-z0-9 ./()_-]*?):\s+(.*?)\s*$")
_ATTR = re.compile(
    r"^\s*(\d{1,3})\s+(\S+)\s+0x[0-9a-fA-F]{4}\s+\d{3}\s+\d{3}\s+(?:\d{3}|---)\s+\S+\s+\S+\s+\S+\s+(\S+)"
)
_NVME_HEALTH = "SMART/Health Information (NVMe Log 0x02)"


def _num(text: str | None) -> int | None:
    """First integer of ``text`` (thousands separators ``,``, ``.`` or a no-break space removed)."""
    if text is None:
        return None
    m = re.match(r"\s*([0-9][0-9,.\u00a0\u202f]*)", text)
    if not m:
        return None
    return int(re.sub(r"[,.\u00a0\u202f]", "", m.group(1)))


def _fields(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _KV.match(line)
        if m:
            out.setdefault(re.sub(r"\s+", " ", m.group(1).strip()), m.group(2))
    return out


def decode_smartctl_text(text: str) -> Snapshot:
    """One snapshot from ``smartctl --all`` (or ``-x``) text.

    Raises:
        TelemetryFormatError: no ``smartctl X.Y`` header line, or neither an NVMe health
            section nor an ATA attribute table.
    """
    head = _HEADER.search(text)
    if head is None:
        raise TelemetryFormatError(
            "not smartctl text output: no 'smartctl X.Y ...' header line; run smartctl --all"
        )
    f = _fields(text)
    db = _DRIVEDB.search(text)
    reasons: dict[str, str] = {}
    if db is None:
        reasons["drivedb_version"] = "this smartctl version does not print it in --all"
    common = dict(
        source="smartctl-text",
        model=f.get("Device Model") or f.get("Model Number"),
        family=f.get("Model Family"),
        serial=f.get("Serial Number"),
        firmware=f.get("Firmware Version"),
        smartctl_version=head.group(1),
        drivedb_version=db.group(1) if db else None,
    )
    if _NVME_HEALTH in text:
        return _nvme(text[text.index(_NVME_HEALTH) :], f, common, reasons)
    if "ID# ATTRIBUTE_NAME" in text:
        return _ata(text, common, reasons)
    raise TelemetryFormatError(
        "smartctl text has neither an NVMe SMART/Health section nor an ATA attribute "
        "table; run smartctl --all (not -i)"
    )


def _nvme(health: str, info: dict[str, str], common: dict, reasons: dict[str, str]) -> Snapshot:
    h = _fields(health)
    host, err = nvme_units_to_bytes(_num(h.get("Data Units Written")))
    reasons["nand_written_bytes"] = "the NVMe SMART/Health log has no NAND-write counter"
    trans = (
        _num(h.get("Thermal Temp. 1 Transition Count")) or 0,
        _num(h.get("Thermal Temp. 2 Transition Count")) or 0,
    )
    times = (
        _num(h.get("Thermal Temp. 1 Total Time")) or 0,
        _num(h.get("Thermal Temp. 2 Total Time")) or 0,
    )
    warn = _num(info.get("Warning Comp. Temp. Threshold"))
    crit = _num(info.get("Critical Comp. Temp. Threshold"))
    if warn is None:
        reasons["temp_warning_c"] = "not printed (the controller reports no WCTEMP)"
    if crit is None:
        reasons["temp_critical_c"] = "not printed (the controller reports no CCTEMP)"
    return Snapshot(
        **common,
        protocol="NVMe",
        temp_c=_float(h.get("Temperature")),
        temp_warning_c=None if warn is None else float(warn),
        temp_critical_c=None if crit is None else float(crit),
        thermal_transitions=trans,
        thermal_time_s=times,
        warning_temp_time_min=_num(h.get("Warning Comp. Temperature Time")),
        critical_temp_time_min=_num(h.get("Critical Comp. Temperature Time")),
        host_written_bytes=host,
        host_written_error_bytes=err,
        host_write_commands=_num(h.get("Host Write Commands")),
        power_on_hours=_num(h.get("Power On Hours")),
        percentage_used=_num(h.get("Percentage Used")),
        media_errors=_num(h.get("Media and Data Integrity Errors")),
        reasons=reasons,
    )


def _float(text: str | None) -> float | None:
    n = _num(text)
    return None if n is None else float(n)


def _ata(text: str, common: dict, reasons: dict[str, str]) -> Snapshot:
    attrs: dict[int, tuple[str, int]] = {}
    raw_text: dict[int, str] = {}
    for line in text.splitlines():
        m = _ATTR.match(line)
        if m:
            i = int(m.group(1))
            raw_text[i] = m.group(3)
            n = _num(m.group(3))
            if n is not None and not m.group(3).startswith("0x"):
                attrs[i] = (m.group(2), n)
    sizes = re.search(r"^Sector Sizes?:\s+(\d+) bytes logical", text, re.M)
    sector = int(sizes.group(1)) if sizes else 512
    fam = common["family"]
    host, host_err, why_host = ata_units.decode_counter(
        fam, attrs, quantity="host", sector_bytes=sector
    )
    nand, nand_err, why_nand = ata_units.decode_counter(
        fam, attrs, quantity="nand", sector_bytes=sector
    )
    if why_host:
        reasons["host_written_bytes"] = why_host
    if why_nand:
        reasons["nand_written_bytes"] = why_nand
    temp = None
    for i in (194, 190):
        if i in attrs and "Temp" in attrs[i][0]:
            temp = float(attrs[i][1])
            break
    if temp is None:
        reasons["temp_c"] = "no temperature attribute (194/190)"
    throttle = None
    if fam and fam.startswith("Intel") and attrs.get(234, ("", 0))[0].startswith("Thermal_Thr"):
        # drivedb: -v 234,raw24/raw32:04321,Thermal_Throttle(_Status): "status %/events"
        parts = raw_text[234].split("/")
        if len(parts) == 2 and parts[1].isdigit():
            throttle = (int(parts[1]), None)
    if throttle is None:
        reasons["thermal_transitions"] = "no throttle-event attribute known for this family"
    reasons["temp_warning_c"] = "smartctl --all prints no ATA temperature limit (use -x)"
    reasons["temp_critical_c"] = "ATA reports no critical temperature"
    poh = attrs.get(9)
    return Snapshot(
        **common,
        protocol="ATA",
        temp_c=temp,
        thermal_transitions=throttle,
        host_written_bytes=host,
        host_written_error_bytes=host_err,
        nand_written_bytes=nand,
        nand_written_error_bytes=nand_err,
        power_on_hours=poh[1] if poh else None,
        reasons=reasons,
    )
