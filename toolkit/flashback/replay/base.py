"""Protocols (a review's procedure), their registry, and the rows their checks return."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import polars as pl

from flashback.errors import ParameterError, ReplayError

if TYPE_CHECKING:
    from flashback.replay.api import Replay


@dataclasses.dataclass(frozen=True, kw_only=True)
class Protocol:
    """One review's test procedure, runnable on any target.

    Attributes:
        name: the registry name (``puget-cdm-loop``).
        title: one line naming the review and test.
        source: the seed document the procedure and numbers come from.
        review_capacity_bytes: the review drive's user capacity (the default scale divides
            the target's capacity by it); ``None`` when the protocol is not tied to a drive.
        default_target: the review drive's simulated preset.
        drives: ``sim:`` preset name → (the drive's name in the published numbers, its user
            capacity in bytes); the default target's preset must be one of them.
        params: parameter → (default, one-line meaning, converter from
            :mod:`flashback.replay.params` giving its type and range).
        procedure: the steps, one per line, as the review states them (and what is assumed).
        run: ``run(runner, params)`` executes the steps.
        checks: ``checks(replay)`` → rows for :meth:`Replay.compare`.
        unstated: parameter → plausible values, for the parameters the review does not state
            (an idle gap, a measurement length); ``compare(sensitivity=True)`` replays each.
        headline: the review's headline number as ``(test, condition, metric)`` of a compare
            row; where the review publishes none for the replayed drive, compare() gives that
            row a status saying why, computed from the published data set
            (:mod:`flashback.replay.headline`), never a sentence written per review.
        min_held_scale: the smallest scale at which the tests hold every compared row of a
            simulated replay (and every row the report shows: SNIA PTS's HIR rows, unpublished,
            set its floor) to the larger scales' (``tests/test_replay_scale.py`` replays the
            protocol at this scale and at twice it and reads the scale from here). Below it a
            simulated replay's statuses flip with the scale, so compare() gives its rows no
            within/outside: they get the status ``below held scale`` (:mod:`.status`).
    """

    name: str
    title: str
    source: str
    review_capacity_bytes: int | None
    default_target: str
    drives: dict[str, tuple[str, int]]
    params: dict[str, tuple[Any, str, Callable[[str, Any], Any]]]
    procedure: str
    run: Callable[[Any, dict[str, Any]], None]
    checks: Callable[[Replay], list[dict[str, Any]]]
    estimate_written_bytes: Callable[[int, float, dict[str, Any]], float] | None = None
    pair_checks: Callable[[Replay, Replay], list[dict[str, Any]]] | None = None
    unstated: dict[str, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    headline: tuple[str, str, str] | tuple[()] = ()
    min_held_scale: str = "1/64"

    def describe(self) -> str:
        """A multi-line description: review, default target, steps and parameters."""
        lines = [f"{self.name}: {self.title}", f"  source: {self.source}"]
        lines.append(f"  default target: {self.default_target}")
        if self.review_capacity_bytes:
            lines.append(
                f"  scale: target capacity / {self.review_capacity_bytes / 1e9:g} GB "
                "(spans, byte limits and durations scale with it); a simulated replay's rows "
                f"are compared from {self.min_held_scale} up, the smallest scale they are "
                "held at"
            )
        lines += ["  steps:"] + [f"    {s}" for s in self.procedure.strip().splitlines()]
        if self.params:
            lines.append("  parameters:")
            for k, (v, meaning, *_) in self.params.items():
                lines.append(f"    {k}={v!r}: {meaning}")
        if self.unstated:
            lines.append("  not stated by the review (compare(sensitivity=True) replays each):")
            for k, values in self.unstated.items():
                lines.append(f"    {k}: {', '.join(f'{v:g}' for v in values)}")
        return "\n".join(lines)

    def resolve(self, params: dict[str, Any]) -> dict[str, Any]:
        """Defaults with ``params`` applied, each converted to its declared type and checked
        against its range (text such as ``"False"`` or ``"3"`` from ``--param`` included).

        Raises:
            ParameterError: a parameter this protocol does not have, or a value of the wrong
                type or out of range.
        """
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            allowed = ", ".join(self.params) or "none"
            raise ParameterError(
                f"{self.name} has no parameter {unknown[0]!r}; its parameters are: {allowed}"
            )
        out = {k: v for k, (v, *_) in self.params.items()}
        for k, value in params.items():
            convert = self.params[k][2] if len(self.params[k]) > 2 else None
            if convert is None:
                out[k] = value
                continue
            try:
                out[k] = convert(k, value)
            except ParameterError as e:
                raise ParameterError(f"{self.name}: {e}") from None
        return out

    def drive_for(self, spec: str) -> tuple[str, int | None, bool]:
        """The published drive a target stands for, that drive's capacity in bytes, and
        whether the target is that drive's preset (else the default target's drive).

        Raises:
            ParameterError: a ``sim:`` spec with a key that has no ``=value``; any other
                spec that is not a known ``sim:`` preset gives the default drive.
        """
        from flashback.targets import parse_sim_spec

        parts = parse_sim_spec(spec)
        preset = parts[0] if parts else None
        if preset in self.drives:
            name, capacity = self.drives[preset]
            return name, capacity, True
        default_parts = parse_sim_spec(self.default_target)
        default = default_parts[0] if default_parts else self.default_target
        fallback = self.drives.get(default) or (default, self.review_capacity_bytes)
        return fallback[0], fallback[1], False


_REGISTRY: dict[str, Protocol] = {}


def _load() -> None:
    """Imports the procedures package, which registers every protocol."""
    import importlib

    importlib.import_module("flashback.replay.procedures")


def register(protocol: Protocol) -> Protocol:
    """Adds ``protocol`` to the registry (by name) and returns it."""
    _REGISTRY[protocol.name] = protocol
    return protocol


def get_protocol(name: str) -> Protocol:
    """The registered protocol called ``name``.

    Raises:
        ReplayError: no protocol has that name (the message lists them).
    """
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        names = ", ".join(sorted(_REGISTRY))
        raise ReplayError(f"there is no protocol {name!r}; choose one of: {names}") from None


def registered() -> list[Protocol]:
    """Every registered protocol, in registration order."""
    _load()
    return list(_REGISTRY.values())


def protocols() -> pl.DataFrame:
    """The protocols: ``name``, ``title``, ``source``, ``default_target``, ``parameters``."""
    _load()
    return pl.DataFrame(
        [
            {
                "name": p.name,
                "title": p.title,
                "source": p.source,
                "default_target": p.default_target,
                "parameters": ", ".join(f"{k}={v!r}" for k, (v, *_) in p.params.items()),
            }
            for p in _REGISTRY.values()
        ]
    )


def check_row(
    test: str,
    condition: str,
    metric: str,
    replayed: float | None,
    unit: str,
    *,
    drive: str | None,
    tolerance: float | None = None,
    seed_value: float | None = None,
    bound: str = "value",
    note: str = "",
    unmodelled: str = "",
    setting: bool = False,
    effect: tuple[str, tuple[str, str, str], tuple[str, str, str]] | None = None,
) -> dict[str, Any]:
    """One row for :meth:`Replay.compare`.

    ``(test, condition, metric, drive)`` use the published data set's vocabulary and select
    its row (``drive=None``: a row about the procedure or every drive). ``seed_value`` is used
    only when no published row matches. ``bound``: ``value`` (within ``tolerance`` relative),
    ``min`` / ``max`` (the published number is a lower / upper bound, loosened by
    ``tolerance``). ``unmodelled``: the key of the documented mechanism
    (:mod:`flashback.replay.mechanisms`) without which the model cannot reproduce this number;
    the row is "documented, not modelled" only while the replayed drive lacks it, and compared
    as usual otherwise: the only way a published number escapes comparison is a declared,
    documented mechanism absent from the replayed drive. ``effect=(kind, a, b)``: the row
    compares an effect (``kind`` ``drop_pct``: 100 × (1 − b/a); ``ratio_pct``: 100 × b/a)
    whose published value is derived from the published rows ``a`` and ``b``, each ``(test,
    condition, metric)`` of the same drive, or, for a drive the review gives the effect of
    without both levels, is the effect's own published row. ``setting=True``: the replayed value is a setting of the procedure
    echoed back (a block size, a duration, a span), which checks the replay but matches
    nothing the drive did.
    """
    if replayed is not None and replayed != replayed:  # NaN
        replayed = None
    if unmodelled:
        from flashback.replay.mechanisms import get

        get(unmodelled)  # a row names a declared mechanism, or fails here
    if effect is not None and effect[0] not in EFFECTS:
        raise ReplayError(f"effect kind {effect[0]!r} is not one of {', '.join(EFFECTS)}")
    return {
        "test": test,
        "condition": condition,
        "metric": metric,
        "replayed": None if replayed is None else float(replayed),
        "unit": unit,
        "drive": drive,
        "tolerance": tolerance,
        "seed_value": seed_value,
        "bound": bound,
        "note": note,
        "unmodelled": unmodelled,
        "setting": setting,
        "effect": effect,
    }


def _ratio(a: float, b: float) -> float:
    """``b / a``, exactly 1 when the two levels agree to within 1e-12 (two runs of the same
    I/Os whose rates differ only in a float's last bits are equal: their drop is 0 %, not
    1.4e-14 %)."""
    r = b / a
    return 1.0 if abs(r - 1.0) < 1e-12 else r


#: How an effect follows from two levels, the reference ``a`` and the other state's ``b``
#: (both published, or both replayed: one rule for both sides of a compare row).
EFFECTS: dict[str, Callable[[float, float], float]] = {
    "drop_pct": lambda a, b: 100.0 * (1.0 - _ratio(a, b)),
    "ratio_pct": lambda a, b: 100.0 * _ratio(a, b),
}


def effect_pct(kind: str, reference: float | None, other: float | None) -> float | None:
    """An effect in % (``kind`` one of :data:`EFFECTS`) of ``other`` against ``reference``;
    ``None`` when either level is missing or the reference is 0 (nothing to compare).

    Raises:
        KeyError: ``kind`` is not one of :data:`EFFECTS`.
    """
    fn = EFFECTS[kind]
    if reference is None or other is None or not reference:
        return None
    return fn(reference, other)


def require(condition: bool, message: str) -> None:
    """Raises :class:`ReplayError` with ``message`` unless ``condition``."""
    if not condition:
        raise ReplayError(message)
