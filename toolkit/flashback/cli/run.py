"""``flashback run TARGET``: one workload, one capture."""

from __future__ import annotations

import argparse
import sys
from typing import Any, cast

from flashback.cli._output import frame_rows, print_json, text_table

_WORKLOAD_OPTS = [
    ("rw", "read|write|randread|randwrite|randrw|trim|randtrim"),
    ("bs", "block size, e.g. 4k"),
    ("iodepth", "outstanding I/Os"),
    ("jobs", "parallel workers"),
    ("offset", "start of the span"),
    ("size", "length of the span"),
    ("time", "stop after a duration, e.g. 60s"),
    ("written", "stop after N bytes written, e.g. 10g"),
    ("loops", "stop after N passes"),
    ("data", "random|zeros|compress:N|pattern:HEX"),
    ("random", "uniform|permutation"),
    ("rwmix_read", "%% reads in randrw"),
    ("direct", "true|false (O_DIRECT)"),
    ("engine", "io_uring|psync|auto"),
    ("interval", "reporting interval, e.g. 1s"),
    ("seed", "makes offsets and data reproducible"),
    ("cpus_allowed", "CPUs the jobs run on, e.g. 0 or 0,5,8-15 (as fio's)"),
    ("cpus_allowed_policy", "shared|split: every job on every listed CPU, or one each"),
    ("ramp", "run this long first, not recorded (fio's ramp_time), e.g. 10s"),
]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run one workload on a file, block device or sim: drive")
    p.add_argument("target", help="file path, /dev/..., or sim:<preset>[?key=value&...]")
    for name, help_ in _WORKLOAD_OPTS:
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, help=help_)
    p.add_argument(
        "-o", "--output", help="stream the capture to this .arrow file (or save .parquet)"
    )
    p.add_argument(
        "--job", metavar="NAME", help="with a fio job file of several jobs: the one to run"
    )
    p.add_argument("--step", default="", help="label for the step column")
    p.add_argument(
        "--destroy", help="for a block device: name it again to confirm its data is lost"
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="allow writing over an existing file: a regular-file target flashback did not create, and the -o file",
    )
    p.add_argument(
        "--session",
        choices=("own", "shared"),
        default="own",
        help="own (default): a file's or device's job runs in a child process of a session of "
        "its own, as fio runs a job; shared: in this process",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the summary and metadata as JSON")
    p.set_defaults(func=main)


def print_summary(cap, *, output: str | None, as_json: bool, streamed: bool = False) -> None:
    """The run's summary on stdout: a table within 80 columns, or JSON (``--json``).
    ``streamed``: the intervals went to the file only, so the totals come from the metadata."""
    from flashback.capture import summarize_totals

    summary = summarize_totals(cap.meta) if streamed else cap.summary()
    if as_json:
        rows = summary if isinstance(summary, str) else frame_rows(summary)
        print_json({"status": cap.status, "output": output, "summary": rows, "meta": cap.meta})
        return
    print(summary if isinstance(summary, str) else text_table(frame_rows(summary)))
    if output:
        print(f"capture written to {output}")


def save_or_rescue(cap, output: str, *, overwrite: bool) -> None:
    """Saves the finished run to ``output``; when the disk holding it is full, saves it to
    the system's temporary directory instead, so a completed run is not lost with the process.

    Raises:
        DeviceError: the disk is full (the message names where the run was kept, if anywhere).
        SafetyError, CaptureFileError: as :meth:`Capture.save`.
    """
    import os
    import tempfile

    from flashback._io import is_full_disk
    from flashback.errors import DeviceError, FlashbackError

    try:
        cap.save(output, overwrite=overwrite)
        return
    except DeviceError as e:
        if not is_full_disk(e):
            raise
        first = str(e)
    run_id = str(cap.meta.get("run_id") or os.getpid())
    rescue = os.path.join(tempfile.gettempdir(), f"flashback-rescued-{run_id}.arrow")
    try:
        cap.save(rescue, overwrite=False)
    except FlashbackError as e2:
        raise DeviceError(f"{first}; the completed run could not be kept anywhere ({e2})") from None
    raise DeviceError(
        f"{first}; the completed run was saved to {rescue} instead: move it where you want it"
    ) from None


def main(args: argparse.Namespace) -> int:
    from flashback._text import printable
    from flashback.capture import check_save_path
    from flashback.errors import RunInterrupted
    from flashback.fio.jobfile import cli_job
    from flashback.targets import run
    from flashback.workload import Workload

    fields: dict[str, Any] = {
        name: getattr(args, name) for name, _ in _WORKLOAD_OPTS if getattr(args, name) is not None
    }
    # TARGET may be a fio job file
    args.target, fields, notes = cli_job(args.target, fields, job=args.job)
    for note in notes:
        print(f"flashback: note: {printable(note)}", file=sys.stderr)
    w = Workload(**cast(dict[str, Any], fields))  # texts: Workload parses each field's
    if args.output:  # before the target is opened: a bad -o costs nothing
        check_save_path(args.output, overwrite=args.overwrite)
    stream_to = args.output if args.output and not args.output.endswith(".parquet") else None
    try:
        cap = run(
            args.target,
            w,
            step=args.step,
            capture_path=stream_to,
            progress=not args.no_progress,
            destroy=args.destroy,
            overwrite=args.overwrite,
            stream_only=stream_to is not None,  # memory stays flat: the file has the rows
            session=args.session,
        )
    except RunInterrupted as e:
        cap = e.capture
    if args.output and not stream_to:
        save_or_rescue(cap, args.output, overwrite=args.overwrite)
    print_summary(cap, output=args.output, as_json=args.json, streamed=stream_to is not None)
    if cap.status != "complete":
        print(f"flashback: run {cap.status}", file=sys.stderr)
        return 130 if cap.status == "interrupted" else 1
    return 0
