"""``flashback run TARGET``: one workload, one capture."""

from __future__ import annotations

import argparse
import sys

from flashback.workload import Workload

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
]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run one workload on a file, block device or sim: drive")
    p.add_argument("target", help="file path, /dev/..., or sim:<preset>[?key=value&...]")
    for name, help_ in _WORKLOAD_OPTS:
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, help=help_)
    p.add_argument(
        "-o", "--output", help="stream the capture to this .arrow file (or save .parquet)"
    )
    p.add_argument("--step", default="", help="label for the step column")
    p.add_argument(
        "--destroy", help="for a block device: name it again to confirm its data is lost"
    )
    p.add_argument(
        "--overwrite", action="store_true", help="allow writing over a foreign regular file"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from flashback.targets import run

    fields = {
        name: getattr(args, name) for name, _ in _WORKLOAD_OPTS if getattr(args, name) is not None
    }
    w = Workload(**fields)
    stream_to = args.output if args.output and args.output.endswith(".arrow") else None
    cap = run(
        args.target,
        w,
        step=args.step,
        capture_path=stream_to,
        progress=not args.no_progress,
        destroy=args.destroy,
        overwrite=args.overwrite,
    )
    if args.output and not stream_to:
        cap.save(args.output)
    import polars as pl

    # every column: the whole run's latency percentiles are at the right of the table
    with pl.Config(tbl_cols=-1, tbl_width_chars=400):
        print(cap.summary())
    if args.output:
        print(f"capture written to {args.output}")
    if cap.status != "complete":
        print(f"flashback: run {cap.status}", file=sys.stderr)
        return 130 if cap.status == "interrupted" else 1
    return 0
