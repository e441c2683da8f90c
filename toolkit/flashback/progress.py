"""Progress: a rich bar in a terminal, tqdm (ipywidgets) in a notebook, and elsewhere (a pipe,
``nohup``, CI) one plain line on stderr every :data:`LINE_EVERY_S` seconds."""

from __future__ import annotations

import collections
import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from flashback._text import printable
from flashback.workload import Workload


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython  # type: ignore

        ip = get_ipython()
        return ip is not None and ip.__class__.__name__ == "ZMQInteractiveShell"
    except Exception:
        return False


#: what a bar counts, by unit: ``s`` the intervals' lengths, ``GB <verb>`` those bytes
COUNTED = {
    "GB written": ("write_bytes",),
    "GB read": ("read_bytes",),
    "GB trimmed": ("trim_bytes",),
    "GB moved": ("read_bytes", "write_bytes", "trim_bytes"),
}


def _total(workload: Workload, target_bytes: int) -> tuple[float | None, str]:
    """(bar length, unit): seconds for a timed run, else the bytes the run is limited by —
    written (``written=``, or a span of writes), read, trimmed, or moved (reads and writes
    of ``randrw`` together, as fio's ``size`` counts them)."""
    r = workload.resolved
    if r.get("time_s"):
        return float(r["time_s"]), "s"
    if r.get("written"):
        return float(r["written"]) / 1e9, "GB written"
    rw = str(r.get("rw") or "write")
    unit = {"read": "GB read", "randread": "GB read", "trim": "GB trimmed"}.get(rw)
    unit = unit or {"randtrim": "GB trimmed", "randrw": "GB moved"}.get(rw, "GB written")
    span = r.get("size") or max(target_bytes - int(r.get("offset") or 0), 0)
    loops = r.get("loops") or 1
    return (span * loops / 1e9 if span else None), unit


def _advance(unit: str, row: dict) -> float:
    """How far one interval moves a bar: its length (``unit="s"``) or the GB it counts
    (:data:`COUNTED`)."""
    if unit == "s":
        return row["interval_s"]
    return sum(row[k] for k in COUNTED[unit]) / 1e9


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


#: how a bar's label ends for each final status (``failed: ...`` statuses end "failed")
ENDINGS = {"complete": "finished", "interrupted": "interrupted"}


def _ending(status: str) -> str:
    return ENDINGS.get(status, "failed" if status.startswith("failed") else status)


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class Lines:
    """Progress without a terminal: one line on ``stream`` (stderr) every ``every_s`` seconds
    of wall-clock time, and one when the run ends, e.g.
    ``flashback: randwrite  1.20 of 4.00 GB written (30%)  512.3 MB/s  125,078 IOPS  0:00:12``;
    nothing at all for a run that never started (refused).
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
        self.total, self.unit, self.label = total, unit, printable(label)
        self.every_s = _line_every_s() if every_s is None else every_s
        self.stream = stream or sys.stderr
        self.clock = clock
        self.done = 0.0
        self.rows = 0
        self.lines = 0
        self._t0 = self._last = clock()
        self._rates = (0.0, 0.0)

    def __call__(self, row: dict) -> None:
        self.done += _advance(self.unit, row)
        self.rows += 1
        self._rates = _rates(row)
        if self.clock() - self._last >= self.every_s:
            self._emit()

    def step(self, name: str) -> None:
        """Names the current replay step in the following lines."""
        self.label = printable(name)

    def _emit(self, ending: str = "") -> None:
        self._last = self.clock()
        mbps, iops = self._rates
        unit = self.unit
        if self.total and self.done > self.total * 1.005:  # the estimate was short
            where = f"{self.done:.2f} {unit} (past the {self.total:.2f} estimated)"
        elif self.total:
            pct = min(100.0, 100.0 * self.done / self.total)
            where = f"{self.done:.2f} of {self.total:.2f} {unit} ({pct:.0f}%)"
        else:
            where = f"{self.done:.2f} {unit}"
        text = f"flashback: {self.label}  {where}  {mbps:.1f} MB/s  {iops:,.0f} IOPS"
        text += f"  {_hms(self._last - self._t0)}" + (f"  {ending}" if ending else "")
        try:
            print(text, file=self.stream, flush=True)
        except (BrokenPipeError, ValueError):  # stderr went away: progress is not worth dying for
            return
        self.lines += 1

    def close(self, status: str = "complete") -> None:
        """The last line, ending ``finished``, ``interrupted`` or ``failed`` (none when no
        interval ever arrived: a refused run draws nothing)."""
        if self.rows:
            self._emit(_ending(status))


#: intervals averaged for the live line's "now" and "since start" levels
LIVE_WINDOW = 5


class Bar:
    """A rich bar in a terminal, tqdm in a notebook, fed one interval (dict) per call.

    ``unit="s"`` advances by interval length, ``"GB written"`` (``read``, ``trimmed``,
    ``moved``) by those bytes (:data:`COUNTED`). Nothing is drawn until the first interval
    arrives, so a run refused before it starts leaves no bar. :meth:`close` ends it in one of
    three states: finished (full), interrupted (where it stopped) or failed.
    """

    def __init__(self, total: float | None, unit: str, label: str) -> None:
        self.unit = unit
        self.total = total
        self.label = _bar_label(label)
        self.done = 0.0
        self._tqdm: Any = None
        self._rich: Any = None
        self._task: Any = None
        self._first: list[float] = []  # MB/s of the first intervals
        self._last: collections.deque[float] = collections.deque(maxlen=LIVE_WINDOW)
        self._p99_us: float | None = None

    def live_line(self) -> str:
        """``now 245.1 MB/s (-38 % since start)  p99 1,250 µs``: the mean of the last
        :data:`LIVE_WINDOW` intervals against that of the first ones, and the last p99 write
        latency; empty before the first interval."""
        if not self._last:
            return ""
        now = sum(self._last) / len(self._last)
        start = sum(self._first) / len(self._first)
        change = 100.0 * (now / start - 1) if start else 0.0
        p99 = f"  p99 {self._p99_us:,.0f} µs" if self._p99_us is not None else ""
        return f"  now {now:.1f} MB/s ({change:+.0f} % since start){p99}"

    def _start(self) -> None:
        if _in_notebook():
            from tqdm.auto import tqdm

            self._tqdm = tqdm(total=self.total, unit=self.unit.split()[0], desc=self.label)
        else:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            bar = self

            class WithLiveLine(Progress):
                """The bar, and under it the live line (:meth:`Bar.live_line`)."""

                def get_renderables(self):  # type: ignore[no-untyped-def]
                    yield self.make_tasks_table(self.tasks)
                    line = bar.live_line()
                    if line:
                        from rich.text import Text

                        yield Text(line, style="dim")

            self._rich = WithLiveLine(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[where]}"),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                transient=False,
            )
            self._task = self._rich.add_task(self.label, total=self.total, rate="", where="")
            self._rich.start()

    def _where(self) -> str:
        if self.total:
            return f"{self.done:.2f}/{self.total:.2f} {self.unit}"
        return f"{self.done:.2f} {self.unit}"

    def __call__(self, row: dict) -> None:
        if self._tqdm is None and self._rich is None:
            self._start()
        step = _advance(self.unit, row)
        self.done += step
        mbps, iops = _rates(row)
        if len(self._first) < LIVE_WINDOW:
            self._first.append(mbps)
        self._last.append(mbps)
        self._p99_us = row.get("write_lat_p99_us", self._p99_us) or self._p99_us
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
            self._rich.update(
                self._task,
                advance=step,
                where=self._where(),
                rate=f"{mbps:8.1f} MB/s {iops:9.0f} IOPS",
            )

    def step(self, name: str) -> None:
        """Shows ``name`` as the bar's label (the current replay step)."""
        self.label = name = _bar_label(name)
        if self._tqdm is not None:
            self._tqdm.set_description(name, refresh=False)
        elif self._rich is not None:
            self._rich.update(self._task, description=name)

    def close(self, status: str = "complete") -> None:
        """Ends the bar: ``complete`` fills it (its total becomes what was done), any other
        status leaves it where the run stopped with the label saying ``interrupted`` or
        ``failed``. A bar that never started stays undrawn."""
        ending = _ending(status)
        label = f"{self.label} — {ending}"
        finished = status == "complete"
        if self._tqdm is not None:
            bar = self._tqdm
            if finished:
                bar.total = bar.n  # full and green, not "4.0/?" nor red
            bar.set_description(label, refresh=False)
            bar.close()
        elif self._rich is not None:
            total = self.done if finished else (self.total or self.done * 2 or 1.0)
            self._rich.update(
                self._task, total=total, completed=self.done, description=label,
                where=f"{self.done:.2f} {self.unit}",
            )  # fmt: skip
            self._rich.stop()


def _bar_label(name: str) -> str:
    """A label as a bar shows it: control characters escaped, and rich's ``[markup]``
    shown as typed (a notebook's tqdm takes it as it is)."""
    from rich.markup import escape

    text = printable(name)
    return text if _in_notebook() else escape(text)


def close_progress(bar: Any, status: str) -> None:
    """Closes what :func:`make_progress` made with the run's final status (``complete``,
    ``interrupted``, ``failed: ...``); a caller's own callable is closed as it is, if it
    has ``close``."""
    from flashback.live import LiveChart

    if isinstance(bar, (Bar, Lines, LiveChart)):
        bar.close(status)
    elif hasattr(bar, "close"):
        bar.close()


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
    """Like :func:`make_progress` for a multi-step replay: one bar in GB written (read steps
    do not move it: the estimate counts writes)."""
    return _bar_or_callback(progress, lambda: (total_gb, "GB written"), label)


def _bar_or_callback(
    progress: bool | Callable[[dict], None] | None,
    totals: Callable[[], tuple[float | None, str]],
    label: str,
) -> Any:
    """The rule both share; ``totals()`` (bar length, unit) is asked only when a bar is made."""
    if progress is None or progress is False:
        return None
    if progress == "live":  # a live chart (notebook): flashback.live
        from flashback.live import LiveChart

        return LiveChart(title=label)
    if callable(progress) and progress is not True:
        return progress
    if not (sys.stderr.isatty() or _in_notebook()):
        return Lines(*totals(), label)
    return Bar(*totals(), label)
