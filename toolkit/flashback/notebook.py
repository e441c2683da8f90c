"""Notebook set-up: charts that render offline in JupyterLab *and* survive saving.

:func:`setup` enables the ``flashback`` Altair renderer. Each chart output is one MIME
bundle with two forms of the same chart:

- ``application/vnd.vega.v5+json``: the chart compiled to Vega (by vl-convert, in the
  kernel), which JupyterLab and Notebook 7 draw, interactive, with the Vega they ship —
  no CDN, and again when the saved notebook is reopened;
- ``image/png``: the chart drawn by vl-convert's bundled Vega (no browser, no network),
  which viewers that do not run Vega show: nbconvert's HTML export, GitHub's viewer.

Altair's own offline ``jupyter`` renderer (an anywidget) is not used: a notebook executed
headless (papermill, nbconvert) stores the widget's state, and its HTML export then waits
for a widget manager from a CDN instead of showing anything.
"""

from __future__ import annotations

import altair as alt

from flashback._render import STATIC_MIME, VEGA_MIME, render, static_png

__all__ = ["setup", "render", "static_png", "RENDERER", "VEGA_MIME", "STATIC_MIME"]

RENDERER = "flashback"


alt.renderers.register(RENDERER, render)


def setup(*, offline: bool = True, static_scale: float = 1.0, max_rows: int | None = None) -> None:
    """Enables the ``flashback`` renderer (interactive Vega + static PNG) and theme.

    Args:
        offline: kept for compatibility; the renderer never loads anything from a CDN.
        static_scale: pixel density of the PNG saved with each chart (2 for sharper
            images, 0 for none: then a saved or exported notebook shows no chart).
        max_rows: Altair's row limit; ``None`` lifts it (flashback's figure factories
            aggregate large captures themselves).
    """
    del offline
    alt.renderers.enable(RENDERER, static_scale=static_scale)
    if max_rows is None:
        alt.data_transformers.disable_max_rows()
    try:  # the figures module registers the theme when present
        from flashback.figures import use_theme

        use_theme()
    except Exception:
        pass
