"""``flashback report``: replay the reviews on simulated drives and write the HTML report."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="replay every review on simulated drives and write out/report.html"
    )
    p.add_argument("-o", "--output", default="out", help="output directory (default: out)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="each protocol at its min_held_scale, the smallest scale its statuses are held at",
    )
    p.add_argument("--only", action="append", help="only this review (repeatable)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from flashback.cli._output import frame_rows, text_table
    from flashback.report.demo import build_demo

    path, summary = build_demo(
        args.output, quick=args.quick, only=args.only, progress=not args.no_progress
    )
    short = {"within_tolerance": "within", "median_abs_rel_error_pct": "median_err_pct"}
    print(text_table(frame_rows(summary.rename(short, strict=False))))
    print(f"report written to {path.resolve()}")
    print(f"figures (PNG/SVG) in {(path.parent / 'figures').resolve()}")
    return 0
