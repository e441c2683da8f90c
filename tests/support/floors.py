"""Protocols with their held scale lowered: for tests of which column compare() files a row in."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator


@contextlib.contextmanager
def floors_lowered(scale: str = "1/4096") -> Iterator[None]:
    """Every registered protocol's ``min_held_scale`` is ``scale`` while inside.

    For tests of a status's logic (a mechanism the preset has or lacks, an effect, a headline's
    reason, a miss), which replay at 1/256 for ``make test``'s time: below a protocol's floor
    compare() withholds every within/outside, so such a test could check nothing. They assert
    which column a row lands in, never that a number is within tolerance at that scale; what
    the floor does is held by ``tests/test_replay_floor.py``, the floors themselves by
    ``tests/test_replay_scale.py``.
    """
    from flashback.replay import base

    base.registered()  # every protocol registered before the swap
    saved = dict(base._REGISTRY)
    try:
        for name, proto in saved.items():
            base._REGISTRY[name] = dataclasses.replace(proto, min_held_scale=scale)
        yield
    finally:
        base._REGISTRY.clear()
        base._REGISTRY.update(saved)
