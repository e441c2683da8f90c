"""How the CLI prints: plain tables that use the terminal's width and JSON for scripts.

Nothing here imports polars: ``flashback presets`` and ``--help`` must start fast.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
from collections.abc import Iterable
from typing import Any

from flashback._text import fmt_value, printable

#: Text cells are wrapped to no fewer characters than this before a table is turned.
MIN_TEXT = 12
#: A long text cell is wrapped after one of these when one falls near the end of a line.
BREAK_AFTER = "/_-.:, "


def table_width() -> int | None:
    """The width tables are kept within: the terminal's, when stdout is one; else
    ``COLUMNS`` when set; else none (a pipe or a file gets whole lines)."""
    if sys.stdout.isatty():
        return shutil.get_terminal_size((80, 24)).columns
    cols = os.environ.get("COLUMNS", "")
    return int(cols) if cols.isdigit() and int(cols) > 0 else None


def wrap_cell(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, nothing left out: each line ends
    after a separator (``/ _ - . : ,`` or a space) in its last third when there is one, else
    at ``width``."""
    width = max(width, 1)
    lines = []
    while len(text) > width:
        cut = max(text.rfind(c, width * 2 // 3, width) for c in BREAK_AFTER)
        cut = cut + 1 if cut > 0 else width
        lines.append(text[:cut])
        text = text[cut:]
    return [*lines, text]


def text_table(rows: list[dict[str, Any]], *, width: int | None = None) -> str:
    """``rows`` as an aligned table no wider than ``width`` characters (default:
    :func:`table_width`; ``None`` there: as wide as the rows need).

    A table that would be wider first has its widest text columns narrowed (down to
    ``MIN_TEXT`` characters), their cells wrapped onto more lines — an identifier is never
    cut, as a step or metric name must be typed exactly; one still too wide is printed as
    one block per row (``column  value`` lines, long values wrapped). Text columns align
    left, numbers right.
    """
    if not rows:
        return "(nothing)"
    if width is None:
        width = table_width() or 1 << 30
    cols = [printable(c) for c in dict.fromkeys(k for r in rows for k in r)]
    keys = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[fmt_value(r.get(c)) for c in keys] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    numeric = [
        all(isinstance(r.get(c), (int, float)) or r.get(c) is None for r in rows) for c in keys
    ]
    text_cols = [i for i, num in enumerate(numeric) if not num]

    def total() -> int:
        return sum(widths) + 2 * (len(cols) - 1)

    while total() > width:
        i = max(text_cols, key=lambda j: widths[j], default=None)
        if i is None or widths[i] <= max(MIN_TEXT, len(cols[i])):
            break
        widths[i] -= 1
    if total() <= width:

        def lines_of(values: list[str]) -> list[str]:
            parts = [wrap_cell(v, w) for v, w in zip(values, widths, strict=True)]
            height = max(len(p) for p in parts)
            return [
                "  ".join(
                    (p[k] if k < len(p) else "").rjust(w)
                    if num
                    else (p[k] if k < len(p) else "").ljust(w)
                    for p, w, num in zip(parts, widths, numeric, strict=True)
                ).rstrip()
                for k in range(height)
            ]

        rule = "  ".join("-" * w for w in widths)
        out = [*lines_of(cols), rule]
        for row in cells:
            out += lines_of(row)
        return "\n".join(out)
    key_w = max(len(c) for c in cols)
    room = max(width - key_w - 2, 10)
    blocks = []
    for row in cells:
        lines = []
        for c, v in zip(cols, row, strict=True):
            for k, part in enumerate(wrap_cell(v, room)):
                lines.append(f"{(c if k == 0 else '').ljust(key_w)}  {part}".rstrip())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def frame_rows(frame: Any) -> list[dict[str, Any]]:
    """A polars DataFrame's rows as dicts (for :func:`text_table` and JSON)."""
    return frame.to_dicts() if frame is not None and frame.height else []


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if hasattr(v, "to_dicts"):  # a polars DataFrame
        return _jsonable(v.to_dicts())
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def print_json(obj: Any, *, file: Any = None) -> None:
    """``obj`` as JSON on stdout (NaN/inf → null, frames → lists of row objects)."""
    json.dump(_jsonable(obj), file or sys.stdout, indent=2, allow_nan=False)
    (file or sys.stdout).write("\n")


def print_tables(tables: Iterable[tuple[str, list[dict[str, Any]]]]) -> None:
    """Titled tables, separated by a blank line."""
    for i, (title, rows) in enumerate(tables):
        if i:
            print()
        if title:
            print(printable(title))
        print(text_table(rows))
