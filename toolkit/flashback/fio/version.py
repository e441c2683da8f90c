"""fio versions: read where fio writes them, compared with what a file's layout implies.

The rules that depend on the version, each stated once:

- fio < 2.10 wrote bw/iops logs without ``log_avg_msec`` as one sample per ``bw_avg_time``
  (500 ms) window that still carries the block size; fio ≥ 2.10 logs such files per I/O.
- fio < 3.0 wrote latencies in µs (logs, JSON ``clat``/``lat``, 1216-bin histograms);
  fio ≥ 3.0 writes ns (``clat_ns``/``lat_ns``, 1856-bin histograms).
- fio < 3.0 JSON ``io_bytes`` is in KiB; fio ≥ 3.0 gives bytes (and ``io_kbytes``).
- fio ≥ 3.8 JSON ``job_runtime`` is summed over the jobs of a ``group_reporting`` group.
"""

from __future__ import annotations

import re
from pathlib import Path

from flashback.errors import FioFormatError

Version = tuple[int, ...]

_RE = re.compile(r"fio-(\d+)\.(\d+)(?:\.(\d+))?")

WINDOWED_DEFAULT_LOGS_BEFORE: Version = (2, 10)
NANOSECONDS_FROM: Version = (3, 0)


def parse_version(text: str | None) -> Version | None:
    """``(major, minor, patch)`` of the first ``fio-X.Y[.Z]`` in ``text``
    (``"fio-3.8-41-g7302"`` → (3, 8, 0)), or ``None``. A bare ``"2.2.10"`` is accepted too."""
    if not text:
        return None
    m = _RE.search(text) or re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.(\d+))?\s*", text)
    return tuple(int(g or 0) for g in m.groups()) if m else None


def show(v: Version | None) -> str:
    if v is None:
        return "unknown"
    return "fio-" + ".".join(str(x) for x in (v if len(v) < 3 or v[2] else v[:2]))


def latency_unit_ns(v: Version) -> float:
    """ns per latency unit in fio's logs and JSON of version ``v`` (1000 before fio 3.0)."""
    return 1.0 if v >= NANOSECONDS_FROM else 1000.0


def check_agrees(
    declared: Version | None, *, inferred_ok: bool, layout: str, path: Path | str
) -> None:
    """Refuses a file whose layout contradicts the fio version it was declared or found with.

    Raises:
        FioFormatError: ``declared`` is known and ``inferred_ok`` is false.
    """
    if declared is not None and not inferred_ok:
        raise FioFormatError(
            f"{path}: the layout ({layout}) was not written by {show(declared)}, the version "
            "given or printed beside it; check that the files belong to one run"
        )


def printed_in(companions: list[Path]) -> tuple[Version | None, Path | None]:
    """The fio version printed in the JSON, terse or normal-output files ``companions``
    (the files of the same run), when they name one.

    Raises:
        FioFormatError: the companions name two different fio versions.
    """
    seen: dict[Version, Path] = {}
    for p in companions:
        try:
            with p.open("rb") as f:
                head = f.read(8192).decode("utf-8", "replace")
        except OSError:
            continue
        v = parse_version(head)
        if v is not None:
            seen.setdefault(v, p)
    if len(seen) > 1:
        names = ", ".join(f"{show(v)} in {p.name}" for v, p in seen.items())
        raise FioFormatError(
            f"the files given name different fio versions ({names}); they are not one run"
        )
    if not seen:
        return None, None
    ((v, p),) = seen.items()
    return v, p
