"""``flashback replay NAME --target ...``: a review's procedure on any target."""

from __future__ import annotations

import argparse
import json
import sys


def _value(text: str):
    """A ``--param key=value`` value: JSON when it parses (numbers, true, lists), else text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="replay a review's test procedure on a target")
    p.add_argument("name", nargs="?", help="protocol name (see --list)")
    p.add_argument("--list", action="store_true", help="describe the protocols and exit")
    p.add_argument(
        "--target", help="file, /dev/..., or sim:<preset>[?k=v] (default: the review's drive)"
    )
    p.add_argument("--scale", help="target capacity / review drive capacity, e.g. 1/64")
    p.add_argument(
        "--destroy", help="for a block device: name it again to confirm its data is lost"
    )
    p.add_argument(
        "--overwrite", action="store_true", help="allow writing over a foreign regular file"
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a protocol parameter, e.g. --param data=zeros --param loops=3",
    )
    p.add_argument("-o", "--output", help="save the replay to this directory")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import polars as pl

    from flashback.errors import ParameterError
    from flashback.replay import replay
    from flashback.replay.base import registered

    if args.list or not args.name:
        for proto in registered():
            print(proto.describe())
            print()
        return 0 if args.list else 2
    params = {}
    for item in args.param:
        if "=" not in item:
            raise ParameterError(f"--param {item!r} is not KEY=VALUE; write e.g. --param loops=3")
        key, value = item.split("=", 1)
        params[key.strip()] = _value(value.strip())
    res = replay(
        args.name,
        target=args.target,
        scale=args.scale,
        destroy=args.destroy,
        overwrite=args.overwrite,
        progress=not args.no_progress,
        **params,
    )
    with pl.Config(tbl_rows=60, tbl_cols=12, fmt_str_lengths=40, tbl_width_chars=160):
        print(
            res.steps.select(
                "step", "kind", "duration_s", "written_gb", "write_mbps", "read_mbps", "write_iops"
            )
            if res.intervals.height
            else res.steps
        )
        print(res.compare().drop("source", "note"))
    if args.output:
        res.save(args.output)
        print(f"replay written to {args.output}")
    if res.status != "complete":
        print(f"flashback: replay {res.status}", file=sys.stderr)
        return 130
    return 0
