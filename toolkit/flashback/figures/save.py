"""Saving charts to PNG, SVG or self-contained HTML offline through vl-convert (no browser,
no network)."""

from __future__ import annotations

import os
from pathlib import Path

import altair as alt

from flashback._io import write_bytes
from flashback.errors import ParameterError

#: File suffixes :func:`save_chart` writes.
FORMATS = (".png", ".svg", ".html")


def save_chart(
    chart: alt.TopLevelMixin, path: str | os.PathLike[str], *, scale: float = 2.0
) -> Path:
    """Renders ``chart`` to ``path`` (``.png``, ``.svg`` or ``.html``, by suffix) and returns
    the path.

    PNG and SVG are drawn by vl-convert's bundled Vega; ``.html`` is one interactive page
    with the Vega JavaScript inlined (about 1 MB), which opens with no network. The
    ``flashback`` theme is applied. Parent folders are created; the file appears whole or
    not at all.

    Args:
        scale: PNG pixel density (2 = retina-sharp); ignored for SVG.

    Raises:
        ParameterError: the suffix is not ``.png``, ``.svg`` or ``.html``.
        SafetyError: ``path`` is (or leads to) a device node, FIFO, socket or directory.
        DeviceError: the disk is full (nothing is left at ``path`` but an older file).
    """
    import vl_convert as vlc

    from flashback.figures._theme import THEME_NAME

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ParameterError(
            f"cannot save a chart as {path.name!r}; use a .png, .svg or .html name"
        )
    with alt.theme.enable(THEME_NAME), alt.data_transformers.disable_max_rows():
        spec = chart.to_json()
    if suffix == ".png":
        body: bytes = vlc.vegalite_to_png(spec, scale=scale)
    elif suffix == ".svg":
        body = vlc.vegalite_to_svg(spec).encode("utf-8")
    else:
        body = vlc.vegalite_to_html(spec, bundle=True).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes(path, body, overwrite=True)
    return path
