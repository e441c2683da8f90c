"""A live chart of a long run: throughput and latency against bytes written, redrawn as
intervals arrive, in a notebook; it becomes the static chart (Vega + PNG, see
:mod:`flashback.notebook`) when the run ends, so the saved notebook keeps it.

The progress callback only appends each interval to a list (microseconds, under the lock);
a background thread redraws every ``every_s`` seconds of wall time while the engine runs
with the GIL released. The engine's thread still takes the GIL to hand over each interval
and to poll for Ctrl-C, and waits for it while the redraw holds it; so a live redraw holds
it briefly: its points are binned in plain Python, only the intervals new since the last
redraw (:meth:`LiveChart.live_points`, no polars), and put into a Vega spec compiled once
per title before the run (no Altair validation, no Vega-Lite compile per redraw). The final
chart goes through Altair and vl-convert with its PNG. ``make bench``
(``tests/bench/live.py``) measures what it costs the run: the run's ``observer_s`` (the
engine thread's time in the callback and the Ctrl-C polls) against its duration.

>>> cap = fb.run(target, w, progress="live")       # or fb.replay(..., progress="live")
>>> from flashback.live import LiveChart             # the same, with options
>>> cap = fb.run(target, w, progress=LiveChart(every_s=5))
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

#: at most this many points are drawn (consecutive intervals averaged beyond it)
MAX_POINTS = 1500

#: one interval as the chart keeps it: (GB written, MB/s, p99 write latency µs, step)
_Row = tuple[float, float, float | None, str]

#: the live chart's Vega (compiled once per Altair theme and title) and its data set's name
_VEGA: dict[str, tuple[dict, str]] = {}


class LiveChart:
    """A progress callback (``progress=LiveChart()``) that draws write throughput (MB/s) and
    p99 write latency (µs) against host bytes written (GB).

    Args:
        every_s: seconds of wall time between two redraws.
        display: where the chart goes: ``None`` for the notebook (an updatable IPython
            display), or a callable receiving each chart (an Altair chart) — for tests, or a
            dashboard.
        title: the chart's title.

    Drawing errors end the live view (the run goes on) and the last chart is drawn again at
    :meth:`close`.
    """

    def __init__(
        self,
        *,
        every_s: float = 5.0,
        display: Callable[[Any], None] | None = None,
        title: str = "",
    ) -> None:
        self.every_s = every_s
        self.title = title
        self._display = display
        self._handle: Any = None
        self._rows: list[_Row] = []
        self._lock = threading.Lock()
        self._drawn = 0  # rows in the last chart drawn
        self._step = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.draws = 0
        self.error: BaseException | None = None
        # live_points' bins: their width (intervals), the finished ones, the rows they hold
        self._bin_k = 0
        self._bins: list[dict] = []
        self._binned = 0
        import altair  # noqa: F401  (imported here, not by the first redraw mid-run)
        import polars  # noqa: F401

        if display is None:  # the notebook's chart compiled now, not by the first redraw
            try:
                self._compiled()
            except Exception:  # the first redraw meets it again, and ends the live view
                pass

    # the progress-callback protocol: __call__(row), step(name), close(status)
    def __call__(self, row: dict) -> None:
        dt = row["interval_s"] or 1.0
        mbps = (row["write_bytes"] + row["read_bytes"]) / dt / 1e6
        point = (row["host_written_bytes"] / 1e9, mbps, row.get("write_lat_p99_us"), self._step)
        with self._lock:
            self._rows.append(point)
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="flashback-live", daemon=True)
            self._thread.start()

    def step(self, name: str) -> None:
        """Labels the following intervals with a replay step's name."""
        self._step = name

    def close(self, status: str = "complete") -> None:
        """Stops redrawing and draws the final chart with its static form (PNG), so a saved
        notebook keeps it; ``status`` other than ``complete`` goes into the title."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self._rows:
            suffix = "" if status == "complete" else f" ({status})"
            self._draw(final=True, suffix=suffix)

    def frame(self) -> Any:
        """The intervals seen so far as a polars frame: ``gb_written``, ``mbps``,
        ``lat_p99_us``, ``step``."""
        import polars as pl

        with self._lock:
            rows = list(self._rows)
        return pl.DataFrame(
            rows,
            schema={"gb_written": pl.Float64, "mbps": pl.Float64, "lat_p99_us": pl.Float64,
                    "step": pl.String},
            orient="row",
        )  # fmt: skip

    def points(self) -> Any:
        """:meth:`frame`, consecutive intervals averaged to at most :data:`MAX_POINTS` rows."""
        import polars as pl

        df = self.frame()
        if df.height > MAX_POINTS:  # consecutive intervals averaged: one point per bin
            k = -(-df.height // MAX_POINTS)
            df = (
                df.with_row_index("_i")
                .group_by(pl.col("_i") // k, maintain_order=True)
                .agg(pl.col("gb_written").last(), pl.col("mbps", "lat_p99_us").mean(),
                     pl.col("step").last())
                .drop("_i")
            )  # fmt: skip
        return df

    def live_points(self) -> list[dict]:
        """:meth:`points` as a list of dicts (its rows, its columns), built in plain Python:
        the bins finished by an earlier call are kept, so a call costs the intervals new
        since then (all of them again when the bin width grows, once per
        :data:`MAX_POINTS` intervals), not a polars frame of the whole run."""
        with self._lock:
            n = len(self._rows)
            rows = self._rows  # only appended to: rows[:n] stay as they are
        k = max(1, -(-n // MAX_POINTS))
        if k != self._bin_k:
            self._bin_k, self._bins, self._binned = k, [], 0
        full = n - n % k
        for i in range(self._binned, full, k):
            self._bins.append(_bin(rows[i : i + k]))
        self._binned = max(self._binned, full)
        return self._bins + [_bin(rows[full:n])] if full < n else list(self._bins)

    def chart(self, *, suffix: str = "") -> Any:
        """The chart of what has arrived (Altair): two panels sharing the bytes-written axis."""
        import altair as alt

        df = self.points()
        x = alt.X("gb_written:Q", title="Host data written (GB)")
        base = alt.Chart(df).properties(width=640, height=160)
        top = base.mark_line().encode(x=x, y=alt.Y("mbps:Q", title="MB/s"))
        bottom = base.mark_line(color="#d62728").encode(
            x=x, y=alt.Y("lat_p99_us:Q", title="p99 write latency (µs)")
        )
        title = (self.title or "live: throughput and latency vs data written") + suffix
        return alt.vconcat(top, bottom).properties(title=title)

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            with self._lock:
                n = len(self._rows)
            if n == self._drawn:
                continue
            try:
                self._draw(final=False)
            except Exception as e:  # the run matters more than its picture
                self.error = e
                return

    def _draw(self, *, final: bool, suffix: str = "") -> None:
        with self._lock:
            self._drawn = len(self._rows)
        self.draws += 1
        if self._display is not None:
            self._display(self.chart(suffix=suffix))
            return
        if final:  # the chart a saved notebook keeps: Vega and its PNG
            from flashback._render import render

            bundle, md = render(self.chart(suffix=suffix).to_dict(), static_scale=1.0)
        else:  # while live: the points in the Vega compiled once
            vega, name = self._compiled()
            points = self.live_points()
            data = [{**d, "values": points} if d.get("name") == name else d for d in vega["data"]]
            bundle, md = render_live({**vega, "data": data}, title=self.title)
        self._show(bundle, md)

    def _compiled(self) -> tuple[dict, str]:
        """The live chart compiled to Vega (once per title and Altair theme, not mid-run if
        :meth:`__init__` got to it: a process's first compile starts vl-convert's engine,
        about half a second holding the GIL) and the name of the data set its points go
        into."""
        import altair as alt

        key = f"{alt.theme.active}\0{self.title}"
        if key not in _VEGA:
            from flashback._render import VEGA_MIME, render

            bundle, _ = render(self.chart().to_dict(), static_scale=0)
            vega = bundle[VEGA_MIME]
            _VEGA[key] = (vega, next(d["name"] for d in vega["data"] if "values" in d))
        return _VEGA[key]

    def _show(self, bundle: dict, md: dict) -> None:
        """Shows ``bundle`` in the notebook: a new output the first time, then updated."""
        from IPython.display import display

        if self._handle is None:
            self._handle = display(bundle, metadata=md, raw=True, display_id=True)
        else:
            self._handle.update(bundle, metadata=md, raw=True)


def _bin(rows: list[_Row]) -> dict:
    """One point of :meth:`LiveChart.points` from its intervals: the last GB written and
    step, the mean MB/s and p99 latency (intervals without one left out; None if none has)."""
    lat = [r[2] for r in rows if r[2] is not None]
    return {
        "gb_written": rows[-1][0],
        "mbps": math.fsum(r[1] for r in rows) / len(rows),
        "lat_p99_us": math.fsum(lat) / len(lat) if lat else None,
        "step": rows[-1][3],
    }


def render_live(vega: dict, *, title: str = "") -> tuple[dict, dict]:
    """The MIME bundle of a compiled Vega spec (no PNG), as :func:`flashback.notebook.render`
    makes it while a chart is live."""
    from flashback._render import VEGA_MIME

    text = f"<chart: {title or 'live'}>"
    return {VEGA_MIME: vega, "text/plain": text}, {
        VEGA_MIME: {"embed_options": {"renderer": "svg"}}
    }
