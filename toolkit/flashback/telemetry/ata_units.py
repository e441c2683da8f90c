"""The units of ATA SMART write counters, keyed on (smartctl drive family, attribute id).

The same attribute id means different things on different drives (241 counts 512-byte
LBAs on Samsung, 32 MiB on Intel DC, GiB on WD; 233 is a wear indicator on Intel and NAND
gigabytes on WD) and smartctl's drive database (drivedb.h) names them per family. A row
applies only when the family matches *and* smartctl printed the expected attribute name
(a drivedb version that renamed it is not silently decoded with an old unit). Anything not
in the table decodes to ``None`` with a reason — never to a guess.

The table is ``ata_units.json`` beside this module (each row's ``source`` names where its unit
comes from: smartmontools ``drivedb.h``, the ``-v ID,FORMAT,NAME`` presets of each family).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class CounterUnit:
    """One write counter of one drive family.

    Attributes:
        family: smartctl's "Model Family", exactly as printed.
        attr_id: SMART attribute id.
        name: the attribute name smartctl prints for it with that family's presets.
        quantity: ``host`` (bytes the host wrote) or ``nand`` (bytes written to flash).
        unit_bytes: bytes per raw count (0 = the drive's logical sector size).
        source: where the unit comes from.
    """

    family: str
    attr_id: int
    name: str
    quantity: str
    unit_bytes: int
    source: str


#: the table's one home, also compiled into the native sampler (native/src/telemetry/ata_units.rs)
TABLE_PATH = Path(__file__).with_name("ata_units.json")

UNITS: tuple[CounterUnit, ...] = tuple(
    CounterUnit(**row) for row in json.loads(TABLE_PATH.read_text(encoding="utf-8"))["units"]
)


def units_for(family: str | None, *, quantity: str) -> list[CounterUnit]:
    """The table rows of ``family`` for ``quantity`` (``host`` or ``nand``).

    An unknown family has no rows.
    """
    if not family:
        return []
    return [u for u in UNITS if u.quantity == quantity and u.family == family.strip()]


def decode_counter(
    family: str | None,
    attrs: dict[int, tuple[str, int]],
    *,
    quantity: str,
    sector_bytes: int,
) -> tuple[int | None, int | None, str | None]:
    """``(bytes, error_bytes, reason)`` of the host or NAND write counter of an ATA drive.

    ``attrs`` maps attribute id → (name smartctl printed, raw value). Where a family has
    several rows for one quantity (WD's NAND written to TLC and to SLC), they are summed and
    their errors add. ``reason`` says why the bytes are ``None``.

    A missing or renamed counter is a ``None`` with a reason.
    """
    rows = units_for(family, quantity=quantity)
    if not rows:
        what = "NAND-write" if quantity == "nand" else "host-write"
        return None, None, f"no {what} counter unit known for drive family {family!r}"
    total, err, found, missing = 0, 0, [], []
    for u in rows:
        got = attrs.get(u.attr_id)
        if got is None or got[0] != u.name:
            missing.append(f"{u.attr_id} {u.name}" + (f" (printed as {got[0]!r})" if got else ""))
            continue
        unit = u.unit_bytes or sector_bytes
        total += int(got[1]) * unit
        err += unit
        found.append(u)
    if not found:
        return None, None, f"drive family {family!r} has no attribute {', '.join(missing)} here"
    if missing and quantity == "nand":
        # a partial NAND total (one of TLC/SLC) would understate write amplification
        return None, None, f"NAND counter incomplete: missing {', '.join(missing)}"
    return total, err, None
