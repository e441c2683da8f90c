"""A review's headline number beside the replayed one (``Protocol.headline``), or a row saying
why a replay cannot compare it — the reason computed from the published data set, never
written per review."""

from __future__ import annotations

from typing import Any

import polars as pl

from flashback.replay.status import BELOW_HELD, COMPARED, SETTING, UNMODELLED

#: Prefix of every status that says why a headline number is not compared.
NOT_COMPARED = "not compared: "
#: The review publishes no measured number (``spec`` rows aside) for the replayed drive.
NO_DRIVE = NOT_COMPARED + "no published number for this drive"
#: The review publishes the number for this drive, set beside a second replay (a pair row).
NEEDS_PAIR = NOT_COMPARED + "needs a second replay"
#: The review publishes numbers for this drive, but not this one (a figure at most).
NO_VALUE = NOT_COMPARED + "the review prints no such number for this drive"
#: The review publishes the number for this drive in a condition this replay did not run (a
#: variant, such as AnandTech's +25 % over-provisioning beside its default).
VARIANT = NOT_COMPARED + "the replay ran another condition"
#: The start of the note of a headline row compare() adds.
HEADLINE_NOTE = "the review's headline number; "
#: Every reason a headline row may give.
REASONS = (NO_DRIVE, NEEDS_PAIR, VARIANT, NO_VALUE)


def _key(protocol: Any) -> tuple[str, str, str]:
    """``Protocol.headline``.

    Raises:
        ReplayError: the protocol declares no headline ``(test, condition, metric)``.
    """
    from flashback.errors import ReplayError

    key = protocol.headline
    if not (isinstance(key, tuple) and len(key) == 3 and all(key)):
        raise ReplayError(
            f"{protocol.name} declares no headline (test, condition, metric); a review must "
            "compare its headline number or carry a row saying why it cannot"
        )
    return key


def _why_not(
    protocol: Any,
    key: tuple[str, str, str],
    *,
    pub: pl.DataFrame | None,
    drive: str | None,
    paired: bool,
    ran: set[tuple[str, str]],
) -> tuple[str, str, dict[str, Any] | None]:
    """Why the headline ``key`` has no compared row for ``drive``: the status, a note, and the
    published row of ``key`` for this drive when there is one. ``ran``: the (test, condition)
    pairs of the replay's rows (settings echoed back aside).

    Raises:
        ReplayError: the review publishes the number for this drive and the replay ran its
            condition, yet neither the protocol's checks nor its pair checks give the row (a
            protocol defect).
    """
    from flashback.errors import ReplayError

    test, condition, metric = key
    rows = (
        pl.DataFrame()
        if pub is None or not pub.height
        else pub.filter((pl.col("source") == protocol.source) & (pl.col("condition") != "spec"))
    )
    measured = rows.filter(pl.col("drive") == drive) if drive is not None and rows.height else None
    if measured is None or not measured.height:
        drives = sorted(set(rows["drive"].drop_nulls())) if rows.height else []
        where = (
            f"it publishes numbers for {', '.join(drives)}"
            if drives
            else "the published data set holds no number of it"
        )
        names = sorted(set(rows["publication"])) if rows.height else []
        review = f"{names[0]} ({protocol.source})" if len(names) == 1 else protocol.source
        return NO_DRIVE, f"{review} publishes no number for {drive}: {where}", None
    hit = measured.filter(
        (pl.col("test") == test) & (pl.col("condition") == condition) & (pl.col("metric") == metric)
    )
    if hit.height:
        row = hit.row(0, named=True)
        if (test, condition) not in ran:
            conditions = sorted({c for t, c in ran if t == test})
            return (
                VARIANT,
                f"the review's {metric} for {drive} ({row['value']:g} {row['unit']}) is for "
                f"{condition}; this replay ran {', '.join(conditions) or 'none of its conditions'}",
                row,
            )
        if protocol.pair_checks is not None and not paired:
            return (
                NEEDS_PAIR,
                f"the review's {metric} for {drive} ({row['value']:g} {row['unit']}) sets it "
                "beside another replay: replay that one too and pass it as compare(other=...)",
                row,
            )
        raise ReplayError(
            f"{protocol.name}'s headline {test}/{condition}/{metric} is published for {drive} "
            "but no check of the protocol gives its row"
        )
    printed = sorted(set(measured["metric"]))
    return (
        NO_VALUE,
        f"the review prints no {metric} ({condition}) for {drive}, only "
        f"{len(printed)} other number{'s' if len(printed) != 1 else ''} ({', '.join(printed)})",
        None,
    )


def with_headline(
    protocol: Any,
    rows: list[dict[str, Any]],
    *,
    pub: pl.DataFrame | None,
    drive: str | None,
    paired: bool = False,
) -> list[dict[str, Any]]:
    """``rows`` (compare rows) carrying the protocol's headline row: unchanged when the row is
    there with a status that compares it or says why not (documented, not modelled; below
    the held scale; not replayed), else its ``no published value`` row, or a new row, with the status of
    :data:`REASONS` computed from the published data set ``pub`` for ``drive``.

    Raises:
        ReplayError: the protocol declares no headline; or its headline is published for
            this drive but no check gives the row.
    """
    key = _key(protocol)
    test, condition, metric = key
    found = [
        i
        for i, r in enumerate(rows)
        if (r["test"], r["condition"], r["metric"]) == key and r["drive"] == drive
    ]
    if any(rows[i]["status"] != "no published value" for i in found):
        return rows
    ran = {(r["test"], r["condition"]) for r in rows if r["status"] != SETTING}
    status, note, pub_row = _why_not(protocol, key, pub=pub, drive=drive, paired=paired, ran=ran)
    out = list(rows)
    if found:
        r = out[found[0]]
        out[found[0]] = {
            **r,
            "status": status,
            "note": "; ".join(n for n in (note, r["note"]) if n),
        }
        return out
    out.append(
        {
            "metric": metric,
            "condition": condition,
            "published": None if pub_row is None else pub_row["value"],
            "replayed": None,
            "unit": None if pub_row is None else pub_row["unit"],
            "rel_error": None,
            "source": protocol.source,
            "test": test,
            "drive": drive,
            "tolerance": None,
            "within_tolerance": None,
            "status": status,
            "note": HEADLINE_NOTE + note,
            "replayed_lo": None,
            "replayed_hi": None,
            "seeds": None,
        }
    )
    return out


def headline(protocol: Any, cmp: pl.DataFrame) -> str:
    """The review's headline number beside the replayed one with its status, or why the
    replay cannot compare it (the row :func:`with_headline` put in ``cmp``).

    Raises:
        ReplayError: the protocol declares no headline, or its headline row is not in ``cmp``
            (a protocol must compare its headline or say why not).
    """
    from flashback.errors import ReplayError

    test, condition, metric = _key(protocol)
    r = _headline_row(protocol, cmp)
    if r is None:
        raise ReplayError(
            f"{protocol.name}'s headline {test}/{condition}/{metric} is not among its compare rows"
        )

    def fmt(v: float | None) -> str:
        return "—" if v is None else f"{v:.4g}"

    if r["status"] in REASONS:
        why = r["status"].removeprefix(NOT_COMPARED)
        note = (r["note"] or "").removeprefix(HEADLINE_NOTE)
        return f"{NOT_COMPARED}{metric} ({condition}): {why} — {note}"
    if r["status"] == BELOW_HELD:  # the note starts with the floor's "not compared: ..."
        why = (r["note"] or "").split("; ")[0].removeprefix(NOT_COMPARED)
        return (
            f"{NOT_COMPARED}{metric} ({condition}): published {fmt(r['published'])}, replayed "
            f"{fmt(r['replayed'])} {r['unit']} — {why}"
        )
    return (
        f"{metric} ({condition}): published {fmt(r['published'])}, replayed "
        f"{fmt(r['replayed'])} {r['unit']} — {r['status']}"
    )


def headline_compared(protocol: Any, cmp: pl.DataFrame) -> bool:
    """Whether ``cmp`` compares the protocol's headline number: its row is there with a
    status of :data:`COMPARED` (not documented-not-modelled, nor without a published or a
    replayed value)."""
    r = _headline_row(protocol, cmp)
    return r is not None and r["status"] in COMPARED


def _headline_row(protocol: Any, cmp: pl.DataFrame) -> dict[str, Any] | None:
    """The compare row of ``Protocol.headline`` (``None`` when ``cmp`` lacks it): of several
    (a report joining compares of several replays), one that compares it first, then one that
    says why not."""
    test, condition, metric = _key(protocol)
    sel = cmp.filter(
        (pl.col("test") == test) & (pl.col("condition") == condition) & (pl.col("metric") == metric)
    )
    if sel.is_empty():
        return None
    rank = (
        pl.when(pl.col("status").is_in(COMPARED))
        .then(0)
        .when(pl.col("status") == UNMODELLED)
        .then(1)
        .when(pl.col("status") == BELOW_HELD)
        .then(2)
        .otherwise(3)
    )
    return (
        sel.with_columns(rank.alias("_rank"))
        .sort("_rank", maintain_order=True)
        .drop("_rank")
        .row(0, named=True)
    )


def require_accounted(protocol: Any, cmp: pl.DataFrame) -> None:
    """Checks that ``cmp`` compares at least one published number or carries the protocol's
    headline row with a status saying why not (:data:`REASONS`, documented-not-modelled, below
    the protocol's held scale, or not replayed): a review must compare its headline number or say why it cannot.

    Raises:
        ReplayError: neither: the compare compares nothing and says nothing about why.
    """
    from flashback.errors import ReplayError

    if cmp.filter(pl.col("status").is_in(COMPARED)).height:
        return
    r = (
        _headline_row(protocol, cmp)
        if isinstance(protocol.headline, tuple) and protocol.headline
        else None
    )
    if r is None or r["status"] not in (*REASONS, UNMODELLED, BELOW_HELD, "not replayed"):
        raise ReplayError(
            f"{protocol.name}'s compare sets no published number beside a replayed one and has "
            "no headline row saying why it cannot"
        )


def joined(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Compare frames of several replays of one review as one (a report section): their rows,
    less a headline row saying why not where another frame compares that number for the same
    drive (a variant's "needs a second replay" beside the pair that compares it).

    Raises:
        ValueError: ``frames`` is empty.
    """
    if not frames:
        raise ValueError("joined() needs at least one compare frame")
    out = pl.concat(frames, how="diagonal_relaxed")
    key = ["test", "condition", "metric", "drive"]
    done = (
        out.filter(pl.col("status").is_in(COMPARED))
        .select(key)
        .unique()
        .with_columns(pl.lit(True).alias("_done"))
    )
    out = out.join(done, on=key, how="left", nulls_equal=True, maintain_order="left")
    keep = ~(pl.col("status").is_in(REASONS) & pl.col("_done").fill_null(False))
    return out.filter(keep).drop("_done")
