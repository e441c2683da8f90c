"""Every bar of the report's bar charts sits beside the label naming its data.

The BeHardware chart is built as the report builds it (a real replay at a small scale),
drawn to SVG by vl-convert and laid out by headless Chromium; each bar's own data (its ARIA
label) must name the y-axis label whose row it occupies, and each label must sit within
the bars of its group (bars keyed by step name once sat off-centre, beside the next label).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.chromium import Chromium, chromium_binary

pytestmark = pytest.mark.skipif(
    chromium_binary() is None, reason="chromium is not installed (make test installs it)"
)

GEOMETRY = """(() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; };
  const labels = [...document.querySelectorAll('.role-axis-label text')]
    .map(t => ({text: t.textContent, y: (box(t)[0] + box(t)[1]) / 2}));
  const bars = [...document.querySelectorAll('.mark-rect.role-mark path')]
    .map(p => ({aria: p.getAttribute('aria-label') || '', top: box(p)[0], bottom: box(p)[1]}));
  return {labels, bars};
})()"""


def _check(svg: str, tmp_path: Path, *, group_field: str) -> int:
    path = tmp_path / "chart.svg"
    path.write_text(svg, encoding="utf-8")
    with Chromium() as b:
        b.navigate(path.as_uri())
        g = b.wait_for(GEOMETRY, timeout_s=20)
    bars = g["bars"]
    assert bars, "no bars drawn"
    groups: dict[str, list[dict]] = {}
    for bar in bars:
        fields = dict(kv.split(": ", 1) for kv in bar["aria"].split("; ") if ": " in kv)
        groups.setdefault(fields[group_field], []).append(bar)
    labels = [lab for lab in g["labels"] if lab["text"] in groups]
    assert sorted(lab["text"] for lab in labels) == sorted(groups)
    for bar in bars:
        mid = (bar["top"] + bar["bottom"]) / 2
        nearest = min(labels, key=lambda lab: abs(lab["y"] - mid))
        assert f"{group_field}: {nearest['text']}" in bar["aria"], (bar, nearest)
    for lab in labels:
        own = groups[lab["text"]]
        assert min(b["top"] for b in own) <= lab["y"] <= max(b["bottom"] for b in own), lab
    return len(bars)


def test_behardware_bars_sit_beside_their_labels(tmp_path):
    import vl_convert as vlc

    from flashback.report.reviews import behardware

    section, _ = behardware.build(scale="1/256", progress=False)
    (chart,) = [c for name, c in section.charts if name == "states"]
    n = _check(vlc.vegalite_to_svg(chart.to_dict()), tmp_path, group_field="test")
    assert n == 6  # random and sequential writes, each new, used and after TRIM


def test_the_check_catches_a_bar_beside_the_wrong_label(tmp_path):
    """Bars keyed by step (one state per group, offset by state) fail the check."""
    import polars as pl
    import vl_convert as vlc

    from flashback import figures

    frame = pl.DataFrame(
        {
            "step": ["random_new", "random_used", "random_trim"],
            "condition": ["fresh", "used", "after_trim"],
            "value": [170.0, 130.0, 165.0],
        }
    )
    chart = figures.condition_bars(frame, group="step")
    with pytest.raises(AssertionError):
        _check(vlc.vegalite_to_svg(chart.to_dict()), tmp_path, group_field="step")
