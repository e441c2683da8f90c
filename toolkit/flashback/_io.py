"""Every file flashback writes goes through here (the rule itself lives in the native core,
``native/src/output/``).

:func:`atomic_output` yields a binary file that is a temporary created exclusively in the
destination's directory; leaving the ``with`` block normally publishes it under the
destination's name, an exception discards it. A device node, FIFO, socket or directory (or a
symlink to one) is refused, an existing file is replaced only with ``overwrite``, and a second
flashback process writing the same output is refused. :func:`check_output` runs the same
checks before any long work, creating nothing.
"""

from __future__ import annotations

import contextlib
import errno as _errno
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from flashback import _native

#: errno values that mean "out of space"
_FULL = (_errno.ENOSPC, _errno.EDQUOT)


def check_output(path: str | os.PathLike[str], *, overwrite: bool) -> Path:
    """Checks, creating nothing, that ``path`` could be written now; returns it resolved
    (symlinks followed).

    Raises:
        SafetyError: ``path`` is (or leads to) a device node, FIFO, socket or directory, a
            dangling symlink, an existing file without ``overwrite``, a file another
            flashback process is writing, or its directory does not exist or is not writable.
        DeviceError: the directory could not be opened.
    """
    return Path(_native.check_output(os.fspath(path), overwrite=overwrite))


def is_full_disk(exc: BaseException) -> bool:
    """True when ``exc`` (an ``OSError``, or a writer's own error wrapping one, as polars'
    are) reports a full disk."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in _FULL:
            return True
        text = str(e)
        if "No space left on device" in text or "Disk quota exceeded" in text:
            return True
        e = e.__cause__ or e.__context__
    return False


@contextlib.contextmanager
def atomic_output(
    path: str | os.PathLike[str],
    *,
    overwrite: bool,
    staging: str | os.PathLike[str] | None = None,
) -> Iterator[BinaryIO]:
    """Writes ``path`` atomically through flashback's guarded writer: yields a binary file
    (positioned at 0, seekable); on normal exit the data is synced and published under
    ``path``; on an exception nothing is published and no temporary is left.

    The temporary has no name at all (``O_TMPFILE``) where the file system allows it; else it
    is a hidden random name beside ``path``, or in ``staging`` (a directory on the same file
    system) when given, so that no name ever appears in ``path``'s directory (a dataset tree,
    which polars scans file by file, hidden or not).

    Raises:
        SafetyError: see :func:`check_output`; also when another program created ``path``
            while it was being written without ``overwrite`` (that file is kept).
        DeviceError: the disk is full (the message names the file and says what was kept) or
            another I/O error.
    """
    out = _native.OutputFile(
        os.fspath(path),
        overwrite=overwrite,
        staging=None if staging is None else os.fspath(staging),
    )
    existed = Path(out.path).exists()
    raw = _RecordingFile(os.dup(out.fileno()), "r+")
    try:
        with _Buffered(raw) as f:
            yield f  # type: ignore[misc]
            f.flush()
    except BaseException as e:
        out.abort()
        if raw.write_errno in _FULL or is_full_disk(e) or _no_space_left(out.path):
            raise _native.output_write_error(out.path, _errno.ENOSPC, existed=existed) from e
        raise
    out.commit()


def _no_space_left(path: str | os.PathLike[str]) -> bool:
    """True when the file system holding ``path`` has no block left for an ordinary user
    (a writer that failed there failed for that, whatever its own message says)."""
    try:
        st = os.statvfs(Path(path).parent)
    except OSError:
        return False
    return st.f_bavail == 0


class _Buffered(io.BufferedRandom):
    """The file handed to writers. It hides its descriptor, so a writer that would write to
    the descriptor natively (polars does) goes through :meth:`write` and its errors reach
    :class:`_RecordingFile` with their errno."""

    def fileno(self) -> int:
        raise io.UnsupportedOperation("flashback's output file has no descriptor to share")


class _RecordingFile(io.FileIO):
    """A file that remembers why a write failed: some writers (polars' Parquet writer)
    replace the ``OSError`` they got with their own message, losing "disk full"."""

    write_errno: int | None = None

    def write(self, b, /):  # type: ignore[no-untyped-def]
        try:
            return super().write(b)
        except OSError as e:
            self.write_errno = e.errno
            raise


def write_bytes(path: str | os.PathLike[str], data: bytes, *, overwrite: bool) -> Path:
    """Writes ``data`` to ``path`` through :func:`atomic_output`; returns ``path``.

    Raises:
        SafetyError, DeviceError: see :func:`atomic_output`.
    """
    with atomic_output(path, overwrite=overwrite) as f:
        f.write(data)
    return Path(path)
