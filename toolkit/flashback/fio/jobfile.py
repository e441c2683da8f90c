"""fio job files (``[global]`` + job sections, ``key=value`` lines) → workload fields.

Only options flashback can honour are read; every other option is refused by name. Options
that only shape fio's own reporting (logs, ``group_reporting``, ``name``…) are accepted and
have no effect: flashback always records per-interval rows.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Callable
from pathlib import Path

from flashback.errors import ImportFormatError, ParameterError

_RW = {"read", "write", "randread", "randwrite", "randrw", "trim", "randtrim"}
#: fio ioengine -> flashback engine, and the one-line note said when they differ
_ENGINES = {
    "io_uring": ("io_uring", None),
    "libaio": ("io_uring", "libaio runs on io_uring here (both keep iodepth I/Os in flight)"),
    "psync": ("psync", None),
    "pvsync": ("psync", "pvsync runs as psync here (one pread/pwrite at a time)"),
    "sync": ("psync", "sync runs as psync here (one pread/pwrite at a time, at an offset)"),
}
# reporting-only options: no effect on what is run
_NO_EFFECT = {
    "name",
    "description",
    "group_reporting",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "write_hist_log",
    "log_hist_msec",
    "per_job_logs",
    "log_offset",
    "log_max_value",
    "log_window_value",
    "log_prio",
    "log_compression",
    "log_store_compressed",
    "log_unix_epoch",
    "log_alternate_epoch",
    "refill_buffers",
    "scramble_buffers",
    "thread",
    "invalidate",
    "randrepeat",
    "eta",
    "eta_newline",
    "disable_slat",
    "disable_clat",
    "disable_lat",
    "lat_percentiles",
    "clat_percentiles",
    "percentile_list",
    "significant_figures",
    "allow_file_create",
}
_TRUE = {"1", "true", "yes", "on", ""}


def _bool(v: str, key: str, path: Path) -> bool:
    s = v.strip().lower()
    if s in _TRUE:
        return True
    if s in {"0", "false", "no", "off"}:
        return False
    raise ParameterError(f"{path}: {key}={v} is not a boolean (use 0 or 1)")


def sections(path: Path) -> list[tuple[str, dict[str, str]]]:
    """The sections of a job file in order, each ``(name, {option: value})``; a bare option
    (``time_based``) has the value ``""``.

    Raises:
        ImportFormatError: a line outside any section, ``include`` or ``$VAR`` expansion.
    """
    out: list[tuple[str, dict[str, str]]] = []
    for lineno, raw in enumerate(Path(path).read_text(errors="replace").splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        m = re.fullmatch(r"\[(.+)\]", line)
        if m:
            out.append((m.group(1).strip(), {}))
            continue
        if line.startswith("include ") or "$" in line:
            raise ImportFormatError(
                f"{path} line {lineno}: includes and $VARIABLES are not read; expand them first"
            )
        if not out:
            raise ImportFormatError(f"{path} line {lineno}: an option before any [section]")
        key, _, value = line.partition("=")
        out[-1][1][key.strip().lower()] = value.strip()
    return out


def read_job_file(
    path: str | Path, *, job: str | None = None, notes: bool = False
) -> tuple[dict[str, str], str | None]:
    """(workload fields, ``filename``) of one job of a fio job file, ``[global]`` applied.
    ``notes``: say how an option was mapped (``ioengine=libaio`` runs on io_uring) as a
    :class:`JobFileNote` warning, one line each.

    Raises:
        ImportFormatError: malformed job file, or no job section.
        ParameterError: an option flashback does not have, or a value it cannot read (both
            named), several jobs and no ``job=``, or an unknown ``job``.
    """
    path = Path(path)
    secs = sections(path)
    glob: dict[str, str] = {}
    jobs: list[tuple[str, dict[str, str]]] = []
    for name, opts in secs:
        if name == "global":
            glob.update(opts)
        else:
            jobs.append((name, {**glob, **opts}))
    if not jobs:
        raise ImportFormatError(f"{path}: no job section (only [global])")
    if job is None and len(jobs) > 1:
        names = ", ".join(n for n, _ in jobs)
        raise ParameterError(
            f"{path} holds {len(jobs)} jobs ({names}); pick one with job= (--job NAME)"
        )
    chosen = [o for n, o in jobs if job is None or n == job]
    if not chosen:
        raise ParameterError(
            f"{path} has no job [{job}]; its jobs are {', '.join(n for n, _ in jobs)}"
        )
    fields, filename, said = _fields(chosen[0], path)
    if notes:
        for line in said:
            warnings.warn(line, JobFileNote, stacklevel=3)
    return fields, filename


class JobFileNote(UserWarning):
    """How a job file's option was mapped onto flashback (``ioengine=libaio`` → io_uring)."""


def ramp_workload(workload):  # type: ignore[no-untyped-def]
    """The unrecorded part of a workload with a ramp (fio's ``ramp_time``): the same I/O for
    ``workload.ramp_s`` seconds, with no other limit."""
    return dataclasses.replace(
        workload, ramp=None, time=f"{workload.ramp_s}s", written=None, loops=None
    )


def _number(v: str, key: str, path: Path, *, integer: bool = True, lo: float = 0, hi=None) -> float:
    """``v`` as a number within [lo, hi] (fio's own range for ``key``).

    Raises:
        ParameterError: naming the option, when ``v`` is not one.
    """
    kind = "a whole number" if integer else "a number"
    try:
        x = int(v) if integer else float(v)
    except ValueError:
        x = None
    if x is None or x < lo or (hi is not None and x > hi):
        within = f" from {lo:g} to {hi:g}" if hi is not None else f" >= {lo:g}"
        raise ParameterError(f"{path}: {key}={v} is not {kind}{within}; fix that line")
    return x


@dataclasses.dataclass
class _Job:
    """What a job's options have set so far, as :func:`_fields` reads them in order."""

    path: Path
    fields: dict[str, str] = dataclasses.field(default_factory=dict)
    said: list[str] = dataclasses.field(default_factory=list)  # notes on how options mapped
    filename: str | None = None
    time_based: bool = False
    runtime: str | None = None


#: how one option acts on the job being read: ``handler(job, key, value)``
_Handler = Callable[[_Job, str, str], None]


def _to(field: str) -> _Handler:
    """The option's value, as is, into the workload field ``field``."""

    def handler(job: _Job, key: str, v: str) -> None:
        job.fields[field] = v

    return handler


def _seconds(v: str) -> str:
    """A fio time (``60``: seconds, or with a unit) as a workload duration."""
    return v + "s" if re.fullmatch(r"\d+(\.\d+)?", v) else v


def _rw(job: _Job, key: str, v: str) -> None:
    if v not in _RW:
        raise ParameterError(
            f"{job.path}: rw={v} is not one flashback runs ({', '.join(sorted(_RW))})"
        )
    job.fields["rw"] = v


def _bs(job: _Job, key: str, v: str) -> None:
    if "," in v or ":" in v:
        raise ParameterError(
            f"{job.path}: bs={v} (per-direction sizes) is not supported; give one size"
        )
    job.fields["bs"] = v


def _runtime(job: _Job, key: str, v: str) -> None:
    job.runtime = _seconds(v)


def _time_based(job: _Job, key: str, v: str) -> None:
    job.time_based = _bool(v, key, job.path)


def _rwmixread(job: _Job, key: str, v: str) -> None:
    job.fields["rwmix_read"] = str(int(_number(v, key, job.path, hi=100)))


def _rwmixwrite(job: _Job, key: str, v: str) -> None:
    job.fields["rwmix_read"] = str(100 - int(_number(v, key, job.path, hi=100)))


def _direct(job: _Job, key: str, v: str) -> None:
    job.fields["direct"] = "true" if _bool(v, key, job.path) else "false"


def _buffered(job: _Job, key: str, v: str) -> None:
    job.fields["direct"] = "false" if _bool(v, key, job.path) else "true"


def _ioengine(job: _Job, key: str, v: str) -> None:
    if v not in _ENGINES:
        raise ParameterError(
            f"{job.path}: ioengine={v} is not one flashback has; use {', '.join(sorted(_ENGINES))}"
        )
    job.fields["engine"], note = _ENGINES[v]
    if note:
        job.said.append(f"{job.path}: ioengine={note}")


def _norandommap(job: _Job, key: str, v: str) -> None:
    if _bool(v, key, job.path):
        job.fields["random"] = "uniform"


def _compress(job: _Job, key: str, v: str) -> None:
    job.fields["data"] = f"compress:{v}"


def _zero_buffers(job: _Job, key: str, v: str) -> None:
    if _bool(v, key, job.path):
        job.fields["data"] = "zeros"


def _pattern(job: _Job, key: str, v: str) -> None:
    job.fields["data"] = "pattern:" + v.lower().removeprefix("0x")


def _log_avg_msec(job: _Job, key: str, v: str) -> None:
    ms = int(_number(v, key, job.path))
    if ms > 0:
        job.fields["interval"] = f"{ms / 1000:g}s"


def _ramp_time(job: _Job, key: str, v: str) -> None:
    job.fields["ramp"] = _seconds(v)


def _filename(job: _Job, key: str, v: str) -> None:
    job.filename = v


def _no_effect(job: _Job, key: str, v: str) -> None:
    """A reporting-only option: read and dropped."""


#: every fio option flashback reads (aliases as their own rows), as fio's ``options.c``
#: lists its options in one table (``fio_options[]``); any other option is refused by name
_OPTIONS: dict[str, _Handler] = {
    **dict.fromkeys(_NO_EFFECT, _no_effect),
    "rw": _rw,
    "readwrite": _rw,
    "bs": _bs,
    "blocksize": _bs,
    "iodepth": _to("iodepth"),
    "numjobs": _to("jobs"),
    "offset": _to("offset"),
    "size": _to("size"),
    "loops": _to("loops"),
    "io_size": _to("written"),
    "io_limit": _to("written"),
    "runtime": _runtime,
    "time_based": _time_based,
    "rwmixread": _rwmixread,
    "rwmixwrite": _rwmixwrite,
    "direct": _direct,
    "buffered": _buffered,
    "ioengine": _ioengine,
    "randseed": _to("seed"),
    "seed": _to("seed"),
    "norandommap": _norandommap,
    "buffer_compress_percentage": _compress,
    "zero_buffers": _zero_buffers,
    "buffer_pattern": _pattern,
    "log_avg_msec": _log_avg_msec,
    "ramp_time": _ramp_time,
    "filename": _filename,
    "cpus_allowed": _to("cpus_allowed"),
    "cpus_allowed_policy": _to("cpus_allowed_policy"),
}


def _fields(opts: dict[str, str], path: Path) -> tuple[dict[str, str], str | None, list[str]]:
    """(workload fields, ``filename``, notes) of one job's options, read in order through
    :data:`_OPTIONS` (a later option overrides an earlier one that sets the same field).

    Raises:
        ParameterError: an option not in the table, a value it cannot read (both named), or
            a combination flashback cannot run (``io_size`` without writes, ``time_based``
            without ``runtime``).
    """
    job = _Job(path=path)
    for key, v in opts.items():
        handler = _OPTIONS.get(key)
        if handler is None:
            raise ParameterError(f"{path}: fio option {key!r} is not one flashback has; remove it")
        handler(job, key, v)
    f = job.fields
    if "written" in f and f.get("rw", "write") not in ("write", "randwrite", "randrw"):
        raise ParameterError(
            f"{path}: io_size with rw={f.get('rw')} is not supported; flashback limits bytes "
            "written only"
        )
    if job.runtime is not None:
        f["time"] = job.runtime
        if not job.time_based:
            f.setdefault("loops", "1")  # fio stops at one pass or the runtime, whichever first
    elif job.time_based:
        raise ParameterError(f"{path}: time_based without runtime would never stop")
    return f, job.filename, job.said


def is_job_file(path: str | Path) -> bool:
    """Whether ``path`` is an existing ``.fio`` file whose first option line is a
    ``[section]`` header (a job file, not a data file that happens to end in .fio)."""
    p = Path(path)
    if p.suffix != ".fio" or not p.is_file():
        return False
    with p.open("rb") as f:
        for raw in f.read(4096).splitlines():
            line = raw.strip()
            if line and line[:1] not in (b"#", b";"):
                return line.startswith(b"[")
    return False


def cli_job(
    target: str, overrides: dict[str, str], *, job: str | None = None
) -> tuple[str, dict[str, str], list[str]]:
    """For ``flashback run``: when ``target`` is a job file, (its ``filename``, its fields
    with the command line's ``overrides`` applied, notes on how options were mapped);
    otherwise ``(target, overrides, [])``. A ``.fio`` path is always read as a job file,
    never written as a data target.

    Raises:
        ParameterError: the job file names no ``filename`` (or an unsupported option), a
            ``.fio`` path that is missing or not a job file, or ``job`` without a job file.
    """
    if Path(target).suffix == ".fio" and not is_job_file(target):
        what = "does not exist" if not Path(target).exists() else "is not a fio job file"
        raise ParameterError(
            f"{target} {what}; a .fio path is read as a fio job file, never written as a "
            "data target (check the name)"
        )
    if not is_job_file(target):
        if job is not None:
            raise ParameterError(f"--job {job} needs a fio job file as TARGET, not {target}")
        return target, overrides, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", JobFileNote)
        fields, filename = read_job_file(target, job=job, notes=True)
    if not filename:
        raise ParameterError(
            f"{target}: the job names no filename=; add one to say what to write to"
        )
    return filename, {**fields, **overrides}, [str(w.message) for w in caught]
