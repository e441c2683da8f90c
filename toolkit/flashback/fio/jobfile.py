"""fio job files (``[global]`` + job sections, ``key=value`` lines) → workload fields.

Only options flashback can honour are read; every other option is refused by name. Options
that only shape fio's own reporting (logs, ``group_reporting``, ``name``…) are accepted and
have no effect: flashback always records per-interval rows.
"""

from __future__ import annotations

import re
from pathlib import Path

from flashback.errors import ImportFormatError, ParameterError

_RW = {"read", "write", "randread", "randwrite", "randrw", "trim", "randtrim"}
_ENGINES = {"io_uring": "io_uring", "psync": "psync", "pvsync": "psync", "sync": "psync"}
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


def read_job_file(path: str | Path, *, job: str | None = None) -> tuple[dict[str, str], str | None]:
    """(workload fields, ``filename``) of one job of a fio job file, ``[global]`` applied.

    Raises:
        ImportFormatError: malformed job file, or no job section.
        ParameterError: an option flashback does not have (named), several jobs and no
            ``job=``, or an unknown ``job``.
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
        raise ParameterError(f"{path} holds {len(jobs)} jobs ({names}); pass job= to pick one")
    chosen = [o for n, o in jobs if job is None or n == job]
    if not chosen:
        raise ParameterError(f"{path} has no job [{job}]")
    return _fields(chosen[0], path)


def _fields(opts: dict[str, str], path: Path) -> tuple[dict[str, str], str | None]:
    f: dict[str, str] = {}
    filename = None
    time_based = False
    runtime = None
    for key, v in opts.items():
        if key in _NO_EFFECT:
            continue
        if key in ("rw", "readwrite"):
            if v not in _RW:
                raise ParameterError(
                    f"{path}: rw={v} is not one flashback runs ({', '.join(sorted(_RW))})"
                )
            f["rw"] = v
        elif key in ("bs", "blocksize"):
            if "," in v or ":" in v:
                raise ParameterError(
                    f"{path}: bs={v} (per-direction sizes) is not supported; give one size"
                )
            f["bs"] = v
        elif key == "iodepth":
            f["iodepth"] = v
        elif key == "numjobs":
            f["jobs"] = v
        elif key in ("offset", "size", "loops"):
            f[key] = v
        elif key in ("io_size", "io_limit"):
            f["written"] = v
        elif key == "runtime":
            runtime = v + "s" if re.fullmatch(r"\d+(\.\d+)?", v) else v
        elif key == "time_based":
            time_based = _bool(v, key, path)
        elif key == "rwmixread":
            f["rwmix_read"] = v
        elif key == "rwmixwrite":
            f["rwmix_read"] = str(100 - int(v))
        elif key == "direct":
            f["direct"] = "true" if _bool(v, key, path) else "false"
        elif key == "buffered":
            f["direct"] = "false" if _bool(v, key, path) else "true"
        elif key == "ioengine":
            if v not in _ENGINES:
                raise ParameterError(
                    f"{path}: ioengine={v} is not one flashback has; use io_uring or psync"
                )
            f["engine"] = _ENGINES[v]
        elif key in ("randseed", "seed"):
            f["seed"] = v
        elif key == "norandommap":
            if _bool(v, key, path):
                f["random"] = "uniform"
        elif key == "buffer_compress_percentage":
            f["data"] = f"compress:{v}"
        elif key == "zero_buffers":
            if _bool(v, key, path):
                f["data"] = "zeros"
        elif key == "buffer_pattern":
            f["data"] = "pattern:" + v.lower().removeprefix("0x")
        elif key == "log_avg_msec":
            if int(v) > 0:
                f["interval"] = f"{int(v) / 1000:g}s"
        elif key == "filename":
            filename = v
        else:
            raise ParameterError(f"{path}: fio option {key!r} is not one flashback has; remove it")
    if "written" in f and f.get("rw", "write") not in ("write", "randwrite", "randrw"):
        raise ParameterError(
            f"{path}: io_size with rw={f.get('rw')} is not supported; flashback limits bytes "
            "written only"
        )
    if runtime is not None:
        f["time"] = runtime
        if not time_based:
            f.setdefault("loops", "1")  # fio stops at one pass or the runtime, whichever first
    elif time_based:
        raise ParameterError(f"{path}: time_based without runtime would never stop")
    return f, filename


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


def cli_job(target: str, overrides: dict[str, str]) -> tuple[str, dict[str, str]]:
    """For ``flashback run``: when ``target`` is a job file, (its ``filename``, its fields
    with the command line's ``overrides`` applied); otherwise ``(target, overrides)``.

    Raises:
        ParameterError: the job file names no ``filename`` (or an unsupported option).
    """
    if not is_job_file(target):
        return target, overrides
    fields, filename = read_job_file(target)
    if not filename:
        raise ParameterError(
            f"{target}: the job names no filename=; add one to say what to write to"
        )
    return filename, {**fields, **overrides}
