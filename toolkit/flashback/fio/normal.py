"""fio's normal (human) output — e.g. a ``result.txt`` kept beside the logs — read only for
what a log import is checked against: the version and the I/Os fio issued per direction.

fio 2.x prints ``issued : total=r=0/w=77873622/d=0``, fio 3.x ``issued rwts: total=0,5,0,0``
(one line per job, or per group with ``group_reporting``).
"""

from __future__ import annotations

import re
from pathlib import Path

from flashback.fio import version as fv

_ISSUED2 = re.compile(r"issued\s*:\s*total=r=(\d+)/w=(\d+)(?:/d=(\d+))?")
_ISSUED3 = re.compile(r"issued rwts?:\s*total=(\d+),(\d+)(?:,(\d+))?")


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
