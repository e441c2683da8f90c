"""The README's picture is what ``make readme-figure`` makes (``flashback.report.readme``):
the committed Vega-Lite spec is what today's figure code makes from the committed inputs,
the inputs were replayed at the demo's scale, and the PNG is that spec drawn at the stated
pixel density. (PNG bytes vary with the renderer, so the spec and its inputs are held to the
code, the PNG to the spec's size.) Under ``-m slow`` the inputs are replayed again."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from flashback.report import readme

ROOT = Path(__file__).resolve().parents[1]
DIR = ROOT / readme.DIR


def _stored() -> tuple[dict, dict]:
    doc = json.loads((DIR / f"{readme.STEM}.inputs.json").read_text())
    spec = json.loads((DIR / f"{readme.STEM}.vl.json").read_text())
    return doc, spec


def test_the_readme_shows_the_picture_the_make_target_writes():
    text = (ROOT / "README.md").read_text()
    assert f"]({readme.DIR}/{readme.STEM}.png)" in text
    assert "make readme-figure" in text
    assert "python -m flashback.report.readme data/readme" in (ROOT / "Makefile").read_text()


def test_the_readme_says_whose_marks_the_picture_draws():
    """#25 item 7: nothing said what the purple rules were. The paragraph under the picture
    names the review's marks it draws (from the stored inputs) and the replay's."""
    doc, _ = _stored()
    text = (ROOT / "README.md").read_text()
    para = text[text.index(f"]({readme.DIR}/{readme.STEM}.png)") :].split("make readme-figure")[0]
    pub = readme.inputs_from_json(doc)["published"]
    for v in [*pub["x"].drop_nulls().unique(), *pub["y"].drop_nulls().unique()]:
        assert f"{v:g}" in para, v
    assert "review's" in para and "replay's" in para


def test_the_spec_is_what_the_figure_code_makes_from_the_stored_inputs():
    doc, spec = _stored()
    assert doc["scale"] == readme.demo_scale()  # the demo's scale, not a smaller one
    assert readme.spec(readme.inputs_from_json(doc)) == spec, (
        "the README picture is stale: run `make readme-figure` and commit data/readme/"
    )


def test_a_changed_input_changes_the_spec():
    """The comparison above can fail: one changed level gives another spec."""
    doc, spec = _stored()
    inputs = readme.inputs_from_json(doc)
    curves = inputs["curves"]
    inputs["curves"] = curves.with_columns(curves["write_mbps"] * 1.01)
    assert readme.spec(inputs) != spec


def test_the_png_is_the_spec_drawn_at_the_stated_density():
    import vl_convert as vlc

    _, spec = _stored()
    png = (DIR / f"{readme.STEM}.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    svg = vlc.vegalite_to_svg(spec)
    head = svg[: svg.index(">")]
    w = float(head.split('width="')[1].split('"')[0])
    h = float(head.split('height="')[1].split('"')[0])
    assert (width, height) == (round(w * readme.PNG_SCALE), round(h * readme.PNG_SCALE))


@pytest.mark.slow
def test_the_stored_inputs_are_what_the_replay_gives_at_that_scale():
    from polars.testing import assert_frame_equal

    doc, _ = _stored()
    stored = readme.inputs_from_json(doc)
    fresh = readme.replay_inputs(doc["scale"])
    for name, frame in stored.items():
        assert_frame_equal(fresh[name], frame, check_exact=False, rel_tol=1e-9)
