"""The review's marks and the replay's beside them, said on the chart itself: a legend
(review vs replay) and a short label on every knee and level (``review 40 GB``,
``replay 141 GB``, ``replay 131 MB/s``), placed so that no two labels overlap.

Used by :func:`flashback.figures.performance_vs_written` when it is given ``published=``.
Labels are made from the marks passed in (their values and the axes' units), never written
by hand. Placement: the review's knees above the panel, the replay's at its foot, the
review's levels at the panel's right end above their rule, the replay's at the start of
their segment below it (a label that would run past the panel's right edge ends at its
anchor instead); a label that would overlap one already placed in its panel moves one
line further out (a level first tries the other side of its rule); no label sits on a
level's rule either. Overlap is judged in pixels from the axes' estimated domains (zero to the
"nice" maximum Vega picks) and an estimated text width, with a margin.
"""

from __future__ import annotations

import math
import re
from typing import Any

import altair as alt
import polars as pl

from flashback.figures._theme import COLORS
from flashback.figures._util import title_for

#: The legend's two entries (``who``) and their colours and dashes; the review's colour is
#: the table's ``published``.
WHO = {"review": "review (published)", "replay": "replay (fitted)"}
WHO_COLORS = [COLORS["published"], "#333333"]
WHO_DASHES = [[1, 3], [5, 3]]
#: Dashes of the data types, in the order they ran (the first solid).
DATA_DASHES = [[1, 0], [6, 4], [2, 2], [8, 2, 2, 2]]
#: Label font size (px), line height (px), and the width of a character as a share of it.
FONT_PX = 9
LINE_PX = 12
CHAR_EM = 0.62
#: Lines a label may move out by before it takes its first place anyway.
MAX_LINES = 4
#: The label kinds, in the order they are placed (earlier ones keep the first line).
KINDS = ("knee_review", "knee_replay", "level_review", "level_replay")


def number(v: float) -> str:
    """A mark's value as a label shows it: three significant digits, thousands separated
    (``140.96`` → ``141``, ``1800.9`` → ``1,801``, ``86.57`` → ``86.6``)."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def unit_of(col: str) -> str:
    """The unit an axis title gives a column (``write_mbps`` → ``MB/s``,
    ``gb_written_full`` → ``GB``); empty when the title has none."""
    m = re.search(r"\(([^)]*)\)", title_for(col))
    return m.group(1).split(",")[0].strip() if m else ""


def nice_max(v: float) -> float:
    """The upper end Vega's ``nice`` linear scale (about ten ticks) gives a domain from zero
    to ``v`` (d3's tick increment: 1, 2, 5 or 10 × a power of ten)."""
    if not v > 0:
        return 1.0
    step = v / 10
    power = 10 ** math.floor(math.log10(step))
    err = step / power
    inc = power * (10 if err >= 7.07 else 5 if err >= 3.16 else 2 if err >= 1.41 else 1)
    return math.ceil(v / inc - 1e-9) * inc


#: The merged legend draws strokes (the rules' and curves' colour and dash), not the
#: circles a text layer's colour would give it.
LEGEND = alt.Legend(symbolType="stroke", symbolStrokeWidth=2.5, symbolSize=300)


def scales(
    data: alt.Scale | None, data_order: list, *, replay: bool
) -> tuple[alt.Scale, alt.Scale]:
    """One colour and one dash scale for the data types and the marks, so that one legend
    (not one per panel, as independent scales in a faceted chart give) names both: the
    data types (``data``, from :func:`flashback.figures.color_scale`), then the review's
    marks and, with ``replay`` (the chart draws fitted knees or levels), the replay's."""
    colors = list(data.range) if data is not None else []  # type: ignore[arg-type]
    dashes = [DATA_DASHES[i % len(DATA_DASHES)] for i in range(len(data_order))]
    n = len(WHO) if replay else 1
    domain = [*data_order, *list(WHO.values())[:n]]
    return (
        alt.Scale(domain=domain, range=[*colors, *WHO_COLORS[:n]]),
        alt.Scale(domain=domain, range=[*dashes, *WHO_DASHES[:n]]),
    )


def label_rows(
    df: pl.DataFrame, *, keys: list[str], x_unit: str, y_unit: str, width: int, height: int
) -> pl.DataFrame:
    """The ``label`` layer's rows from the chart's frame (layers ``published``,
    ``breakpoint``, ``segment``, ``curve``): one row per knee and level with its text
    (``label``), its position in data units (``x_gb`` for a knee, ``y`` for a level, both
    for a replayed level) and where it went, ``place``: its kind (:data:`KINDS`), its offset
    from its anchor (px) and its baseline (``top``: the text hangs below the anchor,
    ``bottom``: it stands above) and its alignment to its anchor, e.g.
    ``"level_replay 3 top left"``; plus the panel keys. (The
    chart's own columns, so that the inline data gains one column, not seven.)"""
    panel = [k for k in keys if k in df.columns]
    x_top = nice_max(_max(df, ["x_gb", "x2_gb", "pub_x_gb", "bp_hi_gb"]))
    rows: list[dict] = []
    for part in df.partition_by(panel, maintain_order=True) if panel else [df]:
        y_top = nice_max(_max(part, ["y", "y_end", "band_hi", "pub_y"]))
        px = _Px(x_top=x_top, y_top=y_top, width=width, height=height)
        where = {k: part[k][0] for k in panel}
        rules = _rules(part, px)  # the horizontal rules no label may sit on
        placed: list[tuple[float, float, float, float]] = []
        for lab in _labels(part, x_unit=x_unit, y_unit=y_unit):
            slots = list(_slots(lab["kind"]))
            for dy, baseline in slots:
                box = px.box(lab, dy=dy, baseline=baseline)
                if not any(_overlap(box, b) for b in placed) and not any(
                    _crosses(box, r) for r in rules
                ):
                    break
            else:  # nowhere free: its first place
                dy, baseline = slots[0]
                box = px.box(lab, dy=dy, baseline=baseline)
            placed.append(box)
            place = f"{lab['kind']} {dy} {baseline} {px.align(lab)}"
            rows.append({**where, "label": lab["text"], "x_gb": lab["lab_x"], "y": lab["lab_y"],
                         "place": place})  # fmt: skip
    schema: dict[str, Any] = {
        **{k: df.schema[k] for k in panel},
        "label": pl.String,
        "x_gb": pl.Float64,
        "y": pl.Float64,
        "place": pl.String,
    }
    return pl.DataFrame(rows, schema=schema).with_columns(pl.lit("label").alias("layer"))


def label_layers(
    base: alt.Chart, labels: pl.DataFrame, *, color: alt.Color, width: int, height: int
) -> list:
    """One text layer per label kind and place (a label's offset is a mark property)."""
    layers = []
    for place in labels["place"].unique().sort():
        kind, dy, baseline, align = place.split(" ")
        sel = base.transform_filter(
            (alt.datum.layer == "label") & (alt.datum.place == place)
        ).transform_calculate(who=repr(WHO["review" if kind.endswith("review") else "replay"]))
        if kind == "knee_review":  # above the panel
            pos = {"x": "x_gb:Q", "y": alt.value(0)}
        elif kind == "knee_replay":  # at the panel's foot
            pos = {"x": "x_gb:Q", "y": alt.value(height)}
        elif kind == "level_review":  # the panel's right end
            pos = {"x": alt.value(width), "y": "y:Q"}
        else:  # level_replay: the segment's start
            pos = {"x": "x_gb:Q", "y": "y:Q"}
        layers.append(
            sel.mark_text(
                fontSize=FONT_PX,
                align=align,
                baseline=baseline,
                dx=-2 if kind == "level_review" else -3 if align == "right" else 3,
                dy=int(dy),
            ).encode(
                **pos, text="label:N", color=color, tooltip=[alt.Tooltip("label:N", title="mark")]
            )
        )
    return layers


def review_layers(
    base: alt.Chart, df: pl.DataFrame, *, who: dict, width: int, height: int
) -> tuple[list, int]:
    """The review's knees and levels (rules coloured and dashed by ``who``, named in the
    tooltip) and every label (:func:`label_rows`' rows in ``df``), with the spacing facet
    rows need for the review's knee labels above each panel (px)."""
    pub = base.transform_filter(alt.datum.layer == "published").transform_calculate(
        who=repr(WHO["review"])
    )
    enc = {"tooltip": [alt.Tooltip("label:N", title="published")], **who}
    layers = [
        pub.transform_filter("isValid(datum.pub_x_gb)")
        .mark_rule(strokeWidth=2.5)
        .encode(x="pub_x_gb:Q", **enc),
        pub.transform_filter("isValid(datum.pub_y)")
        .mark_rule(strokeWidth=2.5)
        .encode(y="pub_y:Q", **enc),
    ]
    labels = df.filter(pl.col("layer") == "label")
    layers += label_layers(base, labels, color=who["color"], width=width, height=height)
    above = [int(p.split(" ")[1]) for p in labels["place"] if p.startswith("knee_review")]
    spacing = 20  # Vega-Lite's default
    if above:
        spacing = max(spacing, 6 + FONT_PX - min(above))
    return layers, spacing


def _slots(kind: str):
    """A label's places in the order tried: (dy px from its anchor, baseline). Knees move
    further out (up); levels try the other side of their rule before moving further out."""
    for k in range(MAX_LINES):
        out = k * LINE_PX
        if kind in ("knee_review", "knee_replay"):
            yield -3 - out, "bottom"
        elif kind == "level_review":  # above its rule first
            yield -2 - out, "bottom"
            yield 2 + out, "top"
        else:  # level_replay: below its segment first
            yield 3 + out, "top"
            yield -3 - out, "bottom"


class _Px:
    """Data → estimated pixels of one panel (domains from zero to their nice maximum)."""

    def __init__(self, *, x_top: float, y_top: float, width: int, height: int):
        self.x_top, self.y_top, self.width, self.height = x_top, y_top, width, height

    def x(self, v: float) -> float:
        return v / self.x_top * self.width

    def y(self, v: float) -> float:
        return self.height - v / self.y_top * self.height

    @staticmethod
    def text_px(lab: dict) -> float:
        """The label's estimated width (px)."""
        return len(lab["text"]) * FONT_PX * CHAR_EM

    def align(self, lab: dict) -> str:
        """``right`` for a level of the review (at the panel's right end) and for a label
        that would run past the panel's right edge from its anchor (it ends there instead),
        else ``left``."""
        if lab["kind"] == "level_review":
            return "right"
        return "right" if self.x(lab["lab_x"]) + 3 + self.text_px(lab) > self.width else "left"

    def box(self, lab: dict, *, dy: int, baseline: str) -> tuple[float, float, float, float]:
        """The label's estimated box (x0, x1, y0, y1) at offset ``dy`` with ``baseline``."""
        w = self.text_px(lab)
        kind = lab["kind"]
        if kind == "level_review":
            x0 = self.width - 2 - w
        elif self.align(lab) == "right":
            x0 = self.x(lab["lab_x"]) - 3 - w
        else:
            x0 = self.x(lab["lab_x"]) + 3
        if kind == "knee_review":
            anchor = 0.0
        elif kind == "knee_replay":
            anchor = float(self.height)
        else:
            anchor = self.y(lab["lab_y"])
        y = anchor + dy
        y0, y1 = (y, y + FONT_PX + 1) if baseline == "top" else (y - FONT_PX - 1, y)
        return (x0, x0 + w, y0, y1)


def _rules(part: pl.DataFrame, px: _Px) -> list[tuple[float, float, float, float]]:
    """The panel's horizontal rules as lines (x0, y0, x1, y1) in pixels: the review's levels
    (across the panel) and the replay's segments (from their level to their level at the
    end)."""
    out = []
    if "pub_y" in part.columns:
        for (v,) in part.filter(pl.col("pub_y").is_not_null()).select("pub_y").rows():
            out.append((0.0, px.y(v), float(px.width), px.y(v)))
    seg = part.filter(pl.col("layer") == "segment")
    if not seg.is_empty() and "y_end" in seg.columns:
        for x0, x1, a, b in seg.select("x_gb", "x2_gb", "y", "y_end").rows():
            out.append((px.x(x0), px.y(a), px.x(x1), px.y(b)))
    return out


def _crosses(box, line, margin: float = 1.0) -> bool:
    """Whether a line (x0, y0, x1, y1) passes within ``margin`` px of a box."""
    x0, y0, x1, y1 = line
    lo, hi = max(box[0], x0), min(box[1], x1)
    if lo > hi:
        return False
    at = (lambda x: y0) if x1 == x0 else (lambda x: y0 + (y1 - y0) * (x - x0) / (x1 - x0))
    ya, yb = sorted((at(lo), at(hi)))
    return ya < box[3] + margin and box[2] - margin < yb


def _max(df: pl.DataFrame, cols: list[str]) -> float:
    vals: list[float] = []
    for c in cols:
        v = df[c].cast(pl.Float64).max() if c in df.columns else None
        if isinstance(v, (int, float)) and not math.isnan(v):
            vals.append(float(v))
    return max(vals, default=0.0)


def _labels(part: pl.DataFrame, *, x_unit: str, y_unit: str) -> list[dict]:
    """One panel's labels in placing order: review knees, replay knees, review levels,
    replay levels (each kind by position)."""
    out: list[dict] = []

    def rows(layer: str, col: str) -> pl.DataFrame:
        if col not in part.columns:
            return part.clear()
        return part.filter((pl.col("layer") == layer) & pl.col(col).is_not_null()).sort(col)

    for (v,) in rows("published", "pub_x_gb").select("pub_x_gb").unique().sort("pub_x_gb").rows():
        out.append(_lab("knee_review", "review", f"{number(v)} {x_unit}", x=v))
    for (v,) in rows("breakpoint", "x_gb").select("x_gb").unique().sort("x_gb").rows():
        out.append(_lab("knee_replay", "replay", f"{number(v)} {x_unit}", x=v))
    for (v,) in rows("published", "pub_y").select("pub_y").unique().sort("pub_y").rows()[::-1]:
        out.append(_lab("level_review", "review", f"{number(v)} {y_unit}", y=v))
    seg = rows("segment", "x_gb")
    if "y_end" in seg.columns:  # the chart's segments always carry it; a bare frame may not
        for x, y, y_end in seg.select("x_gb", "y", "y_end").unique().sort("x_gb").rows():
            a, b = number(y), number(y_end)
            out.append(_lab("level_replay", "replay", f"{a}{'' if a == b else '→' + b} {y_unit}",
                            x=x, y=y))  # fmt: skip
    return out


def _lab(kind: str, who: str, value: str, *, x: float | None = None, y: float | None = None):
    """One label: ``who`` (review or replay) and the value with its unit."""
    text = f"{who} {value}".strip()
    return {"kind": kind, "who": WHO[who], "text": text, "lab_x": x, "lab_y": y}


def _overlap(a, b, margin: float = 1.0) -> bool:
    """Whether two boxes (x0, x1, y0, y1) come within ``margin`` px of each other."""
    return (
        a[0] < b[1] + margin
        and b[0] < a[1] + margin
        and a[2] < b[3] + margin
        and b[2] < a[3] + margin
    )
