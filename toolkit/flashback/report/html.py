"""Self-contained HTML: every chart rendered by an inlined Vega bundle, no network requests.

The Vega/Vega-Lite/Vega-Embed JavaScript comes from vl-convert (bundled in its wheel), is
inlined once in ``<head>``, and each chart is embedded from its Vega-Lite spec. Figures are
also written beside the report as PNG and SVG.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

import altair as alt
import polars as pl
import vl_convert as vlc

from flashback._io import write_bytes
from flashback.figures._theme import THEME_NAME
from flashback.figures.page import script_json, vega_bundle


@dataclasses.dataclass
class Section:
    """One section of the report: a title, prose paragraphs, named charts and captioned tables."""

    title: str
    paragraphs: list[str] = dataclasses.field(default_factory=list)
    charts: list[tuple[str, alt.TopLevelMixin]] = dataclasses.field(default_factory=list)
    tables: list[tuple[str, pl.DataFrame]] = dataclasses.field(default_factory=list)
    #: one line per replay shown: "<protocol>: PTS-conformant run" or its departures
    conformance: list[str] = dataclasses.field(default_factory=list)
    #: the labels of the section's replays, one list per step in the order they ran (step
    #: names and their parts, conditions, tests, variants;
    #: :func:`flashback.report.reviews.common.procedure`), written as the section's
    #: ``data-procedure``: its charts show them in this order
    procedure: list[list[str]] = dataclasses.field(default_factory=list)

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")


def _fmt(v: object) -> str:
    """A table cell: missing values and floats as the CLI's tables show them
    (:func:`flashback._text.fmt_value`), anything else as its text; HTML-escaped."""
    from flashback._text import fmt_value

    return html.escape(fmt_value(v) if v is None or isinstance(v, float) else str(v))


def table_html(df: pl.DataFrame, *, caption: str = "", max_rows: int = 200) -> str:
    """A plain HTML table of ``df`` (first ``max_rows`` rows); columns with no value in any
    row are left out."""
    if df.height:
        df = df.select([c for c in df.columns if df[c].null_count() < df.height])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in df.columns)
    rows = []
    for r in df.head(max_rows).iter_rows():
        rows.append("<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in r) + "</tr>")
    more = f"<p class='more'>… {len(df) - max_rows} more rows</p>" if len(df) > max_rows else ""
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1200px;color:#222;padding:0 1rem}
h1{font-size:1.7rem}h2{margin-top:2.5rem;border-bottom:1px solid #ddd;padding-bottom:.3rem}
nav a{margin-right:1rem}
.chart{margin:1rem 0;min-height:60px;max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:1rem 0;font-size:.85rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3rem 0}
.more{color:#777;font-size:.8rem}
"""


def chart_alt(spec: dict, name: str) -> str:
    """Alt text of a chart: its title (or ``name``) and what its axes show, e.g.
    ``Puget: write throughput — MB/s against Host data written (GB)``."""
    title = spec.get("title")
    title = title.get("text") if isinstance(title, dict) else title
    titles = []
    for part in [spec, *spec.get("layer", []), *spec.get("vconcat", []), *spec.get("hconcat", [])]:
        enc = part.get("encoding", {}) if isinstance(part, dict) else {}
        for ch in ("y", "x"):
            t = enc.get(ch, {}).get("title") if isinstance(enc.get(ch), dict) else None
            if isinstance(t, str) and t not in titles:
                titles.append(t)
    head = " ".join(title) if isinstance(title, list) else str(title or name)
    return f"{head} — {' against '.join(titles[:2])}" if len(titles) >= 2 else head


def svg_with_title(svg: str, text: str) -> str:
    """``svg`` with ``text`` as its ``<title>`` (what screen readers and tooltips read)."""
    end = svg.find(">", svg.find("<svg"))
    return svg[: end + 1] + f"<title>{html.escape(text)}</title>" + svg[end + 1 :]


def _spec(chart: alt.TopLevelMixin) -> dict:
    """The chart's Vega-Lite spec with flashback's theme (whatever theme the session has)."""
    with alt.theme.enable(THEME_NAME), alt.data_transformers.disable_max_rows():
        return chart.to_dict()


def write_report(
    sections: Iterable[Section],
    out_dir: str | os.PathLike[str],
    *,
    title: str = "flashback report",
    subtitle: str = "",
    figure_formats: tuple[str, ...] = ("png", "svg"),
) -> Path:
    """Writes ``out_dir/report.html`` and ``out_dir/figures/<section>-<chart>.{png,svg}``.

    Returns the report path. The HTML needs nothing but itself: no network requests.
    """
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    sections = list(sections)
    body, embeds = [], []
    nav = " ".join(f"<a href='#{s.slug}'>{html.escape(s.title)}</a>" for s in sections)
    for s in sections:
        proc = f" data-procedure='{html.escape(json.dumps(s.procedure))}'" if s.procedure else ""
        body.append(f"<section id='{s.slug}'{proc}><h2>{html.escape(s.title)}</h2>")
        body.extend(f"<p class='conformance'>{html.escape(c)}</p>" for c in s.conformance)
        body.extend(f"<p>{html.escape(p)}</p>" for p in s.paragraphs)
        for name, chart in s.charts:
            cid = f"chart-{s.slug}-{re.sub(r'[^a-z0-9]+', '-', name.lower())}"
            spec = _spec(chart)
            alt_text = chart_alt(spec, name)
            body.append(
                f"<div class='chart' id='{cid}' data-chart='{html.escape(name)}' role='img'"
                f" aria-label='{html.escape(alt_text)}'></div>"
            )
            embeds.append((cid, spec))
            for fmt in figure_formats:
                path = out / "figures" / f"{cid.removeprefix('chart-')}.{fmt}"
                if fmt == "png":
                    write_bytes(path, vlc.vegalite_to_png(spec, scale=2), overwrite=True)
                elif fmt == "svg":
                    write_bytes(
                        path,
                        svg_with_title(vlc.vegalite_to_svg(spec), alt_text).encode(),
                        overwrite=True,
                    )
        for caption, df in s.tables:
            body.append(table_html(df, caption=caption))
        body.append("</section>")
    script = "\n".join(
        f"vegaEmbed({script_json('#' + cid)}, {script_json(spec)}, {{renderer: 'svg', actions: false}})"
        f".then(() => {{ document.getElementById({script_json(cid)}).dataset.drawn = '1'; }})"
        f".catch(e => console.error({script_json(f'chart {cid} failed: ')} + e));"
        for cid, spec in embeds
    )
    doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="icon" href="data:,">
<style>{_CSS}</style>
<script>{vega_bundle()}</script>
</head><body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(subtitle)}</p>
<nav>{nav}</nav>
{"".join(body)}
<script>{script}</script>
</body></html>
"""
    path = out / "report.html"
    write_bytes(path, doc.encode("utf-8"), overwrite=True)
    return path
