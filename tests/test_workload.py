"""Workload parsing through the Python surface (the native parser is unit-tested in Rust)."""

import pytest

import flashback as fb


def test_resolved_fields_are_bytes_and_seconds():
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, size="8g", time="60s", data="random")
    r = w.resolved
    assert r["bs"] == 4096
    assert r["size"] == 8 * 2**30
    assert r["time_s"] == 60.0
    assert r["iodepth"] == 32


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"rw": "scribble"}, "rw="),
        ({"bs": "4x"}, "bs="),
        ({"iodepth": 0}, "iodepth="),
        ({"data": "compress:101"}, "compress:N"),
        ({"rw": "read", "written": "1g"}, "writes nothing"),
    ],
)
def test_bad_fields_raise_parameter_error_with_one_sentence(kwargs, needle):
    with pytest.raises(fb.ParameterError) as ei:
        fb.Workload(**kwargs)
    msg = str(ei.value)
    assert needle in msg
    assert "\n" not in msg
    assert isinstance(ei.value, ValueError)


def test_replace_revalidates():
    w = fb.Workload(rw="write", bs="1m")
    assert w.replace(bs="128k").resolved["bs"] == 131072
    with pytest.raises(fb.ParameterError):
        w.replace(bs="0")
