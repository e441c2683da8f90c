"""Published vs replayed: the frame behind :meth:`Replay.compare`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from flashback.replay.sensitivity import rerun_of, sensitivity_rows
from flashback.replay.status import (
    BELOW_HELD,
    BORDERLINE,
    COMPARED,
    SENSITIVITY,
    SETTING,
    UNMODELLED,
)

COLUMNS = {
    "metric": pl.String,
    "condition": pl.String,
    "published": pl.Float64,
    "replayed": pl.Float64,
    "unit": pl.String,
    "rel_error": pl.Float64,
    "source": pl.String,
    "test": pl.String,
    "drive": pl.String,
    "tolerance": pl.Float64,
    "within_tolerance": pl.Boolean,
    "status": pl.String,
    "note": pl.String,
    "replayed_lo": pl.Float64,
    "replayed_hi": pl.Float64,
    "seeds": pl.Int64,
}

#: The columns a compare table shows (report, notebooks): the one list every view selects from.
TABLE_COLUMNS = (
    "test",
    "metric",
    "condition",
    "drive",
    "published",
    "replayed",
    "replayed_lo",
    "replayed_hi",
    "unit",
    "rel_error",
    "within_tolerance",
    "status",
    "note",
)
#: The few of them an 80-column terminal shows (``flashback replay``).
BRIEF_COLUMNS = ("test", "metric", "condition", "published", "replayed", "unit", "status")


def published_numbers() -> pl.DataFrame | None:
    """``fb.published()``, or ``None`` when the package holds no ``data/published`` folder
    (the seeds' own values are then used).

    Raises:
        ParameterError: the folder is there but holds no CSV (a broken install); any other
            error of a broken data set is raised as it is, not hidden behind seed values.
    """
    from flashback.published import published

    try:
        frame = published()
    except FileNotFoundError:  # the data set is not installed
        return None
    return frame if frame.height else None


def _published_row(
    pub: pl.DataFrame | None, source: str, drive: str | None, key: tuple[str, str, str]
) -> float | None:
    """The published value of ``(test, condition, metric)`` for ``drive`` (first match)."""
    if pub is None or not pub.height:
        return None
    test, condition, metric = key
    sel = pub.filter(
        (pl.col("source") == source)
        & (pl.col("test") == test)
        & (pl.col("condition") == condition)
        & (pl.col("metric") == metric)
    )
    sel = sel.filter(pl.col("drive").is_null() if drive is None else pl.col("drive") == drive)
    return float(sel["value"][0]) if sel.height else None


def _lookup(pub: pl.DataFrame | None, source: str, row: dict[str, Any]) -> tuple[float | None, str]:
    """The published value for ``row`` (matched on source, drive, test, condition, metric;
    for an effect, derived from its two published levels when the review gives both, else
    the effect's own published row) and a note on where it came from."""
    from flashback.replay.base import effect_pct

    effect = row.get("effect")
    if effect is not None:
        kind, a_key, b_key = effect
        a = _published_row(pub, source, row["drive"], a_key)
        b = _published_row(pub, source, row["drive"], b_key)
        value = effect_pct(kind, a, b)
        if value is not None:
            return value, (
                f"published effect derived from the review's {a_key[1]} {a:g} and "
                f"{b_key[1]} {b:g} {a_key[2]}"
            )
    if pub is not None and pub.height:
        sel = pub.filter(
            (pl.col("source") == source)
            & (pl.col("test") == row["test"])
            & (pl.col("condition") == row.get("lookup_condition", row["condition"]))
            & (pl.col("metric") == row["metric"])
        )
        if row["drive"] is None:
            sel = sel.filter(pl.col("drive").is_null())
        else:
            sel = sel.filter(pl.col("drive") == row["drive"])
        if sel.height:
            note = (
                "" if sel.height == 1 else f"{sel.height} published rows match; the first is used"
            )
            return float(sel["value"][0]), note
    if row["seed_value"] is not None:
        return row["seed_value"], "value read from the seed (no matching row in fb.published())"
    return None, ""


def _status(row: dict[str, Any], value: float | None, config: dict[str, Any] | None = None) -> str:
    """A row's status, computed: ``documented, not modelled`` only while the replayed drive
    (``config``, its ``sim:`` configuration; ``None`` for a real drive) lacks the mechanism
    the row names; a published number with a tolerance that the replay did not produce (a
    knee its curve lacks) is outside tolerance, a miss like any other."""
    from flashback.replay.mechanisms import absent

    if row["setting"]:
        return SETTING
    if row["unmodelled"] and absent(row["unmodelled"], config):
        return UNMODELLED
    if value is None:
        return "no published value"
    if row["replayed"] is None:
        return "not replayed" if row["tolerance"] is None else "outside tolerance"
    if row["tolerance"] is None:
        return "no tolerance"
    return "within tolerance" if _within(row, value) else "outside tolerance"


def _within(row: dict[str, Any], value: float) -> bool:
    tol = row["tolerance"]
    if value == 0:
        return abs(row["replayed"]) <= tol
    rel = (row["replayed"] - value) / abs(value)
    if rel <= -1.0:  # nothing (or the opposite sign) where the review measured something
        return False
    if row["bound"] == "min":
        return row["replayed"] >= value * (1 - tol)
    if row["bound"] == "max":
        return row["replayed"] <= value * (1 + tol)
    return abs(rel) <= tol


def compare(
    replay: Any,
    *,
    published: pl.DataFrame | None = None,
    other: Any = None,
    sensitivity: bool = False,
    seeds: int | None = None,
    rerun: Callable[..., Any] | None = None,
) -> pl.DataFrame:
    """Rows from the protocol's checks, with published values and relative errors; with
    ``sensitivity`` also the rows of :func:`sensitivity_rows`.

    With ``seeds=N`` (N ≥ 2) the procedure is replayed with N − 1 further seeds (this replay's
    seed + 1, + 2, …; ``other`` alike when a row of the pair compares a published number, else
    the pair rows carry no spread) and each row gets the spread of its replayed value over
    the N replays (``replayed_lo``, ``replayed_hi``, ``seeds``): a row is within tolerance only
    if its whole spread is, ``borderline`` if the spread straddles the tolerance, outside if
    none of it is within.

    ``rerun``: the function that replays a procedure (:func:`flashback.replay.api.replay`,
    which :meth:`Replay.compare` passes), called with the protocol's name and
    ``replay()``'s keywords; needed by ``sensitivity`` and ``seeds`` only.

    The protocol's headline row is always there: compared, or with a status saying why not
    (:func:`flashback.replay.headline.with_headline`, computed from the published data set).

    A simulated replay (or its ``other``) below the protocol's ``min_held_scale`` compares
    nothing: its published rows keep their values but get the status ``below held scale``,
    no within/outside, and a note naming the replay's scale and the floor.

    Raises:
        ReplayError: ``other`` is a replay of another protocol, or ``sensitivity`` or
            ``seeds`` on a replay whose target is not simulated, or either without ``rerun``;
            or the protocol declares no headline, or no check gives a headline row that is
            published for the replayed drive.
        ParameterError: ``seeds`` is not an integer of 2 or more.
    """
    from flashback.errors import ReplayError
    from flashback.replay.headline import require_accounted, with_headline
    from flashback.replay.mechanisms import sim_config

    proto = replay.protocol
    pub = published if published is not None else published_numbers()
    config = sim_config(replay.meta)
    checks = proto.checks(replay)
    paired, pair_with = False, other
    if sensitivity:
        checks += sensitivity_rows(replay, checks, rerun=rerun)
    if other is not None:
        if other.meta.get("protocol") != proto.name:
            raise ReplayError(
                f"other= is a replay of {other.meta.get('protocol')!r}, not {proto.name!r}; "
                "pass a replay of the same protocol"
            )
        pair: list[dict[str, Any]] = []
        if proto.pair_checks is not None:
            pair = proto.pair_checks(replay, other)
            checks += pair
            paired = bool(pair)
        # the other replay is replayed again only when a pair row compares a published number
        if not any(_status(r, _lookup(pub, proto.source, r)[0], config) in COMPARED for r in pair):
            other = None
    spread = _seed_values(replay, other, seeds, rerun=rerun) if seeds is not None else {}
    rows = [
        _row(r, source=proto.source, pub=pub, config=config, spread=spread, seeds=seeds)
        for r in checks
    ]
    below = held_floor([replay, pair_with if paired else None])
    if below is not None:
        rows = [_below_held(r, below_held_note(*below)) for r in rows]
    rows = with_headline(proto, rows, pub=pub, drive=replay.meta.get("drive"), paired=paired)
    out = pl.DataFrame(rows, schema=COLUMNS)
    require_accounted(proto, out)
    return out


def _row(
    r: dict[str, Any],
    *,
    source: str,
    pub: pl.DataFrame | None,
    config: dict[str, Any] | None,
    spread: dict[tuple[Any, ...], list[float]],
    seeds: int | None = None,
) -> dict[str, Any]:
    """The compare row of check ``r``: its published value, error, status and notes. With
    ``seeds`` (the replays ``spread`` was taken over, this one included), a published number
    some of them did not produce is a miss for those: never within, borderline if the values
    produced are within in part."""
    from flashback.replay.mechanisms import absent, get

    value, where = _lookup(pub, source, r)
    rel = None
    if value not in (None, 0) and r["replayed"] is not None:
        rel = (r["replayed"] - value) / abs(value)
    status = SENSITIVITY if r.get("sensitivity") else _status(r, value, config)
    values = [] if r.get("sensitivity") else spread.get(_key(r), [])
    if r["replayed"] is not None and values:
        values = [r["replayed"], *values]
    lo: float | None = min(values) if values else None
    hi: float | None = max(values) if values else None
    # a within/outside status means a published value was found (``_status``)
    compared = status in ("within tolerance", "outside tolerance") and r["replayed"] is not None
    if compared and value is not None and lo is not None and hi is not None and hi > lo:
        status = _spread_status(r, value, lo, hi)
    produced = len(values) if values else int(r["replayed"] is not None)
    short = (
        seeds is not None
        and status in ("within tolerance", "outside tolerance", BORDERLINE)
        and value is not None
        and 0 < produced < seeds
    )
    if short and value is not None and lo is not None and hi is not None:
        status = (
            "outside tolerance"
            if _spread_status(r, value, lo, hi) == "outside tolerance"
            else BORDERLINE
        )
    within = {"within tolerance": True, "outside tolerance": False, BORDERLINE: False}.get(status)
    notes = [n for n in (r["note"], where) if n]
    if status == "outside tolerance" and r["replayed"] is None:
        notes.insert(0, f"{MISSED}: the review measured it, the replay did not produce it")
    if short:
        notes.insert(0, f"{produced} of {seeds} seeds produced it: the others miss it")
    if r["bound"] != "value":
        notes.insert(
            0, f"the published number is a {'lower' if r['bound'] == 'min' else 'upper'} bound"
        )
    if r["unmodelled"] and absent(r["unmodelled"], config):
        notes.insert(0, f"{UNMODELLED}: {get(r['unmodelled']).reason}")
    elif r["unmodelled"]:
        notes.insert(
            0,
            f"the replayed drive has the mechanism the review's number reflects "
            f"({get(r['unmodelled']).reason}), so the row is compared",
        )
    if r["setting"]:
        notes.insert(0, "a setting of the procedure, replayed as the review states it")
    return {
        "metric": r["metric"],
        "condition": r["condition"],
        "published": value,
        "replayed": r["replayed"],
        "unit": r["unit"],
        "rel_error": rel,
        "source": source,
        "test": r["test"],
        "drive": r["drive"],
        "tolerance": r["tolerance"],
        "within_tolerance": within,
        "status": status,
        "note": "; ".join(notes) or None,
        "replayed_lo": lo,
        "replayed_hi": hi,
        "seeds": len(values) if values else None,
    }


#: The start of the note of a published row the replay did not produce (a miss).
MISSED = "not replayed"


def _fraction(scale: float) -> str:
    """A scale as the fraction it was given as (``0.001953125`` → ``1/512``)."""
    from fractions import Fraction

    return str(Fraction(scale).limit_denominator(1 << 20))


def held_floor(replays: list[Any]) -> tuple[float, float] | None:
    """The smallest scale of ``replays`` (one protocol's; ``None`` entries skipped) and the
    protocol's ``min_held_scale``, both as fractions of 1, when a simulated one ran below that
    floor; ``None`` when every replay is at or above it (or none is simulated: the floor is
    where the tests hold the simulated drive's rows, a real target is measured as it is)."""
    from flashback.replay.scaling import parse_scale

    sims = [r for r in replays if r is not None and r.meta.get("target_kind") == "sim"]
    if not sims:
        return None
    floor = parse_scale(sims[0].protocol.min_held_scale) or 0.0
    low = min(float(r.meta["scale"]) for r in sims)
    return (low, floor) if low < floor * (1 - 1e-9) else None


def below_held_note(scale: float, floor: float) -> str:
    """The note of a row not compared because its replay ran below the protocol's floor."""
    return (
        f"not compared: replayed at {_fraction(scale)}, below {_fraction(floor)}, the smallest "
        "scale its rows are held at"
    )


def _below_held(row: dict[str, Any], note: str) -> dict[str, Any]:
    """``row`` (a compare row) with its within/outside withdrawn: its replay ran below the
    protocol's held scale, where the tests do not hold its status."""
    if row["status"] not in COMPARED or row["published"] is None:
        return row
    return {
        **row,
        "status": BELOW_HELD,
        "within_tolerance": None,
        "note": "; ".join(n for n in (note, row["note"]) if n),
    }


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["test"], row["condition"], row["metric"], row["drive"])


def _spread_status(row: dict[str, Any], value: float, lo: float, hi: float) -> str:
    """Within if the whole spread ``[lo, hi]`` is, outside if none of it, else borderline
    (checked at 33 points across the spread: the tolerance band is one interval)."""
    points = [lo + (hi - lo) * i / 32 for i in range(33)]
    inside = [_within({**row, "replayed": v}, value) for v in points]
    if all(inside):
        return "within tolerance"
    return BORDERLINE if any(inside) else "outside tolerance"


def _seed_values(
    replay: Any, other: Any, seeds: int, *, rerun: Callable[..., Any] | None
) -> dict[tuple[Any, ...], list[float]]:
    """Each check's replayed values over ``seeds`` − 1 further replays with other seeds."""
    from flashback.errors import ParameterError, ReplayError

    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 2:
        raise ParameterError(f"seeds={seeds!r} is not an integer of 2 or more; pass e.g. seeds=3")
    for rep in (replay, other):
        if rep is not None and rep.meta.get("target_kind") != "sim":
            raise ReplayError(
                "seeds= replays the procedure again and is done on sim: targets only; replay a "
                "real target again yourself"
            )

    run_replay = rerun_of(rerun, "seeds=")

    def again(rep: Any, seed: int) -> Any:
        return run_replay(
            rep.meta["protocol"],
            target=rep.meta["target_spec"],
            scale=rep.scale,
            progress=False,
            seed=seed,
            **rep.meta["params"],
        )

    proto = replay.protocol
    base = replay.meta.get("seed") or 0
    out: dict[tuple[Any, ...], list[float]] = {}
    for k in range(1, seeds):
        variant = again(replay, base + k)
        rows = proto.checks(variant)
        if other is not None and proto.pair_checks is not None:
            rows += proto.pair_checks(variant, again(other, (other.meta.get("seed") or 0) + k))
        for r in rows:
            if r["replayed"] is not None and not r["setting"]:
                out.setdefault(_key(r), []).append(r["replayed"])
    return out


def tally(cmp: pl.DataFrame) -> dict[str, Any]:
    """Counts for a summary of a compare frame: published numbers compared with replayed ones
    (``compared``; a published number with a tolerance the replay did not produce counts, as
    a miss), how many are within tolerance, their median |relative error| (%, of the rows
    with a replayed value), and the documented numbers the model does not reproduce. Settings
    echoed back and sensitivity rows are not counted: they check the replay or a knob, not the
    drive. Rows replayed below the protocol's held scale are not counted either:
    ``below_held_scale`` counts them and ``not_compared`` says why (``""`` when none)."""
    c = cmp.filter(pl.col("status").is_in(COMPARED))
    within = c.filter(pl.col("status") == "within tolerance").height
    med = c.select(pl.col("rel_error").abs().median()).item() if c.height else None
    below = cmp.filter(pl.col("status") == BELOW_HELD)
    why = (
        sorted(set(below["note"].str.split("; ").list.first().drop_nulls())) if below.height else []
    )
    return {
        "compared": c.height,
        "within_tolerance": within,
        "borderline": c.filter(pl.col("status") == BORDERLINE).height,
        "median_abs_rel_error_pct": None if med is None else 100 * med,
        "documented_not_modelled": cmp.filter(pl.col("status") == UNMODELLED).height,
        "below_held_scale": below.height,
        "not_compared": "; ".join(why),
    }
