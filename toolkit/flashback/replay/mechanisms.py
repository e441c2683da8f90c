"""Drive mechanisms a review documents, and whether a replayed drive has each.

A compare row may call a published number "documented, not modelled" only by naming one of
these mechanisms, and only while the replayed drive lacks it: the status is computed from the
target's configuration (``Replay.meta["target"]["config"]``), never written by hand. A row
naming a mechanism the replayed preset has is an ordinary comparison (within or outside
tolerance), and ``tests/test_replay_tally.py`` holds every protocol's default preset to that.
Each mechanism names the review that documents it; a behaviour no source documents (Puget's
knee at ~40 GB, its loop-to-loop scatter) is not "documented, not modelled" but a miss, and its
row is compared like any other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from flashback.errors import ReplayError


@dataclasses.dataclass(frozen=True)
class Mechanism:
    """A documented drive behaviour.

    Attributes:
        key: the name a check row gives (``unmodelled=key``).
        sources: the seed documents (``Protocol.source`` file names) that document it; a
            behaviour no source documents is not a mechanism but a miss, and is compared.
        reason: why a replay without it cannot reproduce the number, naming the review that
            documents it (shown in the row's note).
        present: ``present(config)`` → whether a simulated drive with this configuration
            (``SimConfig.to_json()``) has the mechanism; a real drive has every mechanism.
    """

    key: str
    sources: tuple[str, ...]
    reason: str
    present: Callable[[dict[str, Any]], bool]


def _never(_config: dict[str, Any]) -> bool:
    return False


_MECHANISMS = (
    Mechanism(
        "sandforce_dirty_state",
        ("003_76d70b35b5160b0f.txt",),
        "SandForce's dirty state, documented by AnandTech's Intel SSD 530 review (seed 003: "
        "after incompressible writes fill the drive, TRIM does not bring SandForce back to its "
        "clean rate): once all NAND holds incompressible data, incompressible writes run at "
        "55-90 % of clean and TRIM does not restore them",
        lambda c: float(c.get("features", {}).get("dirty_rate", 1.0)) < 1.0,
    ),
    Mechanism(
        "read_compression",
        ("002_a117cd683a41e7c2.txt", "000_2002a1564e89ff8a.txt"),
        "reads faster for compressible data, documented by X-bit labs (seed 002: the SF-2281 "
        "compresses data before it is written to flash, so compressible data is read from "
        "fewer pages) and measured by Puget Systems (seed 000: the Intel "
        "520's incompressible reads ~5 % under its compressible ones): the model applies "
        "compression to writes only, so a read costs the same whatever data the drive holds",
        _never,
    ),
)
MECHANISMS: dict[str, Mechanism] = {m.key: m for m in _MECHANISMS}


def get(key: str) -> Mechanism:
    """The mechanism called ``key``.

    Raises:
        ReplayError: no mechanism has that name (a check names one that is not declared here).
    """
    try:
        return MECHANISMS[key]
    except KeyError:
        raise ReplayError(
            f"{key!r} is not a declared mechanism; name one of {', '.join(MECHANISMS)} in "
            "check_row(unmodelled=...) or declare it in flashback.replay.mechanisms"
        ) from None


def sim_config(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The simulated drive's configuration a replay ran on (``None`` for a real target)."""
    if meta.get("target_kind") != "sim":
        return None
    target = meta.get("target") or {}
    config = target.get("config")
    return config if isinstance(config, dict) else None


def absent(key: str, config: dict[str, Any] | None) -> bool:
    """Whether the replayed drive lacks mechanism ``key`` (a real drive, ``config=None``,
    lacks none).

    Raises:
        ReplayError: ``key`` is not a declared mechanism.
    """
    mech = get(key)
    return config is not None and not mech.present(config)
