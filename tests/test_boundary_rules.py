"""One home for each rule across the Rust/Python boundary: the scale, ``sim:`` spec strings,
values crossing as Python objects, and the progress wrapper every native run goes through."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import pytest

import flashback as fb
from flashback import _native
from flashback.replay.scaling import parse_scale
from flashback.targets import parse_sim_spec, sim_spec

# --- one scale rule: units::parse_scale behind Python, the sim spec and the binding ----------


@pytest.mark.parametrize("text", ["1/64", "0.015625", "1.5625e-2", " 1 / 64 ", "2/128"])
def test_every_entry_point_reads_a_64th_alike(text):
    expected = float(Fraction(1, 64))
    assert _native.parse_scale("scale", text) == expected
    assert parse_scale(text) == expected
    cfg = fb.Target(f"sim:generic?scale={text.replace(' ', '')}").meta["config"]
    assert cfg["scale"] == expected


def test_a_float_and_its_fraction_make_the_same_drive():
    a = fb.Target("sim:generic?scale=1/64")
    b = fb.Target(f"sim:generic?scale={1 / 64!r}")
    assert a.size_bytes == b.size_bytes
    assert parse_scale(1 / 64) == parse_scale("1/64")


def test_a_bare_16_is_refused_everywhere_with_the_same_hint():
    """Before: Python read "16" as 16, units::parse_scale as 1/16, the sim spec refused it."""
    with pytest.raises(fb.ParameterError, match="write 1/16"):
        _native.parse_scale("scale", "16")
    with pytest.raises(fb.ParameterError, match="write 1/16"):
        parse_scale("16")
    with pytest.raises(fb.ParameterError, match="write 1/16"):
        parse_scale(16)
    with pytest.raises(fb.ParameterError, match="sim key scale=.*write 1/16"):
        fb.Target("sim:generic?scale=16")
    with pytest.raises(fb.ParameterError, match="write 1/16"):
        fb.replay("puget-cdm-loop", target="sim:generic", scale="16")


@pytest.mark.parametrize("bad", ["0", "-1/4", "abc", "1/0", "nan", "inf", "1.5", True, None])
def test_bad_scales_are_refused_by_every_entry_point(bad):
    if bad is None:
        assert parse_scale(None) is None
        return
    with pytest.raises(fb.ParameterError, match="scale"):
        parse_scale(bad)
    if isinstance(bad, str):
        with pytest.raises(fb.ParameterError, match="scale"):
            fb.Target(f"sim:generic?scale={bad}")


# --- sim: spec strings are taken apart and built in Rust only ----------------------------


def test_spec_parse_and_build_round_trip():
    assert parse_sim_spec("sim:generic?scale=1/64&op=0.07") == (
        "generic",
        {"scale": "1/64", "op": "0.07"},
    )
    assert parse_sim_spec("sim:generic") == ("generic", {})
    assert parse_sim_spec("/tmp/file") is None
    spec = sim_spec("generic", {"scale": "1/64", "op": 0.07})
    assert spec == "sim:generic?scale=1/64&op=0.07"
    assert parse_sim_spec(spec) == ("generic", {"scale": "1/64", "op": "0.07"})
    assert sim_spec("generic") == "sim:generic"


@pytest.mark.parametrize(
    "preset, keys", [("gen?eric", {}), ("generic", {"op": "1&gc=fifo"}), ("", {}), ("g", {"": 1})]
)
def test_spec_build_refuses_what_could_not_be_split_back(preset, keys):
    with pytest.raises(fb.ParameterError, match="cannot go into a spec"):
        sim_spec(preset, keys)


def test_spec_without_value_is_a_parameter_error():
    with pytest.raises(fb.ParameterError, match="has no value"):
        parse_sim_spec("sim:generic?op")


def test_replay_shrinks_a_sim_target_through_the_spec_builder():
    rep = fb.replay("anand2009-new-vs-used", target="sim:intel-x25m-80g?gc=fifo", scale="1/256")
    preset, keys = parse_sim_spec(rep.meta["target_spec"])
    assert preset == "intel-x25m-80g"
    assert keys == {"gc": "fifo", "scale": repr(1 / 256)}


def test_drive_for_reads_the_preset_through_the_parser():
    from flashback.replay.base import get_protocol

    proto = get_protocol("anandtech-trim-validation")
    default = parse_sim_spec(proto.default_target)[0]
    name, capacity, is_review = proto.drive_for(f"sim:{default}?scale=1/64")
    assert is_review and capacity
    assert proto.drive_for("/tmp/x.dat")[2] is False
    assert proto.drive_for("sim:generic?scale=1/64")[:2] == (name, capacity)


# --- values cross the boundary as Python objects, not JSON text -------------------------


def test_presets_cross_as_a_list_of_dicts_equal_to_the_cli_json():
    presets = _native.sim_presets()
    assert isinstance(presets, list) and all(isinstance(p, dict) for p in presets)
    out = subprocess.run(
        [sys.executable, "-m", "flashback", "presets", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == presets


def test_workload_and_target_meta_are_dicts():
    resolved = _native.parse_workload({"rw": "randwrite", "bs": "4k", "size": "1m"})
    assert isinstance(resolved, dict)
    assert resolved["bs"] == 4096 and resolved["size"] == 1 << 20
    t = fb.Target("sim:generic?scale=1/256")
    assert isinstance(t._t.meta(), dict)
    assert t.meta["size_bytes"] == t.size_bytes
    table, meta = t._t.run({"rw": "randwrite", "bs": "4k", "time": "1s"})
    assert isinstance(meta, dict) and meta["status"] == "complete"
    assert table.num_rows == 1


# --- every native run goes through one progress wrapper ----------------------------------


def test_run_and_trace_share_the_progress_wrapper(tmp_path):
    log = tmp_path / "t.iolog"
    ops = "".join(f"/dev/x write {i * 4096} 4096\n" for i in range(64))
    log.write_text(f"fio version 2 iolog\n/dev/x add\n/dev/x open\n{ops}/dev/x close\n")
    t = fb.Target("sim:generic?scale=1/256")
    seen: list[dict] = []
    cap = t.run(fb.Workload(rw="randwrite", bs="4k", time="1s"), progress=seen.append)
    assert len(seen) == cap.intervals.height and cap.meta["target"]["spec"] == t.spec
    seen.clear()
    cap = fb.replay_trace(log, target=t, progress=seen.append)
    assert seen and sum(r["write_bytes"] for r in seen) == 64 * 4096
    assert cap.meta["target"]["spec"] == t.spec
    assert cap.meta["trace"]["path"] == str(log)
