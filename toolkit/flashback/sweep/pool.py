"""How a sweep runs its jobs on a pool: the default local pool, jobs run again alone after
a worker died, progress events, and what a failed job reports."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, Future, as_completed
from typing import Any

from flashback.errors import FlashbackError, SweepError
from flashback.sweep.job import Job, run_job

#: what a job whose worker process died (os._exit, abort, the OOM killer, a signal) reports
WORKER_DIED = (
    "its worker process died without raising an error (aborted, killed by a signal or by the "
    "out-of-memory killer); run the job alone with Job.run() to see why"
)


def reporter(progress: bool | Callable[[dict], None] | None, total: int) -> Any:
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


def failure(i: int, job: Job, e: BaseException) -> FlashbackError:
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


def summary(errors: dict[int, FlashbackError], n_jobs: int) -> str:
    """One sentence naming every failed job (index and label) and saying what was kept."""
    named = "; ".join(str(errors[i]).removeprefix("sweep ") for i in sorted(errors))
    kept = n_jobs - len(errors)
    return (
        f"{len(errors)} of {n_jobs} sweep jobs failed ({named}); the results of the other "
        f"{kept} are in this error's .result (or pass errors='keep' to get them returned)"
    )


def local_pool(workers: int) -> Executor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("forkserver")
    )


def run_isolated(
    jobs: list[Job], todo: list[int], out_dir: str | None, workers: int
) -> dict[int, tuple[str, Any] | BaseException]:
    """Runs each job of ``todo`` in a process pool of its own (``workers`` at a time), so a
    worker that dies takes no other job with it; returns each job's result or exception."""
    got: dict[int, tuple[str, Any] | BaseException] = {}
    for k in range(0, len(todo), workers):
        batch = todo[k : k + workers]
        pools = {i: local_pool(1) for i in batch}
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


def pool_of(executor: Executor | Any | None, workers: int) -> Executor | Any:
    """The pool a sweep submits to: a local process pool of ``workers`` when ``executor``
    is None, a dask client's executor, or ``executor`` itself (Any: a dask client's
    executor is not typed as one)."""
    if executor is None:
        return local_pool(workers)
    if hasattr(executor, "get_executor"):
        return executor.get_executor()
    return executor


class Tally:
    """Each job's outcome as it ends, in the order they end, with a progress event each:
    ``results`` (what :func:`run_job` returned, by job index; None until then or when the
    job failed) and ``failed`` (the error recorded for each failed job)."""

    def __init__(self, jobs: list[Job], report: Callable[[dict], None] | None) -> None:
        self.jobs = jobs
        self.report = report
        self.results: list[Any] = [None] * len(jobs)
        self.failed: dict[int, FlashbackError] = {}
        self.t0 = time.monotonic()
        self.done = 0

    def finish(self, i: int, outcome: tuple[str, Any] | BaseException) -> None:
        """Records job ``i``'s result or exception and reports it."""
        if isinstance(outcome, BaseException):
            self.failed[i] = failure(i, self.jobs[i], outcome)
        else:
            self.results[i] = outcome
        self.done += 1
        if self.report is not None:
            self.report(
                {
                    "done": self.done,
                    "total": len(self.jobs),
                    "job": i,
                    "label": self.jobs[i].label,
                    "elapsed_s": time.monotonic() - self.t0,
                    "error": str(self.failed[i]) if i in self.failed else None,
                }
            )


def run_on(
    pool: Executor | Any, jobs: list[Job], out_dir: str | None, tally: Tally, *, own: bool
) -> list[int]:
    """Submits every job to ``pool`` and records each outcome in ``tally`` as it ends. With
    ``own`` (the sweep made the pool), the jobs a dying worker broke the pool for are not
    recorded but returned, to be run again alone, and the pool is shut down at the end.
    Ctrl-C cancels the jobs not yet started."""
    broken: list[int] = []
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
            tally.finish(i, outcome)
    except BaseException:  # Ctrl-C: the jobs not yet started never start
        for f in futures:
            f.cancel()
        raise
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)
    return broken
