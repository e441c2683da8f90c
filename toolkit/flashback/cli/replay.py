"""``flashback replay NAME --target ...``: a review's procedure on any target."""

from __future__ import annotations

import argparse
import json
import sys

from flashback.cli._output import frame_rows, print_json, print_tables

#: Columns printed per step and per compared number (--json prints every column).
STEP_COLS = ("step", "duration_s", "written_gb", "write_mbps", "read_mbps", "write_iops")


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
        "--overwrite",
        action="store_true",
        help="allow writing over a foreign regular file, and over an earlier save in -o DIR",
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
    p.add_argument("--json", action="store_true", help="print steps and comparison as JSON")
    p.set_defaults(func=main)


def print_result(res, *, output: str | None, as_json: bool) -> None:
    """The replay's steps and published-vs-replayed table (80 columns), or JSON."""
    from flashback.replay.compare import BRIEF_COLUMNS

    cmp = res.compare()
    if as_json:
        print_json(
            {
                "status": res.status,
                "output": output,
                "meta": res.meta,
                "steps": res.steps,
                "compare": cmp,
            }
        )
        return
    steps = res.steps
    if steps.height and "kind" in steps.columns:
        steps = steps.filter(steps["kind"] == "run")
    cols = [c for c in STEP_COLS if c in steps.columns]
    print_tables(
        [
            (f"steps ({steps.height} runs)", frame_rows(steps.select(cols)) if cols else []),
            (
                "published vs replayed (bytes and seconds at the review drive's scale)",
                frame_rows(cmp.select([c for c in BRIEF_COLUMNS if c in cmp.columns])),
            ),
        ]
    )
    if output:
        print(f"replay written to {output}")


def main(args: argparse.Namespace) -> int:
    from flashback.errors import ParameterError, ReplayInterrupted
    from flashback.replay import replay
    from flashback.replay.base import registered
    from flashback.replay.saved import check_save_dir

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
    if args.output:  # before the target is opened: a bad -o costs nothing, not hours
        check_save_dir(args.output, overwrite=args.overwrite)
    try:
        res = replay(
            args.name,
            target=args.target,
            scale=args.scale,
            destroy=args.destroy,
            overwrite=args.overwrite,
            progress=not args.no_progress,
            **params,
        )
    except ReplayInterrupted as e:  # the steps done are saved and printed, then exit 130
        res = e.replay
    if args.output:  # saved before anything is printed: a closed pipe must not lose it
        res.save(args.output, overwrite=args.overwrite)
    print_result(res, output=args.output, as_json=args.json)
    if res.status != "complete":
        print(f"flashback: replay {res.status}", file=sys.stderr)
        return 130
    return 0
