"""A Vega-Lite spec as the MIME bundle a notebook shows: Vega (interactive) and PNG (static),
both made offline by vl-convert. :mod:`flashback.notebook` registers :func:`render` as
Altair's ``flashback`` renderer; :class:`flashback.live.LiveChart` redraws through it. It
imports nothing of flashback, so a progress display can use it without the figures."""

from __future__ import annotations

import base64
from typing import Any

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
