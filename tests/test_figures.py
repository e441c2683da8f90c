"""flashback.figures: chart specs (marks, encodings, titles with units, data), 100k-row
inputs without MaxRowsError, and real PNG/SVG files from save_chart. No pixel comparisons."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import altair as alt
import numpy as np
import polars as pl
import pytest

import flashback as fb
import flashback.figures as ff
from flashback.errors import AnalysisError, ParameterError

MAX_ROWS = 5000  # Altair's default limit


# ---------------------------------------------------------------- inputs (design schema)


def intervals(n: int = 2000, *, seed: int = 0, steps=("fresh",), sim: bool = False):
    """An interval frame in the design's capture schema: a write cliff at 30 % of the run."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, n + 1, dtype=float)
    cliff = np.where(t < 0.3 * n, 1.0, 0.35)
    iops = 40000 * cliff * rng.lognormal(0, 0.25, n)
    wbytes = (iops * 4096).astype(np.uint64)
    lat = 1e6 / np.maximum(iops, 1) * 32
    cols = {
        "t_s": t,
        "interval_s": np.ones(n),
        "write_ios": iops.astype(np.uint64),
        "write_bytes": wbytes,
        "write_iops": iops,
        "write_mbps": wbytes / 1e6,
        "write_lat_mean_us": lat,
        "write_lat_p50_us": lat * 0.9,
        "write_lat_p99_us": lat * 3,
        "write_lat_p999_us": lat * 6,
        "write_lat_max_us": lat * 20,
        "host_written_bytes": np.cumsum(wbytes),
        "step": np.repeat(list(steps), -(-n // len(steps)))[:n],
    }
    if sim:
        wa = np.where(t < 0.3 * n, 1.0, 2.8)
        cols["wa"] = wa
        cols["nand_written_bytes"] = np.cumsum(wbytes * wa).astype(np.uint64)
        cols["free_blocks"] = np.maximum(5000 - (t * 8).astype(np.int64), 40).astype(np.uint64)
        # cumulative, like the simulator writes it (the column table says so)
        cols["gc_copied_bytes"] = np.cumsum(wbytes * (wa - 1)).astype(np.uint64)
    return pl.DataFrame(cols)


def loops(n_loops: int = 200, *, seed: int = 1) -> pl.DataFrame:
    """Per-loop summary like the Puget replay: test x data type x loop."""
    rng = np.random.default_rng(seed)
    rows = []
    for data, base in (("incompressible", 190.0), ("compressible", 480.0)):
        for test in ("cdm_seq_write", "cdm_rnd4k_qd32_write"):
            gb = np.arange(1, n_loops + 1) * 9.2e9
            level = np.where(gb < 40e9, base, np.where(gb < 380e9, base * 0.7, base * 0.82))
            rows.append(
                pl.DataFrame(
                    {
                        "host_written_bytes": gb,
                        "write_mbps": level + rng.normal(0, 4, n_loops),
                        "test": test,
                        "data": data,
                    }
                )
            )
    return pl.concat(rows)


def walk(spec):
    """Every dict nested in a Vega-Lite spec."""
    if isinstance(spec, dict):
        yield spec
        for v in spec.values():
            yield from walk(v)
    elif isinstance(spec, list):
        for v in spec:
            yield from walk(v)


def marks(d) -> list[str]:
    out = []
    for node in walk(d):
        m = node.get("mark")
        if m is not None:
            out.append(m if isinstance(m, str) else m["type"])
    return out


def encodings(d) -> list[dict]:
    return [node["encoding"] for node in walk(d) if "encoding" in node]


def titles(d) -> set[str]:
    return {
        str(ch["title"])
        for enc in encodings(d)
        for ch in enc.values()
        if isinstance(ch, dict) and "title" in ch
    }


def datasets(d) -> list[list[dict]]:
    sets = list(d.get("datasets", {}).values())
    sets += [node["values"] for node in walk(d) if isinstance(node.get("values"), list)]
    return sets


def rows(d) -> int:
    return sum(len(s) for s in datasets(d))


# ---------------------------------------------------------------- Puget


def test_performance_vs_written_layers_and_breakpoints():
    seg = pl.DataFrame(
        {
            "x_start": [0.0, 40e9],
            "x_end": [40e9, 1.8e12],
            "level": [190.0, 140.0],
            "level_lo": [186.0, 137.0],
            "level_hi": [194.0, 143.0],
            "test": ["cdm_seq_write"] * 2,
            "data": ["incompressible"] * 2,
        }
    )
    bp = pl.DataFrame({"x": [40e9, 380e9], "x_lo": [33e9, 300e9], "x_hi": [47e9, 450e9]})
    chart = ff.performance_vs_written(loops(), segments=seg, breakpoints=bp)
    d = chart.to_dict()
    assert "facet" in d and d["facet"]["row"]["field"] == "test"
    assert marks(d) == ["line", "rect", "rule", "rect", "rule"]
    assert {"Host data written (GB)", "Write (MB/s)"} <= titles(d)
    (data,) = datasets(d)
    layers = {r["layer"] for r in data}
    assert layers == {"curve", "segment", "breakpoint"}
    # x is converted to GB; breakpoints without a test column appear in every panel
    bps = [r for r in data if r["layer"] == "breakpoint"]
    assert sorted({(r["test"], r["x_gb"]) for r in bps}) == sorted(
        (t, x) for t in ("cdm_rnd4k_qd32_write", "cdm_seq_write") for x in (40.0, 380.0)
    )
    assert max(r["x_gb"] for r in data if r["layer"] == "curve") == pytest.approx(200 * 9.2)
    colors = [e["color"] for e in encodings(d) if "field" in e.get("color", {})]
    assert colors and all(c["field"] == "data" for c in colors)


def test_performance_vs_written_draws_the_reviews_marks_beside_the_replayed_ones():
    """Puget's knees (40/380 GB) and 160 MB/s level, as the report passes them: purple dotted
    rules in the test's panel (or every panel without a test), named in the tooltip."""
    pub = pl.DataFrame(
        {
            "test": ["cdm_seq_write", "cdm_seq_write", None],
            "x": [40e9, 380e9, None],
            "y": [None, None, 160.0],
            "label": ["review: knee 40 GB", "review: knee 380 GB", "review: level 160 MB/s"],
        }
    )
    d = ff.performance_vs_written(loops(), published=pub.drop_nulls("test")).to_dict()
    (data,) = datasets(d)
    knees = sorted(r["pub_x_gb"] for r in data if r["layer"] == "published")
    assert knees == [40.0, 380.0]
    from flashback.figures.written import PUBLISHED_COLOR

    # purple through the legend's scale (tests/test_figures_marks.py: labels and legend)
    who = [e["color"] for e in encodings(d) if e.get("color", {}).get("field") == "who"]
    assert who and all(
        dict(zip(c["scale"]["domain"], c["scale"]["range"], strict=True))["review (published)"]
        == PUBLISHED_COLOR
        for c in who
    )
    # a level without a test column is drawn in every panel
    d = ff.performance_vs_written(
        loops(), published=pub.filter(pl.col("test").is_null()).drop("test")
    ).to_dict()
    (data,) = datasets(d)
    levels = {(r["test"], r["pub_y"]) for r in data if r["layer"] == "published"}
    assert levels == {("cdm_rnd4k_qd32_write", 160.0), ("cdm_seq_write", 160.0)}
    with pytest.raises(fb.AnalysisError, match="an x .* or a y"):
        ff.performance_vs_written(loops(), published=pl.DataFrame({"label": ["?"]}))


def test_performance_vs_written_accepts_changepoints_group_column():
    seg = pl.DataFrame(
        {
            "x_start": [0.0],
            "x_end": [1.8e12],
            "level": [150.0],
            "level_lo": [140.0],
            "level_hi": [160.0],
            "group": ["cdm_rnd4k_qd32_write"],
        }
    )
    d = ff.performance_vs_written(loops(), segments=seg).to_dict()
    segs = [r for r in datasets(d)[0] if r["layer"] == "segment"]
    assert [r["test"] for r in segs] == ["cdm_rnd4k_qd32_write"]


def test_performance_vs_written_with_gb_columns():
    # a replay's per-loop frame: GB already, plain `mbps`
    frame = loops().with_columns((pl.col("host_written_bytes") / 1e9).alias("gb_written"))
    frame = frame.rename({"write_mbps": "mbps"}).drop("host_written_bytes")
    d = ff.performance_vs_written(frame, x="gb_written", y="mbps").to_dict()
    assert {"Host data written (GB)", "Throughput (MB/s)"} <= titles(d)
    assert max(r["x_gb"] for r in datasets(d)[0]) == pytest.approx(200 * 9.2)


def test_performance_vs_written_without_test_column_is_one_panel():
    cur = loops().filter(pl.col("test") == "cdm_seq_write").drop("test")
    d = ff.performance_vs_written(cur, y="write_mbps").to_dict()
    assert "facet" not in d and marks(d) == ["line"]


def test_max_avg_bars():
    summary = (
        loops()
        .group_by("test", "data")
        .agg(
            pl.col("write_mbps").max().alias("max_mbps"),
            pl.col("write_mbps").mean().alias("avg_mbps"),
        )
    )
    d = ff.max_avg_bars(summary).to_dict()
    assert marks(d) == ["bar"] and d["facet"]["column"]["field"] == "stat"
    (data,) = datasets(d)
    assert {r["stat"] for r in data} == {"maximum", "average"} and len(data) == 8
    enc = encodings(d)[0]
    assert enc["xOffset"]["field"] == "_c" and enc["y"]["title"] == "Throughput (MB/s)"


# ---------------------------------------------------------------- AnandTech consistency


def consistency_runs() -> pl.DataFrame:
    return pl.concat(
        [
            intervals(2000, seed=s).with_columns(pl.lit(v).alias("variant"))
            for s, v in ((2, "default_op"), (3, "op_25"))
        ]
    )


@pytest.mark.parametrize("scale", ["log", "linear"])
def test_iops_scatter_scales_and_zoom(scale):
    runs = consistency_runs()
    d = ff.iops_scatter(runs, scale=scale, t_min_s=1400, y_max=40000).to_dict()
    assert marks(d) == ["point"] and d["facet"]["column"]["field"] == "variant"
    y = encodings(d)[0]["y"]
    if scale == "log":
        assert y["scale"]["type"] == "log" and "log scale" in y["title"]
    else:
        assert y["scale"]["domain"] == [0, 40000]
    (data,) = datasets(d)
    assert min(r["t_s"] for r in data) >= 1400 and {r["variant"] for r in data} == {
        "default_op",
        "op_25",
    }
    assert "Time (s)" in titles(d)


def test_consistency_panel_three_sets():
    d = ff.consistency_panel(consistency_runs()).to_dict()
    assert len(d["vconcat"]) == 3
    assert [p["title"] for p in d["vconcat"]][0] == "Full run"


def test_iops_scatter_rejects_unknown_scale():
    with pytest.raises(AnalysisError):
        ff.iops_scatter(intervals(100), scale="sqrt")


# ---------------------------------------------------------------- states: bars and series


def test_condition_bars_from_published():
    pub = fb.published(test="as_ssd_seq_write")
    d = ff.condition_bars(pub).to_dict()
    assert marks(d) == ["bar", "text"]
    values = sorted(r["value"] for r in datasets(d)[0])
    assert values == sorted(pub["value"].to_list())
    assert "Throughput (MB/s)" in titles(d)


def test_condition_bars_with_published_ticks():
    replayed = pl.DataFrame(
        {
            "drive": ["sim:intel-530-240g"] * 3,
            "condition": ["clean", "torture", "after_trim"],
            "value": [300.0, 190.0, 200.0],
        }
    )
    pub = fb.published(test="as_ssd_seq_write")
    d = ff.condition_bars(replayed, published=pub).to_dict()
    assert marks(d) == ["bar", "text", "tick"]
    ticks = next(s for s in datasets(d) if s and "published" in s[0])
    # the review's drive name differs from the preset: matched by state, on the preset's bar
    assert {(t["drive"], t["condition"], t["published"]) for t in ticks} == {
        ("sim:intel-530-240g", c, v) for c, v in pub.select("condition", "value").iter_rows()
    }
    # same drive names: matched by drive and state
    d2 = ff.condition_bars(pub, published=pub).to_dict()
    ticks2 = next(s for s in datasets(d2) if s and "published" in s[0])
    assert len(ticks2) == len(pub)


def test_charts_with_published_ticks_say_what_the_ticks_are():
    """#25: the review's marks carried only a tooltip, lost in a PNG; the rendered chart
    says what the black ticks are, and only when it draws them."""
    import vl_convert as vlc

    from flashback.figures.states import TICKS_SAID

    pub = fb.published(test="as_ssd_seq_write")
    said = TICKS_SAID
    for chart in (
        ff.condition_bars(pub, published=pub, title="sequential write"),
        ff.relative_to_fresh(
            pl.DataFrame(
                {"drive": ["a", "a"], "condition": ["fresh", "used"], "value": [200.0, 150.0]}
            ),
            published=pl.DataFrame({"drive": ["a"], "condition": ["used"], "value": [80.0]}),
        ),
    ):
        svg = vlc.vegalite_to_svg(chart.to_dict())
        assert said in svg
    assert said not in vlc.vegalite_to_svg(ff.condition_bars(pub, title="x").to_dict())


def test_relative_to_fresh_from_published_percentages():
    pub = fb.published(source="x-bit", metric="relative_to_fresh_pct").drop_nulls("drive")
    d = ff.relative_to_fresh(pub, already_pct=True).to_dict()
    data = next(s for s in datasets(d) if s and "pct_of_fresh" in s[0])
    assert sorted(r["pct_of_fresh"] for r in data) == sorted(pub["value"].to_list())


def test_relative_to_fresh():
    frame = pl.DataFrame(
        {
            "drive": ["A"] * 4 + ["B"] * 4,
            "condition": ["fresh", "used", "after_idle", "after_trim"] * 2,
            "value": [40000.0, 36000, 37000, 39000, 30000, 25500, 26000, 29000],
        }
    )
    d = ff.relative_to_fresh(frame).to_dict()
    data = next(s for s in datasets(d) if "pct_of_fresh" in s[0])
    by = {(r["drive"], r["condition"]): r["pct_of_fresh"] for r in data}
    assert by[("A", "fresh")] == 100 and by[("B", "used")] == pytest.approx(85.0)
    assert "Performance relative to fresh (%)" in titles(d)
    with pytest.raises(AnalysisError, match="fresh"):
        ff.relative_to_fresh(frame.filter(pl.col("condition") != "fresh"))


def test_new_vs_used_from_published():
    pub = fb.published(test="seq2m_read", metric="avg_mbps")
    d = ff.new_vs_used(pub).to_dict()
    data = datasets(d)[0]
    assert {r["condition"] for r in data} == {"fresh", "used"}
    assert len(data) == len(pub)


def test_step_series_restarts_time_per_step():
    frame = intervals(900, steps=("fresh", "used", "after_trim"))
    d = ff.step_series(frame).to_dict()
    assert marks(d) == ["line"]
    data = datasets(d)[0]
    for step in ("fresh", "used", "after_trim"):
        ts = [r["t_step_s"] for r in data if r["step"] == step]
        assert min(ts) == 0 and max(ts) == 299
    assert {"Time since step start (s)", "Write (MB/s)"} <= titles(d)


def test_step_series_colours_in_the_given_order():
    """BeHardware's sequential runs ran used, TRIM, then new: the legend keeps the order the
    procedure first reached each state (new first), the panels the order the runs ran."""
    frame = intervals(900, steps=("used", "after_trim", "fresh")).with_columns(
        pl.col("step").alias("condition"), pl.col("step").alias("run")
    )
    d = ff.step_series(
        frame, facet="run", color="condition", color_order=["fill", "fresh", "used", "after_trim"]
    ).to_dict()
    assert d["spec"]["encoding"]["color"]["sort"] == ["fresh", "used", "after_trim"]
    assert d["facet"]["column"]["sort"] == ["used", "after_trim", "fresh"]
    plain = ff.step_series(frame, facet="run", color="condition").to_dict()
    assert plain["spec"]["encoding"]["color"]["sort"] == ["used", "after_trim", "fresh"]


def test_step_series_draws_published_marks_in_their_panels():
    """A dip time in its run's panel, a level over a span in its panel, a level without a
    panel in every panel; rows outside the chart's panels are left out."""
    frame = intervals(900, steps=("fresh", "used", "after_trim")).with_columns(
        pl.col("step").alias("run")
    )
    pub = pl.DataFrame(
        {
            "run": ["used", "used", None, "no such run"],
            "label": ["dip", "early low", "level", "elsewhere"],
            "x": [90.0, 0.0, None, 10.0],
            "x2": [None, 30.0, None, None],
            "y": [None, 83.1, 160.0, None],
        }
    )
    d = ff.step_series(frame, facet="run", published=pub.filter(pl.col("run").is_not_null()))
    rows = [r for r in datasets(d.to_dict())[0] if r.get("layer") == "published"]
    assert {(r["run"], r["label"]) for r in rows} == {("used", "dip"), ("used", "early low")}
    everywhere = pub.filter(pl.col("run").is_null()).drop("run")
    rows = [
        r
        for r in datasets(ff.step_series(frame, facet="run", published=everywhere).to_dict())[0]
        if r.get("layer") == "published"
    ]
    assert sorted(r["run"] for r in rows) == ["after_trim", "fresh", "used"]
    assert {r["pub_y"] for r in rows} == {160.0}
    with pytest.raises(AnalysisError, match="an x .* or a y"):
        ff.step_series(frame, published=pl.DataFrame({"label": ["no place"]}))


# ---------------------------------------------------------------- analysis views


def test_latency_percentiles():
    d = ff.latency_percentiles(intervals(3000)).to_dict()
    enc = encodings(d)[0]
    assert enc["y"]["scale"]["type"] == "log" and enc["y"]["title"] == "Write latency (µs)"
    assert {r["stat"] for r in datasets(d)[0]} == {"p50", "p99", "p999", "max"}
    # the maximum is drawn first and faint, so the percentiles are not hidden under it
    first, second = d["layer"]
    assert "max" in str(first["transform"][0]["filter"]) and first["mark"]["opacity"] < 1
    assert second["transform"][0]["filter"]["oneOf"] == ["p50", "p99", "p999"]
    with pytest.raises(AnalysisError):
        ff.latency_percentiles(intervals(10), stats=("p42",))


def test_latency_binning_keeps_the_worst_spike():
    frame = intervals(20_000)
    spike = float(frame["write_lat_max_us"].max()) * 50
    frame = frame.with_columns(
        pl.when(pl.col("t_s") == 12_345.0)
        .then(spike)
        .otherwise(pl.col("write_lat_max_us"))
        .alias("write_lat_max_us")
    )
    data = datasets(ff.latency_percentiles(frame).to_dict())[0]
    assert len(data) <= MAX_ROWS
    assert max(r["latency_us"] for r in data if r["stat"] == "max") == spike


def test_wa_free_blocks():
    d = ff.wa_free_blocks(intervals(3000, sim=True)).to_dict()
    assert len(d["vconcat"]) == 2 and marks(d) == ["line", "line", "area"]
    # the spiky per-interval WA underneath, the cumulative line over it (it once hid there)
    wa_layers = d["vconcat"][0]["layer"]
    kinds = [lay["transform"][0]["filter"] for lay in wa_layers]
    assert "interval" in kinds[0] and "cumulative" in kinds[1]
    assert wa_layers[1]["mark"]["strokeWidth"] > wa_layers[0]["mark"]["strokeWidth"]
    assert {
        "Write amplification (NAND / host)",
        "Free blocks (count)",
        "Host data written (GB)",
    } <= titles(d)
    with pytest.raises(AnalysisError, match="free_blocks"):
        ff.wa_free_blocks(intervals(100))  # not a simulator capture


def test_steady_state_window_fit_and_bands():
    rng = np.random.default_rng(4)
    r = np.arange(1, 21)
    iops = 30000 * np.exp(-r / 3) + 9000 + rng.normal(0, 150, r.size)
    rounds = pl.DataFrame({"round": r, "write_iops": iops})
    d = ff.steady_state_window(rounds, window=(16, 20)).to_dict()
    assert marks(d) == ["rect", "line", "rule", "line"]
    sets = datasets(d)
    mean = float(iops[15:20].mean())
    band = next(s for s in sets if s and "band" in s[0])
    assert {b["band"]: (b["lo"], b["hi"]) for b in band}["±10 %"] == pytest.approx(
        (0.9 * mean, 1.1 * mean)
    )
    fit = next(s for s in sets if s and "fit" in s[0])
    slope, icpt = np.polyfit(r[15:20], iops[15:20], 1)
    assert [p["fit"] for p in fit] == pytest.approx([icpt + slope * 16, icpt + slope * 20])
    with pytest.raises(AnalysisError):
        ff.steady_state_window(rounds, window=(30, 31))


def test_published_overlay_says_whose_marks_it_draws():
    """The review's marks carried only a tooltip: the rendered chart now names each kind it
    draws, and only those."""
    import vl_convert as vlc

    curve = loops().filter(pl.col("data") == "incompressible", pl.col("test") == "cdm_seq_write")
    pub = fb.published(source="puget", condition="incompressible")
    svg = vlc.vegalite_to_svg(ff.published_overlay(curve, pub, series="test").to_dict())
    for kind in ("diamonds, points", "dashed rules, levels", "dotted rules, breakpoints"):
        assert kind in svg, kind
    levels = pub.filter(pl.col("x").is_null() & (pl.col("unit") == "MB/s"))
    svg = vlc.vegalite_to_svg(ff.published_overlay(curve, levels, series="test").to_dict())
    assert "dashed rules, levels" in svg and "breakpoints" not in svg and "diamonds" not in svg


def test_published_overlay_points_levels_breakpoints():
    pub = fb.published(source="puget", condition="incompressible")
    curve = loops().filter(pl.col("data") == "incompressible", pl.col("test") == "cdm_seq_write")
    d = ff.published_overlay(curve, pub, series="test").to_dict()
    assert marks(d) == ["line", "point", "rule", "rule"]
    sets = datasets(d)
    points = next(s for s in sets if any(r.get("metric") == "range_low_mbps" for r in s))
    assert {p["x"] for p in points} == {40.0}  # published rows with an x sit on the curve
    assert {p["metric"] for p in points} >= {"range_low_mbps", "range_high_mbps"}
    bps = [r["value"] for s in sets for r in s if r.get("metric", "").startswith("breakpoint_")]
    assert 40.0 in bps and 380.0 in bps


def test_compare_errors():
    cmp = pl.DataFrame(
        {
            "metric": ["max_mbps", "breakpoint_1_gb"],
            "condition": ["incompressible"] * 2,
            "published": [193.3, 40.0],
            "replayed": [180.0, 45.0],
            "unit": ["MB/s", "GB"],
            "rel_error": [-0.069, 0.125],
        }
    )
    d = ff.compare_errors(cmp, tolerance_pct=10).to_dict()
    assert marks(d) == ["bar", "rule", "rule"]
    assert [r["rel_error_pct"] for r in datasets(d)[0]] == pytest.approx([-6.9, 12.5])


#: The mechanism of the made-up unmodelled row, and the note compare gives such a row: the
#: status, the mechanism's reason, then the check's own note (Puget's read-loss row).
UNMODELLED_KEY = "read_compression"


def _unmodelled_note() -> str:
    from flashback.replay.mechanisms import get

    reason = get(UNMODELLED_KEY).reason
    return f"documented, not modelled: {reason}; mean over the four read tests of the best results"


def _status_frame():
    return pl.DataFrame(
        {
            "metric": [
                "max_mbps",
                "avg_mbps",
                "duration_s",
                "loss_vs_compressible_pct",
                "avg_mbps",
                "x",
            ],
            "condition": ["fresh", "used", "all", "incompressible", "used@idle_s=30", "c"],
            "published": [193.3, 160.0, 3600.0, 5.0, 160.0, 5.0],
            "replayed": [190.0, 100.0, 3600.0, -0.03, 150.0, 7.0],
            "unit": ["MB/s", "MB/s", "s", "%", "MB/s", "MB/s"],
            "rel_error": [-0.017, -0.375, 0.0, -1.006, -0.0625, 0.4],
            "status": [
                "within tolerance",
                "outside tolerance",
                "setting",
                "documented, not modelled",
                "sensitivity",
                "no tolerance",
            ],
            "note": [
                None,
                None,
                "a setting of the procedure",
                _unmodelled_note(),
                "idle_s=30 instead of 0",
                None,
            ],
        }
    )


def test_compare_errors_draws_only_published_vs_replayed_rows_by_status():
    d = ff.compare_errors(_status_frame()).to_dict()
    bars = [
        n
        for n in walk(d)
        if n.get("mark") == "bar"
        or (isinstance(n.get("mark"), dict) and n["mark"].get("type") == "bar")
    ]
    assert len(bars) == 1
    enc = bars[0]["encoding"]
    assert enc["color"]["field"] == "status"
    assert enc["color"]["scale"]["domain"] == [
        "within tolerance",
        "outside tolerance",
        "no tolerance",
        "borderline",  # a spread over seeds that straddles the tolerance
    ]
    sets = datasets(d)
    drawn = [r for s in sets for r in s if "rel_error_pct" in r]
    assert sorted(r["status"] for r in drawn) == [
        "no tolerance",
        "outside tolerance",
        "within tolerance",
    ]
    assert not any(r["metric"] == "duration_s" for r in drawn)  # no setting row
    assert not any("@" in r["condition"] for r in drawn)  # no sensitivity row
    # the unmodelled row is listed apart, with its reason
    listed = [r for s in sets for r in s if "reason" in r]
    assert [r["label"] for r in listed] == ["loss_vs_compressible_pct · incompressible"]
    assert_reason_of_mechanism(listed[0]["reason"], UNMODELLED_KEY)
    assert "text" in marks(d)


def test_compare_errors_refuses_a_frame_with_nothing_to_compare():
    only_settings = _status_frame().filter(pl.col("status") == "setting")
    with pytest.raises(fb.AnalysisError, match="nothing to draw"):
        ff.compare_errors(only_settings)


def test_compare_errors_below_the_held_scale_names_the_scale_and_the_floor():
    """A replay below its protocol's min_held_scale compares nothing: the refusal says so,
    with both scales (it said only "nothing to draw")."""
    cmp = fb.replay("anand2009-new-vs-used", scale="1/128").compare()
    assert "below held scale" in set(cmp["status"])
    with pytest.raises(fb.AnalysisError, match=r"replayed at 1/128, below 1/64.*min_held_scale"):
        ff.compare_errors(cmp)


def test_compare_errors_lists_unmodelled_rows_even_when_nothing_compares():
    only = _status_frame().filter(pl.col("status").is_in(["setting", "documented, not modelled"]))
    d = ff.compare_errors(only).to_dict()
    assert marks(d) == ["text"]
    (reason,) = [r["reason"] for s in datasets(d) for r in s if "reason" in r]
    assert_reason_of_mechanism(reason, UNMODELLED_KEY)


def assert_reason_of_mechanism(reason: str, key: str) -> None:
    """A listed reason is the start of the mechanism's own (the status prefix and the
    check's note cut off, the text perhaps shortened)."""
    from flashback.replay.mechanisms import get

    assert len(reason) >= 40 and get(key).reason.startswith(reason), reason


def test_compare_errors_lists_a_real_compares_unmodelled_row():
    """The unmodelled row of a real compare (Puget's read loss: the model compresses writes
    only) is listed with its mechanism's reason, not drawn as an error (a tiny replay, below
    the held scale, so that row is all the chart holds)."""
    target = "sim:intel-520-120g?scale=1/512"
    zeros = fb.replay("puget-cdm-loop", target=target, data="zeros", loops=2)
    rnd = fb.replay("puget-cdm-loop", target=target, data="random", loops=2)
    cmp = rnd.compare(other=zeros)
    d = ff.compare_errors(cmp).to_dict()
    listed = [r for s in datasets(d) for r in s if "reason" in r]
    assert [r["label"] for r in listed] == ["loss_vs_compressible_pct · incompressible"]
    assert_reason_of_mechanism(listed[0]["reason"], UNMODELLED_KEY)
    assert marks(d) == ["text"]  # 1/512 is below Puget's held scale: nothing else compares


def test_compare_errors_on_a_real_replay_has_no_setting_rows():
    rep = fb.replay("anand2009-new-vs-used", scale="1/64")  # its floor: below it nothing compares
    cmp = rep.compare()
    assert "setting" in set(cmp["status"])
    d = ff.compare_errors(cmp).to_dict()
    drawn = [r for s in datasets(d) for r in s if "rel_error_pct" in r]
    assert drawn and all(r["status"] != "setting" for r in drawn)
    assert (
        len(drawn)
        == cmp.filter(
            pl.col("status").is_in(["within tolerance", "outside tolerance", "no tolerance"])
            & pl.col("rel_error").is_not_null()
        ).height
    )


# ---------------------------------------------------------------- scale, theme, errors, files


def test_100k_rows_never_exceed_the_row_limit():
    big = intervals(100_000, sim=True, steps=("fresh", "used"))
    big_loops = pl.concat(
        [
            big.select("host_written_bytes", "write_mbps").with_columns(
                pl.lit(t).alias("test"), pl.lit(dt).alias("data")
            )
            for t in ("a", "b")
            for dt in ("compressible", "incompressible")
        ]
    )
    assert len(big_loops) == 400_000
    charts = [
        ff.performance_vs_written(big_loops),
        ff.iops_scatter(big.with_columns(pl.lit("default_op").alias("variant"))),
        ff.consistency_panel(big),
        ff.step_series(big),
        ff.latency_percentiles(big),
        ff.wa_free_blocks(big),
        ff.published_overlay(big, fb.published(source="puget")),
    ]
    for chart in charts:
        d = chart.to_dict()  # raises MaxRowsError if any dataset is > 5000 rows
        for data in datasets(d):
            assert 0 < len(data) <= MAX_ROWS


def test_importing_figures_registers_the_theme_without_enabling_it():
    # a fresh interpreter: this process's other tests may have enabled it
    code = (
        "import altair as alt; before = alt.theme.active; import flashback.figures; "
        "print(before, alt.theme.active, 'flashback' in alt.theme.names())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after, registered = out.stdout.split()
    assert after == before != ff.THEME_NAME
    assert registered == "True"


def test_flashback_renderings_apply_the_theme_and_leave_the_session_alone():
    from flashback.report.html import _spec

    chart = ff.latency_percentiles(intervals(100))
    with alt.theme.enable("default"):
        assert not chart.to_dict().get("config", {}).get("font", "").startswith("DejaVu")
        assert _spec(chart)["config"]["font"].startswith("DejaVu Sans")
        assert alt.theme.active == "default"
    before = alt.theme.active
    try:
        ff.use_theme()
        assert alt.theme.active == ff.THEME_NAME
        assert chart.to_dict()["config"]["font"].startswith("DejaVu Sans")
    finally:  # the rest of the test session keeps the theme it had
        alt.theme.enable(before)


def test_missing_column_is_a_clear_error():
    with pytest.raises(AnalysisError, match="write_mbps"):
        ff.performance_vs_written(pl.DataFrame({"host_written_bytes": [1.0]}))
    with pytest.raises(AnalysisError, match="empty"):
        ff.step_series(intervals(10).head(0))


def test_save_png_and_svg(tmp_path):
    chart = ff.performance_vs_written(loops(40))
    png = ff.save_chart(chart, tmp_path / "sub" / "puget.png")
    svg = ff.save_chart(ff.consistency_panel(consistency_runs()), tmp_path / "anand.svg")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 400 and height > 200
    text = svg.read_text()
    assert text.lstrip().startswith("<svg") and text.rstrip().endswith("</svg>")
    assert "Steady state from t = 1400 s" in text  # real content, rendered offline
    with pytest.raises(ParameterError):
        ff.save_chart(chart, tmp_path / "x.pdf")


def test_performance_vs_written_x_in_gb_has_the_bytes_axis_title():
    """x already in GB (a column named ``gb``, as tests/test_figures_marks.py passes it) is
    the host-written axis x in bytes draws: its title read "Gb"."""
    in_bytes = loops()
    in_gb = in_bytes.with_columns((pl.col("host_written_bytes") / 1e9).alias("gb")).drop(
        "host_written_bytes"
    )

    def x_title(d) -> str:
        (title,) = {enc["x"]["title"] for enc in encodings(d) if "x" in enc}
        return str(title)

    want = x_title(ff.performance_vs_written(in_bytes).to_dict())
    assert x_title(ff.performance_vs_written(in_gb, x="gb").to_dict()) == want
    assert ff._marks.unit_of("gb") == "GB"


def test_performance_vs_written_has_its_data_legend():
    """The dashed second data type once switched the merged colour legend off: the chart
    showed red and blue curves with no key."""
    import vl_convert as vlc

    curves = pl.DataFrame(
        {
            "gb": [0.0, 1.0, 2.0] * 2,
            "write_mbps": [500.0, 300.0, 200.0, 520.0, 510.0, 505.0],
            "data": ["incompressible"] * 3 + ["compressible"] * 3,
        }
    )
    svg = vlc.vegalite_to_svg(
        fb.figures.performance_vs_written(curves, x="gb", test=None, data="data").to_dict()
    )
    labels = re.findall(r"role-legend-label[^>]*><text[^>]*>([^<]*)<", svg)
    assert labels == ["incompressible", "compressible"]  # in the order they ran


def test_one_colour_per_label_from_one_table():
    """A label has its table colour in every chart; labels the table lacks get a stable
    colour, and two of them never share one in a chart (seq_write_new and seq_write_used
    hashed to one colour)."""
    from flashback.figures import COLORS, color_of, color_scale

    a = color_scale(["after_trim", "fresh", "used"]).to_dict()
    b = color_scale(["clean", "after_torture", "after_trim"]).to_dict()
    assert dict(zip(a["domain"], a["range"], strict=True))["after_trim"] == COLORS["after_trim"]
    assert dict(zip(b["domain"], b["range"], strict=True))["after_trim"] == COLORS["after_trim"]
    steps = ["seq_write_new", "seq_write_used", "seq_write_trim", "random_write_new"]
    s = color_scale(steps).to_dict()
    assert s["domain"] == steps and len(set(s["range"])) == len(steps)
    assert color_of("seq_write_new") == color_of("seq_write_new")
    assert not set(s["range"]) & set(COLORS.values())


def test_performance_vs_written_draws_a_segment_line_from_level_to_level_end():
    # a segment fitted as a line (flashback.analysis.knees.lines) is drawn sloped; without
    # level_end it stays a level
    seg = pl.DataFrame(
        {
            "x_start": [0.0, 9e11],
            "x_end": [9e11, 1.8e12],
            "level": [131.8, 126.6],
            "level_end": [126.6, 126.6],
            "level_lo": [120.0, 120.0],
            "level_hi": [140.0, 140.0],
            "test": ["cdm_rnd4k_qd32_write"] * 2,
        }
    )
    d = ff.performance_vs_written(loops(), segments=seg).to_dict()
    rows = sorted((r for r in datasets(d)[0] if r["layer"] == "segment"), key=lambda r: r["x_gb"])
    assert [(r["y"], r["y_end"]) for r in rows] == [(131.8, 126.6), (126.6, 126.6)]
    assert '"y2": {"field": "y_end"' in json.dumps(d)
    flat = ff.performance_vs_written(loops(), segments=seg.drop("level_end")).to_dict()
    assert all(r["y"] == r["y_end"] for r in datasets(flat)[0] if r["layer"] == "segment")
