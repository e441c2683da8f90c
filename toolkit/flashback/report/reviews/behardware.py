"""BeHardware: 3-minute runs on a 10 GB span of an otherwise full drive — new, used, TRIM."""

from __future__ import annotations

import polars as pl

from flashback import figures
from flashback.published import published as published_rows
from flashback.report.html import Section
from flashback.report.reviews.common import SEEDS, compare_part, procedure, replay, runs

NAME = "behardware-used-trim"
PRESET = "crucial-m4-128g"


#: The run (step) behind each of the review's graphs: (test, state) -> step.
RUNS = {
    ("iometer_rnd_write", "fresh"): "random_write_new",
    ("iometer_rnd_write", "used"): "random_write_used",
    ("iometer_rnd_write", "after_trim"): "random_write_trim",
    ("iometer_seq_write", "fresh"): "seq_write_new",
    ("iometer_seq_write", "used"): "seq_write_used",
    ("iometer_seq_write", "after_trim"): "seq_write_trim",
}


#: The review's test names -> the replay's ``pattern`` of that kind of write.
PATTERNS = {"iometer_rnd_write": "random", "iometer_seq_write": "sequential"}


def published_marks(drive: str, *, run_s: float) -> pl.DataFrame:
    """The review's numbers for ``drive`` placed on the per-second panels (``run``: the step;
    ``x``/``x2`` in s since the run began, ``y`` in MB/s): a dip time as a vertical rule, a
    level as a horizontal one, the early minimum over the window it names (the first 30 s),
    a level the review gives from a time on (after the dip) from there to the run's end
    (``run_s``). Rows of other tests, or in GB or %, are not per-second values: left out."""
    pub = published_rows(source="behardware").filter(pl.col("drive") == drive)
    rows = []
    for r in pub.iter_rows(named=True):
        run = RUNS.get((r["test"], r["condition"]))
        metric, value, at_s = r["metric"], r["value"], r["x"] if r["x_unit"] == "s" else None
        if run is None:
            continue
        if metric == "dip_time_s":
            written = f" ({r['x']:g} GB written)" if r["x_unit"] == "GB written" else ""
            rows.append({"run": run, "label": f"review: dip at {value:g} s{written}", "x": value})
        elif metric.endswith("_mbps"):
            label = f"review: {metric} {value:g} MB/s"
            if at_s is None:
                rows.append({"run": run, "label": label, "y": value})
            elif metric.startswith("early_"):
                label += f" (within the first {at_s:g} s)"
                rows.append({"run": run, "label": label, "y": value, "x": 0.0, "x2": at_s})
            else:
                label += f" (from {at_s:g} s)"
                rows.append({"run": run, "label": label, "y": value, "x": at_s, "x2": run_s})
    schema = {
        "run": pl.String,
        "label": pl.String,
        "x": pl.Float64,
        "x2": pl.Float64,
        "y": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema)


def build(*, scale: str, progress: bool) -> tuple[Section, pl.DataFrame]:
    rep = replay(NAME, preset=PRESET, scale=scale, progress=progress)
    st = runs(rep).filter(pl.col("condition") != "fill")
    # one group of bars per kind of write, one bar per drive state: each bar sits inside
    # the group its label names (bars keyed by step name sat off-centre, beside the
    # neighbouring label)
    bars = st.select(
        pl.col("pattern").cast(pl.String).alias("test"),
        "condition",
        pl.col("write_mbps").alias("value"),
    )
    s = Section(
        "BeHardware — used state and TRIM on a nearly full drive",
        [
            "The review filled a drive except for a 10 GB area, then timed 3-minute random and "
            "sequential writes in that area new, used and after TRIM, noting when speed dipped.",
            f"Replayed on the simulated {PRESET} shrunk by {scale}. Times and GB, in the chart "
            "and the table, are quoted at the review drive's scale (replayed values divided by "
            f"{scale}); speeds are as measured.",
        ],
        procedure=procedure([rep]),
    )
    # the review's whole-run levels for the drive (the Vertex 3's 160 new, 130 after TRIM) as
    # ticks on the bars of their kind of write and state
    levels = (
        published_rows(source="behardware", metric="level_mbps")
        .filter(pl.col("drive") == rep.meta["drive"])
        .select(
            pl.col("test").replace_strict(PATTERNS, default=None).alias("drive"),
            "condition",
            "value",
        )
    )
    chart = figures.condition_bars(bars, group="test", published=levels, title="write MB/s per run")
    s.charts.append(("states", chart))
    marks = published_marks(rep.meta["drive"], run_s=rep.meta["params"]["run_s"])
    # the states in the order the procedure first reached them (the sequential runs ran used,
    # TRIM, then new: their legend keeps the section's order)
    states = [str(c) for c in rep.steps["condition"].unique(maintain_order=True).drop_nulls()]
    for pattern, prefix in (("random", "random_write"), ("sequential", "seq_write")):
        per_second = rep.intervals.filter(pl.col("step").str.starts_with(prefix))
        if not per_second.height:
            continue
        # coloured by drive state as the bars above, one panel per run in the order it ran;
        # the review's own numbers for the drive (dips, levels) drawn in their panels
        per_second = per_second.join(
            rep.steps.select("step", "condition"), on="step", how="left", maintain_order="left"
        ).with_columns((pl.col("t_s") / rep.scale).alias("t_s"), pl.col("step").alias("run"))
        s.charts.append(
            (
                f"{pattern} write per second",
                figures.step_series(
                    per_second,
                    y="write_mbps",
                    facet="run",
                    color="condition",
                    color_order=states,
                    published=marks,
                    width=260,
                    height=160,
                ).properties(
                    title=f"{pattern} writes, one panel per run (s at review scale; dotted: "
                    "the review's numbers)"
                ),
            )
        )
    return s, compare_part(s, rep.compare(seeds=SEEDS))
