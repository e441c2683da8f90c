"""``sweep``: many (target, workload or replay) jobs on any ``concurrent.futures.Executor`` —
local processes by default, a ``dask.distributed`` client (``client.get_executor()``) or any
other executor to go past one machine. The same code runs on a laptop and on a cluster.

Each job runs in one worker with its own freshly opened target; its capture comes back as
Arrow IPC bytes, or is written to a shared directory (``out=``) and only its path comes back.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from flashback.errors import ParameterError, SweepError
from flashback.sweep.job import Job, as_job, from_ipc, run_job
from flashback.sweep.pool import WORKER_DIED as WORKER_DIED  # flashback.sweep's before the split
from flashback.sweep.pool import (
    Tally,
    pool_of,
    reporter,
    run_isolated,
    run_on,
    summary,
)
from flashback.sweep.result import SweepResult


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
    pool = pool_of(executor, workers)
    tally = Tally(jobs, reporter(progress, len(jobs)))
    broken = run_on(pool, jobs, out_dir, tally, own=own)
    if broken:
        for i, outcome in sorted(run_isolated(jobs, sorted(broken), out_dir, workers).items()):
            tally.finish(i, outcome)
    res = _result(jobs, tally, out_dir)
    if tally.failed and errors == "raise":
        raise SweepError(summary(res.errors, len(jobs)), res)
    return res


def _result(jobs: list[Job], tally: Tally, out_dir: str | None) -> SweepResult:
    """The :class:`SweepResult` of every job's outcome: the paths written to ``out_dir``, or
    the captures that came back as Arrow IPC."""
    elapsed = time.monotonic() - tally.t0
    errors = dict(sorted(tally.failed.items()))
    results = tally.results
    if out_dir is not None:
        return SweepResult(
            jobs=jobs,
            paths=[None if r is None else Path(r[1]) for r in results],
            elapsed_s=elapsed,
            errors=errors,
        )
    return SweepResult(
        jobs=jobs,
        paths=None,
        elapsed_s=elapsed,
        errors=errors,
        _captures=[None if r is None else from_ipc(r[1]) for r in results],
    )


__all__ = ["Job", "SweepResult", "as_job", "run_job", "sweep"]
