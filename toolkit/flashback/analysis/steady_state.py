"""``steady_state``: the SNIA PTS 2.0 steady-state rule and the variants other tools use.

Rules (``rule=``):

- ``snia`` — PTS 2.0: a window of 5 rounds where max − min ≤ 20 % of the window mean and the
  least-squares line changes by ≤ 10 % of the mean across the window (|slope| · (w − 1));
  checked on windows ending at rounds 5…25.
- ``tkperf`` — TKperf's code (thomas-krenn/TKperf ``src/perfTest/StdyState.py``,
  ``checkSteadyState``): a window of the last 5 rounds, max − min ≤ 20 % of the mean and
  |slope| · 4 ≤ 10 % of the mean (its ``testMesWindow`` is 4, the span of 5 rounds): the
  PTS rule; with ``window=`` other than 5 the slope is still multiplied by 4, as there.
- ``band`` — every round of a 5-round window within ±10 % of the window mean.
- ``ssspt`` — ljishen/SSSPT's ``verify_steady_state.py`` (the PTS harness in Ansible):
  ``band`` plus both ends of the least-squares line within ±10 % of the window mean
  (|slope| · (w − 1) / 2 ≤ 10 %). Not the PTS text: a round may not stray more than 10 % from
  the mean on either side (PTS: max − min ≤ 20 %), and the line may span 20 % of the mean
  across the window (PTS: 10 %).
- ``fio_iops`` — fio ``ss=iops:L%``: on per-interval samples after ``ss_ramp`` seconds, the
  largest |y − mean| over the last ``ss_dur`` seconds is < L % of the mean.
- ``fio_iops_slope`` — fio ``ss=iops_slope:L%``: the least-squares slope (per sample) of the
  last ``ss_dur`` seconds is < L % of the mean in absolute value.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack, get_args, overload

import numpy as np
import polars as pl

from flashback.analysis import frames
from flashback.analysis.rounds import to_rounds
from flashback.errors import AnalysisError

if TYPE_CHECKING:
    from flashback.dataset.grouped import Grouped

Rule = Literal["snia", "tkperf", "band", "ssspt", "fio_iops", "fio_iops_slope"]
RULES: tuple[Rule, ...] = get_args(Rule)

#: TKperf's ``testMesWindow``: the slope is multiplied by 4 whatever the window
TKPERF_MES_WINDOW = 4


@dataclasses.dataclass(kw_only=True)
class SteadyState:
    """Verdict of a steady-state rule.

    Attributes:
        reached: whether a window satisfied the rule.
        window: (first, last) round labels (the ``round`` column: 1-based for rounds made
            here; for the fio rules, interval numbers after the ramp) of the first
            satisfying window, or None.
        onset: where that window starts: ``round`` (label), ``seconds``, ``bytes``, ``gb``,
            ``fills``.
        holds_after: once reached, the fraction of the later windows of the same data that
            also pass (every later window for round rules, consecutive non-overlapping
            ``ss_dur`` windows for the fio rules; ``max_rounds`` does not limit them); None
            when not reached or when no later window fits. Below 1: the drive left the
            steady state again (oscillation, a drop after TRIM...).
        later_windows: how many later windows ``holds_after`` is over.
        margins: per variable, how far inside the limits the window is (fractions of the mean;
            negative = outside) — for the satisfying window, else the last one checked.
        excursions: per variable, the measured ``range`` and ``slope`` excursions (fractions of
            the window mean) of that window.
    """

    reached: bool
    window: tuple[int, int] | None
    onset: dict[str, float] | None
    rule: str
    y: list[str]
    margins: dict[str, dict[str, float]]
    excursions: dict[str, dict[str, float]]
    rounds: pl.DataFrame
    checks: pl.DataFrame
    holds_after: float | None = None
    later_windows: int = 0

    def to_frame(self) -> pl.DataFrame:
        """One row per (window, variable) checked: ``window_first``, ``window_last``, ``y``,
        ``mean``, ``range_frac``, ``slope_frac``, ``range_ok``, ``slope_ok``, ``ok``.
        """
        return self.checks

    def __bool__(self) -> bool:
        return self.reached

    def describe(self) -> str:
        """One line: reached or not, the window and its onset, and how later windows hold."""
        if not self.reached:
            return f"steady state NOT reached ({self.rule}, {', '.join(self.y)})"
        assert self.window is not None  # reached: the window is the one found
        o = self.onset or {}
        # a frame of rounds without times or bytes gives no onset: say nothing, not "nan s"
        where = [
            text
            for key, text in (
                ("seconds", f"{o.get('seconds', 0.0):.0f} s"),
                ("gb", f"{o.get('gb', 0.0):.3g} GB"),
            )
            if np.isfinite(o.get(key, float("nan")))
        ]
        if o.get("fills") is not None and np.isfinite(o["fills"]):
            where.append(f"{o['fills']:.2f} drive fills")
        return (
            f"steady state reached ({self.rule}, {', '.join(self.y)}): rounds {self.window[0]}–"
            f"{self.window[1]}{', from ' + ', '.join(where) if where else ''}"
            f"{self.holds_line()}"
        )

    def holds_line(self) -> str:
        """``"; holds in 18/20 later windows (90 %)"`` (empty when there is nothing to say)."""
        if self.holds_after is None:
            return ""
        k = round(self.holds_after * self.later_windows)
        warn = "" if k == self.later_windows else " — NOT steady afterwards"
        return (
            f"; holds in {k}/{self.later_windows} later windows "
            f"({100 * self.holds_after:.0f} %){warn}"
        )


def window_check(values: np.ndarray, rule: str, limit: float | None = None) -> dict[str, Any]:
    """Checks one window of round (or sample) values; returns mean, the excursions as
    fractions of the mean, and the verdicts."""
    v = np.asarray(values, dtype=np.float64)
    w = v.size
    mean = float(v.mean())
    xs = np.arange(w, dtype=np.float64)
    xc = xs - xs.mean()
    slope = float(np.dot(xc, v - mean) / np.dot(xc, xc)) if w > 1 else 0.0
    denom = abs(mean) if mean != 0 else float("inf")
    rng = float(v.max() - v.min()) / denom
    if rule == "snia":
        s_exc, r_lim, s_lim = abs(slope) * (w - 1) / denom, 0.20, 0.10
    elif rule == "tkperf":
        s_exc, r_lim, s_lim = abs(slope) * TKPERF_MES_WINDOW / denom, 0.20, 0.10
    elif rule == "band":
        rng = float(np.abs(v - mean).max()) / denom
        s_exc, r_lim, s_lim = 0.0, 0.10 if limit is None else limit / 100, float("inf")
    elif rule == "ssspt":
        rng = float(np.abs(v - mean).max()) / denom
        s_exc, r_lim, s_lim = abs(slope) * (w - 1) / 2 / denom, 0.10, 0.10
    elif rule == "fio_iops":
        rng = float(np.abs(v - mean).max()) / denom
        lim = (10.0 if limit is None else limit) / 100
        return _verdict(mean, rng, 0.0, lim, float("inf"), strict=True)
    elif rule == "fio_iops_slope":
        lim = (0.1 if limit is None else limit) / 100
        return _verdict(mean, 0.0, abs(slope) / denom, float("inf"), lim, strict=True)
    else:
        raise AnalysisError(f"rule={rule!r} is not known; use one of {', '.join(RULES)}")
    return _verdict(mean, rng, s_exc, r_lim, s_lim, strict=False)


def _verdict(
    mean: float, rng: float, s_exc: float, r_lim: float, s_lim: float, *, strict: bool
) -> dict[str, Any]:
    r_ok = rng < r_lim if strict else rng <= r_lim
    s_ok = s_exc < s_lim if strict else s_exc <= s_lim
    return {
        "mean": mean,
        "range_frac": rng,
        "slope_frac": s_exc,
        "range_margin": r_lim - rng,
        "slope_margin": s_lim - s_exc,
        "range_ok": bool(r_ok),
        "slope_ok": bool(s_ok),
        "ok": bool(r_ok and s_ok),
    }


class SteadyStateOptions(TypedDict, total=False):
    """The keywords of :func:`steady_state` other than ``by`` (for its overloads)."""

    y: str | list[str]
    rule: Rule
    round: str | float
    window: int | None
    max_rounds: int | None
    ss_dur: float
    ss_ramp: float
    limit: float | None
    capacity_bytes: float | None


@overload
def steady_state(
    data: Any, *, by: None = None, **options: Unpack[SteadyStateOptions]
) -> SteadyState: ...
@overload
def steady_state(
    data: Any, *, by: str | list[str] | pl.Expr, **options: Unpack[SteadyStateOptions]
) -> Grouped: ...
def steady_state(
    data: Any,
    *,
    y: str | list[str] = "write_iops",
    rule: Rule = "snia",
    round: str | float = "60s",
    window: int | None = None,
    max_rounds: int | None = 25,
    ss_dur: float = 60.0,
    ss_ramp: float = 0.0,
    limit: float | None = None,
    capacity_bytes: float | None = None,
    by: str | list[str] | pl.Expr | None = None,
) -> SteadyState | Grouped:
    """Applies a steady-state rule to a capture (per-interval data, aggregated into rounds
    with :func:`to_rounds`) or to a frame of rounds (a frame with a ``round`` column).

    ``data`` may also be a list of captures, one per round (the fio JSON of each PTS round
    read with :func:`flashback.read_fio`, in round order): see :func:`to_rounds`. A frame of
    rounds is taken in the order of its ``round`` labels, which must be distinct consecutive
    integers (a window is 5 consecutive rounds).

    Args:
        y: variable(s) tracked; with several, one window must satisfy all of them.
        rule: ``snia`` (default), ``tkperf``, ``band``, ``ssspt``, ``fio_iops``,
            ``fio_iops_slope``.
        round: round length for the round rules: ``"60s"``, ``"1g"``, ``"0.25fill"``.
        window: rounds per window (default 5).
        max_rounds: last round a window may end at (PTS: 25; None = all).
        ss_dur, ss_ramp: fio rules: window and ramp in seconds.
        limit: fio rules: the percentage (default 10 for iops, 0.1 for iops_slope); band: ±%.
        by: column(s) or an expression: each group (a drive, a test... of a dataset from
            :func:`flashback.scan_captures`) gets its own verdict, returned as a
            :class:`~flashback.dataset.grouped.Grouped` of :class:`SteadyState`.

    Raises:
        AnalysisError: bad input, unknown rule, missing column, too few rounds for a window, or
            round labels that repeat or skip a round.
    """
    if rule not in RULES:
        raise AnalysisError(f"rule={rule!r} is not known; use one of {', '.join(RULES)}")
    if by is not None:
        from flashback.dataset.grouped import per_group

        return per_group(
            steady_state, data, by=by, y=y, rule=rule, round=round, window=window,
            max_rounds=max_rounds, ss_dur=ss_dur, ss_ramp=ss_ramp, limit=limit,
            capacity_bytes=capacity_bytes,
        )  # fmt: skip
    ys = [y] if isinstance(y, str) else list(y)
    if isinstance(data, (list, tuple)):
        data = to_rounds(data, capacity_bytes=capacity_bytes)
    df, meta = frames.as_frame(data)
    cap = frames.capacity_bytes(meta, capacity_bytes)
    if rule.startswith("fio"):
        t = frames.column(df, "t_s", role="t_s")
        dt = float(np.median(df["interval_s"].to_numpy())) if "interval_s" in df.columns else 1.0
        keep = (t - t[0] + dt) > ss_ramp + 1e-9
        rounds = df.filter(pl.Series(keep)).with_row_index("round", offset=1)
        rounds = rounds.with_columns(
            (
                pl.col("t_s") - pl.col("interval_s")
                if "interval_s" in df.columns
                else pl.col("t_s")
            ).alias("t_start_s"),
            *(
                [(pl.col("host_written_bytes") - pl.col("write_bytes")).alias("bytes_start")]
                if {"host_written_bytes", "write_bytes"} <= set(df.columns)
                else []
            ),
        )
        w = max(1, int(round_(ss_dur / dt)))
        last = None
    else:
        rounds = (
            _ordered_rounds(df)
            if "round" in df.columns
            else to_rounds(df, round=round, capacity_bytes=cap)
        )
        if "complete" in rounds.columns:
            rounds = rounds.filter(pl.col("complete"))
        w = window or 5
        last = max_rounds
    cols = {c: frames.column(rounds, c, role="y") if rounds.height else np.array([]) for c in ys}
    n = rounds.height
    if n < w:
        raise AnalysisError(
            f"the {rule} rule needs at least {w} rounds but the data give {n}; run longer"
        )
    labels = rounds.get_column("round").to_list()
    rows, found_end = [], None
    end_max = n if last is None else min(n, last)
    for end in range(w, end_max + 1):
        oks = []
        for c in ys:
            chk = window_check(cols[c][end - w : end], rule, limit)
            rows.append(
                {"window_first": labels[end - w], "window_last": labels[end - 1], "y": c, **chk}
            )
            oks.append(chk["ok"])
        if all(oks):
            found_end = end
            break
    checks = pl.DataFrame(rows)
    last_rows = checks.filter(pl.col("window_last") == checks["window_last"].max())
    margins = {
        r["y"]: {"range": r["range_margin"], "slope": r["slope_margin"]}
        for r in last_rows.iter_rows(named=True)
    }
    exc = {
        r["y"]: {"range": r["range_frac"], "slope": r["slope_frac"], "mean": r["mean"]}
        for r in last_rows.iter_rows(named=True)
    }
    onset, found, holds, later = None, None, None, 0
    if found_end is not None:
        found = (labels[found_end - w], labels[found_end - 1])
        r0 = rounds.row(found_end - w, named=True)
        b = r0.get("bytes_start")
        onset = {
            "round": labels[found_end - w],
            "seconds": float(r0.get("t_start_s", float("nan"))),
            "bytes": float(b) if b is not None else float("nan"),
            "gb": float(b) / 1e9 if b is not None else float("nan"),
            "fills": float(b) / cap if b is not None and cap else None,
        }
        step = w if rule.startswith("fio") else 1
        ends = range(found_end + step, n + 1, step)
        passed = [
            all(window_check(cols[c][e - w : e], rule, limit)["ok"] for c in ys) for e in ends
        ]
        later = len(passed)
        holds = float(np.mean(passed)) if passed else None
    return SteadyState(
        reached=bool(found),
        window=found,
        onset=onset,
        rule=rule,
        y=ys,
        margins=margins,
        excursions=exc,
        rounds=rounds,
        checks=checks,
        holds_after=holds,
        later_windows=later,
    )


def _ordered_rounds(df: pl.DataFrame) -> pl.DataFrame:
    """A frame of rounds sorted by its ``round`` labels.

    Raises:
        AnalysisError: labels that are not integers, repeat, or skip a round.
    """
    lab = frames.column(df, "round", role="round")
    if not np.all(lab == np.round(lab)):
        raise AnalysisError("the round column holds non-integer labels; number rounds 1, 2, …")
    df = df.sort("round")
    lab = np.sort(lab)
    steps = np.diff(lab)
    if (steps == 0).any():
        dup = int(lab[1:][steps == 0][0])
        raise AnalysisError(
            f"round {dup} appears {int((lab == dup).sum())} times; pass one row per round "
            "(one run, one tracked block size and mix)"
        )
    if (steps > 1).any():
        i = int(np.argmax(steps > 1))
        raise AnalysisError(
            f"the rounds skip from {int(lab[i])} to {int(lab[i + 1])}; a window is consecutive "
            "rounds, so pass every round"
        )
    return df


def round_(v: float) -> int:
    return int(np.floor(v + 0.5))
