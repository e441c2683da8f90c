"""The review's marks said on the chart (#25 item 7): ``performance_vs_written(published=)``
gives a legend naming the review's and the replay's knees and levels and a short label on
each, made from the marks passed in and placed so that no two collide — checked in the spec
and in the scene vl-convert renders offline (the README picture's inputs, and a crowded
panel)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import flashback.figures as ff
from flashback.figures import _marks
from flashback.figures.written import PUBLISHED_COLOR

ROOT = Path(__file__).resolve().parents[1]


def curves(*, seed: int = 3) -> pl.DataFrame:
    """Two tests × two data types, one point per 9.2 GB loop."""
    rng = np.random.default_rng(seed)
    gb = np.arange(1, 201) * 9.2
    parts = []
    for data, base in (("incompressible", 190.0), ("compressible", 480.0)):
        for test in ("seq", "rand4k_qd32"):
            level = np.where(gb < 60, base, base * 0.7)
            parts.append(
                pl.DataFrame(
                    {"gb": gb, "write_mbps": level + rng.normal(0, 2, gb.size)}
                ).with_columns(test=pl.lit(test), data=pl.lit(data))
            )
    return pl.concat(parts)


def fitted(knees_gb: list[float], levels: list[float], test: str = "seq"):
    """Segments (flat levels) and breakpoints of one test, in GB."""
    edges = [9.2, *knees_gb, 1840.0]
    seg = pl.DataFrame(
        {
            "test": [test] * len(levels),
            "x_start": edges[:-1],
            "x_end": edges[1:],
            "level": levels,
            "level_lo": [v - 3 for v in levels],
            "level_hi": [v + 3 for v in levels],
        }
    )
    bp = pl.DataFrame({"test": [test] * len(knees_gb), "x": knees_gb, "x_lo": knees_gb,
                       "x_hi": knees_gb})  # fmt: skip
    return seg, bp


def published(knees_gb: list[float], levels: list[float], test: str = "seq") -> pl.DataFrame:
    n = len(knees_gb) + len(levels)
    return pl.DataFrame(
        {
            "test": [test] * n,
            "x": [*knees_gb, *[None] * len(levels)],
            "y": [*[None] * len(knees_gb), *levels],
            "label": [f"review: mark {i}" for i in range(n)],
        },
        schema={"test": pl.String, "x": pl.Float64, "y": pl.Float64, "label": pl.String},
    )


def chart(knees, levels, pub_knees, pub_levels):
    seg, bp = fitted(knees, levels)
    return ff.performance_vs_written(
        curves(), x="gb", segments=seg, breakpoints=bp, published=published(pub_knees, pub_levels)
    )


def labels_in(d: dict) -> list[dict]:
    (data,) = d["datasets"].values()
    return [r for r in data if r.get("layer") == "label"]


def test_every_knee_and_level_is_labelled_from_the_marks_passed_in():
    # values no code path writes: the labels can only come from these frames
    d = chart([57.3], [187.2, 131.6], [33.0, 412.0], [147.0]).to_dict()
    got = {(r["test"], r["label"]) for r in labels_in(d)}
    want = {("seq", f"review {v:.0f} GB") for v in (33.0, 412.0)} | {
        ("seq", "review 147 MB/s"),
        ("seq", "replay 57.3 GB"),  # three significant digits
        ("seq", "replay 187 MB/s"),
        ("seq", "replay 132 MB/s"),
    }
    assert got == want  # only the panel the marks belong to
    texts = [m for m in _walk(d) if m.get("mark", {}) and _type(m["mark"]) == "text"]
    assert texts and all(m["encoding"]["text"]["field"] == "label" for m in texts)
    # one legend names the data types and the two kinds of marks, the review's purple
    scale = next(
        m["encoding"]["color"]["scale"]
        for m in _walk(d)
        if m.get("encoding", {}).get("color", {}).get("field") == "who"
    )
    assert scale["domain"] == ["incompressible", "compressible", *_marks.WHO.values()]
    colour = dict(zip(scale["domain"], scale["range"], strict=True))
    assert colour[_marks.WHO["review"]] == PUBLISHED_COLOR
    assert "resolve" not in json.dumps(d).replace('"resolve": {"scale": {"y"', "")


def test_a_chart_without_the_reviews_marks_has_no_labels():
    seg, bp = fitted([57.3], [187.2, 131.6])
    d = ff.performance_vs_written(curves(), x="gb", segments=seg, breakpoints=bp).to_dict()
    assert labels_in(d) == []
    assert not [m for m in _walk(d) if m.get("mark") and _type(m["mark"]) == "text"]


def test_the_legend_names_only_the_marks_drawn():
    # the notebook's chart has the review's marks and no fitted ones: "replay (fitted)" in
    # its legend named nothing on the chart
    d = ff.performance_vs_written(curves(), x="gb", published=published([40.0], [160.0]))
    svg = _render_svg(d.to_dict())
    assert _marks.WHO["review"] in svg and _marks.WHO["replay"] not in svg
    seg, bp = fitted([57.3], [187.2, 131.6])
    d = ff.performance_vs_written(
        curves(), x="gb", segments=seg, breakpoints=bp, published=published([40.0], [160.0])
    )
    assert _marks.WHO["replay"] in _render_svg(d.to_dict())


def _render_svg(vl: dict) -> str:
    import vl_convert as vlc

    return vlc.vegalite_to_svg(vl)


def test_a_sloped_segment_is_labelled_with_both_ends():
    seg, bp = fitted([57.3], [187.2, 131.6])
    seg = seg.with_columns(level_end=pl.Series([187.2, 124.4]))
    d = ff.performance_vs_written(
        curves(), x="gb", segments=seg, breakpoints=bp, published=published([40.0], [])
    ).to_dict()
    assert "replay 132→124 MB/s" in {r["label"] for r in labels_in(d)}


def _walk(spec):
    if isinstance(spec, dict):
        yield spec
        for v in spec.values():
            yield from _walk(v)
    elif isinstance(spec, list):
        for v in spec:
            yield from _walk(v)


def _type(mark) -> str:
    return mark if isinstance(mark, str) else mark["type"]


# ------------------------------------------------------------ rendered (vl-convert scene)


def scene_labels(vl: dict) -> list[dict]:
    """Every label (text starting "review "/"replay ") and rule of the rendered scene, with
    its box in the chart's pixels and its panel (the group it is drawn in)."""
    import vl_convert as vlc

    out: list[dict] = []

    def visit(mark: dict, ox: float, oy: float, panel: int) -> None:
        for item in mark.get("items", []):
            if mark["marktype"] == "group":
                x, y = ox + item.get("x", 0), oy + item.get("y", 0)
                for child in item.get("items", []):
                    visit(child, x, y, id(item) if "height" in item else panel)
            elif (
                mark["marktype"] == "text"
                and str(item.get("text", "")).startswith(("review ", "replay "))
                and item["text"] not in _marks.WHO.values()  # the legend's entries
            ):
                size = item.get("fontSize", 11)
                w = len(item["text"]) * size * 0.6  # DejaVu Sans: ~0.6 em a character
                x = ox + item["x"] + item.get("dx", 0)
                y = oy + item["y"] + item.get("dy", 0)
                x0 = {"left": x, "right": x - w, "center": x - w / 2}[item.get("align", "left")]
                y0 = {"top": y, "bottom": y - size, "middle": y - size / 2}.get(
                    item.get("baseline", "alphabetic"), y - 0.8 * size
                )
                out.append({"text": item["text"], "panel": panel, "box": (x0, x0 + w, y0, y0 + size),
                            "anchor": (ox + item["x"], oy + item["y"])})  # fmt: skip

    visit(vlc.vegalite_to_scenegraph(vl)["scenegraph"], 0.0, 0.0, 0)
    return out


def collisions(labels: list[dict]) -> list[tuple[str, str]]:
    hits = []
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            (ax0, ax1, ay0, ay1), (bx0, bx1, by0, by1) = a["box"], b["box"]
            if a["panel"] == b["panel"] and ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1:
                hits.append((a["text"], b["text"]))
    return hits


def test_the_readme_figures_labels_render_offline_without_colliding():
    from flashback.report import readme

    doc = json.loads((ROOT / readme.DIR / f"{readme.STEM}.inputs.json").read_text())
    inputs = readme.inputs_from_json(doc)
    labels = scene_labels(readme.spec(inputs))
    pub = inputs["published"]
    want = {f"review {_marks.number(v)} GB" for v in pub["x"].drop_nulls()}
    want |= {f"review {_marks.number(v)} MB/s" for v in pub["y"].drop_nulls()}
    want |= {f"replay {_marks.number(v)} GB" for v in inputs["breakpoints"]["x"]}
    texts = {lab["text"] for lab in labels}
    assert want <= texts, want - texts  # e.g. review 40 GB, review 160 MB/s, replay 141 GB
    assert collisions(labels) == []


def test_a_crowded_panel_moves_labels_apart():
    # review knees 5 GB apart and two review levels 4 MB/s apart: drawn where they first
    # go, their labels would sit on one another
    c = chart([57.3, 63.0], [187.2, 133.0, 131.6], [40.0, 45.0, 50.0], [160.0, 164.0])
    labels = scene_labels(c.to_dict())
    assert len([lab for lab in labels if lab["text"].startswith("review")]) == 5
    assert collisions(labels) == []
    # each knee label starts at its rule (3 px to its right), whatever line it moved to
    by_text = {lab["text"]: lab for lab in labels}
    x40, x50 = by_text["review 40 GB"]["anchor"][0], by_text["review 50 GB"]["anchor"][0]
    assert x50 - x40 == pytest.approx(10 / 2000 * 520, abs=0.5)  # 10 GB on a 0-2000 GB axis


def test_a_knee_near_the_right_edge_is_labelled_on_its_left():
    # a notebook stopping at 400 GB draws the review's 380 GB knee 20 px from the edge: its
    # label ran past the panel into the legend
    labels = scene_labels(chart([57.3], [187.2, 131.6], [1700.0], [147.0]).to_dict())
    (lab,) = [lab for lab in labels if lab["text"] == "review 1,700 GB"]
    assert lab["box"][1] <= lab["anchor"][0]  # it ends at its rule
    (near,) = [lab for lab in labels if lab["text"] == "replay 57.3 GB"]
    assert near["box"][0] >= near["anchor"][0]  # one with room starts at its rule
