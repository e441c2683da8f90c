"""Sweep jobs that fail on purpose, importable by a sweep's worker processes (they unpickle a
job by its class's module path)."""

from __future__ import annotations

import os

import flashback as fb


class AbortingJob(fb.Job):
    """A job whose worker process dies without raising, as an ``abort()`` in native code or
    the out-of-memory killer would end it."""

    def run(self) -> fb.Capture:
        os._exit(70)
