"""What the replay gives at other values of the parameters a review leaves unstated: the
``sensitivity`` rows of :func:`flashback.replay.compare.compare`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def sensitivity_rows(
    replay: Any, checks: list[dict[str, Any]], *, rerun: Callable[..., Any] | None
) -> list[dict[str, Any]]:
    """The protocol's checks replayed at other values of each parameter the review leaves
    unstated (``Protocol.unstated``: parameter → values), on the same simulated target and
    scale with every other parameter as in ``replay``.

    One row per checked number (settings left out) and value: same ``test``, ``metric`` and
    published number, ``condition`` suffixed ``@param=value``, status ``sensitivity`` (never
    counted as a match), and a note giving the move from this replay's value. ``rerun``
    replays the procedure (see :func:`compare`).

    Raises:
        ReplayError: the replay's target is not a ``sim:`` drive (a sensitivity replay would
            write to a real target again; replay it with the other value yourself and pass
            ``other=``), or ``rerun`` is None.
    """
    from flashback.errors import ReplayError

    proto = replay.protocol
    if not proto.unstated:
        return []
    if replay.meta.get("target_kind") != "sim":
        raise ReplayError(
            "sensitivity= replays the procedure again and is done on sim: targets only; replay "
            "a real target with the other value yourself and pass it as other="
        )
    run_replay = rerun_of(rerun, "sensitivity=")
    params = dict(replay.meta["params"])
    keyed = {(r["test"], r["condition"], r["metric"], r["drive"]): r for r in checks}
    rows: list[dict[str, Any]] = []
    for name, values in proto.unstated.items():
        current = params[name]
        for value in values:
            if value == current:
                continue
            variant = run_replay(
                proto.name,
                target=replay.meta["target_spec"],
                scale=replay.scale,
                progress=False,
                **{**params, name: value},
            )
            for v in proto.checks(variant):
                base = keyed.get((v["test"], v["condition"], v["metric"], v["drive"]))
                if base is None or base["setting"] or v["setting"]:
                    continue
                was, now = base["replayed"], v["replayed"]
                moved = (
                    f"{was:.4g} -> {now:.4g} {v['unit']}"
                    if was is not None and now is not None
                    else "not replayed in one of them"
                )
                rows.append(
                    {
                        **v,
                        "condition": f"{v['condition']}@{name}={value:g}",
                        "lookup_condition": v["condition"],
                        "tolerance": None,
                        "note": f"{name}={value:g} instead of {current:g} (the review does not "
                        f"state it): {moved}",
                        "unmodelled": "",
                        "sensitivity": True,
                    }
                )
    return rows


def rerun_of(rerun: Callable[..., Any] | None, option: str) -> Callable[..., Any]:
    from flashback.errors import ReplayError

    if rerun is None:
        raise ReplayError(
            f"{option} replays the procedure again and needs rerun=; call Replay.compare, "
            "which passes flashback.replay"
        )
    return rerun
