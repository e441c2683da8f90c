"""The conformance line of a replay: was it run the way SNIA PTS requires — a real purge
before each test, the write-cache state known, steady state reached — or which of these it
departs from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _write_cache(target_meta: dict[str, Any], kind: str) -> str | None:
    if kind == "sim":
        return "n/a (simulated drive)"
    dev = target_meta.get("device") or {}
    if dev.get("write_cache_enabled") is not None:
        return "enabled" if dev["write_cache_enabled"] else "disabled"
    wc = (dev.get("queue") or {}).get("write_cache")
    return wc or None


def conformance(
    steps: list[dict[str, Any]], meta: Mapping[str, Any], *, steady_state_reached: bool | None
) -> dict[str, Any]:
    """The verdict for one replay.

    Args:
        steps: the runner's step records (erase steps carry ``purge``).
        meta: the replay's metadata (``target_kind``, ``target``).
        steady_state_reached: the protocol's steady-state verdict (``None``: it has none).

    Returns:
        dict: ``conformant`` (bool), ``line`` ("PTS-conformant run" or "departs from PTS: …"),
        ``departures`` (list of str), ``purge`` (each purge's label), ``write_cache``.

    Missing facts are departures.
    """
    departures: list[str] = []
    purges = [s.get("purge") or {} for s in steps if s.get("kind") == "erase"]
    labels = [p.get("label") or "not purged (no record)" for p in purges]
    if not purges:
        departures.append("no purge step")
    for lab, p in zip(labels, purges, strict=True):
        if not p.get("pts_purge"):
            departures.append(lab)
    departures = list(dict.fromkeys(departures))
    wc = _write_cache(meta.get("target") or {}, meta.get("target_kind", ""))
    if wc is None:
        departures.append("write cache state not recorded")
    if steady_state_reached is False:
        departures.append("steady state not reached")
    line = "PTS-conformant run" if not departures else "departs from PTS: " + "; ".join(departures)
    return {
        "conformant": not departures,
        "line": line,
        "departures": departures,
        "purge": list(dict.fromkeys(labels)),
        "write_cache": wc,
    }
