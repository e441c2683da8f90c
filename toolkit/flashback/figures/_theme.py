"""The ``flashback`` Altair theme: one look for every figure, registered on import."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import altair as alt

THEME_NAME = "flashback"

#: The one colour table of every figure: a label (a drive state, a data type, a variant, a
#: compare status, a latency statistic) has the colour given here in every chart that shows
#: it. Synonyms share a colour (``clean`` is ``fresh``: just erased; ``after_torture`` is
#: ``used``); labels not listed get one from :data:`EXTRA_COLORS` by a stable hash of the
#: label (:func:`color_of`), the same in every chart and every run.
COLORS: dict[str, str] = {
    # drive states (the conditions of a replay's steps)
    "fresh": "#1b9e77",
    "clean": "#1b9e77",
    "fill": "#a6761d",
    "precondition": "#a6761d",
    "used": "#d95f02",
    "torture": "#d95f02",
    "after_torture": "#d95f02",
    "idle": "#bbbbbb",
    "after_idle": "#e7298a",
    "trim": "#bcbddc",
    "after_trim": "#7570b3",
    "round": "#666666",
    "steady_state": "#666666",
    # data types
    "compressible": "#1f77b4",
    "incompressible": "#d62728",
    # over-provisioning variants (AnandTech consistency)
    "default": "#17becf",
    "default_op": "#17becf",
    "+25% OP": "#8c564b",
    # the review's numbers beside the replay's
    "published": "#7b1fa2",
    "replayed": "#4c78a8",
    # compare statuses (flashback.replay.compare.COMPARED)
    "within tolerance": "#2e7d32",
    "outside tolerance": "#c62828",
    "no tolerance": "#9d9d9d",
    "borderline": "#f9a825",
    # latency statistics
    "mean": "#3182bd",
    "p50": "#6baed6",
    "p99": "#fd8d3c",
    "p999": "#e6550d",
    "max": "#969696",
    # simulator write amplification
    "interval": "#9ecae1",
    "cumulative": "#a50f15",
}

#: Kept for callers of the old name: the same table.
CONDITION_COLORS = COLORS

#: Colours for labels :data:`COLORS` does not name, none of them in the table.
EXTRA_COLORS = (
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3", "#8ca252",
    "#bd9e39", "#ad494a", "#a55194", "#6b6ecf", "#b5cf6b", "#e7ba52", "#d6616b",
)  # fmt: skip


def color_of(label: object) -> str:
    """The colour (``#rrggbb``) of ``label`` in every chart: :data:`COLORS`, else one of
    :data:`EXTRA_COLORS` chosen by a stable hash (CRC-32) of the label's text.

    Every string has a colour.
    """
    import zlib

    text = str(label)
    if text in COLORS:
        return COLORS[text]
    return EXTRA_COLORS[zlib.crc32(text.encode()) % len(EXTRA_COLORS)]


def color_scale(labels: list) -> alt.Scale:
    """A nominal colour scale over ``labels`` in their order (the legend's order), each
    label coloured by :func:`color_of`: the one place a figure's categorical colours come
    from. Two labels the table does not name whose hashes meet take the next free extra
    colour, so one chart never draws two labels alike (their colour can then differ from
    another chart's).

    Every label has a colour.
    """
    domain = first_seen(labels)
    named = [COLORS.get(str(v)) for v in domain]
    taken = {c for c in named if c}
    colors: list[str] = []
    for v, color in zip(domain, named, strict=True):
        if color is None:  # not in the table: its hashed colour, or the next one free
            start = EXTRA_COLORS.index(color_of(v))
            ring = EXTRA_COLORS[start:] + EXTRA_COLORS[:start]
            color = next((c for c in ring if c not in taken), ring[0])
            taken.add(color)
        colors.append(color)
    return alt.Scale(domain=domain, range=colors)


def first_seen(values: Iterable[Any]) -> list[Any]:
    """The distinct non-null values of a column (or any iterable) in the order they first
    appear — the order a replay ran them in, for frames built from its steps or intervals."""
    return list(dict.fromkeys(v for v in values if v is not None))


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
            # altair's RangeConfigKwds leaves out the {"scheme": name} form that Vega-Lite's
            # RangeConfig accepts (and renders here): the type is narrower than the schema
            "range": {"category": {"scheme": "tableau10"}},  # type: ignore[typeddict-item]
            "line": {"strokeWidth": 1.8},
            "point": {"size": 18, "filled": True},
            "bar": {"cornerRadiusEnd": 1},
        }
    }


def use_theme() -> None:
    """Makes the ``flashback`` theme the active Altair theme for the rest of the session
    (importing :mod:`flashback.figures` only registers it; :func:`flashback.notebook.setup`
    calls this)."""
    alt.theme.enable(THEME_NAME)
