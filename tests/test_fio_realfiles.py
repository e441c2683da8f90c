"""fb.read_fio on real fio output pinned in tests/data/fio (see its SOURCES.md): one file per
layout and fio version. Every expected value is a number fio printed in the same file or run,
copied here by hand from the file (the comments say where), never flashback's output."""

from pathlib import Path

import pytest
from support.edit import edited

import flashback as fb

DATA = Path(__file__).resolve().parent / "data" / "fio"
FP = "louwrentius__fio-plot__"


def _mb(kib_per_s: float) -> float:
    return kib_per_s * 1024 / 1e6


# --- fio 2.18: JSON (KiB, µs) + averaged µs latency logs of the same run --------------------

T01 = f"{FP}test-data01_randread-4k-01-01_"
T01_LOGS = [DATA / f"{T01}{k}.1.log" for k in ("bw", "iops", "lat", "clat")]
T01_JSON = DATA / f"{FP}test-data01_json_randread-01-01.json"


def test_fio218_json_is_kib_and_us():
    # read: io_bytes=2932 (KiB), bw=292, iops=73.182907, runtime=10016, total_ios=733;
    # lat mean=13657.451569 max=25318, clat mean=13643.395634 max=25305 (µs)
    df = fb.read_fio(T01_JSON).intervals
    assert df["read_bytes"][0] == 2932 * 1024
    assert df["read_ios"][0] == 733
    assert df["interval_s"][0] == pytest.approx(10.016)
    assert df["read_iops"][0] == pytest.approx(73.182907, rel=1e-6)
    assert df["read_mbps"][0] == pytest.approx(_mb(292), abs=_mb(1))
    assert df["read_lat_mean_us"][0] == pytest.approx(13657.451569)
    assert df["read_lat_max_us"][0] == pytest.approx(25318)
    assert df["read_clat_max_us"][0] == pytest.approx(25305)


def test_fio218_latency_logs_are_microseconds():
    # the lat log starts "507, 13709, 0, 0 / 1010, 13578, 0, 0 / 1504, 12050, 0, 0": µs (an md
    # RAID of HDDs), not 13.7 µs; second 1 holds the 507 ms window, second 2 the next two
    cap = fb.read_fio(T01_LOGS + [T01_JSON])
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-2.18"
    assert df["read_lat_mean_us"][0] == pytest.approx(13709)
    # weighted by the iops log's I/Os in each window (74/s and 82/s for 0.5 s), as fio's mean
    # is, not (13578 + 12050) / 2
    assert df["read_lat_mean_us"][1] == pytest.approx((13578 * 37 + 12050 * 41) / 78, rel=1e-3)
    # the window means average to fio's whole-run means (13657 µs lat, 13643 µs clat)
    assert df["read_lat_mean_us"].mean() == pytest.approx(13657.451569, rel=0.05)
    assert df["read_clat_mean_us"].mean() == pytest.approx(13643.395634, rel=0.05)
    # checked against the JSON: 733 I/Os, 2932 KiB
    assert df["read_ios"].sum() == pytest.approx(733, rel=0.05)
    assert df["read_bytes"].sum() == pytest.approx(2932 * 1024, rel=0.05)
    # averaged logs carry no percentiles nor maxima
    assert df["read_lat_p99_us"].null_count() == df.height
    assert df["read_lat_max_us"].null_count() == df.height


def test_fio218_latency_logs_alone_need_the_version():
    with pytest.raises(fb.FioFormatError, match="cannot tell µs"):
        fb.read_fio(T01_LOGS)
    df = fb.read_fio(T01_LOGS, fio_version="2.18").intervals
    assert df["read_lat_mean_us"][0] == pytest.approx(13709)


# --- fio 3.6: group_reporting over 4 jobs, elapsed includes set-up --------------------------

C36 = DATA / f"{FP}ceph-hdd-goed_randread-16-4.json"


def test_fio36_group_reporting_uses_runtime_not_elapsed():
    # one entry for numjobs=4; elapsed=61 (s), read: io_bytes=3972083712, bw=64625 (KiB/s),
    # bw_bytes=66176027, iops=16156.256768, runtime=60023 (ms), total_ios=969747;
    # clat_ns percentile 50=1220608 99=52166656 99.9=122159104, lat_ns mean=3932367.21672
    cap = fb.read_fio(C36)
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-3.6"
    assert df.height == 1
    assert df["interval_s"][0] == pytest.approx(60.023)
    assert df["read_bytes"][0] == 3972083712
    assert df["read_ios"][0] == 969747
    assert df["read_mbps"][0] == pytest.approx(66176027 / 1e6, rel=1e-6)  # not /61 s
    assert df["read_iops"][0] == pytest.approx(16156.256768, rel=1e-6)
    # no N in 3.6 latency blocks: the values are read, not null
    assert df["read_lat_mean_us"][0] == pytest.approx(3932.36721672)
    assert df["read_clat_p50_us"][0] == pytest.approx(1220.608)
    assert df["read_clat_p99_us"][0] == pytest.approx(52166.656)
    assert df["read_clat_p999_us"][0] == pytest.approx(122159.104)


# --- fio 3.16: group_reporting over 16 jobs, job_runtime summed; 16 per-job logs ------------

HP = f"{FP}benchmark_data_SERVER_HIGHPOINT_RAID5_randread-"
HP_JSON = DATA / f"{HP}1-16.json"
HP_LOGS = [
    DATA / f"{HP}iodepth-1-numjobs-16_{k}.{n}.log" for k in ("bw", "iops") for n in range(1, 17)
]


def test_fio316_job_runtime_summed_over_16_jobs_is_not_used():
    # job_runtime=960122 (ms, 16 jobs × 60 s); read: runtime=60019, bw_bytes=3742422,
    # iops=913.677336, total_ios=54838, io_bytes=224616448
    df = fb.read_fio(HP_JSON).intervals
    assert df["interval_s"][0] == pytest.approx(60.019)
    assert df["read_mbps"][0] == pytest.approx(3742422 / 1e6, rel=1e-6)  # not 16x lower
    assert df["read_iops"][0] == pytest.approx(913.677336, rel=1e-6)
    assert df["read_ios"][0] == 54838
    # clat_ns mean=17465124.897097, percentile 99=74973184 (ns)
    assert df["read_clat_mean_us"][0] == pytest.approx(17465.124897097)
    assert df["read_clat_p99_us"][0] == pytest.approx(74973.184)


def test_fio316_sixteen_per_job_logs_sum_to_fios_totals():
    cap = fb.read_fio(HP_LOGS + [HP_JSON])
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-3.16"
    assert set(cap.meta["log_modes"].values()) == {"avg"}
    assert df["read_ios"].sum() == pytest.approx(54838, rel=0.01)
    assert df["read_bytes"].sum() == pytest.approx(224616448, rel=0.01)
    # a 60 s run in 1 s rows: about 60 rows, the rate near fio's 913.7 IOPS throughout
    assert 59 <= df.height <= 61
    assert df["read_iops"].median() == pytest.approx(913.677336, rel=0.1)


def test_fio316_logs_missing_a_job_disagree_with_fios_totals():
    # 15 of the 16 jobs' logs against the group's totals: 1/16 short, beyond rounding
    some = [p for p in HP_LOGS if not p.name.endswith(".16.log")]
    with pytest.raises(fb.FioFormatError, match="read_ios=54838"):
        fb.read_fio(some + [HP_JSON])


# --- fio 3.34: latency blocks with N, text before the JSON ----------------------------------

D334 = DATA / f"{FP}deleteme_fio_4k_randread-1-1.json"


def test_fio334_json_after_a_signal_message_with_n_in_blocks():
    # "fio: terminating on signal 2" precedes the JSON; read: io_bytes=114540544, bw=40410,
    # bw_bytes=41380254, runtime=2768, total_ios=27964; lat_ns mean=96095.658704 max=912000
    # N=27964; clat_ns percentile 50=100864 99=175104 99.9=236544
    cap = fb.read_fio(D334)
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-3.34"
    assert df["read_ios"][0] == 27964
    assert df["read_bytes"][0] == 114540544
    assert df["interval_s"][0] == pytest.approx(2.768)
    assert df["read_mbps"][0] == pytest.approx(41380254 / 1e6, rel=1e-6)
    assert df["read_lat_mean_us"][0] == pytest.approx(96.095658704)
    assert df["read_lat_max_us"][0] == pytest.approx(912.0)
    assert df["read_clat_p50_us"][0] == pytest.approx(100.864)
    assert df["read_clat_p99_us"][0] == pytest.approx(175.104)
    assert df["read_clat_p999_us"][0] == pytest.approx(236.544)


# --- terse v3 (fio 3.1 and 3.8) ------------------------------------------------------------

T31 = DATA / "mcgrof__fio-tests__0003-bs4k-256iobs-4j-128qd-randrw.ini.out"
T38 = DATA / "mcgrof__fio-tests__0005-bs4k-1j-16qd-read.ini.out"


def test_terse_v3_fio31_mixed_group_line():
    # 3;fio-3.1;;0;0; read: 489158140 KiB, bw 2038124 KiB/s, iops 509531, runtime 240004 ms,
    # clat (µs) min 1 max 18912 mean 979.318182, 50%=806 99%=3751 99.9%=4882,
    # lat (µs) min 41 max 18915 mean 987.293258;
    # write: 15127352 KiB, bw 63029, iops 15757, runtime 240004, clat mean 515.804410,
    # 50%=514 99%=749, lat mean 525.037281 max 11019
    cap = fb.read_fio(T31)
    df = cap.intervals
    assert cap.meta["fio_format"] == "terse"
    assert cap.meta["fio_version"] == "fio-3.1"
    assert df.height == 1
    assert df["interval_s"][0] == pytest.approx(240.004)
    assert df["read_bytes"][0] == 489158140 * 1024
    assert df["write_bytes"][0] == 15127352 * 1024
    # terse gives no I/O count: iops × runtime, within the rounding of the printed iops
    assert df["read_ios"][0] == pytest.approx(509531 * 240.004, abs=0.5 * 240.004 + 1)
    assert df["write_ios"][0] == pytest.approx(15757 * 240.004, abs=0.5 * 240.004 + 1)
    # 4 KiB I/Os: the count agrees with the KiB fio printed
    assert df["read_ios"][0] * 4 == pytest.approx(489158140, rel=1e-5)
    assert df["read_mbps"][0] == pytest.approx(_mb(2038124), rel=1e-6)
    assert df["write_mbps"][0] == pytest.approx(_mb(63029), rel=1e-4)
    assert df["read_clat_mean_us"][0] == pytest.approx(979.318182)
    assert df["read_clat_p50_us"][0] == 806
    assert df["read_clat_p99_us"][0] == 3751
    assert df["read_clat_p999_us"][0] == 4882
    assert df["read_clat_max_us"][0] == 18912
    assert df["read_lat_mean_us"][0] == pytest.approx(987.293258)
    assert df["read_lat_max_us"][0] == 18915
    assert df["write_clat_p50_us"][0] == 514
    assert df["write_clat_p99_us"][0] == 749
    assert df["write_lat_mean_us"][0] == pytest.approx(525.037281)
    assert df["write_lat_max_us"][0] == 11019


def test_terse_v3_fio38_read_line():
    # 3;fio-3.8-83-g24a9;read;0;0; read: 305070016 KiB, bw 1016896, iops 254224,
    # runtime 300001; clat mean 43.676222 max 5623, 50%=31 99%=222 99.9%=489;
    # lat mean 60.506785 max 5642; write block all zero
    cap = fb.read_fio(T38)
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-3.8"
    assert df["step"][0] == "read"
    assert df["interval_s"][0] == pytest.approx(300.001)
    assert df["read_bytes"][0] == 305070016 * 1024
    assert df["read_mbps"][0] == pytest.approx(_mb(1016896), rel=1e-6)
    assert df["read_iops"][0] == pytest.approx(254224, abs=0.5)
    assert df["read_clat_mean_us"][0] == pytest.approx(43.676222)
    assert (df["read_clat_p50_us"][0], df["read_clat_p99_us"][0]) == (31, 222)
    assert df["read_clat_p999_us"][0] == 489
    assert df["read_lat_mean_us"][0] == pytest.approx(60.506785)
    assert df["read_lat_max_us"][0] == 5642
    assert df["write_bytes"][0] == 0
    assert df["write_ios"][0] == 0


def test_terse_with_a_contradicting_version_is_refused():
    with pytest.raises(fb.FioFormatError, match="fio-3.8"):
        fb.read_fio(T38, fio_version="3.1")


# --- corrupt real files: a clear error, not a polars exception ------------------------------

PB_HIST = DATA / "distributed-system-analysis__pbench__fio-0_perf36_fio_clat_hist.1.log"


def test_corrupt_client_server_histogram_is_refused():
    # fio 3.7 --client output: 1859 fields (time, ddir, bs + 1856 buckets) whose buckets 0-1588
    # are zero and the rest hold garbage up to 8.4e18 (pbench's tools report 6.08e18 samples in
    # 10 s); it used to escape as polars' InvalidOperationError
    with pytest.raises(fb.FioFormatError, match="line 1: .* corrupt"):
        fb.read_fio(PB_HIST)
    with pytest.raises(fb.FioFormatError, match="corrupt"):
        fb.read_fio(PB_HIST, fio_version="3.7")


def test_a_bw_log_adding_up_beyond_64_bits_is_refused(tmp_path):
    # the real fio-2.18 bw log with one window edited to 9e18 KiB/s (below 2^63, so each field
    # parses): bytes per interval pass 2^64 and used to escape as a polars cast error
    lines = T01_LOGS[0].read_text().splitlines()
    t, _v, d, bs = lines[3].split(", ")
    lines[3] = ", ".join([t, "9000000000000000000", d, bs])
    p = tmp_path / "x_bw.1.log"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(fb.FioFormatError, match="read_bytes adds up to .* corrupt"):
        fb.read_fio(p, fio_version="2.18")


# --- fio 3.7 --client output: client_stats per host, and fio's "All clients" sum -----------

PB_JSON = DATA / "distributed-system-analysis__pbench__fio-0_fio-result.txt"


def test_fio37_client_server_json_is_the_hosts_jobs():
    # two hosts × 5 jobs of 4 KiB reads; fio's "All clients" entry: read io_bytes=5740351488,
    # total_ios=1401141, runtime=15034, bw_bytes=381824630, iops=93198.150858,
    # clat_ns mean=3413511.909894, lat_ns max=1079893000; the JSON follows eta lines
    cap = fb.read_fio(PB_JSON)
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-3.7"
    assert len(cap.meta["jobs"]) == 10
    assert df.height == 1
    assert df["read_bytes"][0] == 5740351488
    assert df["read_ios"][0] == 1401141
    assert df["interval_s"][0] == pytest.approx(15.034)
    assert df["read_mbps"][0] == pytest.approx(381824630 / 1e6, rel=1e-6)
    assert df["read_iops"][0] == pytest.approx(93198.150858, rel=1e-6)
    assert df["read_clat_mean_us"][0] == pytest.approx(3413.511909894, rel=1e-4)
    assert df["read_lat_max_us"][0] == pytest.approx(1079893.0)


def test_client_stats_that_do_not_add_up_are_refused(tmp_path):
    # the first host job's read io_bytes, 488804352, one 4 KiB I/O short
    p = edited(PB_JSON, '"io_bytes" : 488804352,', '"io_bytes" : 488800256,', tmp_path / "r.json")
    with pytest.raises(fb.FioFormatError, match="All clients"):
        fb.read_fio(p)


PB36_LOGS = [
    DATA / f"distributed-system-analysis__pbench__fio-0_perf36_fio_{k}.{n}.log"
    for k in ("bw", "iops", "lat", "clat")
    for n in range(1, 6)
]


def test_fio37_one_hosts_logs_add_up_to_its_jobs():
    # perf36's five client_stats entries: read total_ios 119305 + 119265 + 119291 + 119368 +
    # 119327 = 596556, io_bytes 488804352 + 488640512 + 488742912 + 489058304 + 488890368 =
    # 2444136448; the first clat row of job 1 is "1000, 1273222, 0, 0" (ns in fio 3.x)
    cap = fb.read_fio(PB36_LOGS, fio_version="3.7")
    df = cap.intervals
    assert df["read_ios"].sum() == pytest.approx(596556, rel=0.005)
    assert df["read_bytes"].sum() == pytest.approx(2444136448, rel=0.005)
    assert 1000 < df["read_clat_mean_us"][0] < 1400  # five jobs' ~1.27 ms, not 1.27 s
    # against the JSON of both hosts the logs of one are short: refused, not summed silently
    with pytest.raises(fb.FioFormatError, match="read_ios=1401141"):
        fb.read_fio(PB36_LOGS + [PB_JSON])


# --- fio 2.2.10 averaged µs logs + normal output; fio 2.16 per_job_logs=0 logs -------------

CS = "chris-sanders__ceph-fio-results__bluestore_"
E21 = [DATA / f"{CS}erasure2.1_randread-4k-KERNEL_{k}.log" for k in ("bw", "iops", "lat", "clat")]
E21_OUT = DATA / f"{CS}erasure2.1_randread-4k.out"


def test_fio2210_averaged_logs_match_the_normal_output():
    # randread-4k.out (fio-2.2.10): "read : io=3777.6MB, bw=64466KB/s, iops=16116,
    # runt= 60003msec", "clat (usec): ... avg=1929.49", "lat (usec): ... avg=1982.19",
    # "issued : total=r=967045/w=0/d=0", "READ: io=3777.6MB, aggrb=64466KB/s"
    cap = fb.read_fio(E21 + [E21_OUT])
    df = cap.intervals
    assert cap.meta["fio_version"] == "fio-2.2.10"
    assert set(cap.meta["log_modes"].values()) == {"avg"}
    assert df["read_ios"].sum() == pytest.approx(967045, rel=0.01)
    assert df["read_bytes"].sum() == pytest.approx(3777.6 * 2**20, rel=0.01)
    # µs, as fio 2.x logs them: window means around fio's whole-run means
    assert df["read_lat_mean_us"].mean() == pytest.approx(1982.19, rel=0.02)
    assert df["read_clat_mean_us"].mean() == pytest.approx(1929.49, rel=0.02)
    assert df["read_mbps"].median() == pytest.approx(_mb(64466), rel=0.05)


def test_normal_output_run_status_bytes_are_checked(tmp_path):
    # the same output with the group's "READ: io=" edited 3777.6MB -> 3877.6MB (2.6 % more)
    # while the issued count stays (3877.6 × 2^20 = 4065958297.6 bytes): the logs no longer match
    p = edited(E21_OUT, "READ: io=3777.6MB", "READ: io=3877.6MB", tmp_path / "randread-4k.out")
    with pytest.raises(fb.FioFormatError, match="read_bytes=4065958298 "):
        fb.read_fio(E21 + [p])


ONE = [DATA / f"{CS}onejob_randread-4k-FUSE_{k}.log" for k in ("bw", "iops")]
ONE_OUT = DATA / f"{CS}onejob_randread-4k.out"


def test_logs_of_several_jobs_appended_to_one_file_are_refused():
    # per_job_logs=0 with three stonewalled sections writing the same FUSE logs: fio-2.16
    # appended three jobs' logs (the time drops from 59897 to 573 ms at line 240); read as
    # one log they used to be superimposed into 60 rows holding 3813 of the 14881 I/Os
    with pytest.raises(fb.FioFormatError, match="line 240: the time goes back from 59897"):
        fb.read_fio(ONE)
    with pytest.raises(fb.FioFormatError, match="3 logs one after another"):
        fb.read_fio(ONE + [ONE_OUT], fio_version="2.16")
