"""``flashback analyze CAPTURE``: segments and the steady-state verdict of one capture."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyze", help="change points and steady state of a capture (or fio output)"
    )
    p.add_argument("capture", help=".arrow/.parquet capture, or fio JSON / log prefix (--fio)")
    p.add_argument("--x", default="host_written_bytes", help="axis: host_written_bytes or t_s")
    p.add_argument("--y", default="write_mbps", help="series to segment, e.g. write_iops")
    p.add_argument("--transform", choices=["auto", "log", "none"], default="auto")
    p.add_argument("--penalty", default="auto", help="'auto' or a number")
    p.add_argument("--min-size", type=int, default=None, help="shortest segment in intervals")
    p.add_argument("--by", default=None, help="segment each value of this column separately")
    p.add_argument("--ss-y", default=None, help="steady-state variable (default: --y)")
    p.add_argument("--rule", default="snia", help="snia|tkperf|band|fio_iops|fio_iops_slope")
    p.add_argument("--round", default="60s", help="steady-state round: 60s, 1g, 0.25fill")
    p.add_argument("--fio", action="store_true", help="read CAPTURE as fio output")
    p.add_argument("--fio-version", default=None, help="with --fio: e.g. 2.2.10, when not printed")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import polars as pl

    from flashback.analysis import changepoints, steady_state
    from flashback.errors import AnalysisError

    if args.fio:
        from flashback.fio import read_fio

        cap = read_fio(args.capture, fio_version=args.fio_version)
    else:
        from flashback.capture import load

        cap = load(args.capture)
    seg = changepoints(
        cap,
        x=args.x,
        y=args.y,
        transform=None if args.transform == "none" else args.transform,
        penalty=args.penalty,
        min_size=args.min_size,
        by=args.by,
    )
    print(seg.describe())
    with pl.Config(tbl_rows=50, tbl_cols=20, tbl_width_chars=200):
        print(seg.to_frame())
    try:
        ss = steady_state(cap, y=args.ss_y or args.y, rule=args.rule, round=args.round)
        print(ss.describe())
    except AnalysisError as e:
        print(f"steady state: not assessed ({e})")
    return 0
