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

import base64
from typing import Any

import altair as alt

__all__ = ["setup", "render", "static_png", "RENDERER", "VEGA_MIME", "STATIC_MIME"]

RENDERER = "flashback"
#: The interactive form (JupyterLab's built-in Vega renderer) and the static form.
VEGA_MIME = "application/vnd.vega.v5+json"
STATIC_MIME = "image/png"


def static_png(spec: dict, *, scale: float = 1.0) -> bytes:
    """Renders a Vega-Lite ``spec`` (dict) to PNG bytes offline through vl-convert.

    Args:
        scale: pixel density (1 = the chart's own size in CSS pixels).

    Raises:
        ValueError: vl-convert cannot compile or draw ``spec`` (its message says why).
    """
    import vl_convert as vlc

    return vlc.vegalite_to_png(spec, scale=scale)


def render(
    spec: dict, *, static_scale: float = 1.0, svg: bool = True, **metadata: Any
) -> tuple[dict, dict]:
    """Altair renderer: a Vega-Lite ``spec`` -> (MIME bundle, metadata) with the chart as
    Vega (interactive in JupyterLab) and as a PNG (``static_scale`` = its pixel density;
    0 leaves it out, and then a saved or exported notebook shows no chart).

    ``svg``: JupyterLab draws the chart as SVG (text selectable) rather than on a canvas.
    ``metadata``: what Altair passes a renderer; unused.

    Raises:
        ValueError: vl-convert cannot compile or draw ``spec`` (its message says why).
    """
    import vl_convert as vlc

    vega = vlc.vegalite_to_vega(spec)
    # Compiled by Vega-Lite 6 for Vega 6, whose spec format is Vega 5's: label it so that
    # the Vega 5 renderer JupyterLab ships takes it without a version warning.
    vega["$schema"] = "https://vega.github.io/schema/vega/v5.json"
    title = spec.get("title")
    if isinstance(title, dict):
        title = title.get("text")
    bundle: dict[str, Any] = {
        VEGA_MIME: vega,
        "text/plain": f"<chart{': ' + str(title) if title else ''}>",
    }
    if static_scale:
        bundle[STATIC_MIME] = base64.b64encode(static_png(spec, scale=static_scale)).decode()
    md = {VEGA_MIME: {"embed_options": {"renderer": "svg" if svg else "canvas"}}}
    return bundle, md


alt.renderers.register(RENDERER, render)


def setup(*, offline: bool = True, static_scale: float = 1.0, max_rows: int | None = None) -> None:
    """Enables the ``flashback`` renderer (interactive Vega + static PNG) and theme.

    Args:
        offline: kept for compatibility; the renderer never loads anything from a CDN.
        static_scale: pixel density of the PNG saved with each chart (2 for sharper
            images, 0 for none: then a saved or exported notebook shows no chart).
        max_rows: Altair's row limit; ``None`` lifts it (flashback's figure factories
            aggregate large captures themselves).

    Raises:
        Nothing: the renderer is registered when this module is imported.
    """
    del offline
    alt.renderers.enable(RENDERER, static_scale=static_scale)
    if max_rows is None:
        alt.data_transformers.disable_max_rows()
    try:  # the figures module registers the theme when present
        import flashback.figures  # noqa: F401

        alt.theme.enable("flashback")
    except Exception:
        pass
