"""fb.read_fio on real fio output of several versions and layouts from public repositories
(../shared/realdata, see its SOURCES.md). Every expected value is a number fio itself printed
in the same run (JSON totals, the normal output's ``issued`` line), never flashback's output."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import flashback as fb

REPO = Path(__file__).resolve().parents[1]
REAL = REPO.parent / "shared" / "realdata"
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/realdata is not present")

# fio-2.2.10, default logging (no log_avg_msec): one 500 ms window per row, carrying bs=4096
JS = "asheplyakov__ceph-jemalloc-bench__journal-single_"
JS_LOGS = [
    REAL / f"{JS}journal_single_bw.log_bw.1.log",
    REAL / f"{JS}journal_single_iops.log_iops.1.log",
]
DS = "asheplyakov__ceph-jemalloc-bench__desktop_ssd_"
DS_LOGS = [REAL / f"{DS}journal_bw.log_bw.1.log", REAL / f"{DS}journal_iops.log_iops.1.log"]
# fio-3.1, log_avg_msec=250, one job; JSON beside
PM = "louwrentius__fio-plot__benchmark_data_SERVER_IBM_M1015_SAMSUNG_PM883_randwrite-"
PM_LOGS = [REAL / f"{PM}iodepth-16-numjobs-1_{k}.1.log" for k in ("bw", "iops", "lat", "clat")]
PM_JSON = REAL / f"{PM}16-1.json"
# fio-3.1, randrw numjobs=4 group_reporting, per-job logs .1-.4, log_avg_msec=250
RW = "louwrentius__fio-plot__benchmark_data_HPDL380G8_RAID_NEW_P420i_INTEL_RW_randrw-"
RW_LOGS = [
    REAL / f"{RW}iodepth-16-numjobs-4_{k}.{n}.log" for k in ("bw", "iops") for n in (1, 2, 3, 4)
]
RW_JSON = REAL / f"{RW}16-4.json"
# fio-3.8 json+, numjobs=2 group_reporting (job_runtime summed over the two jobs)
WIPC = REAL / (
    "ljishen__SSSPT__analysis_data_ad_hoc_exprs_fixed_random_LBAs_hp_75AS1014T9HW_"
    "100pctseqfill_random_lbas_wipc.sdb.fio"
)


def _json(p):
    return json.loads(p.read_text())


def test_fio2_default_logs_are_windows_not_single_ios():
    # fio-2.2.10 printed: write: io=304194MB, bw=86526KB/s, runt=3600000msec; issued w=77873622
    cap = fb.read_fio(JS_LOGS + [REAL / f"{JS}result.txt"])
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-2.2.10"
    assert df["write_ios"].sum() == pytest.approx(77873622, rel=2e-4)
    assert df["write_bytes"].sum() == pytest.approx(304194 * 2**20, rel=2e-4)
    # mean rate over the hour, as fio printed it (86526 KiB/s), not 0.0082 MB/s
    mbps = df["write_bytes"].sum() / df["interval_s"].sum() / 1e6
    assert mbps == pytest.approx(86526 * 1024 / 1e6, rel=2e-4)
    # the run ended 51 ms after the last sample: the last row is short, not a cliff
    last = df.tail(1)
    assert last["interval_s"][0] == pytest.approx(0.949)
    assert last["write_mbps"][0] > 0.8 * df["write_mbps"].median()


def test_fio2_second_drive_matches_its_issued_count():
    # desktop_ssd/result.txt: issued w=30232826, io=118097MB
    df = fb.read_fio(DS_LOGS + [REAL / f"{DS}result.txt"]).intervals
    assert df["write_ios"].sum() == pytest.approx(30232826, rel=2e-4)
    assert df["write_bytes"].sum() == pytest.approx(118097 * 2**20, rel=2e-4)


def test_fio2_logs_with_a_3x_version_are_refused():
    with pytest.raises(fb.FioFormatError, match="not written by fio-3.1"):
        fb.read_fio(JS_LOGS, fio_version="3.1")


def test_logs_against_another_runs_output_are_refused():
    # desktop_ssd logs checked against journal-single's result.txt: 2.6x apart
    with pytest.raises(fb.FioFormatError, match="write_ios=77873622"):
        fb.read_fio(DS_LOGS + [REAL / f"{JS}result.txt"])


def test_a_directory_of_two_runs_is_refused(tmp_path):
    for p in JS_LOGS + DS_LOGS:
        shutil.copy(p, tmp_path / p.name)
    with pytest.raises(fb.FioFormatError, match="more than one run"):
        fb.read_fio(tmp_path)


def test_fio31_averaged_logs_lat_and_clat_apart():
    doc = _json(PM_JSON)
    w = doc["jobs"][0]["write"]
    cap = fb.read_fio(PM_LOGS + [PM_JSON])
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-3.1"
    # totals fio printed: 3772948 I/Os, 15453995008 bytes in 60001 ms
    assert df["write_ios"].sum() == pytest.approx(w["total_ios"], rel=0.01)
    assert df["write_bytes"].sum() == pytest.approx(w["io_bytes"], rel=0.01)
    # lat logs (ns in 3.x) → lat columns; clat logs → clat columns; both near fio's means
    assert df["write_lat_mean_us"].mean() == pytest.approx(w["lat_ns"]["mean"] / 1000, rel=0.02)
    assert df["write_clat_mean_us"].mean() == pytest.approx(w["clat_ns"]["mean"] / 1000, rel=0.02)
    assert (df["write_lat_mean_us"] > df["write_clat_mean_us"]).mean() > 0.9
    # window means are not percentiles nor maxima: null, never filled with means
    for c in ("p50", "p99", "p999", "max"):
        assert df[f"write_lat_{c}_us"].null_count() == df.height
        assert df[f"write_clat_{c}_us"].null_count() == df.height


def test_fio3_latency_logs_without_a_version_are_refused():
    # a 4-field latency log is µs in fio 2.x and ns in 3.x: without the JSON we cannot tell
    with pytest.raises(fb.FioFormatError, match="cannot tell µs"):
        fb.read_fio(PM_LOGS)
    df = fb.read_fio(PM_LOGS, fio_version="3.1").intervals
    w = _json(PM_JSON)["jobs"][0]["write"]
    assert df["write_lat_mean_us"].mean() == pytest.approx(w["lat_ns"]["mean"] / 1000, rel=0.02)


def test_fio31_per_job_logs_are_summed_and_checked():
    doc = _json(RW_JSON)
    (j,) = doc["jobs"]  # group_reporting: one entry for four jobs
    df = fb.read_fio(RW_LOGS + [RW_JSON]).intervals
    for d in ("read", "write"):
        assert df[f"{d}_ios"].sum() == pytest.approx(j[d]["total_ios"], rel=0.01)
        assert df[f"{d}_bytes"].sum() == pytest.approx(j[d]["io_bytes"], rel=0.01)


def test_fio31_json_group_reporting_rates_are_fios():
    (j,) = _json(RW_JSON)["jobs"]
    df = fb.read_fio(RW_JSON).intervals
    assert df.height == 1
    for d in ("read", "write"):
        # fio printed bw in KiB/s over the direction's runtime (60002 ms), not elapsed (61 s)
        assert df[f"{d}_mbps"][0] == pytest.approx(j[d]["bw"] * 1024 / 1e6, rel=1e-4)
        assert df[f"{d}_iops"][0] == pytest.approx(j[d]["iops"], rel=1e-4)
        assert df[f"{d}_lat_mean_us"][0] == pytest.approx(j[d]["lat_ns"]["mean"] / 1000)
        assert df[f"{d}_clat_p99_us"][0] == pytest.approx(
            j[d]["clat_ns"]["percentile"]["99.000000"] / 1000
        )
        assert df[f"{d}_lat_p99_us"][0] is None  # fio printed no lat percentiles


def test_fio38_json_plus_job_runtime_summed_over_jobs_is_not_used():
    (j,) = _json(WIPC)["jobs"]
    w = j["write"]
    assert j["job_runtime"] > 1.9 * w["runtime"]  # the file's own evidence: summed over 2 jobs
    df = fb.read_fio(WIPC).intervals
    assert df["write_mbps"][0] == pytest.approx(w["bw_bytes"] / 1e6, rel=1e-5)
    assert df["interval_s"][0] == pytest.approx(w["runtime"] / 1000)
    # no N in 3.8 latency blocks: the count is total_ios, the values are not null
    assert df["write_lat_mean_us"][0] == pytest.approx(w["lat_ns"]["mean"] / 1000)
    assert df["write_lat_max_us"][0] == pytest.approx(w["lat_ns"]["max"] / 1000)
    # json+ bins: percentiles land on the values fio printed
    for key, c in (("50.000000", "p50"), ("99.000000", "p99"), ("99.900000", "p999")):
        assert df[f"write_clat_{c}_us"][0] == pytest.approx(w["clat_ns"]["percentile"][key] / 1000)


def test_a_json_whose_totals_disagree_is_refused(tmp_path):
    doc = _json(RW_JSON)
    doc["jobs"][0]["write"]["bw"] *= 2  # fio's own bw no longer matches bytes / runtime
    p = tmp_path / "x.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(fb.FioFormatError, match="printed bw="):
        fb.read_fio(p)


def test_a_json_whose_version_contradicts_its_layout_is_refused(tmp_path):
    doc = _json(RW_JSON)
    doc["fio version"] = "fio-2.2.10"  # but ns blocks and io_kbytes are fio 3.x
    p = tmp_path / "x.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(fb.FioFormatError, match="not written by fio-2.2.10"):
        fb.read_fio(p)


def test_negative_values_are_refused(tmp_path):
    lines = JS_LOGS[0].read_text().splitlines()[:10]
    lines[6] = "3500, -4, 1, 4096"
    p = tmp_path / "neg_bw.1.log"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(fb.FioFormatError, match="line 7: field 2 is negative"):
        fb.read_fio(p)


def test_rows_are_evenly_spaced_but_the_last():
    df = fb.read_fio(JS_LOGS, fio_version="2.2.10").intervals
    iv = df["interval_s"].to_numpy()
    assert (iv[:-1] == 1.0).all() and 0 < iv[-1] <= 1.0
    assert np.allclose(np.diff(df["t_s"].to_numpy())[:-1], 1.0)


FIO218 = REPO / "tests" / "data" / "fio" / "louwrentius__fio-plot__example_data01_randwrite-04.json"


def test_fio2_json_io_bytes_are_kib_and_latencies_us():
    (j,) = _json(FIO218)["jobs"]
    w = j["write"]
    cap = fb.read_fio(FIO218)
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-2.18"
    # fio 2.18 printed io_bytes=67836 (KiB: 16959 I/Os of 4 KiB), bw=1130 KiB/s, runtime 60021 ms
    assert df["write_bytes"][0] == 67836 * 1024 == w["total_ios"] * 4096
    assert df["write_mbps"][0] == pytest.approx(w["bw"] * 1024 / 1e6, abs=1024 / 1e6)
    assert df["write_iops"][0] == pytest.approx(w["iops"], rel=1e-6)
    # µs blocks named clat/lat (no _ns): read as µs, not ns
    assert df["write_clat_p99_us"][0] == w["clat"]["percentile"]["99.000000"] == 280576
    assert df["write_lat_mean_us"][0] == pytest.approx(w["lat"]["mean"])
    assert df["write_lat_max_us"][0] == pytest.approx(w["lat"]["max"])


def test_fio2_json_declared_as_fio3_is_refused():
    with pytest.raises(fb.FioFormatError, match="fio-2.18"):
        fb.read_fio(FIO218, fio_version="3.1")


def test_bw_log_alone_is_checked_on_bytes_only():
    # a bw log measures bytes, not I/O counts: only bytes are compared with fio's JSON
    w = _json(PM_JSON)["jobs"][0]["write"]
    df = fb.read_fio([PM_LOGS[0], PM_JSON]).intervals
    assert df["write_bytes"].sum() == pytest.approx(w["io_bytes"], rel=0.01)
    assert df["write_ios"].null_count() == df.height  # not measured: null, not zero
    assert df["write_iops"].null_count() == df.height


def test_interval_s_bins_real_logs():
    one = fb.read_fio(PM_LOGS, fio_version="3.1").intervals
    two = fb.read_fio(PM_LOGS, fio_version="3.1", interval_s=2.0).intervals
    # 2-second rows: about half as many, the same I/O in total
    assert two.height == pytest.approx(one.height / 2, abs=1)
    assert two["write_ios"].sum() == one["write_ios"].sum()
    with pytest.raises(TypeError, match="interval"):  # the old spelling is gone
        fb.read_fio(PM_LOGS, fio_version="3.1", interval=2.0)
    with pytest.raises(fb.errors.ParameterError, match="interval_s"):
        fb.read_fio(PM_LOGS, fio_version="3.1", interval_s=0)
