"""``flashback published``: the reviews' published numbers, filtered."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("published", help="print the numbers the five reviews published")
    p.add_argument("--drive", help="case-insensitive substring of the drive name")
    p.add_argument("--source", help="seed file name/prefix or publication substring")
    p.add_argument("--test", help="exact test name, e.g. cdm_seq_write")
    p.add_argument("--metric", help="exact metric name, e.g. max_mbps")
    p.add_argument("--condition", help="exact condition, e.g. fresh, used, after_trim")
    p.add_argument("--csv", action="store_true", help="write CSV to stdout instead of a table")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    import polars as pl

    from flashback.published import published

    df = published(
        drive=args.drive,
        source=args.source,
        test=args.test,
        metric=args.metric,
        condition=args.condition,
    )
    if args.csv:
        sys.stdout.write(df.write_csv())
        return 0
    cols = ["publication", "drive", "test", "condition", "metric", "value", "unit", "x", "x_unit"]
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        fmt_str_lengths=40,
        tbl_width_chars=220,
        tbl_hide_dataframe_shape=True,
    ):
        print(df.select(cols))
    print(f"{len(df)} rows")
    return 0
