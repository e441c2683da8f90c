"""Saving charts to PNG or SVG offline through vl-convert (no browser, no network)."""

from __future__ import annotations

import os
from pathlib import Path

import altair as alt

from flashback.errors import ParameterError


def save_chart(
    chart: alt.TopLevelMixin, path: str | os.PathLike[str], *, scale: float = 2.0
) -> Path:
    """Renders ``chart`` to ``path`` (``.png`` or ``.svg``, by suffix) and returns the path.

    The spec is rendered by vl-convert's bundled Vega, so this works offline; the
    ``flashback`` theme is applied. Parent folders are created.

    Args:
        scale: PNG pixel density (2 = retina-sharp); ignored for SVG.

    Raises:
        ParameterError: the suffix is neither ``.png`` nor ``.svg``.
    """
    import vl_convert as vlc

    from flashback.figures._theme import THEME_NAME

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ParameterError(f"cannot save a chart as {path.name!r}; use a .png or .svg name")
    with alt.theme.enable(THEME_NAME):
        spec = chart.to_json()
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".png":
        path.write_bytes(vlc.vegalite_to_png(spec, scale=scale))
    else:
        path.write_text(vlc.vegalite_to_svg(spec), encoding="utf-8")
    return path
