"""The protocol registry, parameters, scaling and the small statistics replays rely on."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import polars as pl
import pytest

import flashback as fb
from flashback.replay.compare import COLUMNS
from flashback.replay.procedures.common import rounds_steady, three_levels
from flashback.replay.scaling import parse_scale, scaled_bytes

NAMES = {
    "puget-cdm-loop",
    "behardware-used-trim",
    "xbit-pts-degradation",
    "anandtech-consistency",
    "anandtech-trim-validation",
    "anand2009-new-vs-used",
    "snia-pts",
}


def test_every_protocol_is_registered_with_a_default_target_and_description():
    frame = fb.protocols()
    assert set(frame["name"]) == NAMES
    assert all(t.startswith("sim:") for t in frame["default_target"])
    from flashback.replay import get_protocol

    for name in NAMES:
        text = get_protocol(name).describe()
        assert name in text and "steps:" in text and "default target" in text


def test_unknown_protocol_names_the_choices():
    with pytest.raises(fb.ReplayError, match="puget-cdm-loop"):
        fb.replay("no-such-review")


def test_unknown_parameter_is_a_parameter_error():
    with pytest.raises(fb.ParameterError, match="loops"):
        fb.replay("puget-cdm-loop", target="sim:generic", colour="red")


@pytest.mark.parametrize("bad", ["0", "-1/4", "abc", "1/0", float("nan")])
def test_bad_scale_is_refused(bad):
    with pytest.raises(fb.ParameterError):
        parse_scale(bad)


def test_scale_strings_and_byte_scaling():
    assert parse_scale("1/64") == pytest.approx(1 / 64)
    assert parse_scale(0.5) == 0.5
    assert scaled_bytes(10e9, 1 / 64) % (1 << 20) == 0
    assert scaled_bytes(10e9, 1 / 64) == pytest.approx(10e9 / 64, rel=0.01)
    assert scaled_bytes(1, 1e-9) == 1 << 20  # floor: one aligned unit


def test_missing_file_without_scale_is_refused(tmp_path):
    path = tmp_path / "absent.bin"
    with pytest.raises(fb.ReplayError, match="scale"):
        fb.replay("xbit-pts-degradation", target=path)
    assert not path.exists()


@pytest.mark.parametrize("seed", range(5))
def test_three_levels_finds_two_planted_breakpoints(seed):
    rng = np.random.default_rng(seed)
    x = np.arange(200, dtype=float) * 9.4  # GB written per loop
    i, j = rng.integers(20, 80), rng.integers(120, 180)
    y = np.where(np.arange(200) < i, 190.0, np.where(np.arange(200) < j, 150.0, 160.0))
    y = y + rng.normal(0, 2.0, 200)
    b1, b2 = three_levels(x, y)
    assert abs(b1 - x[i]) <= 9.4 and abs(b2 - x[j]) <= 9.4


def _pts_reference(w):
    w = np.asarray(w, dtype=float)
    mean = w.mean()
    n = len(w)
    xs = np.arange(n)
    slope = ((xs - xs.mean()) * (w - mean)).sum() / ((xs - xs.mean()) ** 2).sum()
    return (w.max() - w.min()) <= 0.2 * mean and abs(slope * (n - 1)) <= 0.1 * mean


@pytest.mark.parametrize("seed", range(30))
def test_pts_window_matches_a_plain_reference(seed):
    rng = np.random.default_rng(seed)
    values = list(
        1000 + rng.normal(0, rng.uniform(10, 120), 7) + rng.uniform(-40, 40) * np.arange(7)
    )
    assert rounds_steady(values) == _pts_reference(values[-5:])


def test_pts_window_needs_five_rounds():
    assert not rounds_steady([100.0] * 4)
    assert rounds_steady([100.0] * 5)


def test_compare_schema_is_fixed():
    assert list(COLUMNS)[:6] == [
        "metric",
        "condition",
        "published",
        "replayed",
        "unit",
        "rel_error",
    ]


def test_cli_lists_protocols():
    out = subprocess.run(
        [sys.executable, "-m", "flashback", "replay", "--list"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    for name in NAMES:
        assert name in out.stdout


def test_cli_unknown_protocol_is_one_sentence_and_nonzero():
    out = subprocess.run(
        [sys.executable, "-m", "flashback", "replay", "nope", "--target", "sim:generic"],
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert out.stderr.strip().startswith("flashback: there is no protocol 'nope'")
    assert pl is not None


def test_default_target_is_the_review_drive_shrunk_by_scale():
    rep = fb.replay("anand2009-new-vs-used", scale="1/128")
    assert rep.meta["target_spec"].startswith("sim:intel-x25m-80g?scale=")
    want = 80e9 / 128
    assert abs(rep.meta["target_size_bytes"] - want) / want < 0.01
    used_fill = rep.compare().filter(pl.col("metric") == "span_end_gb")
    assert used_fill["status"].to_list() == ["setting"]
    assert used_fill["replayed"][0] == pytest.approx(used_fill["published"][0], rel=0.02)


@pytest.mark.parametrize("spec", ["sim:intel-x25m-80g", "sim:intel-x25m-80g?gc=fifo"])
def test_a_named_sim_target_is_shrunk_by_scale_too(spec):
    # the procedure is scaled, so the drive must be: a full-size drive under a 1/128
    # procedure would never leave its fresh state
    rep = fb.replay("anand2009-new-vs-used", target=spec, scale="1/128")
    want = 80e9 / 128
    assert abs(rep.meta["target_size_bytes"] - want) / want < 0.01
    assert "gc=fifo" in rep.meta["target_spec"] or "?" not in spec


def test_a_sim_target_with_its_own_scale_keeps_it():
    rep = fb.replay("anand2009-new-vs-used", target="sim:intel-x25m-80g?scale=1/256")
    assert abs(rep.meta["target_size_bytes"] - 80e9 / 256) / (80e9 / 256) < 0.01
    assert rep.scale == pytest.approx(1 / 256, rel=0.01)


def test_unstated_parameters_are_declared_and_their_default_is_replayed():
    from flashback.replay.base import registered

    seen = {}
    for proto in registered():
        for name, values in proto.unstated.items():
            assert name in proto.params, (proto.name, name)
            default, meaning, convert = proto.params[name]
            assert default in values and len(values) >= 2, (proto.name, name)
            assert "not stated" in meaning, (proto.name, name)
            for v in values:  # every value passes the parameter's own converter
                assert convert(name, v) == v
            seen[proto.name] = name
    assert seen == {
        "anandtech-trim-validation": "idle_before_s",
        "xbit-pts-degradation": "measure_s",
    }
