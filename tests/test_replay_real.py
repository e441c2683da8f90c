"""Every protocol completes on a real regular file (and a loop device when root) at a tiny
scale: steps labelled, bytes accounted, discard and idle steps executed for real."""

from __future__ import annotations

import subprocess
import sys
import time

import polars as pl
import pytest

import flashback as fb

# Tiny scales and short runs: each protocol takes a second or two on a file.
CASES = {
    "puget-cdm-loop": ({"loops": 2}, 1 / 4096),
    "behardware-used-trim": ({}, 1 / 4096),
    "xbit-pts-degradation": ({"idle_s": 2000.0}, 1 / 4096),
    "anandtech-consistency": ({"run_s": 2000.0}, 1 / 4096),
    "anandtech-trim-validation": ({}, 1 / 4096),
    "anand2009-new-vs-used": ({}, 1 / 4096),
    "snia-pts": (
        {
            "block_sizes": ("4k", "64k"),
            "rwmix_reads": (0, 100),
            "round_s": 20.0,
            "max_rounds": 5,
            "wsat_fills": 1.0,
            "hir_precondition_fills": 0.5,
            "idle_s": (20.0, 40.0),
            "cycles": 2,
            "burst_s": 20.0,
            "baseline_s": 40.0,
        },
        1 / 128,
    ),
}


def check_accounting(rep: fb.Replay) -> None:
    """Labels, bytes and times of a finished replay add up."""
    assert rep.status == "complete"
    names = [s["step"] for s in rep.step_records]
    assert len(names) == len(set(names)), "step labels must be unique"
    runs = [s for s in rep.step_records if s["kind"] == "run"]
    assert runs, "a protocol runs workloads"
    labelled = set(rep.intervals["step"].unique())
    for s in runs:
        assert s["step"] in labelled, f"{s['step']} has no intervals"
        df = rep.step(s["step"])
        written = int(df["write_bytes"].sum())
        assert s["host_written_end_bytes"] - s["host_written_start_bytes"] == written
        if written:
            assert int(df["host_written_bytes"][-1]) == s["host_written_end_bytes"]
    # host bytes count from the last erase step, and every byte written since is accounted
    last_erase = max(i for i, s in enumerate(rep.step_records) if s["kind"] == "erase")
    since = [s["step"] for s in rep.step_records[last_erase:] if s["kind"] == "run"]
    total = int(rep.intervals.filter(pl.col("step").is_in(since))["write_bytes"].sum())
    assert rep.meta["host_written_bytes"] == total
    t = rep.intervals["t_s"].to_numpy()
    assert (t[1:] >= t[:-1]).all(), "t_s runs forward across steps"
    steps = rep.steps
    assert steps.height == len(rep.step_records)
    assert {"step", "kind", "duration_s", "written_gb", "write_mbps"} <= set(steps.columns)


@pytest.mark.parametrize("name", sorted(CASES))
def test_protocol_completes_on_a_regular_file(name, tmp_path):
    params, scale = CASES[name]
    path = tmp_path / "target.bin"
    if name == "snia-pts":
        target = fb.Target(path, size="24m")
        rep = fb.replay(name, target=target, scale=scale, **params)
    else:
        rep = fb.replay(name, target=path, scale=scale, **params)
    assert path.exists()
    check_accounting(rep)
    assert rep.meta["target_kind"] == "file"
    kinds = {s["kind"] for s in rep.step_records}
    if name in (
        "behardware-used-trim",
        "xbit-pts-degradation",
        "anandtech-trim-validation",
        "puget-cdm-loop",
    ):
        assert "discard" in kinds
    for s in rep.step_records:
        if s["kind"] == "idle":  # real idle: wall-clock time passed
            assert s["duration_s"] >= 0.9 * s["labels"]["idle_s"]
    cmp = rep.compare()
    assert cmp.columns[:6] == ["metric", "condition", "published", "replayed", "unit", "rel_error"]
    assert cmp.height > 0
    # save / load round trip
    rep.save(tmp_path / "saved")
    back = fb.Replay.load(tmp_path / "saved")
    assert back.intervals.equals(rep.intervals)
    assert back.steps.equals(rep.steps)
    assert back.compare().equals(cmp)


def test_idle_step_takes_real_time(tmp_path):
    t0 = time.monotonic()
    rep = fb.replay(
        "xbit-pts-degradation",
        target=tmp_path / "t.bin",
        scale=1 / 4096,
        idle_s=0.5 * 4096,
        measure_s=60.0,
    )
    assert time.monotonic() - t0 >= 0.5
    idle = [s for s in rep.step_records if s["kind"] == "idle"][0]
    assert idle["duration_s"] == pytest.approx(0.5, abs=0.2)


def test_puget_steps_are_labelled_per_loop_and_test(tmp_path):
    rep = fb.replay("puget-cdm-loop", target=tmp_path / "t.bin", scale=1 / 4096, loops=2, passes=1)
    labels = [s["step"] for s in rep.step_records]
    assert labels[0] == "secure_erase"
    assert "cdm_loop_0001/seq_write/pass_1" in labels
    assert "cdm_loop_0000/rand4k_qd32_read/pass_1" in labels
    assert "cdm_loop_0001/trim" in labels
    steps = rep.steps.filter(pl.col("kind") == "run")
    assert set(steps["test"].unique()) == {"prepare", "seq", "rand512k", "rand4k", "rand4k_qd32"}
    # CrystalDiskMark's timed runs on a real file: the preparation writes the test file once,
    # each Seq write run whole passes over it, and every step a whole number of blocks
    test_bytes = 1 << 20
    for loop in (0, 1):
        assert int(rep.step(f"cdm_loop_{loop:04d}/prepare")["write_bytes"].sum()) == test_bytes
        seq = steps.filter(
            (pl.col("loop") == loop) & (pl.col("test") == "seq") & (pl.col("direction") == "write")
        )
        assert sorted(set(seq["cdm_pass"])) == [0, 1]  # the unscored run, then the scored one
        for k in (0, 1):
            run = seq.filter(pl.col("cdm_pass") == k)
            assert round(float(run["written_gb"].sum()) * 1e9) % test_bytes == 0
            assert float(run["seconds"].sum()) >= 6.0 / 4096


def test_cli_replay_writes_a_directory(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "flashback",
            "replay",
            "anandtech-trim-validation",
            "--target",
            str(tmp_path / "t.bin"),
            "--scale",
            "1/4096",
            "-o",
            str(tmp_path / "rep"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "as_ssd_seq_write" not in out.stdout or "avg_mbps" in out.stdout
    rep = fb.Replay.load(tmp_path / "rep")
    check_accounting(rep)


@pytest.mark.parametrize("name", ["anandtech-trim-validation", "xbit-pts-degradation"])
def test_protocol_completes_on_a_loop_device(name, loopdev):
    loop_device = loopdev(64 << 20)  # skips (with the reason) when not root
    with pytest.raises(fb.SafetyError):  # a block device needs destroy= naming it again
        fb.replay(name, target=loop_device)
    params = {"idle_s": 2000.0} if name == "xbit-pts-degradation" else {}
    rep = fb.replay(name, target=loop_device, destroy=loop_device, **params)
    check_accounting(rep)
    assert rep.meta["target_kind"] == "block"
    assert rep.scale == pytest.approx((64 << 20) / 240_057_409_536)


@pytest.mark.parametrize("review_gb", [80, 120, 240])
@pytest.mark.parametrize("denominator", [1, 2, 3, 8, 16, 64, 100, 4096])
def test_a_created_file_reads_back_at_the_scale_it_was_created_at(review_gb, denominator):
    # A file target is created at review × scale rounded down to a MiB, so its capacity ratio
    # is a hair under the scale; taken as the scale, every MiB-aligned byte count came out a
    # MiB short of the replay that created the file.
    from flashback.replay.scaling import created_bytes, default_scale, idema_bytes

    review = idema_bytes(review_gb)
    scale = 1 / denominator
    assert default_scale(created_bytes(review, scale), review) == scale
    # a size not made by that rule keeps its plain ratio (a real 120 GB drive for a 240 GB review)
    assert default_scale(idema_bytes(120), idema_bytes(240)) == idema_bytes(120) / idema_bytes(240)


def test_a_replay_again_on_its_own_file_repeats_its_byte_counts(tmp_path):
    path = tmp_path / "t.bin"
    kw = {"torture_s": 60.0}
    first = fb.replay("anandtech-trim-validation", target=path, scale=1 / 4096, **kw)
    again = fb.replay("anandtech-trim-validation", target=path, **kw)
    assert again.meta["scale"] == first.meta["scale"] == 1 / 4096
    # the same workloads and spans, step by step (AS-SSD's file was 15 MiB, not 16, before),
    # and the same bytes in every step that is not timed (the torture is)
    cols = ["step", "workload", "offset_bytes", "size_bytes"]
    assert first.steps.select(cols).equals(again.steps.select(cols))
    sized = [r.steps.filter(pl.col("step") != "torture")["written_gb"] for r in (first, again)]
    assert sized[0].equals(sized[1])
