"""The machine's processes as ``/proc/PID/stat`` gives them: the one reader of that file for the
tests' child checks (``tests/conftest.py``: ``children``, ``running``) and the benches' CPU
accounting (``tests/bench/engine_ring.py``: ``cpu_ticks_by_pid``).

Linux only. The command name (field 2) is in parentheses and may hold spaces and ``)``, so the
fields are split after the *last* ``)``.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

#: The pid of ``kthreadd``, the parent of every kernel thread.
KTHREADD_PID = 2


@dataclasses.dataclass(frozen=True)
class ProcStat:
    """One process's ``/proc/PID/stat`` record (the fields the tests use).

    Attributes:
        pid: the process id.
        ppid: its parent's pid.
        state: one letter (``R`` running, ``S`` sleeping, ``D`` in I/O, ``Z`` zombie, ...).
        utime_ticks, stime_ticks: CPU time in user and in kernel mode so far, in clock ticks
            (``os.sysconf("SC_CLK_TCK")`` per second).
    """

    pid: int
    ppid: int
    state: str
    utime_ticks: int
    stime_ticks: int

    @property
    def cpu_ticks(self) -> int:
        """User plus kernel CPU time so far, in clock ticks."""
        return self.utime_ticks + self.stime_ticks

    @property
    def kernel_thread(self) -> bool:
        """Whether this is a kernel thread (``kthreadd`` or one of its children)."""
        return KTHREADD_PID in (self.pid, self.ppid)


def parse(pid: int, text: str) -> ProcStat:
    """The record of ``/proc/PID/stat`` text ``text`` (``pid``'s).

    Raises:
        ValueError: ``text`` is not a stat line (no ``)``, or too few fields after it).
    """
    f = text[text.rindex(")") + 2 :].split()  # f[0] is field 3, the state
    if len(f) < 13:
        raise ValueError(f"/proc/{pid}/stat has {len(f) + 2} fields, fewer than 15")
    return ProcStat(pid, int(f[1]), f[0], int(f[11]), int(f[12]))


def read(pid: int) -> ProcStat | None:
    """Process ``pid``'s record now; ``None`` when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # never was, or gone
        return None
    return parse(pid, text)


def processes() -> dict[int, ProcStat]:
    """Every process's record now, by pid; one that ends while it is read is left out."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit() and (rec := read(int(d))) is not None:
            out[rec.pid] = rec
    return out
