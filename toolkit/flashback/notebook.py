"""Notebook set-up: charts that render offline in JupyterLab *and* survive saving.

:func:`setup` enables the ``flashback`` Altair renderer. Each chart output then carries two
forms in one MIME bundle:

- the interactive Jupyter widget (Altair's ``jupyter`` renderer, Vega served by the kernel,
  no CDN), which a live JupyterLab session draws;
- a static PNG drawn by vl-convert's bundled Vega (no browser, no network), which an
  executed ``.ipynb``, its nbconvert HTML export and GitHub's viewer show, since none of
  them keeps the widget's state.
"""

from __future__ import annotations

from typing import Any

import altair as alt

RENDERER = "flashback"
#: The MIME type of the static form each chart output carries.
STATIC_MIME = "image/png"


def static_png(spec: dict, *, scale: float = 1.0) -> bytes:
    """Renders a Vega-Lite ``spec`` (dict) to PNG bytes offline through vl-convert.

    Args:
        scale: pixel density (1 = the chart's own size in CSS pixels).
    """
    import vl_convert as vlc

    return vlc.vegalite_to_png(spec, scale=scale)


def render(spec: dict, *, offline: bool = True, static_scale: float = 1.0, **metadata: Any) -> dict:
    """Altair renderer: the Jupyter widget's MIME bundle plus a static PNG of the same spec.

    ``static_scale=0`` leaves the PNG out (the bundle is then the plain ``jupyter`` one).
    The PNG is base64 text, as the notebook format stores images.
    """
    import base64

    from altair.vegalite.v6.display import jupyter_renderer

    bundle = dict(jupyter_renderer(spec, offline=offline, **metadata))
    if static_scale:
        png = static_png(spec, scale=static_scale)
        bundle[STATIC_MIME] = base64.b64encode(png).decode("ascii")
        title = spec.get("title")
        if isinstance(title, dict):
            title = title.get("text")
        bundle["text/plain"] = f"<chart{': ' + str(title) if title else ''}>"
    return bundle


alt.renderers.register(RENDERER, render)


def setup(*, offline: bool = True, static_scale: float = 1.0, max_rows: int | None = None) -> None:
    """Enables the ``flashback`` renderer (interactive widget + static PNG) and theme.

    Args:
        offline: the widget's Vega JavaScript comes from the kernel, not a CDN.
        static_scale: pixel density of the PNG saved beside each chart (2 for sharper
            images, 0 for none: then a saved or exported notebook shows no chart).
        max_rows: Altair's row limit; ``None`` lifts it (flashback's figure factories
            aggregate large captures themselves).
    """
    alt.renderers.enable(RENDERER, offline=offline, static_scale=static_scale)
    if max_rows is None:
        alt.data_transformers.disable_max_rows()
    try:  # the figures module registers the theme when present
        import flashback.figures  # noqa: F401

        alt.theme.enable("flashback")
    except Exception:
        pass
