"""Progress: a rich bar in a terminal, tqdm (ipywidgets) in a notebook, and elsewhere (a pipe,
``nohup``, CI) one plain line on stderr every :data:`LINE_EVERY_S` seconds."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, TextIO

from flashback.workload import Workload


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython  # type: ignore

        ip = get_ipython()
        return ip is not None and ip.__class__.__name__ == "ZMQInteractiveShell"
    except Exception:
        return False


def _total(workload: Workload, target_bytes: int) -> tuple[float | None, str]:
    r = workload.resolved
    if r.get("time_s"):
        return float(r["time_s"]), "s"
    if r.get("written"):
        return float(r["written"]) / 1e9, "GB"
    span = r.get("size") or max(target_bytes - int(r.get("offset") or 0), 0)
    loops = r.get("loops") or 1
    return (span * loops / 1e9 if span else None), "GB"


def _advance(unit: str, row: dict) -> float:
    """How far one interval moves a bar: its length (``unit="s"``) or the GB it wrote (read or
    trimmed when it wrote nothing)."""
    if unit == "s":
        return row["interval_s"]
    if row["write_bytes"] == 0:
        return (row["read_bytes"] + row["trim_bytes"]) / 1e9
    return row["write_bytes"] / 1e9


def _rates(row: dict) -> tuple[float, float]:
    """(MB/s, IOPS) of one interval, reads and writes together."""
    mbps = (row["read_bytes"] + row["write_bytes"]) / row["interval_s"] / 1e6
    iops = (row["read_ios"] + row["write_ios"]) / row["interval_s"]
    return mbps, iops


#: Seconds (wall clock) between two lines of :class:`Lines`; the environment variable
#: ``FLASHBACK_PROGRESS_EVERY_S`` overrides it (0: a line per interval).
LINE_EVERY_S = 10.0


def _line_every_s() -> float:
    text = os.environ.get("FLASHBACK_PROGRESS_EVERY_S")
    if not text:
        return LINE_EVERY_S
    try:
        return max(float(text), 0.0)
    except ValueError:
        from flashback.errors import ParameterError

        raise ParameterError(
            f"FLASHBACK_PROGRESS_EVERY_S={text!r} is not a number of seconds; unset it or give e.g. 30"
        ) from None


class Lines:
    """Progress without a terminal: one line on ``stream`` (stderr) every ``every_s`` seconds
    of wall-clock time, and one when the run ends, e.g.
    ``flashback: randwrite  1.20 of 4.00 GB (30%)  512.3 MB/s  125,078 IOPS  0:00:12``.
    """

    def __init__(
        self,
        total: float | None,
        unit: str,
        label: str,
        *,
        every_s: float | None = None,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.unit, self.label = total, unit, label
        self.every_s = _line_every_s() if every_s is None else every_s
        self.stream = stream or sys.stderr
        self.clock = clock
        self.done = 0.0
        self.lines = 0
        self._t0 = self._last = clock()
        self._rates = (0.0, 0.0)

    def __call__(self, row: dict) -> None:
        self.done += _advance(self.unit, row)
        self._rates = _rates(row)
        if self.clock() - self._last >= self.every_s:
            self._emit()

    def step(self, name: str) -> None:
        """Names the current replay step in the following lines."""
        self.label = name

    def _emit(self) -> None:
        self._last = self.clock()
        elapsed = int(self._last - self._t0)
        hms = f"{elapsed // 3600}:{elapsed // 60 % 60:02d}:{elapsed % 60:02d}"
        mbps, iops = self._rates
        if self.total and self.done > self.total * 1.005:  # the estimate was short
            where = f"{self.done:.2f} {self.unit} (past the {self.total:.2f} estimated)"
        elif self.total:
            pct = min(100.0, 100.0 * self.done / self.total)
            where = f"{self.done:.2f} of {self.total:.2f} {self.unit} ({pct:.0f}%)"
        else:
            where = f"{self.done:.2f} {self.unit}"
        text = f"flashback: {self.label}  {where}  {mbps:.1f} MB/s  {iops:,.0f} IOPS  {hms}"
        try:
            print(text, file=self.stream, flush=True)
        except (BrokenPipeError, ValueError):  # stderr went away: progress is not worth dying for
            return
        self.lines += 1

    def close(self) -> None:
        self._emit()


class Bar:
    """A rich bar in a terminal, tqdm in a notebook, fed one interval (dict) per call.

    ``unit="s"`` advances by interval length, ``"GB"`` by bytes written (or read/trimmed
    when an interval writes nothing).
    """

    def __init__(self, total: float | None, unit: str, label: str) -> None:
        self.unit = unit
        self.total = total
        self.done = 0.0
        if _in_notebook():
            from tqdm.auto import tqdm

            self._tqdm = tqdm(total=total, unit=unit, desc=label)
            self._rich = None
        else:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            self._tqdm = None
            self._rich = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                transient=False,
            )
            self._task = self._rich.add_task(label, total=total, rate="")
            self._rich.start()

    def __call__(self, row: dict) -> None:
        step = _advance(self.unit, row)
        self.done += step
        mbps, iops = _rates(row)
        if self.total and self.done >= self.total:
            # The estimate ran out while work goes on: no bar stuck full at ETA 0:00:00, an
            # open-ended one (no ETA) until the end.
            self.total = None
            if self._tqdm is not None:
                self._tqdm.total = None
            else:  # rich's update() reads total=None as "unchanged"
                next(t for t in self._rich.tasks if t.id == self._task).total = None
        if self._tqdm is not None:
            self._tqdm.update(step)
            self._tqdm.set_postfix(MBps=f"{mbps:.0f}", IOPS=f"{iops:.0f}", refresh=False)
        else:
            self._rich.update(self._task, advance=step, rate=f"{mbps:8.1f} MB/s {iops:9.0f} IOPS")

    def step(self, name: str) -> None:
        """Shows ``name`` as the bar's label (the current replay step)."""
        if self._tqdm is not None:
            self._tqdm.set_description(name, refresh=False)
        else:
            self._rich.update(self._task, description=name)

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
        elif self._rich is not None:
            self._rich.update(self._task, total=self.done, completed=self.done)
            self._rich.stop()


def make_progress(
    progress: bool | Callable[[dict], None] | None,
    workload: Workload,
    target_bytes: int,
    *,
    label: str,
) -> Any:
    """``True`` → a bar (lines on stderr without a terminal); a callable → itself;
    ``None``/``False`` → no callback."""
    return _bar_or_callback(progress, lambda: _total(workload, target_bytes), label)


def make_bar(
    progress: bool | Callable[[dict], None] | None, *, total_gb: float | None, label: str
) -> Any:
    """Like :func:`make_progress` for a multi-step replay: one bar in GB written."""
    return _bar_or_callback(progress, lambda: (total_gb, "GB"), label)


def _bar_or_callback(
    progress: bool | Callable[[dict], None] | None,
    totals: Callable[[], tuple[float | None, str]],
    label: str,
) -> Any:
    """The rule both share; ``totals()`` (bar length, unit) is asked only when a bar is made."""
    if progress is None or progress is False:
        return None
    if callable(progress) and progress is not True:
        return progress
    if not (sys.stderr.isatty() or _in_notebook()):
        return Lines(*totals(), label)
    return Bar(*totals(), label)
