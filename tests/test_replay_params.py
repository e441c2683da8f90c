"""Replay parameters are typed by their protocol: text from ``--param`` is converted, wrong
types and out-of-range values are refused with one sentence before anything runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

import flashback as fb
from flashback.replay import get_protocol


@pytest.mark.parametrize(
    "given, want",
    [
        ({"trim": "False"}, {"trim": False}),
        ({"trim": "true"}, {"trim": True}),
        ({"trim": 0}, {"trim": False}),
        ({"loops": "3"}, {"loops": 3}),
        ({"loops": 3.0}, {"loops": 3}),
        ({"loops": "none"}, {"loops": None}),
        ({"passes": "1"}, {"passes": 1}),
        ({"test_size_bytes": "64m"}, {"test_size_bytes": 64 << 20}),
        ({"data": "zeros"}, {"data": "zeros"}),
    ],
)
def test_puget_parameters_are_converted(given, want):
    got = get_protocol("puget-cdm-loop").resolve(given)
    for k, v in want.items():
        assert got[k] == v and type(got[k]) is type(v)


@pytest.mark.parametrize(
    "given, says",
    [
        ({"trim": "maybe"}, "trim='maybe' is not a boolean"),
        ({"loops": "abc"}, "loops='abc' is not an integer"),
        ({"loops": 0}, "loops=0 is out of range"),
        ({"loops": 2.5}, "loops=2.5 is not a whole number"),
        ({"passes": -1}, "passes=-1 is out of range"),
        ({"passes": True}, "passes=True is not a number"),
        ({"data": "ones"}, "use one of: random, zeros"),
        ({"total_written_bytes": "inf"}, "not a finite number"),
        ({"test_size_bytes": "-5"}, "out of range"),
    ],
)
def test_puget_bad_values_are_refused(given, says):
    with pytest.raises(fb.ParameterError, match="puget-cdm-loop: ") as e:
        get_protocol("puget-cdm-loop").resolve(given)
    assert says in str(e.value)


def test_other_protocols_have_their_own_types():
    snia = get_protocol("snia-pts")
    assert snia.resolve({"tests": "iops,wsat"})["tests"] == ("iops", "wsat")
    assert snia.resolve({"rwmix_reads": [0, "100"]})["rwmix_reads"] == (0, 100)
    with pytest.raises(fb.ParameterError, match="rwmix_reads=101 is out of range"):
        snia.resolve({"rwmix_reads": [101]})
    with pytest.raises(fb.ParameterError, match="use one of: iops, wsat, hir"):
        snia.resolve({"tests": ["iops", "nope"]})
    cons = get_protocol("anandtech-consistency")
    assert cons.resolve({"op25": "False"})["op25"] is False
    with pytest.raises(fb.ParameterError, match="run_s=0.0 is out of range"):
        cons.resolve({"run_s": 0})


def test_every_parameter_declares_a_converter_its_default_passes():
    from flashback.replay.base import protocols

    for name in protocols()["name"]:
        p = get_protocol(name)
        for k, spec in p.params.items():
            assert len(spec) == 3 and callable(spec[2]), (name, k)
            if spec[0] is not None:
                spec[2](k, spec[0])  # the default is a valid value


def test_cli_param_false_is_false_and_bad_values_are_one_line():
    p = subprocess.run(
        [sys.executable, "-m", "flashback", "replay", "puget-cdm-loop", "--param", "loops=abc"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2
    assert "loops='abc' is not an integer" in p.stderr and "Traceback" not in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "flashback", "replay", "puget-cdm-loop", "--param", "passes=-1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "passes=-1 is out of range" in p.stderr
