"""Progress bars: rich in a terminal, tqdm (ipywidgets) in a notebook."""

from __future__ import annotations

import sys
from typing import Any, Callable

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


class Bar:
    """A rich bar in a terminal, tqdm in a notebook, fed one interval (dict) per call.

    ``unit="s"`` advances by interval length, ``"GB"`` by bytes written (or read/trimmed
    when an interval writes nothing).
    """

    def __init__(self, total: float | None, unit: str, label: str) -> None:
        self.unit = unit
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
        step = row["interval_s"] if self.unit == "s" else row["write_bytes"] / 1e9
        if self.unit == "GB" and row["write_bytes"] == 0:
            step = (row["read_bytes"] + row["trim_bytes"]) / 1e9
        self.done += step
        mbps = (row["read_bytes"] + row["write_bytes"]) / row["interval_s"] / 1e6
        iops = (row["read_ios"] + row["write_ios"]) / row["interval_s"]
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
            self._rich.stop()


def make_progress(
    progress: bool | Callable[[dict], None] | None,
    workload: Workload,
    target_bytes: int,
    *,
    label: str,
) -> Any:
    """``True`` → a bar; a callable → itself; ``None``/``False`` → no callback."""
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
        return None
    return Bar(*totals(), label)
