"""One analysis per group of a dataset: ``fb.changepoints(lf, by="serial")``,
``fb.steady_state(lf, by=["model", "test"])``.

The frame is collected once (only the columns the analysis reads travel), split with polars'
``group_by`` and each group goes to the public analysis function, whose kernels are native.
A group's drive capacity (for drive-fill units) comes from its ``capacity_bytes`` column.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from flashback.dataset.identity import IDENTITY_SCHEMA
from flashback.errors import AnalysisError

if TYPE_CHECKING:
    from flashback.capture import Capture


@dataclasses.dataclass(kw_only=True)
class Grouped(Mapping):
    """One analysis result per group, keyed by the tuple of the ``by`` values (a single ``by``
    column also accepts the bare value: ``res["SN123"]``).

    Attributes:
        by: the grouping columns.
        results: group key → result (:class:`~flashback.Segments`,
            :class:`~flashback.SteadyState`...), in the order groups first appear.
    """

    by: list[str]
    results: dict[tuple, Any]

    def __getitem__(self, key: Any) -> Any:
        k = key if isinstance(key, tuple) else (key,)
        if k not in self.results:
            raise KeyError(f"no group {key!r}; groups are {list(self.results)}")
        return self.results[k]

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def _keyed(self, key: tuple, frame: pl.DataFrame) -> pl.DataFrame:
        return frame.select(
            *[pl.lit(v).alias(k) for k, v in zip(self.by, key, strict=True)], pl.all()
        )

    def to_frame(self) -> pl.DataFrame:
        """Every group's ``to_frame()`` stacked, with the ``by`` columns first.

        Raises:
            AttributeError: the results have no ``to_frame`` (``fn`` returned something other
                than a flashback result).
        """
        parts = [self._keyed(k, r.to_frame()) for k, r in self.results.items()]
        return pl.concat(parts, how="diagonal_relaxed")

    def summary(self) -> pl.DataFrame:
        """One row per group: for change points ``n_segments``, ``breakpoints`` (x values)
        and ``first_breakpoint``; for steady state ``reached``, ``window_first``,
        ``window_last``, ``onset_s``, ``onset_gb``, ``onset_fills``.

        Results of other kinds give rows with the ``by`` columns only.
        """
        rows = []
        for key, r in self.results.items():
            row = dict(zip(self.by, key, strict=True))
            if hasattr(r, "breakpoints"):
                bk = [float(b) for b in r.breakpoints]
                row.update(
                    n_segments=r.n_segments,
                    breakpoints=bk,
                    first_breakpoint=bk[0] if bk else None,
                )
            elif hasattr(r, "reached"):
                o = r.onset or {}
                row.update(
                    reached=bool(r.reached),
                    window_first=r.window[0] if r.window else None,
                    window_last=r.window[1] if r.window else None,
                    onset_s=o.get("seconds"),
                    onset_gb=o.get("gb"),
                    onset_fills=o.get("fills"),
                )
            rows.append(row)
        return pl.DataFrame(rows, infer_schema_length=None)

    def __repr__(self) -> str:
        return f"Grouped(by={self.by}, {len(self.results)} groups)"


def _describe(by: list[str], key: tuple) -> str:
    return ", ".join(f"{k}={v}" for k, v in zip(by, key, strict=True))


def per_group(
    fn: Callable[..., Any], data: pl.LazyFrame | pl.DataFrame | Capture, *, by: Any, **kwargs: Any
) -> Grouped:
    """Applies ``fn(part, **kwargs)`` to each group of ``data`` split by ``by`` (a column
    name, a list of them, or a polars expression, whose groups are named ``group``).

    Unless ``capacity_bytes`` is given, each group's capacity is its ``capacity_bytes``
    column when the group holds one drive size.

    Raises:
        AnalysisError: ``data`` is neither a polars frame nor a capture, a ``by`` column is missing, the frame
            is empty, or ``fn`` fails on a group (the message names the group).
    """
    if hasattr(data, "intervals") and hasattr(data, "meta"):  # a Capture
        from flashback.dataset.scan import capture_frame

        data = capture_frame(data)  # type: ignore[arg-type]  # hasattr does not narrow
    if not isinstance(data, (pl.LazyFrame, pl.DataFrame)):
        raise AnalysisError(
            f"by= needs a polars frame (e.g. from scan_captures), not a {type(data).__name__}"
        )
    lf = data.lazy()
    synthetic: list[str] = []
    if isinstance(by, pl.Expr):
        lf, keys = lf.with_columns(by.alias("group")), ["group"]
        synthetic = keys
    else:
        keys = [by] if isinstance(by, str) else list(by)
    names = lf.collect_schema().names()
    for k in keys:
        if k not in names:
            raise AnalysisError(
                f"by={k!r} is not a column of the frame; name one of its columns "
                "(scan_captures gives model, serial, test, host, capture_id...)"
            )
    # Identity columns other than the keys and the capacity are constant per capture and
    # unused by the analyses: they are not collected.
    keep = [c for c in names if c not in IDENTITY_SCHEMA or c in keys or c == "capacity_bytes"]
    df = lf.select(keep).collect()
    if df.height == 0:
        raise AnalysisError("the frame has no rows; pass captures with at least one interval")
    results: dict[tuple, Any] = {}
    for key, part in df.group_by(keys, maintain_order=True):
        kw = dict(kwargs)
        if kw.get("capacity_bytes") is None and "capacity_bytes" in part.columns:
            sizes = part.get_column("capacity_bytes").drop_nulls().unique()
            if sizes.len() == 1:
                kw["capacity_bytes"] = float(sizes[0])
        body = part.drop([c for c in part.columns if c in IDENTITY_SCHEMA or c in synthetic])
        try:
            results[tuple(key)] = fn(body, **kw)
        except AnalysisError as e:
            raise AnalysisError(f"in group {_describe(keys, tuple(key))}: {e}") from None
    return Grouped(by=keys, results=results)
