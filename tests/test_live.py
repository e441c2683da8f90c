"""The live view of a long run: a chart of throughput and latency against bytes written that
is redrawn while intervals arrive (off the engine's thread) and left as the static chart
when the run ends; in a terminal, a live line under the bar."""

from __future__ import annotations

import pytest
from support.interrupt import ctrl_c_on_call

import flashback as fb
from flashback.live import LiveChart


def _values(chart) -> list[dict]:
    spec = chart.to_dict()
    return next(iter(spec["datasets"].values()))


def test_redrawn_while_the_run_goes_on_and_final_at_the_end(tmp_path):
    charts = []
    live = LiveChart(every_s=0.2, display=charts.append)
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=8, size="32m", time="3s", interval="0.05s")
    cap = fb.run(str(tmp_path / "scratch.bin"), w, progress=live)
    assert len(charts) >= 3, len(charts)  # several while running, and one at close
    sizes = [len(_values(c)) for c in charts]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    final = _values(charts[-1])
    assert len(final) == cap.intervals.height
    # the points are the capture's own: GB written and p99 write latency per interval
    assert final[-1]["gb_written"] == pytest.approx(cap.intervals["host_written_bytes"][-1] / 1e9)
    assert final[-1]["lat_p99_us"] == pytest.approx(cap.intervals["write_lat_p99_us"][-1])
    assert live.error is None


def test_an_interrupted_run_says_so_in_the_final_chart():
    charts = []
    live = LiveChart(every_s=60, display=charts.append)
    cb, _ = ctrl_c_on_call(3, live)
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, written="200m", interval="0.1s")
    with pytest.raises(fb.errors.RunInterrupted):
        fb.run("sim:generic?scale=1/256", w, progress=cb)
    live.close("interrupted")
    assert charts and "(interrupted)" in charts[-1].to_dict()["title"]


def test_a_replay_feeds_it_step_by_step():
    charts = []
    live = LiveChart(every_s=60, display=charts.append)
    rep = fb.replay(
        "anandtech-trim-validation", target="sim:intel-530-240g?scale=1/256", progress=live
    )
    assert len(charts) == 1 and live.frame().height == rep.intervals.height
    assert live.frame()["step"].n_unique() > 1
    assert len(_values(charts[-1])) <= 1500  # long runs drawn binned


def test_progress_live_makes_one():
    from flashback.progress import make_progress

    w = fb.Workload(rw="randwrite", time="1s")
    assert isinstance(make_progress("live", w, 1 << 30, label="x"), LiveChart)


def test_terminal_live_line_under_the_bar():
    from flashback.progress import Bar

    bar = Bar(10.0, "GB written", "w")
    assert bar.live_line() == ""
    for mbps, p99 in [(500, 100.0)] * 5 + [(300, 900.0)] * 5:
        bar(dict(interval_s=1.0, write_bytes=mbps * 10**6, read_bytes=0, trim_bytes=0,
                 write_ios=1, read_ios=0, write_lat_p99_us=p99))  # fmt: skip
    line = bar.live_line()
    bar.close("complete")
    assert "now 300.0 MB/s (-40 % since start)" in line and "p99 900 µs" in line


def test_in_a_notebook_the_saved_output_is_the_static_chart(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from flashback.notebook import STATIC_MIME, VEGA_MIME

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import flashback as fb\nfrom flashback.notebook import setup\nsetup()\n"
            'w = fb.Workload(rw="randwrite", bs="4k", iodepth=8, size="16m", time="2s", '
            'interval="0.05s")\n'
            f'cap = fb.run({str(tmp_path / "s.bin")!r}, w, progress="live")'
        )
    ]
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={
        "metadata": {"path": str(tmp_path)}}).execute()  # fmt: skip
    outs = [o for o in nb.cells[0].outputs if o.get("output_type") == "display_data"]
    assert len(outs) == 1, [o.get("output_type") for o in nb.cells[0].outputs]
    data = outs[0]["data"]
    assert VEGA_MIME in data and STATIC_MIME in data  # drawn live, kept when saved


def test_a_live_redraw_puts_new_points_into_the_vega_compiled_once(monkeypatch):
    """In a notebook each redraw went through Altair and a Vega-Lite compile (about a
    second of work for 1,500 points, every few seconds of the run); now the spec is compiled
    once and a redraw only puts the new points in it. The final chart is compiled afresh
    (with its PNG)."""
    import vl_convert as vlc

    import flashback.live
    from flashback.notebook import STATIC_MIME, VEGA_MIME

    monkeypatch.setattr(flashback.live, "_VEGA", {})  # compiled once per title, per process
    compiles = []
    real = vlc.vegalite_to_vega
    monkeypatch.setattr(vlc, "vegalite_to_vega", lambda spec: compiles.append(1) or real(spec))
    shown = []

    class Collect(LiveChart):
        def _show(self, bundle, md):
            shown.append(bundle)

    live = Collect(every_s=3600)

    def feed(n):
        for _ in range(n):
            live(dict(interval_s=1.0, write_bytes=500 * 10**6, read_bytes=0,
                      host_written_bytes=(len(live._rows) + 1) * 10**9, write_lat_p99_us=90.0))  # fmt: skip

    def values(bundle):
        data = bundle[VEGA_MIME]["data"]
        return next(d["values"] for d in data if "values" in d)

    feed(10)
    live._draw(final=False)
    feed(2000)  # past MAX_POINTS: drawn binned
    live._draw(final=False)
    assert len(compiles) == 1
    assert [len(values(b)) for b in shown] == [10, live.points().height]
    assert values(shown[-1]) == live.points().to_dicts()
    assert STATIC_MIME not in shown[-1]
    live.close("complete")
    assert len(compiles) == 2 and STATIC_MIME in shown[-1]
    assert len(values(shown[-1])) == live.points().height


def _feed(live: LiveChart, n: int, seed: int) -> None:
    """``n`` intervals of varied throughput, some without a p99 (no write completed)."""
    import random

    rnd = random.Random(seed)
    for _ in range(n):
        lat = None if rnd.random() < 0.1 else rnd.uniform(50, 5000)
        live(dict(interval_s=rnd.choice([0.1, 1.0, None]), write_bytes=rnd.randrange(10**9),
                  read_bytes=rnd.randrange(10**6), write_lat_p99_us=lat,
                  host_written_bytes=(len(live._rows) + 1) * 10**8))  # fmt: skip
        if rnd.random() < 0.001:
            live.step(f"step {len(live._rows)}")


def _same_points(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want) and [list(g) for g in got] == [list(w) for w in want]
    for g, w in zip(got, want, strict=True):
        assert g["gb_written"] == w["gb_written"] and g["step"] == w["step"]
        assert g["mbps"] == pytest.approx(w["mbps"], rel=1e-12)
        if w["lat_p99_us"] is None:
            assert g["lat_p99_us"] is None
        else:
            assert g["lat_p99_us"] == pytest.approx(w["lat_p99_us"], rel=1e-12)


@pytest.mark.parametrize("sizes", [[1, 40], [900, 1500, 1501, 2999, 3001, 4507]])
def test_live_points_are_polars_points(sizes):
    """The live redraw bins the intervals in plain Python, keeping the bins an earlier redraw
    finished; at every size, across the bin width growing past MAX_POINTS, 2 x and 3 x, its
    points are those polars' group_by gives."""
    from flashback.live import MAX_POINTS

    live = LiveChart(every_s=3600, display=lambda chart: None)
    for i, n in enumerate(sizes):
        _feed(live, n - len(live._rows), seed=i)
        want = live.points().to_dicts()
        assert len(want) <= MAX_POINTS
        _same_points(live.live_points(), want)
        _same_points(live.live_points(), want)  # again, from the kept bins
    live.close("complete")


def test_observer_s_is_the_time_the_run_spent_in_the_observer(tmp_path):
    """A real run's metadata says how long its thread spent in the progress callback (and
    the Ctrl-C polls); a simulated run's does not (its metadata is a function of its
    inputs). In this process (``session="shared"``): a job in its own session does not wait
    for the callback (``test_run_session``)."""
    import time

    calls = []

    def slow(row):
        calls.append(row)
        time.sleep(0.02)

    w = fb.Workload(rw="randwrite", bs="4k", iodepth=4, size="8m", time="0.5s", interval="0.05s")
    cap = fb.run(str(tmp_path / "s.bin"), w, progress=slow, session="shared")
    assert len(calls) >= 5
    assert cap.meta["observer_s"] >= len(calls) * 0.02
    quiet = fb.run(str(tmp_path / "s.bin"), w, session="shared")
    assert 0 <= quiet.meta["observer_s"] < len(calls) * 0.02
    sim = fb.run("sim:generic?scale=1/512", w.replace(time=None, written="16m"), progress=slow)
    assert "observer_s" not in sim.meta


def test_observer_s_counts_the_wait_for_the_gil(tmp_path):
    """The engine's thread takes the GIL to hand over rows and poll for Ctrl-C: while another
    thread holds it (here a C loop that never lets it go, as a redraw's long library call
    can), that thread waits, and the wait is in ``observer_s``. In this process
    (``session="shared"``); a job in its own session does not wait (``test_run_session``)."""
    import threading
    import time

    held = []

    def hog() -> None:
        t0 = time.perf_counter()
        sum(range(3 * 10**7))  # one C call: the GIL is not released until it returns
        held.append(time.perf_counter() - t0)

    hogs: list[threading.Thread] = []

    def start_hog(row: dict) -> None:
        if not hogs:
            hogs.append(threading.Thread(target=hog))
            hogs[0].start()

    w = fb.Workload(rw="randwrite", bs="4k", iodepth=4, size="8m", time="1s", interval="0.05s")
    cap = fb.run(str(tmp_path / "s.bin"), w, progress=start_hog, session="shared")
    hogs[0].join()
    # the engine's next poll (within 50 ms) or row waits out the rest of the hog
    assert cap.meta["observer_s"] >= held[0] - 0.1 > 0, (cap.meta["observer_s"], held)


def test_the_live_vega_is_compiled_before_the_run_once_per_title_and_theme(monkeypatch):
    """A process's first Vega-Lite compile starts vl-convert's engine (about half a second
    holding the GIL): it used to happen at the first redraw, mid-run. Now the notebook
    chart's Vega is compiled when the chart is made, and kept for the next chart of the same
    title and Altair theme."""
    import altair as alt
    import vl_convert as vlc

    import flashback.live
    from flashback.figures._theme import THEME_NAME

    monkeypatch.setattr(flashback.live, "_VEGA", {})
    compiles = []
    real = vlc.vegalite_to_vega
    monkeypatch.setattr(vlc, "vegalite_to_vega", lambda spec: compiles.append(1) or real(spec))
    # another test (or a notebook's setup) may have left the flashback theme on for the session
    with alt.theme.enable("default"):
        LiveChart(every_s=3600)
        assert len(compiles) == 1  # made, not yet fed a row
        plain = LiveChart(every_s=3600)._compiled()[0]
        assert len(compiles) == 1
        LiveChart(every_s=3600, title="another")
        assert len(compiles) == 2
    with alt.theme.enable(THEME_NAME):
        themed = LiveChart(every_s=3600)._compiled()[0]
    assert len(compiles) == 3 and themed != plain
