"""How the CLI prints: plain tables that fit a terminal (80 columns) and JSON for scripts.

Nothing here imports polars: ``flashback presets`` and ``--help`` must start fast.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, Iterable

#: Terminal width every table is kept within.
WIDTH = 80
#: Text cells are cut (with …) to no fewer characters than this before a table is turned.
MIN_TEXT = 12


def fmt_value(v: Any) -> str:
    """A cell: ``—`` for missing, floats to 3-4 significant figures, thousands separated."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        a = abs(v)
        if a == 0:
            return "0"
        if a >= 1000:
            return f"{v:,.0f}"
        if a >= 10:
            return f"{v:.1f}"
        return f"{v:.3g}"
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10000 else str(v)
    return str(v)


def text_table(rows: list[dict[str, Any]], *, width: int = WIDTH) -> str:
    """``rows`` as an aligned table no wider than ``width`` characters.

    A table that would be wider first has its widest text columns cut (``…``, down to
    ``MIN_TEXT`` characters); one still too wide is printed as one block per row
    (``column  value`` lines) instead of wrapping. Text columns align left, numbers right.
    """
    if not rows:
        return "(nothing)"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    cells = [[fmt_value(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    numeric = [
        all(isinstance(r.get(c), (int, float)) or r.get(c) is None for r in rows) for c in cols
    ]
    full = [list(row) for row in cells]  # uncut, for the turned layout
    text_cols = [i for i, num in enumerate(numeric) if not num]

    def total() -> int:
        return sum(widths) + 2 * (len(cols) - 1)

    while total() > width:
        i = max(text_cols, key=lambda j: widths[j], default=None)
        if i is None or widths[i] <= max(MIN_TEXT, len(cols[i])):
            break
        widths[i] -= 1
    for row in cells:
        for i in text_cols:
            if len(row[i]) > widths[i]:
                row[i] = row[i][: widths[i] - 1] + "…"
    if total() <= width:

        def line(values: list[str]) -> str:
            return "  ".join(
                v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)
            ).rstrip()

        rule = "  ".join("-" * w for w in widths)
        return "\n".join([line(cols), rule, *(line(r) for r in cells)])
    key_w = max(len(c) for c in cols)
    blocks = []
    for row in full:
        lines = []
        for c, v in zip(cols, row):
            room = max(width - key_w - 2, 10)
            v = v if len(v) <= room else v[: room - 1] + "…"
            lines.append(f"{c.ljust(key_w)}  {v}")
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
            print(title)
        print(text_table(rows))
