"""``fb.sweep``: jobs on a local process pool and on a ``dask.distributed.LocalCluster`` give
the same captures as running each job here, one after another (seeded simulated drives are
deterministic); captures come back as Arrow IPC bytes or through a shared directory; a failed
job and bad job lists give one sentence."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pytest

import flashback as fb

# the sweep's worker processes unpickle AbortingJob by its module path
sys.path.insert(0, str(Path(__file__).parent))
from support.sweep_jobs import AbortingJob

#: metadata that legitimately differs between two runs of the same job
VOLATILE = {"start_time", "end_time", "run_id"}  # differ between two runs of one job


def _jobs() -> list[fb.Job]:
    """Two workloads on seeded sim drives of different over-provisioning and GC policy, and a
    small replay — a miniature of an OP x GC x workload sweep."""
    w = fb.Workload(
        rw="randwrite", bs="4k", iodepth=32, written="300m", seed=5, random="uniform", interval=0.05
    )
    return [
        fb.Job("sim:generic?scale=1/512&op=0.07&gc=greedy", workload=w),
        fb.Job("sim:generic?scale=1/512&op=0.28&gc=fifo", workload=w.replace(bs="16k")),
        fb.Job(
            "sim:generic?scale=1/512", replay="anand2009-new-vs-used", params={"scale": "1/1024"}
        ),
    ]


@pytest.fixture(scope="module")
def serial() -> list[fb.Capture]:
    """Each job run here, in this process, one after another: the reference."""
    return [j.run() for j in _jobs()]


def _assert_same(got: list[fb.Capture], want: list[fb.Capture]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.intervals.height > 0
        assert a.intervals.equals(b.intervals)
        strip = lambda m: {k: v for k, v in m.items() if k not in VOLATILE}  # noqa: E731
        assert strip(a.meta) == strip(b.meta)


def test_local_processes_equal_the_serial_run(serial) -> None:
    events: list[dict] = []
    res = fb.sweep(_jobs(), progress=events.append, max_workers=2)
    _assert_same(res.captures, serial)
    assert sorted(e["done"] for e in events) == [1, 2, 3]
    assert sorted(e["job"] for e in events) == [0, 1, 2]
    assert all(e["total"] == 3 for e in events)
    # the two drives really differ: a sweep that ran one job three times would not pass
    assert not serial[0].intervals["write_iops"].equals(serial[1].intervals["write_iops"])


def test_dask_local_cluster_equals_the_serial_run(serial) -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        via_executor = fb.sweep(_jobs(), client.get_executor())
        via_client = fb.sweep(_jobs()[:1], client)  # a Client is taken as its executor
        workers = client.run(lambda: __import__("os").getpid())
    _assert_same(via_executor.captures, serial)
    _assert_same(via_client.captures, serial[:1])
    assert len(set(workers.values())) == 2


def test_out_writes_to_a_shared_directory(serial, tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        res = fb.sweep(_jobs(), pool, out=tmp_path / "shared")
    assert res.paths is not None and all(p.parent == tmp_path / "shared" for p in res.paths)
    assert all(p.suffix == ".parquet" and p.exists() for p in res.paths)
    _assert_same(res.captures, serial)
    lf = res.scan()
    df = lf.collect()
    assert df.columns[:2] == ["job", "job_label"]
    assert df.group_by("job").len().sort("job")["len"].to_list() == [
        c.intervals.height for c in serial
    ]
    # the directory is a dataset scan_captures reads without the sweep
    again = fb.scan_captures(tmp_path / "shared").collect()
    assert again.height == df.height


def test_to_dataset_takes_partition_by_by_name(serial, tmp_path: Path) -> None:
    res = fb.SweepResult(jobs=_jobs(), paths=None, elapsed_s=0.0, _captures=serial)
    paths = res.to_dataset(tmp_path / "ds", partition_by=("model", "test"))
    assert len(paths) == 3 and all(p.exists() for p in paths)
    assert all(p.relative_to(tmp_path / "ds").parts[0] == "model=sim%3Ageneric" for p in paths)
    with pytest.raises(fb.ParameterError, match="cannot partition by 'colour'"):
        res.to_dataset(tmp_path / "other", partition_by=("colour",))
    with pytest.raises(TypeError):
        res.to_dataset(tmp_path / "other", ("model",))  # partition_by is a keyword


def test_scan_of_an_in_memory_sweep(serial) -> None:
    with ThreadPoolExecutor(max_workers=1) as pool:
        res = fb.sweep(_jobs()[:2], pool)
    df = res.scan().collect()
    assert df.filter(pl.col("job") == 1)["workload_bs_bytes"].unique().to_list() == [16384]
    assert df.filter(pl.col("job") == 0)["target_spec"].unique().to_list() == [
        "sim:generic?scale=1/512&op=0.07&gc=greedy"
    ]


def test_a_failed_job_names_itself_in_one_sentence() -> None:
    w = fb.Workload(rw="randwrite", bs="4k", written="8m", seed=1)
    jobs = [fb.Job("sim:generic?scale=1/512", workload=w), fb.Job("sim:no-such-drive", workload=w)]
    with ThreadPoolExecutor(max_workers=2) as pool, pytest.raises(fb.SweepError) as e:
        fb.sweep(jobs, pool)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("1 of 2 sweep jobs failed (job 1 (sim:no-such-drive")
    res = e.value.result
    assert list(res.errors) == [1] and isinstance(res.errors[1], fb.TargetError)
    assert str(res.errors[1]).startswith("sweep job 1 (sim:no-such-drive")
    assert res.captures[0] is not None and res.captures[0].intervals.height > 0
    assert res.captures[1] is None


def _with_an_aborting_job() -> list[fb.Job]:
    w = fb.Workload(rw="randwrite", bs="4k", iodepth=8, written="16m", seed=3, interval=0.05)
    return [
        fb.Job("sim:generic?scale=1/512&op=0.07", workload=w),
        AbortingJob("sim:generic?scale=1/512", workload=w, label="the aborting job"),
        fb.Job("sim:generic?scale=1/512&op=0.28", workload=w),
        fb.Job("sim:generic?scale=1/512&op=0.15", workload=w),
    ]


def test_a_worker_that_dies_is_named_and_every_other_result_is_kept(tmp_path: Path) -> None:
    """Issue 23 item 13: one job killing its worker lost every result as BrokenProcessPool,
    no job named. Now the dead job is named and the jobs it took down with the pool are run
    again, each alone: their captures equal those of running them here."""
    jobs = _with_an_aborting_job()
    events: list[dict] = []
    res = fb.sweep(jobs, max_workers=2, errors="keep", progress=events.append)
    assert list(res.errors) == [1]
    err = res.errors[1]
    assert isinstance(err, fb.SweepError)
    assert str(err).startswith("sweep job 1 (the aborting job): its worker process died")
    assert "\n" not in str(err)
    want = [j.run() for j in (jobs[0], jobs[2], jobs[3])]
    _assert_same([res.captures[i] for i in (0, 2, 3)], want)
    assert res.captures[1] is None and res.ok == [0, 2, 3]
    assert sorted(e["job"] for e in events) == [0, 1, 2, 3]
    assert [e["error"] is not None for e in sorted(events, key=lambda e: e["job"])] == [
        False,
        True,
        False,
        False,
    ]
    assert res.scan().collect()["job"].unique().sort().to_list() == [0, 2, 3]
    # by default the call raises one error naming the failed job, the rest in .result
    with pytest.raises(fb.SweepError) as e:
        fb.sweep(jobs[:2], max_workers=2, out=tmp_path / "o")
    assert "job 1 (the aborting job)" in str(e.value) and "job 0" not in str(e.value)
    kept = e.value.result
    assert kept.paths[0] is not None and kept.paths[0].exists() and kept.paths[1] is None


def test_a_pool_the_caller_passed_reports_each_job_it_lost() -> None:
    """A caller's own process pool cannot be restarted: the jobs lost with it are each
    reported as failed by name, never a bare BrokenProcessPool."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    jobs = _with_an_aborting_job()[:2]
    ctx = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        res = fb.sweep(jobs, pool, errors="keep")
    assert 1 in res.errors and "worker process died" in str(res.errors[1])
    assert all(isinstance(e, fb.FlashbackError) for e in res.errors.values())
    for i in res.errors:
        assert str(res.errors[i]).startswith(f"sweep job {i} (")


def test_errors_takes_raise_or_keep() -> None:
    w = fb.Workload(rw="randwrite", bs="4k", written="8m")
    with pytest.raises(fb.ParameterError, match="errors='skip'"):
        fb.sweep([("sim:generic", w)], errors="skip")


def test_bad_job_lists_are_refused_before_anything_runs(tmp_path: Path) -> None:
    w = fb.Workload(rw="randwrite", bs="4k", written="8m")
    with pytest.raises(fb.ParameterError, match="no jobs"):
        fb.sweep([])
    with pytest.raises(fb.ParameterError, match="cannot make a sweep job"):
        fb.sweep([("sim:generic", 42)])
    with pytest.raises(fb.ParameterError, match="no field 'colour'"):
        fb.sweep([{"target": "sim:generic", "workload": w, "colour": "red"}])
    with pytest.raises(fb.ParameterError, match="exactly one of"):
        fb.Job("sim:generic", workload=w, replay="snia-pts")
    with pytest.raises(fb.ParameterError, match="target string"):
        fb.Job(fb.Target("sim:generic?scale=1/512"), workload=w)
    with pytest.raises(fb.ReplayError):
        fb.sweep([("sim:generic", "no-such-protocol")], out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_tuples_and_dicts_make_the_same_jobs() -> None:
    w = fb.Workload(rw="randwrite", bs="4k", written="8m")
    from flashback.sweep import as_job

    assert as_job(("sim:generic", w)) == fb.Job("sim:generic", workload=w)
    assert as_job(("sim:generic", "snia-pts", {"scale": 0.5})) == fb.Job(
        "sim:generic", replay="snia-pts", params={"scale": 0.5}
    )
    assert as_job({"target": "sim:generic", "workload": w}) == fb.Job("sim:generic", workload=w)
