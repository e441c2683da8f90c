"""Text that reaches a terminal: control characters escaped, one rule for every message,
table cell and progress label flashback prints; and :func:`fmt_value`, how a table cell shows
a number (the CLI's tables and the HTML report's alike).

A file name, step name or preset may hold ESC, BEL, a carriage return or a bidirectional
override; printed raw, they move the cursor, recolour or rewrite the terminal. Each such
character is shown escaped instead (``\\x1b``, ``\\r``, ``\\u202e``), as Python's ``repr``
spells it; every other character, accented and non-Latin letters included, is kept.
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any

#: Unicode categories shown escaped: controls, format characters (bidi overrides,
#: zero-width joiners), surrogates, private use, unassigned, line and paragraph separators
ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def printable(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` (``str()`` of it) with every control or format character escaped; with
    ``keep_newlines`` a ``\\n`` is kept (a message of several lines)."""
    s = str(text)
    if s.isprintable():  # the common case, without a per-character loop
        return s
    out = []
    for ch in s:
        if ch == "\n" and keep_newlines:
            out.append(ch)
        elif ch != " " and unicodedata.category(ch) in ESCAPED_CATEGORIES:
            out.append(repr(ch)[1:-1] if ch not in "'\"" else ch)
        else:
            out.append(ch)
    return "".join(out)


def fmt_value(v: Any) -> str:
    """A cell: ``—`` for missing, floats to 3-4 significant figures, thousands separated,
    control characters escaped."""
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
    return printable(v)


class PrintableStream:
    """A text stream that writes :func:`printable` text (newlines and tabs kept) to
    ``stream``; everything else (``isatty``, ``fileno``, ``flush``...) is ``stream``'s. The
    CLI writes its standard output through one, so no table, path or name printed there can
    drive the terminal."""

    def __init__(self, stream):  # type: ignore[no-untyped-def]
        self._stream = stream

    def write(self, text: str) -> int:
        if not text.isprintable():
            text = "\t".join(printable(part, keep_newlines=True) for part in text.split("\t"))
        return self._stream.write(text)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._stream, name)
