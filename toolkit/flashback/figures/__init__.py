"""Altair figure factories: every chart type the five reviews print, plus the analysis views.

Each factory takes polars frames (capture intervals in the design's schema, per-step
summaries, ``fb.published()`` rows, segment/breakpoint frames) and returns an Altair chart.
Inputs are aggregated in polars first, so 100k-row captures never hit Altair's row limit.
Importing this module registers the ``flashback`` theme without enabling it: flashback's own
renderings (:func:`save_chart`, the HTML report) apply it, :func:`flashback.notebook.setup`
enables it for a notebook, and :func:`use_theme` for the rest of a session.

====================================  ===========================================
factory                               review figure
====================================  ===========================================
:func:`performance_vs_written`        Puget: speed vs data written, breakpoints
:func:`max_avg_bars`                  Puget: maximum / average per test and data
:func:`iops_scatter`                  AnandTech: IOPS vs time (log/linear, zoom)
:func:`consistency_panel`             AnandTech: the three scatter sets stacked
:func:`condition_bars`                BeHardware / AnandTech: new/used/TRIM bars
:func:`step_series`                   BeHardware: per-second series per step
:func:`relative_to_fresh`             X-bit: degradation relative to fresh
:func:`new_vs_used`                   AnandTech 2009: new vs used reads
:func:`published_overlay`             published numbers on a replayed curve
:func:`compare_errors`                replay's relative errors
:func:`latency_percentiles`           latency p50/p99/p99.9/max over time
:func:`wa_free_blocks`                simulator WA and free blocks
:func:`steady_state_window`           SNIA PTS steady-state window
:func:`capture_overview`              a capture: throughput and latency (``flashback plot``)
====================================  ===========================================

Colours: a label (a drive state such as ``fresh`` or ``after_trim``, a data type, a
variant, ``published``/``replayed``, a compare status, a latency statistic) has one colour
in every chart, from one table (:data:`COLORS`, :func:`color_of`). Categories are shown in
the order they first appear in the input frame — for a replay's frames, the order of its
procedure.

Inputs are frames, never result objects: ``capture.intervals`` / ``replay.intervals``
(design schema), per-step or per-loop summaries, ``fb.published(...)`` rows,
``Segments.to_frame()`` (``x_start, x_end, level, level_lo, level_hi``) and
``Segments.breakpoint_frame()`` (``x, x_lo, x_hi``). Save with :func:`save_chart`
(``.png`` / ``.svg`` through vl-convert, or ``.html`` with the Vega JavaScript inlined:
all offline).

>>> import flashback as fb
>>> chart = fb.figures.condition_bars(fb.published(test="as_ssd_seq_write"))
>>> fb.figures.save_chart(chart, "out/trim.svg")  # doctest: +SKIP
"""

from flashback.figures._theme import (
    COLORS,
    CONDITION_COLORS,
    THEME_NAME,
    color_of,
    color_scale,
    use_theme,
)
from flashback.figures.bars import max_avg_bars
from flashback.figures.consistency import consistency_panel, iops_scatter
from flashback.figures.latency import latency_percentiles
from flashback.figures.overlay import compare_errors, published_overlay
from flashback.figures.overview import capture_overview
from flashback.figures.pts import steady_state_window
from flashback.figures.save import save_chart
from flashback.figures.series import step_series
from flashback.figures.simulator import wa_free_blocks
from flashback.figures.states import condition_bars, new_vs_used, relative_to_fresh
from flashback.figures.written import performance_vs_written

__all__ = [
    "COLORS",
    "CONDITION_COLORS",
    "color_of",
    "color_scale",
    "THEME_NAME",
    "use_theme",
    "save_chart",
    "performance_vs_written",
    "max_avg_bars",
    "iops_scatter",
    "consistency_panel",
    "condition_bars",
    "step_series",
    "relative_to_fresh",
    "new_vs_used",
    "published_overlay",
    "compare_errors",
    "latency_percentiles",
    "wa_free_blocks",
    "steady_state_window",
    "capture_overview",
]
