"""The simulated SSD through the Python surface: capture schema, determinism, target calls,
errors and the presets listing. The FTL itself is validated against analytic models in
``native/tests/sim_wa.rs``."""

import json
import subprocess
import sys

import polars as pl
import pytest

import flashback as fb

SMALL = "sim:intel-520-120g?scale=1/256"

SIM_COLUMNS = ["nand_written_bytes", "wa", "free_blocks", "gc_copied_bytes"]
BASE_COLUMNS = [
    "t_s",
    "interval_s",
    "write_ios",
    "write_bytes",
    "write_iops",
    "write_mbps",
    "write_lat_p99_us",
    "read_mbps",
    "host_written_bytes",
    "step",
]


def test_run_gives_capture_schema_with_ground_truth():
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, time="20s", random="uniform")
    cap = fb.run("sim:intel-520-120g?scale=1/64", w)
    df = cap.intervals
    for c in BASE_COLUMNS + SIM_COLUMNS:
        assert c in df.columns, c
    assert df.height == 20
    t_s = df["t_s"].to_list()
    assert t_s[:-1] == pytest.approx([float(i) for i in range(1, 20)])
    # the commands in flight at 20 s are reaped, as fio does: the last row ends with them
    assert 20.0 <= t_s[-1] <= 20.0 + df["write_lat_max_us"].max() / 1e6
    assert cap.meta["status"] == "complete"
    assert cap.meta["target"]["kind"] == "sim"
    # ground truth: NAND ≥ host, counters never decrease, the cliff is an event
    nand = df["nand_written_bytes"].to_list()
    assert nand == sorted(nand)
    assert nand[-1] >= df["host_written_bytes"][-1]
    names = [e["name"] for e in cap.meta["events"]]
    assert "free_pool_exhausted" in names
    ev = next(e for e in cap.meta["events"] if e["name"] == "free_pool_exhausted")
    assert 0 < ev["t_s"] < 20 and ev["host_written_bytes"] > 0
    # after the cliff, throughput falls and WA rises
    first, last = df.head(3), df.tail(3)
    assert last["write_mbps"].mean() < 0.8 * first["write_mbps"].mean()
    assert last["wa"].mean() > 1.2


def test_same_seed_gives_identical_frames():
    w = fb.Workload(
        rw="randrw", rwmix_read=30, bs="4k", iodepth=8, time="5s", random="uniform", seed=9
    )
    a = fb.run(SMALL, w).intervals
    b = fb.run(SMALL, w).intervals
    assert a.equals(b)
    c = fb.run(SMALL, w.replace(seed=10)).intervals
    assert not a.equals(c)


def test_queue_depth_matters():
    def iops(qd):
        w = fb.Workload(rw="randread", bs="4k", iodepth=qd, time="2s")
        t = fb.Target(SMALL)
        t.run(fb.Workload(rw="write", bs="1m"))
        return t.run(w).intervals["read_iops"].mean()

    assert iops(32) > 3 * iops(1)


def test_target_discard_idle_sanitize():
    t = fb.Target("sim:generic?scale=1/256")
    assert t.kind == "sim"
    size = t.size_bytes
    t.run(fb.Workload(rw="write", bs="4k"))
    t.run(fb.Workload(rw="randwrite", bs="4k", iodepth=32, random="uniform", written=size))
    assert t.host_written_bytes == 2 * size
    m = t.meta
    assert m["free_blocks"] <= m["config"]["features"]["gc_reserve"] + 2
    # idle time lets background GC rebuild the free pool
    assert t.idle("60s") is True
    assert t.meta["free_blocks"] > m["free_blocks"] + 4
    # discard unmaps; the next fill after TRIM sees no GC copies
    t.discard(offset=0)
    gc0 = t.meta["gc_copied_bytes"]
    t.run(fb.Workload(rw="write", bs="1m", size=size // 2))
    assert t.meta["gc_copied_bytes"] == gc0
    # secure erase resets everything
    t.sanitize()
    assert t.host_written_bytes == 0
    m = t.meta
    assert m["nand_written_bytes"] == 0 and m["events"] == []
    assert m["free_blocks"] == m["config"]["geometry"]["blocks"]


def test_capture_counts_from_the_last_secure_erase():
    t = fb.Target(SMALL)
    t.run(fb.Workload(rw="write", bs="1m", size="64m"))
    cap = t.run(fb.Workload(rw="write", bs="1m", size="64m"), step="second")
    assert cap.intervals["host_written_bytes"][-1] == 128 * 2**20
    assert set(cap.intervals["step"].to_list()) == {"second"}


def test_compressible_data_is_faster_on_sandforce():
    def mbps(data):
        w = fb.Workload(rw="write", bs="128k", iodepth=4, time="3s", data=data)
        return fb.run(SMALL, w).intervals["write_mbps"].mean()

    zeros, rnd = mbps("zeros"), mbps("random")
    assert zeros > 2 * rnd


@pytest.mark.parametrize(
    "spec, exc, needle",
    [
        ("sim:nosuch", fb.TargetError, "not a simulator preset"),
        ("sim:generic?bogus=1", fb.ParameterError, "not a sim key"),
        ("sim:generic?op=0", fb.ParameterError, "op="),
        ("sim:generic?op=-0.1", fb.ParameterError, "op="),
        ("sim:generic?capacity=1000000", fb.ParameterError, "multiple"),
        ("sim:generic?gc=lru", fb.ParameterError, "greedy"),
        ("sim:generic?scale=2", fb.ParameterError, "scale"),
        ("sim:generic?t_read_us=5000", fb.ParameterError, "t_read_us"),
        ("sim:generic?idle_gc=maybe", fb.ParameterError, "on or off"),
    ],
)
def test_bad_parameters_raise_one_sentence(spec, exc, needle):
    with pytest.raises(exc) as ei:
        fb.Target(spec)
    msg = str(ei.value)
    assert needle in msg
    assert "\n" not in msg


def test_presets_listing():
    out = subprocess.run(
        [sys.executable, "-m", "flashback", "presets", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    presets = json.loads(out.stdout)
    names = {p["name"] for p in presets}
    for n in [
        "intel-520-120g",
        "intel-530-240g",
        "intel-335-240g",
        "intel-330-120g",
        "intel-510-120g",
        "intel-320-120g",
        "ocz-vertex3-120g",
        "crucial-m4-128g",
        "intel-x25m-80g",
        "generic",
        "generic-op25",
        "intel-530-240g-op25",
    ]:
        assert n in names, n
    p = next(p for p in presets if p["name"] == "intel-520-120g")
    assert p["features"]["compression"] is True
    assert p["sources"]
    g = next(p for p in presets if p["name"] == "generic")
    assert g["op"] == pytest.approx(0.07)
    assert g["features"]["compression"] is False and g["features"]["slc_cache"] == 0
    assert next(p for p in presets if p["name"] == "generic-op25")["op"] == pytest.approx(0.25)
    table = subprocess.run(
        [sys.executable, "-m", "flashback", "presets"], capture_output=True, text=True, check=True
    )
    assert "intel-520-120g" in table.stdout


def test_every_preset_opens_and_runs_small():
    presets = fb._native.sim_presets()
    for p in presets:
        t = fb.Target(f"sim:{p['name']}?scale=1/512")
        cap = t.run(fb.Workload(rw="randwrite", bs="4k", iodepth=32, time="1s"))
        assert cap.intervals["write_iops"][0] > 1000, p["name"]
        assert isinstance(cap.intervals, pl.DataFrame)


@pytest.mark.parametrize("scale", [1 / 16, 0.06249998, 1 / 3])
def test_timed_run_at_a_scaled_interval_has_no_sliver_row(scale):
    # A replay asks for 180 s × scale with a 1 s × scale interval; float rounding must not
    # leave the commands in flight at the time limit in a nanoseconds-long last row.
    t = fb.Target("sim:crucial-m4-128g?scale=1/64")
    w = fb.Workload(
        rw="randwrite", bs="4k", iodepth=32, size="512m", time=180 * scale, interval=scale
    )
    cap = t.run(w)
    df = cap.intervals
    assert df.height == 180, df.tail(3)
    assert df["interval_s"].min() >= 0.5 * scale, df.tail(3)
    assert df["write_mbps"].max() < 2 * df["write_mbps"].median(), df.tail(3)
    assert int(df["write_bytes"].sum()) == cap.meta["totals"]["write_bytes"]


def _trim_replay_mbps(target: str, **params) -> dict[str, float]:
    from flashback.replay.procedures.common import mbps

    r = fb.replay("anandtech-trim-validation", target=target, scale=1 / 128, **params)
    return {s: mbps(r.step(s)) for s in ("clean", "after_torture", "after_trim")}


def test_trim_efficacy_moves_the_after_trim_pass_with_one_write_frontier():
    # BeHardware (seed 001): TRIM brings the Crucial m4 back to its new-drive level. With one
    # write frontier the after-torture AS-SSD pass shares blocks with GC's copies of torture
    # data, so the after-TRIM pass must copy whatever TRIM left mapped. Idle 60 s (idle GC
    # off) lets the torture's queued NAND work drain before each pass.
    base = "sim:crucial-m4-128g?frontier=shared&idle_gc=off"
    got = {e: _trim_replay_mbps(f"{base}&trim_efficacy={e}", idle_before_s=60) for e in (0, 0.5, 1)}
    after = [got[e]["after_trim"] for e in (0, 0.5, 1)]
    assert after[0] < after[1] < after[2], got
    assert after[2] >= 1.05 * after[0], got
    assert after[2] == pytest.approx(got[1]["clean"], rel=0.03), got


def test_sandforce_dirty_state_keeps_the_after_trim_pass_low_whatever_trim_efficacy():
    # the SandForce presets' dirty state (fitted off-replay): TRIM does not restore speed
    spec = "sim:intel-530-240g"
    cfg = fb.Target(spec + "?scale=1/128").meta["config"]["features"]
    assert cfg["dirty_rate"] < 1
    for e in (0, 1):
        got = _trim_replay_mbps(f"{spec}?trim_efficacy={e}", idle_before_s=60)
        assert got["after_trim"] <= (cfg["dirty_rate"] + 0.03) * got["clean"], (e, got)
    # without the dirty state a full TRIM restores the clean rate
    got = _trim_replay_mbps(f"{spec}?trim_efficacy=1&dirty_rate=1", idle_before_s=60)
    assert got["after_trim"] == pytest.approx(got["clean"], rel=0.03), got


def _steady_random_rates(extra: str) -> pl.Series:
    t = fb.Target(f"sim:generic?scale=1/64&idle_gc=off{extra}")
    t.run(fb.Workload(rw="write", bs="128k", iodepth=4))
    two = 2 * t.size_bytes // 4096 * 4096
    t.run(fb.Workload(rw="randwrite", bs="4k", iodepth=32, random="uniform", written=two))
    one = t.size_bytes // 4096 * 4096
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, random="uniform", seed=5, written=one)
    df = t.run(w).intervals
    return df["write_mbps"].head(df.height - 1)  # the last interval is partial


def test_gc_hysteresis_shows_as_per_second_oscillation():
    # Without hysteresis GC frees one block per block filled and the per-second rate is
    # flat; refilling the pool to gc_high in one go stalls the host for seconds, then lets it
    # run free. The variation comes from GC copying, not from noise: same seed, same series.
    def cv(s: pl.Series) -> float:
        return float(s.std() / s.mean())

    plain = _steady_random_rates("")
    hyst = _steady_random_rates("&gc_high=16")
    sampled = _steady_random_rates("&gc_high=16&gc_sample=16")
    assert cv(plain) < 0.08, cv(plain)
    assert cv(hyst) > 0.15 and cv(sampled) > 0.15, (cv(hyst), cv(sampled))
    assert _steady_random_rates("&gc_high=16&gc_sample=16").to_list() == sampled.to_list()


@pytest.mark.parametrize(
    "query, words",
    [
        ("dirty_rate=0", "dirty_rate"),
        ("frontier=both", "frontier"),
        ("gc_sample=1", "gc_sample"),
        ("gc=fifo&gc_sample=4", "greedy"),
        ("gc_high=4000", "gc_high"),
        # at or below the reserve GC would start and stop at once: before, this was silently
        # read as gc_reserve + 1 while the metadata recorded the value given
        ("gc_reserve=8&gc_high=5", "gc_high=5 is not above gc_reserve=8"),
        ("gc_reserve=8&gc_high=8", "gc_high=8 is not above gc_reserve=8"),
        ("gc_high=2", "gc_high=2 is not above gc_reserve=2 \\(the free blocks"),
    ],
)
def test_new_gc_keys_refuse_bad_values(query, words):
    with pytest.raises(fb.ParameterError, match=words):
        fb.Target(f"sim:generic?scale=1/64&{query}")


@pytest.mark.parametrize("key", ["slc_cache", "buffer", "capacity"])
def test_a_bad_size_in_a_sim_spec_names_it_as_a_sim_key(key):
    # every other spec error says "sim key k=v"; sizes said only "k=v is not a size"
    with pytest.raises(fb.ParameterError, match=f'^sim key {key}="lots" is not a size; use'):
        fb.Target(f"sim:generic?scale=1/64&{key}=lots")


def test_gc_high_is_checked_against_the_reserve_in_effect_at_the_scale():
    """A scaled-down drive scales gc_reserve with it (8 × scale, at least 2) unless it is
    given; gc_high is held to that reserve, and the error says it was scaled."""
    small = fb.Target("sim:generic?scale=1/256&gc_high=5").meta["config"]["features"]
    assert (small["gc_reserve"], small["gc_high"]) == (2, 5)
    with pytest.raises(fb.ParameterError, match="scaled with the drive"):
        fb.Target("sim:generic?scale=1/256&gc_high=2")
    # the default (0) still means one block past the reserve, at every scale
    for scale in ("1/256", "1/64", "1"):
        f = fb.Target(f"sim:generic?scale={scale}").meta["config"]["features"]
        assert f["gc_high"] == 0 and f["gc_reserve"] >= 2


def test_a_timed_run_counts_the_commands_it_reaps_and_their_time():
    # fio at runtime= stops issuing, reaps the commands in flight and counts them; its runtime
    # ends at the last completion. Counted at the limit instead, a GC stall those commands
    # waited on fell between two steps: in neither step's time, and the IOPS flattered.
    # (A small drive given as a capacity, not a scale: a scaled drive stops issuing early so
    # that it drains scale × the commands in flight, test_sim_scale.py.)
    t = fb.Target("sim:intel-520-120g?capacity=2g")
    t.run(fb.Workload(rw="write", bs="128k", iodepth=32))
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=32, time="2s", random="uniform")
    clock = t.run(w).meta["sim"]["drive_time_s"]
    for _ in range(3):
        cap = t.run(w)
        after = cap.meta["sim"]["drive_time_s"]
        # every ns of the drive's clock is in one run: the run ends at its last completion
        assert cap.meta["duration_s"] == pytest.approx(after - clock, abs=1e-6)
        assert cap.meta["duration_s"] > 2.0
        df = cap.intervals
        assert df.height == 2  # the reaped commands stretch the last row, no sliver row
        assert float(df["interval_s"].sum()) == pytest.approx(cap.meta["duration_s"])
        assert int(df["write_ios"].sum()) == cap.meta["totals"]["write_ios"]
        clock = after
