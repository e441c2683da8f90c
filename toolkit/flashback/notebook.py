"""Notebook set-up: charts that render offline in JupyterLab, and the flashback theme."""

from __future__ import annotations

import altair as alt


def setup(*, offline: bool = True, max_rows: int | None = None) -> None:
    """Enables Altair's Jupyter renderer with the Vega JavaScript served from the kernel
    (``offline=True``; no CDN), and lifts the row limit when ``max_rows`` is None
    (flashback's figure factories aggregate large captures themselves)."""
    alt.renderers.enable("jupyter", offline=offline)
    if max_rows is None:
        alt.data_transformers.disable_max_rows()
    try:  # the figures module registers the theme when present
        import flashback.figures  # noqa: F401

        alt.theme.enable("flashback")
    except Exception:
        pass
