"""fio's normal (human) output — e.g. a ``result.txt`` kept beside the logs — read only for
what a log import is checked against: the version, the I/Os fio issued and the bytes it moved
per direction.

fio 2.x prints ``issued : total=r=0/w=77873622/d=0``, fio 3.x ``issued rwts: total=0,5,0,0``
(one line per job, or per group with ``group_reporting``). Each group's "Run status" lines give
its bytes: ``READ: io=3777.6MB, aggrb=…`` in fio 2.x (KB/MB/GB are powers of 1024),
``WRITE: bw=…, io=131MiB (137MB), run=…`` in fio 3.x, where KiB/MiB are powers of 1024 and
kB/MB powers of 1000 (``kb_base=1000`` puts the decimal figure first: ``io=137MB (131MiB)``).
"""

from __future__ import annotations

import re
from pathlib import Path

from flashback.fio import version as fv

_ISSUED2 = re.compile(r"issued\s*:\s*total=r=(\d+)/w=(\d+)(?:/d=(\d+))?")
_ISSUED3 = re.compile(r"issued rwts?:\s*total=(\d+),(\d+)(?:,(\d+))?")
_RUN_IO = re.compile(
    r"^\s*(READ|WRITE|TRIM):.*?\bio=(\d+(?:\.\d+)?)([kKMGTP]?)(i?)B\b", re.MULTILINE
)
_POW = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5}


def is_normal(head: str) -> bool:
    return bool(re.search(r"\(groupid=\d+, jobs=\d+\)", head))


def printed_ios(path: Path) -> tuple[fv.Version | None, dict[str, int]]:
    """(version, ``{read_ios, write_ios, trim_ios}``) summed over the jobs a normal output
    reports; an empty dict when it reports none."""
    text = path.read_text(errors="replace")
    out: dict[str, int] = {}
    for m in list(_ISSUED2.finditer(text)) + list(_ISSUED3.finditer(text)):
        for d, g in zip(("read", "write", "trim"), m.groups()):
            out[f"{d}_ios"] = out.get(f"{d}_ios", 0) + int(g or 0)
    return fv.parse_version(text[:4096]), out


def printed_bytes(path: Path) -> tuple[dict[str, float], dict[str, float]]:
    """(``{read_bytes, write_bytes, trim_bytes}`` summed over the groups' "Run status" lines,
    the rounding of those printed numbers in bytes: one unit of the last digit printed); empty
    dicts when the output has no "Run status" lines."""
    text = path.read_text(errors="replace")
    v = fv.parse_version(text[:4096])
    # fio 3.x prints both kinds (KiB and kB); fio 2.x never wrote "iB"
    decimal_units = v >= fv.NANOSECONDS_FROM if v is not None else "iB" in text
    out: dict[str, float] = {}
    rounding: dict[str, float] = {}
    for m in _RUN_IO.finditer(text):
        d, num, prefix, iec = m.groups()
        # fio 2.x's KB/MB and 3.x's KiB/MiB are 1024-based, fio 3.x's kB/MB 1000-based
        base = 1000.0 if decimal_units and not iec else 1024.0
        unit = base ** _POW[prefix.upper()]
        decimals = len(num.split(".")[1]) if "." in num else 0
        key = f"{d.lower()}_bytes"
        out[key] = out.get(key, 0.0) + float(num) * unit
        rounding[key] = rounding.get(key, 0.0) + unit * 10.0**-decimals
    return out, rounding
