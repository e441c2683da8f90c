"""``sweep``: many (target, workload or replay) jobs on any ``concurrent.futures.Executor`` —
local processes by default, a ``dask.distributed`` client (``client.get_executor()``) or any
other executor to go past one machine. The same code runs on a laptop and on a cluster.

Each job runs in one worker with its own freshly opened target; its capture comes back as
Arrow IPC bytes, or is written to a shared directory (``out=``) and only its path comes back.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import BrokenExecutor, Executor, Future, as_completed
from pathlib import Path
from typing import Any, cast

import polars as pl

from flashback.capture import Capture, load
from flashback.dataset.write import DEFAULT_PARTITIONS
from flashback.errors import FlashbackError, ParameterError, SweepError
from flashback.workload import Workload


@dataclasses.dataclass(frozen=True)
class Job:
    """One run of a sweep: a workload, or a replayed protocol, on a target.

    Args:
        target: a target string (``"sim:generic?op=0.28&gc=fifo&seed=3"``, a file path...).
            It is opened afresh by the worker (an open :class:`~flashback.Target` cannot
            travel to another process or machine).
        workload: the :class:`~flashback.Workload` to run, or
        replay: the name of a protocol to replay (:func:`flashback.protocols`), with
        params: its parameters and ``scale`` (as :func:`flashback.replay` takes them).
        label: a name for progress reports and results (default: target and workload).

    A simulated target with a seeded workload gives the same capture wherever it runs.

    Raises:
        ParameterError: ``target`` is not a target string, not exactly one of ``workload`` and
            ``replay`` is given, or ``workload`` is not a :class:`~flashback.Workload`.
        ReplayError: ``replay`` names no protocol (the message lists them).
    """

    target: str
    workload: Workload | None = None
    replay: str | None = None
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.target, (str, os.PathLike)):
            raise ParameterError(
                f"a sweep job's target must be a target string, not a {type(self.target).__name__}"
            )
        object.__setattr__(self, "target", os.fspath(self.target))
        if (self.workload is None) == (self.replay is None):
            raise ParameterError(
                f"the job on {self.target} needs exactly one of workload= or replay="
            )
        if self.workload is not None and not isinstance(self.workload, Workload):
            raise ParameterError(
                f"workload= must be a flashback Workload, not a {type(self.workload).__name__}"
            )
        if self.replay is not None:
            from flashback.replay.base import get_protocol

            get_protocol(self.replay)  # ReplayError names the known protocols
        if not self.label:
            what = self.workload.describe() if self.workload is not None else self.replay
            object.__setattr__(self, "label", f"{self.target} {what}")

    def run(self) -> Capture:
        """Runs the job here, in this process, and returns its capture.

        Raises:
            FlashbackError: as :func:`flashback.run` or :func:`flashback.replay` raise.
        """
        from flashback.targets import run

        if self.workload is not None:
            return run(self.target, self.workload)
        from flashback.replay import replay

        # a Job holds a workload or a protocol's name (checked when it is made)
        rep = replay(cast(str, self.replay), target=self.target, **self.params)
        cap = rep.capture()
        # A replay's metadata has no host or version of its own: its run steps carry them.
        for step in rep.step_records:
            m = step.get("capture_meta") or {}
            if m.get("host"):
                cap.meta.setdefault("host", m["host"])
                cap.meta.setdefault("flashback_version", m.get("flashback_version"))
                break
        return cap


def as_job(spec: Any) -> Job:
    """A :class:`Job` from a Job, a ``(target, workload)`` or ``(target, protocol[, params])``
    tuple, or a dict of Job fields.

    Raises:
        ParameterError: anything else.
    """
    if isinstance(spec, Job):
        return spec
    if isinstance(spec, dict):
        unknown = set(spec) - {f.name for f in dataclasses.fields(Job)}
        if unknown:
            raise ParameterError(
                f"a sweep job has no field {sorted(unknown)[0]!r}; use target, workload, "
                "replay, params and label"
            )
        return Job(**spec)
    if isinstance(spec, tuple) and len(spec) in (2, 3):
        target, what, *params = spec
        if isinstance(what, Workload) and not params:
            return Job(target, workload=what)
        if isinstance(what, str):
            return Job(target, replay=what, params=dict(params[0]) if params else {})
    raise ParameterError(
        f"cannot make a sweep job of {spec!r}; pass a Job, (target, workload) or "
        "(target, protocol, params)"
    )


def run_job(job: Job, out: str | None) -> tuple[str, Any]:
    """What a worker runs: the job, then its capture as ``("ipc", (bytes, meta_json))`` or,
    with ``out``, saved there as Parquet and returned as ``("path", path)``."""
    cap = job.run()
    if out is not None:
        from flashback.dataset.identity import capture_id

        path = Path(out) / f"{capture_id(cap.meta)}.parquet"
        cap.save(path)
        return "path", str(path)
    buf = io.BytesIO()
    cap.intervals.write_ipc_stream(buf)
    return "ipc", (buf.getvalue(), json.dumps(cap.meta))


def _from_ipc(payload: tuple[bytes, str]) -> Capture:
    data, meta_json = payload
    return Capture(intervals=pl.read_ipc_stream(io.BytesIO(data)), meta=json.loads(meta_json))


@dataclasses.dataclass(kw_only=True)
class SweepResult:
    """The captures of a sweep, in the order of its jobs.

    Attributes:
        jobs: the jobs as run.
        paths: with ``out=``, where each capture was written (else None); ``None`` in the
            place of a job that failed.
        elapsed_s: wall-clock seconds from the first submission to the last result.
        errors: the jobs that failed, by job index: the :class:`~flashback.FlashbackError`
            each raised (prefixed with the job), or a :class:`SweepError` saying its worker
            process died. Empty when every job succeeded.
    """

    jobs: list[Job]
    paths: list[Path | None] | None
    elapsed_s: float
    errors: dict[int, FlashbackError] = dataclasses.field(default_factory=dict)
    _captures: list[Capture | None] | None = dataclasses.field(default=None, repr=False)

    @property
    def ok(self) -> list[int]:
        """Indices of the jobs that succeeded, in job order."""
        return [i for i in range(len(self.jobs)) if i not in self.errors]

    def __repr__(self) -> str:
        written = [p for p in self.paths or [] if p is not None]
        where = f", out={written[0].parent}" if written else ""
        failed = f", {len(self.errors)} failed" if self.errors else ""
        return f"SweepResult({len(self.jobs)} jobs{failed}, {self.elapsed_s:.1f} s{where})"

    @property
    def captures(self) -> list[Capture | None]:
        """One :class:`~flashback.Capture` per job (read from ``paths`` on first use), ``None``
        for a job that failed (see :attr:`errors`)."""
        if self._captures is None:
            self._captures = [None if p is None else load(p) for p in self.paths or []]
        return self._captures

    def scan(self) -> pl.LazyFrame:
        """Every capture's intervals with ``job`` (index), ``job_label`` and the identity
        columns of :func:`flashback.scan_captures` first.

        Raises:
            CaptureFileError: a capture file written by the sweep is gone or damaged.
        """
        from flashback.dataset.scan import capture_frame, concat_frames, scan_file

        ok = self.ok
        if self._captures is None and self.paths is not None:
            frames = [scan_file(p) for p in self.paths if p is not None]
        else:
            frames = [capture_frame(c) for c in self.captures if c is not None]
        tagged = [
            f.select(
                pl.lit(i, dtype=pl.Int64).alias("job"),
                pl.lit(self.jobs[i].label, dtype=pl.String).alias("job_label"),
                pl.all(),
            )
            for i, f in zip(ok, frames, strict=True)
        ]
        return concat_frames(tagged, [self.jobs[i].label for i in ok])

    def to_dataset(
        self,
        root: str | os.PathLike[str],
        *,
        partition_by: Sequence[str] = DEFAULT_PARTITIONS,
    ) -> list[Path]:
        """Writes every capture with :meth:`Capture.to_dataset` under ``root``, partitioned
        by ``partition_by`` (identity columns), and returns the files' paths.

        Raises:
            ParameterError: a partition key is not an identity column.
            CaptureFileError: a capture file written by the sweep is gone or damaged, or
                ``root`` cannot be written.
        """
        return [
            c.to_dataset(root, partition_by=partition_by) for c in self.captures if c is not None
        ]


#: what a job whose worker process died (os._exit, abort, the OOM killer, a signal) reports
WORKER_DIED = (
    "its worker process died without raising an error (aborted, killed by a signal or by the "
    "out-of-memory killer); run the job alone with Job.run() to see why"
)


def _reporter(progress: bool | Callable[[dict], None] | None, total: int) -> Any:
    if progress is None or progress is False:
        return None
    if callable(progress) and progress is not True:
        return progress
    from tqdm.auto import tqdm

    bar = tqdm(total=total, unit="job", desc="sweep")

    def report(event: dict) -> None:
        bar.update(1)
        bar.set_postfix_str(event["label"][-40:], refresh=False)
        if event["done"] == total:
            bar.close()

    return report


def _failure(i: int, job: Job, e: BaseException) -> FlashbackError:
    """The error recorded for job ``i``: its own class with the job named first, or a
    :class:`SweepError` when its worker died or it raised something foreign."""
    if isinstance(e, FlashbackError):
        err = type(e)(f"sweep job {i} ({job.label}): {e}")
    elif isinstance(e, BrokenExecutor):
        err = SweepError(f"sweep job {i} ({job.label}): {WORKER_DIED}")
    else:
        err = SweepError(f"sweep job {i} ({job.label}): {type(e).__name__}: {e}")
    err.__cause__ = e
    return err


def _summary(errors: dict[int, FlashbackError], n_jobs: int) -> str:
    """One sentence naming every failed job (index and label) and saying what was kept."""
    named = "; ".join(str(errors[i]).removeprefix("sweep ") for i in sorted(errors))
    kept = n_jobs - len(errors)
    return (
        f"{len(errors)} of {n_jobs} sweep jobs failed ({named}); the results of the other "
        f"{kept} are in this error's .result (or pass errors='keep' to get them returned)"
    )


def _local_pool(workers: int) -> Executor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("forkserver")
    )


def _run_isolated(
    jobs: list[Job], todo: list[int], out_dir: str | None, workers: int
) -> dict[int, tuple[str, Any] | BaseException]:
    """Runs each job of ``todo`` in a process pool of its own (``workers`` at a time), so a
    worker that dies takes no other job with it; returns each job's result or exception."""
    got: dict[int, tuple[str, Any] | BaseException] = {}
    for k in range(0, len(todo), workers):
        batch = todo[k : k + workers]
        pools = {i: _local_pool(1) for i in batch}
        try:
            futs = {i: pools[i].submit(run_job, jobs[i], out_dir) for i in batch}
            for i, fut in futs.items():
                try:
                    got[i] = fut.result()
                except Exception as e:  # recorded per job
                    got[i] = e
        finally:
            for pool in pools.values():
                pool.shutdown(wait=True, cancel_futures=True)
    return got


def sweep(
    jobs: Iterable[Any],
    executor: Executor | Any | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    progress: bool | Callable[[dict], None] | None = None,
    max_workers: int | None = None,
    errors: str = "raise",
) -> SweepResult:
    """Runs ``jobs`` on ``executor`` and returns their captures in job order.

    Args:
        jobs: :class:`Job` objects, ``(target, workload)`` or ``(target, protocol, params)``.
        executor: any ``concurrent.futures.Executor`` (``client.get_executor()`` of a
            ``dask.distributed`` client, ``mpi4py.futures.MPIPoolExecutor``...), or a dask
            ``Client`` itself.
            Default: a local process pool of ``max_workers`` (default: the CPU count).
        out: a directory every worker can write to (shared storage past one machine): each
            capture is saved there as ``<capture_id>.parquet`` and only its path travels back.
            Default: captures travel back as Arrow IPC bytes.
        progress: ``True`` for a bar over jobs, or a callable receiving, as each job ends,
            ``{"done", "total", "job", "label", "elapsed_s", "error"}`` (``error``: the
            failed job's message, else None).
        max_workers: size of the default local pool.
        errors: what a failed job does to the call, as ``dask``'s ``gather(errors=...)``:
            ``"raise"`` (default) runs every job to the end, then raises one
            :class:`SweepError` naming each failed job, with the other jobs' results in its
            ``.result``; ``"keep"`` returns the :class:`SweepResult` with ``None`` for each
            failed job's capture and the failures in :attr:`SweepResult.errors`.

    A failed job never costs another job its result. A job whose worker process dies (an
    abort, a signal, the out-of-memory killer) is reported as such by index and target. A
    dying worker breaks a ``concurrent.futures`` process pool for every job running or
    queued on it: with the default pool, those jobs are run again, each in a process of its
    own, so the job that kills its worker is told apart from the jobs it took with it (a
    seeded simulated job gives the same capture the second time; a real target is written
    again). A pool you pass yourself cannot be restarted: its jobs lost to the broken pool
    are reported as failed.

    The default pool starts its workers with ``forkserver`` (safe with polars' threads): a
    script that calls ``sweep`` needs the usual ``if __name__ == "__main__":`` guard, as
    with any process pool. Captures are the same wherever a job runs, but a target that is
    not simulated measures the worker's own machine.

    Raises:
        ParameterError: no jobs, a job that is not one, or ``errors`` not "raise"/"keep".
        SweepError: with ``errors="raise"``, one or more jobs failed; the message names each
            (index, target and its error) and ``.result`` holds everything else.
    """
    if errors not in ("raise", "keep"):
        raise ParameterError(f"errors={errors!r} is not a choice; use 'raise' or 'keep'")
    jobs = [as_job(j) for j in jobs]
    if not jobs:
        raise ParameterError("the sweep has no jobs; pass at least one (target, workload) job")
    out_dir = None
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        out_dir = os.fspath(Path(out).absolute())
    own = executor is None
    workers = min(max_workers or os.cpu_count() or 1, len(jobs))
    pool: Executor | Any  # Any: a dask client's executor is not typed as one
    if executor is None:
        pool = _local_pool(workers)
    elif hasattr(executor, "get_executor"):
        pool = executor.get_executor()
    else:
        pool = executor
    report = _reporter(progress, len(jobs))
    results: list[Any] = [None] * len(jobs)
    failed: dict[int, FlashbackError] = {}
    broken: list[int] = []
    t0 = time.monotonic()
    done = 0

    def finish(i: int, outcome: tuple[str, Any] | BaseException) -> None:
        nonlocal done
        if isinstance(outcome, BaseException):
            failed[i] = _failure(i, jobs[i], outcome)
        else:
            results[i] = outcome
        done += 1
        if report is not None:
            report(
                {
                    "done": done,
                    "total": len(jobs),
                    "job": i,
                    "label": jobs[i].label,
                    "elapsed_s": time.monotonic() - t0,
                    "error": str(failed[i]) if i in failed else None,
                }
            )

    futures: dict[Future, int] = {}
    try:
        futures = {pool.submit(run_job, job, out_dir): i for i, job in enumerate(jobs)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                outcome: tuple[str, Any] | BaseException = fut.result()
            except Exception as e:  # recorded per job, reported below
                if own and isinstance(e, BrokenExecutor):
                    broken.append(i)  # run again alone once the pool is down
                    continue
                outcome = e
            finish(i, outcome)
    except BaseException:  # Ctrl-C: the jobs not yet started never start
        for f in futures:
            f.cancel()
        raise
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
    if broken:
        for i, outcome in sorted(_run_isolated(jobs, sorted(broken), out_dir, workers).items()):
            finish(i, outcome)
    elapsed = time.monotonic() - t0
    if out_dir is not None:
        res = SweepResult(
            jobs=jobs,
            paths=[None if r is None else Path(r[1]) for r in results],
            elapsed_s=elapsed,
            errors=dict(sorted(failed.items())),
        )
    else:
        res = SweepResult(
            jobs=jobs,
            paths=None,
            elapsed_s=elapsed,
            errors=dict(sorted(failed.items())),
            _captures=[None if r is None else _from_ipc(r[1]) for r in results],
        )
    if failed and errors == "raise":
        raise SweepError(_summary(res.errors, len(jobs)), res)
    return res


__all__ = ["Job", "SweepResult", "as_job", "run_job", "sweep"]
