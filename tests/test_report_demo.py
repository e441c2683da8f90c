"""`flashback report` end to end (quick scales): every review section, every chart rendered
in headless Chromium, no console errors, no request leaving the file."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.chromium import Chromium, chromium_binary

pytestmark = pytest.mark.skipif(
    chromium_binary() is None, reason="chromium is not installed (make test installs it)"
)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("report")
    proc = subprocess.run(
        [sys.executable, "-m", "flashback", "report", "--quick", "--no-progress", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / "report.html", proc.stdout


def test_summary_and_files(report):
    path, stdout = report
    assert "report written to" in stdout and str(path.resolve()) in stdout
    for review in (
        "puget",
        "behardware",
        "xbit",
        "anandtech-consistency",
        "anandtech-trim",
        "anand2009",
        "snia-pts",
    ):
        assert review in stdout
    html = path.read_text()
    ids = re.findall(r"<div class='chart' id='chart-([^']+)'", html)
    assert len(ids) >= 12
    for cid in ids:
        png = path.parent / "figures" / f"{cid}.png"
        assert png.read_bytes()[:4] == b"\x89PNG", cid
        assert (path.parent / "figures" / f"{cid}.svg").read_text().lstrip().startswith("<svg")
    assert "<script src=" not in html  # everything inline


def test_every_chart_renders_offline(report):
    path, _ = report
    with Chromium() as b:
        b.navigate(path.as_uri())
        total = b.evaluate("document.querySelectorAll('.chart').length")
        done = b.wait_for(
            "[...document.querySelectorAll('.chart')].filter(d => d.querySelector('svg, canvas')).length"
            f" === {total}",
            timeout_s=60,
        )
        b.pump(0.5)
        missing = b.evaluate(
            "[...document.querySelectorAll('.chart')].filter(d => !d.querySelector('svg, canvas')).map(d => d.id)"
        )
        assert done and missing == [], missing
        assert b.console_errors == [] and b.exceptions == [], (b.console_errors, b.exceptions)
        assert b.failed_requests == []
        # a picture of the page as drawn, beside the report, for a person to look at
        shot = b.screenshot(path.parent / "report-screenshot.png")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
        assert all(u.startswith(("file:", "data:", "about:")) for u in b.requests), b.requests


def _tables(html: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(caption, header, rows) of every table in the report, cell text as printed."""
    out = []
    for body in re.findall(r"<table>(.*?)</table>", html, re.S):
        cap = re.search(r"<caption>(.*?)</caption>", body, re.S)
        head = re.findall(r"<th>(.*?)</th>", body, re.S)
        rows = [
            re.findall(r"<td>(.*?)</td>", tr, re.S)
            for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S)
        ]
        out.append((cap.group(1) if cap else "", head, [r for r in rows if r]))
    return out


def test_no_table_has_an_empty_column(report):
    path, _ = report
    for caption, head, rows in _tables(path.read_text()):
        for i, col in enumerate(head):
            assert any(r[i] != "—" for r in rows), f"{caption!r}: column {col!r} is empty"


def test_a_breakpoint_is_one_value_in_text_and_tables(report):
    """Puget's change points: the paragraph, the segments table and the published-vs-
    replayed table quote the same GB (they once said 136.8 and 150.4 for one change)."""
    from flashback.replay.procedures.puget_checks import PUB_TEST

    path, _ = report
    html = path.read_text()
    section = html[html.index("<section id='puget") :]
    section = section[: section.index("</section>")]
    tables = {cap.split(" (")[0]: (head, rows) for cap, head, rows in _tables(section)}
    head, rows = tables["published vs replayed"]
    col = {c: i for i, c in enumerate(head)}
    checked = 0
    for test, pub in PUB_TEST.items():
        found = [
            r[col["replayed"]]
            for r in rows
            if r[col["test"]] == f"{pub}_write"
            and re.fullmatch(r"breakpoint_\d+_gb", r[col["metric"]])
            and r[col["replayed"]] != "—"
        ]
        seg_head, seg_rows = tables["segments"]
        sc = {c: i for i, c in enumerate(seg_head)}
        starts = [r[sc["x_start"]] for r in seg_rows if r[sc["test"]] == test][1:]
        if not found:
            continue
        assert found == starts[: len(found)], (test, found, starts)
        m = re.search(rf"{test}: ((?:[\d,]+(?:\.\d)? GB(?:, )?)+)", section)
        quoted = re.findall(r"([\d,]+(?:\.\d)?) GB", m.group(1))
        assert quoted[: len(found)] == found, (test, quoted, found)
        checked += 1
    assert checked >= 1  # the quick puget replay finds change points in one or more tests


#: every chart of every section as the reader sees it: the section's procedure, and per
#: chart its legends (label, symbol colour), facet headers and axis labels with positions
CHARTS = """(() => [...document.querySelectorAll('section')].map(sec => {
  const at = e => { const r = e.getBoundingClientRect(); return [r.top, r.left]; };
  const text = (root, sel) => [...root.querySelectorAll(sel)]
    .map(t => ({label: t.textContent, at: at(t)}));
  return {
    id: sec.id,
    procedure: sec.dataset.procedure ? JSON.parse(sec.dataset.procedure) : null,
    charts: [...sec.querySelectorAll('.chart')].map(div => ({
      id: div.id,
      legends: [...div.querySelectorAll('.role-legend')].map(lg => {
        const sym = [...lg.querySelectorAll('.role-legend-symbol path')];
        return text(lg, '.role-legend-label text').map((t, i) => ({...t,
          fill: sym[i].getAttribute('fill'), stroke: sym[i].getAttribute('stroke'),
          opacity: sym[i].getAttribute('fill-opacity') || sym[i].getAttribute('opacity')}));
      }),
      headers: [...div.querySelectorAll('.role-row-header, .role-column-header')]
        .map(h => text(h, '.role-title-text text')),
      axes: [...div.querySelectorAll('.role-axis')].map(ax => text(ax, '.role-axis-label text')),
    })),
  };
}))()"""


def _drawn_charts(report_html: Path) -> list[dict]:
    with Chromium() as b:
        b.send("Emulation.setDeviceMetricsOverride", width=1280, height=900,
               deviceScaleFactor=1, mobile=False)  # fmt: skip
        b.navigate(report_html.as_uri())
        # counted when the page has loaded (a count taken earlier can miss charts of a
        # large report still being parsed)
        drawn = b.wait_for(
            "document.readyState === 'complete' && document.querySelectorAll("
            "'.chart[data-drawn]').length === document.querySelectorAll('.chart').length",
            timeout_s=120,
        )
        assert drawn, "not every chart was drawn"
        return b.evaluate(CHARTS)


def _color(entry: dict) -> str:
    fill = entry["fill"]
    return (fill if fill not in (None, "", "none", "transparent") else entry["stroke"]).lower()


def colour_and_order_faults(sections: list[dict]) -> list[str]:
    """What breaks 'one colour per label in every chart' and 'procedure order' in the drawn
    report: a label in two colours, two labels of one legend in one colour, a legend, facet
    headers or axis labels out of the section's procedure order, or a chart placed before a
    chart of an earlier step."""
    faults: list[str] = []
    colours: dict[str, dict[str, str]] = {}
    for sec in sections:
        for ch in sec["charts"]:
            for legend in ch["legends"]:
                if len({e["opacity"] for e in legend}) > 1:
                    continue  # an opacity legend (the steady-state bands), not a colour one
                by_colour: dict[str, str] = {}
                for e in legend:
                    colours.setdefault(e["label"], {})[_color(e)] = ch["id"]
                    other = by_colour.setdefault(_color(e), e["label"])
                    if other != e["label"]:
                        faults.append(f"{ch['id']}: {other!r} and {e['label']!r} share {_color(e)}")
    for label, where in colours.items():
        if len(where) > 1:
            faults.append(f"{label!r} is drawn in {len(where)} colours: {where}")
    for sec in sections:
        if sec["id"] == "summary":
            continue
        if not sec["procedure"]:
            faults.append(f"{sec['id']}: no procedure")
            continue
        rank: dict[str, int] = {}
        for i, labels in enumerate(sec["procedure"]):
            for v in labels:
                rank.setdefault(v, i)
        firsts = []
        for ch in sec["charts"]:
            seqs = [*ch["legends"], *ch["headers"], *ch["axes"]]
            for seq in seqs:
                tops = {round(e["at"][0]) for e in seq}
                lefts = {round(e["at"][1]) for e in seq}
                key = (lambda e: e["at"][1]) if len(lefts) > len(tops) else (lambda e: e["at"][0])
                shown = [e["label"] for e in sorted(seq, key=key) if e["label"] in rank]
                if [rank[v] for v in shown] != sorted(rank[v] for v in shown):
                    faults.append(f"{ch['id']}: {shown} out of procedure order")
            ranks = [rank[e["label"]] for seq in seqs for e in seq if e["label"] in rank]
            if ranks:
                firsts.append((min(ranks), ch["id"]))
        if [r for r, _ in firsts] != sorted(r for r, _ in firsts):
            faults.append(f"{sec['id']}: charts out of procedure order: {firsts}")
    return faults


def test_one_colour_per_label_and_procedure_order(report):
    """Every label (a drive state, data type, variant, status) has one colour in every chart
    of the report, and every chart shows its categories — legend entries, panels, bars —
    in the order the review's procedure ran them, charts in that order too. The report once
    drew after_trim purple in one section and tableau blue in another, BeHardware's runs as
    new, trim, used and Puget's tests alphabetically."""
    path, _ = report
    sections = _drawn_charts(path)
    assert sum(len(s["charts"]) for s in sections) >= 12
    legends = [e for s in sections for c in s["charts"] for lg in c["legends"] for e in lg]
    assert {"fresh", "used", "after_trim", "incompressible"} <= {e["label"] for e in legends}
    assert colour_and_order_faults(sections) == []


def test_the_check_finds_a_label_in_two_colours_and_panels_out_of_order():
    def legend(*pairs):
        return [dict(label=lab, fill=c, stroke=None, opacity="1", at=[i * 10, 0])
                for i, (lab, c) in enumerate(pairs)]  # fmt: skip

    def header(*labels):
        return [dict(label=lab, at=[0, i * 100]) for i, lab in enumerate(labels)]

    proc = [["secure_erase"], ["new", "fresh"], ["used"], ["trim", "after_trim"]]
    good = [{"id": "a", "procedure": proc, "charts": [
        {"id": "c1", "legends": [legend(("fresh", "#1"), ("used", "#2"))], "headers": [
            header("new", "used", "trim")], "axes": []},
    ]}]  # fmt: skip
    assert colour_and_order_faults(good) == []
    bad = [{"id": "a", "procedure": proc, "charts": [
        {"id": "c1", "legends": [legend(("fresh", "#1"), ("after_trim", "#3"))], "headers": [
            header("new", "trim", "used")], "axes": []},
        {"id": "c2", "legends": [legend(("after_trim", "#9"))], "headers": [], "axes": []},
    ]}]  # fmt: skip
    faults = colour_and_order_faults(bad)
    assert any("'after_trim' is drawn in 2 colours" in f for f in faults), faults
    assert any("['new', 'trim', 'used'] out of procedure order" in f for f in faults), faults
