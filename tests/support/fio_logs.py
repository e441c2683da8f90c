"""Deterministic fio per-I/O logs for tests: the layouts fio writes (``time_ms, value, ddir,
bs[, offset][, prio][, issue_time]``, ", "-separated), with values drawn from a seeded
generator, so the same call writes the same bytes on every machine (the snapshot tests check
the bytes' sha256 before comparing results)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import polars as pl


def write_log(
    path: Path,
    *,
    lines: int,
    seed: int,
    span_ms: int,
    dirs: tuple[int, ...] = (1,),
    block_sizes: tuple[int, ...] = (4096,),
    offset: bool = False,
    prio: str | None = "dec",
    issue_time: bool = False,
    step_back_ms: int = 0,
    start_ms: int = 0,
    value_scale: float = 1.0,
    huge_every: int = 0,
    const_value: int | None = None,
) -> str:
    """Writes one fio 3.x per-I/O log of ``lines`` lines over ``span_ms`` ms and returns the
    file's sha256. Latencies are log-normal integers around 60 µs in ns (times
    ``value_scale``); ``dirs``/``block_sizes``: the directions and sizes drawn per line;
    ``prio``: ``"dec"`` (``0``), ``"hex"`` (``log_prio=1``'s ``0x…``) or None (fio < 3.2x);
    ``step_back_ms``: every 1000th time moves back by up to this much (fio's per-job
    clock, as a log written by several threads shows); ``start_ms``: added to every time
    (``log_unix_epoch``); ``huge_every``: every n-th value is above 2⁵³; ``const_value``:
    every value (an iops log's 1)."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.integers(0, span_ms + 1, lines)) + start_ms
    if step_back_ms:
        k = np.arange(999, lines, 1000)
        t[k] = np.maximum(t[k] - rng.integers(1, step_back_ms + 1, k.size), start_ms)
    v = np.maximum(
        np.round(np.exp(rng.normal(np.log(60_000 * value_scale), 0.6, lines))), 1
    ).astype(np.int64)
    if const_value is not None:
        v[:] = const_value
    if huge_every:
        v[::huge_every] = 2**53 + rng.integers(1, 2**40, v[::huge_every].size)
    cols = [t, v]
    cols.append(np.asarray(dirs)[rng.integers(0, len(dirs), lines)])
    cols.append(np.asarray(block_sizes)[rng.integers(0, len(block_sizes), lines)])
    if offset:
        cols.append(rng.integers(0, 2**30, lines) * 4096)
    if issue_time:
        cols.append(t * 1_000_000 + 1_000_000_000 - v)
    text_cols = [pl.Series(c).cast(pl.String) for c in cols]
    if prio == "dec":
        text_cols.insert(5 if offset else 4, pl.repeat("0", lines, eager=True))
    elif prio == "hex":
        p = np.asarray(["0x2004", "0x0", "0x4001"])[rng.integers(0, 3, lines)]
        text_cols.insert(5 if offset else 4, pl.Series(p))
    frame = pl.DataFrame({f"c{i}": c for i, c in enumerate(text_cols)})
    line = frame.select(pl.concat_str(pl.all(), separator=", "))
    data = line.write_csv(include_header=False, quote_style="never").encode()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()
