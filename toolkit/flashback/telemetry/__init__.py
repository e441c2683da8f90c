"""The drive's own telemetry: decoders of ``smartctl``, ``nvme smart-log`` and ``sensors -j``
output into :class:`Snapshot` records, and write amplification measured from them."""

from __future__ import annotations

import json
from pathlib import Path

from flashback.errors import TelemetryFormatError
from flashback.telemetry.nvme_cli import decode_nvme_cli
from flashback.telemetry.probe import snapshot
from flashback.telemetry.sensors import decode_sensors
from flashback.telemetry.smartctl_json import decode_smartctl_json
from flashback.telemetry.smartctl_text import decode_smartctl_text
from flashback.telemetry.snapshot import NVME_DATA_UNIT_BYTES, Snapshot

__all__ = [
    "NVME_DATA_UNIT_BYTES",
    "Snapshot",
    "decode",
    "decode_file",
    "decode_nvme_cli",
    "decode_sensors",
    "decode_smartctl_json",
    "decode_smartctl_text",
    "snapshot",
]


def decode(text: str) -> Snapshot | dict[str, Snapshot]:
    """Decode any supported output, recognised by its content: ``smartctl -j`` JSON,
    ``nvme smart-log -o json``, ``sensors -j`` (a dict chip → snapshot) or ``smartctl``
    text.

    Raises:
        TelemetryFormatError: none of these.
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise TelemetryFormatError(f"telemetry JSON does not parse: {e}") from None
        if isinstance(doc, dict) and "smartctl" in doc:
            return decode_smartctl_json(doc)
        if isinstance(doc, dict) and "data_units_written" in doc:
            return decode_nvme_cli(doc)
        if isinstance(doc, dict) and doc and all(isinstance(v, dict) for v in doc.values()):
            return decode_sensors(doc)
        raise TelemetryFormatError(
            "JSON that is not smartctl -j, nvme smart-log -o json or sensors -j output"
        )
    return decode_smartctl_text(text)


def decode_file(path: str | Path) -> Snapshot | dict[str, Snapshot]:
    """:func:`decode` of a file's text.

    Raises:
        TelemetryFormatError: unsupported content, or binary data.
        OSError: the file cannot be read.
    """
    raw = Path(path).read_bytes()
    if b"\0" in raw:
        raise TelemetryFormatError(f"{path}: binary data, not a tool's text or JSON output")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        # smartctl on Windows prints the locale's thousands separator (Latin-1 NBSP)
        text = raw.decode("latin-1")
    return decode(text)
