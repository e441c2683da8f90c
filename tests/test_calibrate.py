"""Calibration: fitting sim parameters to published numbers, through workloads or replays."""

from __future__ import annotations

import polars as pl
import pytest

import flashback as fb
from flashback.errors import ParameterError
from flashback.replay import get_protocol
from flashback.sim import TARGETS, Observation, Param, ReplayObservation, calibrate, evaluate

SEQ = dict(rw="write", bs="1m", size="256m", data="random", time="2s")


def test_fit_recovers_a_known_parameter():
    # The "published" number is what the simulator gives at t_prog_us=1000; a fit started
    # far away must find that value again (the seq write speed is monotone in t_prog_us).
    truth = evaluate(
        "generic",
        [Observation("seq", SEQ, "write_mbps:mean", 1.0)],
        {"t_prog_us": 1000.0},
        scale="1/256",
    )[0]
    cal = calibrate(
        "generic",
        observations=[Observation("seq", SEQ, "write_mbps:mean", truth)],
        params=[Param("t_prog_us", 500.0, 3000.0, 2500.0)],
        scale="1/256",
        max_evals=20,
    )
    assert abs(cal.residuals[0]) < 0.02, cal.report()
    assert cal.values["t_prog_us"] == pytest.approx(1000.0, rel=0.08), cal.report()
    assert "residual" in cal.report() and cal.spec_suffix().startswith("t_prog_us=")


def test_replay_observation_is_the_compare_row():
    spec = "sim:intel-530-240g?scale=1/512"
    obs = ReplayObservation("anandtech-trim-validation", "as_ssd_seq_write", "clean", "avg_mbps")
    got = evaluate("intel-530-240g", [obs], {}, scale="1/512")[0]
    cmp = fb.replay("anandtech-trim-validation", target=spec, scale=1 / 512).compare()
    row = cmp.filter(
        (pl.col("test") == "as_ssd_seq_write")
        & (pl.col("condition") == "clean")
        & (pl.col("metric") == "avg_mbps")
    )
    assert got == pytest.approx(row["replayed"][0], rel=1e-12)


def test_unknown_compare_row_is_a_parameter_error():
    obs = ReplayObservation("anandtech-trim-validation", "as_ssd_seq_write", "nonsense", "avg_mbps")
    with pytest.raises(ParameterError, match="no compare\\(\\) row"):
        evaluate("intel-530-240g", [obs], {}, scale="1/512")


def test_bad_bounds_are_a_parameter_error():
    with pytest.raises(ParameterError, match="lo < hi"):
        Param("t_prog_us", 2000.0, 1000.0, 1500.0)


@pytest.mark.parametrize("preset", sorted(TARGETS))
def test_presets_reproduce_their_recorded_fit(preset):
    # The presets carry the values their calibration found; evaluated at the calibration's
    # scale with no overrides, every fitted observation is within 3 % of its published value.
    target = TARGETS[preset]
    obs = target["observations"]
    sim = evaluate(preset, obs, {}, scale=target.get("scale", "1/64"))
    for o, s in zip(obs, sim, strict=True):
        published = o.value
        if published is None:
            rows = fb.published(source=get_protocol(o.protocol).source).filter(
                (pl.col("test") == o.test)
                & (pl.col("condition") == o.condition)
                & (pl.col("metric") == o.metric)
            )
            assert rows["value"].n_unique() == 1, rows
            published = float(rows["value"][0])
        assert s == pytest.approx(published, rel=0.03), (o.name, s, published)


def test_dirty_rate_fit_recovers_a_known_value():
    # the "published" ratio is what the simulator gives at dirty_rate=0.6
    from flashback.sim.dirty_rate import DirtySource, dirty_ratio, fit_dirty_rate

    truth = dirty_ratio("intel-530-240g", dirty_rate=0.6, scale="1/512")
    assert truth == pytest.approx(0.6, abs=0.03)  # the whole NAND is dirty after the torture
    src = (DirtySource("intel-530-240g", 300.0, 300.0 * truth, "synthetic"),)
    cal = fit_dirty_rate(src, scale="1/512")
    assert cal.values["dirty_rate"] == pytest.approx(0.6, abs=0.01), cal.report()
    with pytest.raises(ParameterError, match="DirtySource"):
        fit_dirty_rate(())


def test_sandforce_presets_carry_the_off_replay_dirty_fit():
    from flashback.sim.dirty_rate import DIRTY_SOURCES, dirty_ratio

    published = [s.dirty_mbps / s.clean_mbps for s in DIRTY_SOURCES]
    for s in DIRTY_SOURCES:
        cfg = fb.Target(f"sim:{s.preset}?scale=1/512").meta["config"]
        assert "fit_dirty_rate" in cfg["sources"]["features.dirty_rate"]
        # the fitted value sits between the two sources, which disagree
        r = dirty_ratio(s.preset, dirty_rate=cfg["features"]["dirty_rate"], scale="1/512")
        assert min(published) < r < max(published), (s.preset, r, published)


def test_a_report_of_a_replay_observation_without_its_value_formats():
    # Calibration.report raised TypeError ("unsupported format string passed to
    # NoneType.__format__") for a hand-made Calibration whose ReplayObservation left its value
    # to the replay's row and whose ``published`` was empty
    from flashback.sim.calibrate import Calibration

    o = ReplayObservation("puget-ssd-consistency", "t", "c", "m")
    cal = Calibration(
        preset="generic",
        values={"t_prog_us": 1000.0},
        observations=[o],
        simulated=[150.0],
        residuals=[0.01],
        evaluations=3,
        scale="1/64",
    )
    assert "published from the replay's row, simulated 150" in cal.report()
