"""``flashback plot CAPTURE -o fig.png|svg|html``: a capture's main figures, saved offline."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plot", help="draw a capture's throughput and latency to a .png, .svg or .html file"
    )
    p.add_argument(
        "capture", help=".arrow/.parquet capture, a replay -o directory, or fio output (--fio)"
    )
    p.add_argument(
        "-o", "--output", required=True, help="figure file: .png, .svg or .html (interactive)"
    )
    p.add_argument("--fio", action="store_true", help="read CAPTURE as fio output")
    p.add_argument("--scale", type=float, default=2.0, help="PNG pixel density (default 2)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from flashback.cli.analyze import load_input
    from flashback.errors import ParameterError
    from flashback.figures import capture_overview, save_chart
    from flashback.figures.save import FORMATS

    if Path(args.output).suffix.lower() not in FORMATS:  # before any work is done
        raise ParameterError(
            f"-o {args.output!r} has no figure suffix; name a .png, .svg or .html file"
        )
    intervals, _ = load_input(args.capture, fio=args.fio)
    path = save_chart(capture_overview(intervals), args.output, scale=args.scale)
    print(f"figure written to {path}")
    return 0
