"""A real file with one string changed: how the tests make a defective copy of pinned data."""

from __future__ import annotations

from pathlib import Path


def edited(src: Path, old: str, new: str, dest: Path) -> Path:
    """Writes ``src`` to ``dest`` with its one occurrence of ``old`` replaced by ``new`` (an
    ``old`` found zero or several times fails the test: the edit would not be the one meant)."""
    text = src.read_text()
    assert text.count(old) == 1, (src.name, old, text.count(old))
    dest.write_text(text.replace(old, new))
    return dest
