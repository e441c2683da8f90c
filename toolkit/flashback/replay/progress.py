"""One progress bar for a whole replay: GB written (or steps done), current step as its label."""

from __future__ import annotations

import sys
from typing import Any, Callable

from flashback.progress import _in_notebook


class ReplayBar:
    """A rich bar in a terminal, tqdm in a notebook; ``update(row)`` per captured interval."""

    def __init__(self, *, total_gb: float | None, label: str) -> None:
        self._tqdm: Any = None
        self._rich: Any = None
        if _in_notebook():
            from tqdm.auto import tqdm

            self._tqdm = tqdm(total=total_gb, unit="GB", desc=label)
        else:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._rich = Progress(
                TextColumn("[bold]{task.description:<36}"),
                BarColumn(),
                TextColumn("{task.completed:8.2f}/{task.total} GB"),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                transient=False,
            )
            self._task = self._rich.add_task(label, total=total_gb, rate="")
            self._rich.start()

    def step(self, name: str) -> None:
        """Shows ``name`` as the current step."""
        if self._tqdm is not None:
            self._tqdm.set_description(name, refresh=False)
        else:
            self._rich.update(self._task, description=name)

    def __call__(self, row: dict) -> None:
        gb = row["write_bytes"] / 1e9
        mbps = (row["read_bytes"] + row["write_bytes"]) / max(row["interval_s"], 1e-12) / 1e6
        if self._tqdm is not None:
            self._tqdm.update(gb)
            self._tqdm.set_postfix(MBps=f"{mbps:.0f}", refresh=False)
        else:
            self._rich.update(self._task, advance=gb, rate=f"{mbps:8.1f} MB/s")

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
        elif self._rich is not None:
            self._rich.stop()


def make_bar(
    progress: bool | Callable[[dict], None] | None, *, total_gb: float | None, label: str
) -> Any:
    """``True`` → a bar when attached to a terminal or notebook; a callable → itself."""
    if progress is None or progress is False:
        return None
    if callable(progress) and progress is not True:
        return progress
    if not (sys.stderr.isatty() or _in_notebook()):
        return None
    return ReplayBar(total_gb=total_gb, label=label)
