"""The ``flashback`` Altair theme: one look for every figure, registered on import."""

from __future__ import annotations

import altair as alt

THEME_NAME = "flashback"

#: Colours for drive states and data types, used by every chart that shows them.
CONDITION_COLORS: dict[str, str] = {
    "fresh": "#1b9e77",
    "clean": "#1b9e77",
    "used": "#d95f02",
    "torture": "#d95f02",
    "after_trim": "#7570b3",
    "after_idle": "#e7298a",
    "steady_state": "#666666",
    "compressible": "#1f77b4",
    "incompressible": "#d62728",
}

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"


@alt.theme.register(THEME_NAME, enable=False)
def flashback_theme() -> alt.theme.ThemeConfig:
    """Plain white background, light grid, readable 12 px labels, category10 palette."""
    return {
        "config": {
            "view": {"continuousWidth": 520, "continuousHeight": 300, "stroke": None},
            "background": "white",
            "font": FONT,
            "title": {"fontSize": 14, "anchor": "start", "fontWeight": "bold"},
            "axis": {
                "labelFontSize": 11,
                "titleFontSize": 12,
                "gridColor": "#e6e6e6",
                "domainColor": "#888888",
                "tickColor": "#888888",
            },
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "orient": "right"},
            "header": {"labelFontSize": 12, "titleFontSize": 12},
            "range": {"category": {"scheme": "tableau10"}},
            "line": {"strokeWidth": 1.8},
            "point": {"size": 18, "filled": True},
            "bar": {"cornerRadiusEnd": 1},
        }
    }


def use_theme() -> None:
    """Makes the ``flashback`` theme the active Altair theme (done on import of figures).

    Raises:
        Nothing: the theme is registered when this module is imported.
    """
    alt.theme.enable(THEME_NAME)
