"""``flashback recover FILE``: salvage a capture torn by a crash or kill."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recover", help="salvage a capture whose tail was torn by a crash")
    p.add_argument("path", help="the torn .arrow capture")
    p.add_argument(
        "-o", "--output", help="where to write the salvaged capture (default: PATH.recovered.arrow)"
    )
    p.add_argument("--overwrite", action="store_true", help="replace the output file if it exists")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from flashback.capture import check_save_path, recover

    out = args.output or args.path.removesuffix(".arrow") + ".recovered.arrow"
    check_save_path(out, overwrite=args.overwrite)
    cap = recover(args.path, out=out)
    torn = cap.meta["recovered"]["torn_tail"]
    print(
        f"salvaged {len(cap.intervals)} intervals ({'torn tail dropped' if torn else 'file was whole'}) -> {out}"
    )
    return 0
