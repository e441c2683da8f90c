"""fb.changepoints on real fio and iostat logs from public repositories (../shared/realdata,
see its SOURCES.md), pinned to what a person reads off them.

The fio-2.2.10 logs (ceph-jemalloc-bench) are read here with numpy (time_ms, value KiB/s,
ddir, bs), aggregated to 1-s means, so these tests do not depend on the fio importer. The
per-minute medians quoted below were read off the files with the same loaders.
"""

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import flashback as fb

REPO = Path(__file__).resolve().parents[1]
REAL = REPO.parent / "shared" / "realdata"

CEPH = "asheplyakov__ceph-jemalloc-bench__"
IOSTAT = (
    "ljishen__SSSPT__analysis_data_ad_hoc_exprs_fixed_random_LBAs_hp_75AS1014T9HW_"
    "0pctseqfill_random_lbas_dynamic_seed.sdb.iostat.1"
)
PM883 = (
    "louwrentius__fio-plot__benchmark_data_SERVER_IBM_M1015_SAMSUNG_PM883_"
    "randwrite-iodepth-16-numjobs-1_bw.1.log"
)


def _path(name: str) -> Path:
    p = REAL / name
    if not p.exists():
        pytest.skip(f"real data not found at {p} (the repository's ../shared/realdata)")
    return p


def _frame(write_mbps: np.ndarray, interval_s: float) -> pl.DataFrame:
    n = write_mbps.size
    wb = write_mbps * 1e6 * interval_s
    return pl.DataFrame(
        {
            "t_s": interval_s * np.arange(1, n + 1, dtype=float),
            "interval_s": np.full(n, interval_s),
            "write_mbps": write_mbps,
            "write_bytes": wb,
            "host_written_bytes": np.cumsum(wb),
        }
    )


def _fio2_bw_log(name: str) -> pl.DataFrame:
    """fio-2.x bw log (500 ms samples, KiB/s) → 1-s frame in MB/s."""
    a = np.loadtxt(_path(name), delimiter=",", usecols=(0, 1, 2, 3))
    sec = ((a[:, 0] - 1) // 1000).astype(np.int64)
    kib = np.bincount(sec, weights=a[:, 1]) / np.bincount(sec)
    return _frame(kib * 1.024e-3, 1.0)


def _aggrb_mbps(name: str) -> float:
    """The job's ``bw=…KB/s`` from fio's own normal output (fio 2.x KB = 1024 bytes)."""
    text = _path(name).read_text()
    kb = float(text.split(" bw=")[1].split("KB/s")[0])
    return kb * 1.024e-3


@pytest.mark.parametrize(
    "run",
    [
        # 1 h of 4 KiB O_DSYNC QD1 writes to a Ceph journal SSD; per-minute medians wander
        # between 85.5 and 93.5 MB/s in a two-state pattern with no lasting change (the old
        # penalty drew 56 breakpoints).
        ("journal-single_journal_single_bw.log_bw.1.log", "journal-single_result.txt"),
        # the same job on a desktop SSD: per-minute medians 34.1–34.7 MB/s (old: 14).
        ("desktop_ssd_journal_bw.log_bw.1.log", "desktop_ssd_result.txt"),
    ],
)
def test_hour_long_flat_runs_have_no_breakpoint(run):
    log, result = run
    f = _fio2_bw_log(CEPH + log)
    assert f.height == 3600
    seg = fb.changepoints(f)
    assert seg.breakpoints == [], seg.describe()
    # the one level is fio's own average over the hour
    assert seg.to_frame()["level"][0] == pytest.approx(_aggrb_mbps(CEPH + result), rel=0.005)
    assert seg.rho > 0  # autocorrelated, as per-second drive data are


def test_wdpc_after_trim_has_its_cliff_at_12_minutes():
    # iostat -x every 3 s during a 30-min mixed write run after a full TRIM (HG6 128 GB).
    # Per-minute medians of wkB/s: 193.6, 185.5 … 177.3 over minutes 1-12, then 144.0 in
    # minute 13 and a slow slide (138 … 115) to the end: a person reads one cliff at
    # ~720 s on a plateau, then a slide.
    rows = [ln.split() for ln in _path(IOSTAT).read_text().splitlines() if ln.startswith(" sdb")]
    wkb = np.array([float(r[6]) for r in rows])
    assert wkb.size == 601
    f = _frame(wkb * 1.024e-3, 3.0)
    seg = fb.changepoints(f, x="t_s")
    b = np.array(seg.breakpoints)
    assert np.any(np.abs(b - 720) <= 30), seg.describe()
    # nothing on the plateau between the first minute and the cliff
    assert not np.any((b > 100) & (b < 690)), seg.describe()
    # the cliff is the largest change
    lv = seg.to_frame()["level"].to_numpy()
    k = int(np.argmax(np.abs(np.diff(np.log(lv)))))
    assert abs(b[k] - 720) <= 30, seg.describe()


def test_pm883_minute_is_flat():
    # 60 s of 4 KiB randwrite QD16 on a Samsung PM883: 253-257 MB/s every second but the last
    # (a partial interval).
    cap = fb.read_fio(_path(PM883))
    seg = fb.changepoints(cap, x="t_s")
    assert seg.breakpoints == [], seg.describe()
