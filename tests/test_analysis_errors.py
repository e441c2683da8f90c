"""Bad input gets one clear sentence (fb.AnalysisError) from every analysis."""

import numpy as np
import polars as pl
import pytest

import flashback as fb


def _ok(n=50):
    return pl.DataFrame(
        {
            "t_s": np.arange(1.0, n + 1),
            "interval_s": np.ones(n),
            "write_mbps": np.full(n, 100.0),
            "write_bytes": np.full(n, 10**8),
            "host_written_bytes": np.arange(1, n + 1) * 10**8,
        }
    )


BAD = {
    "empty": (_ok().clear(), {}, "no rows"),
    "nan": (
        _ok().with_columns(
            pl.when(pl.col("t_s") == 5)
            .then(float("nan"))
            .otherwise(pl.col("write_mbps"))
            .alias("write_mbps")
        ),
        {},
        "non-finite",
    ),
    "unsorted": (
        _ok().with_columns(pl.Series("t_s", np.r_[np.arange(1.0, 26), np.arange(1.0, 26)])),
        {"x": "t_s"},
        "not sorted",
    ),
    "non_monotone": (
        _ok().with_columns(
            pl.Series("host_written_bytes", np.r_[np.arange(1, 26), np.arange(1, 26)] * 10**8)
        ),
        {},
        "decreases",
    ),
    "one_point": (_ok(1), {}, "at least"),
    "wrong_column": (_ok(), {"y": "write_mbs"}, "not a column"),
    # a list of keys is for a dataset (LazyFrame); on a frame it was an AttributeError
    "by_list_on_a_frame": (_ok(), {"by": ["t_s"]}, "LazyFrame"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_changepoints_bad_input(case):
    df, kw, needle = BAD[case]
    with pytest.raises(fb.AnalysisError) as ei:
        fb.changepoints(df, **kw)
    msg = str(ei.value)
    assert needle in msg and "\n" not in msg and msg.count(". ") == 0
    assert isinstance(ei.value, ValueError)


@pytest.mark.parametrize("case", ["empty", "nan", "wrong_column"])
def test_other_analyses_bad_input(case):
    df, kw, needle = BAD[case]
    y = kw.get("y", "write_mbps")
    for call in (
        lambda: fb.steady_state(df, y=y),
        lambda: fb.consistency(df, y=y),
        lambda: fb.degradation(df, df, y=y),
        lambda: fb.to_rounds(df.select(pl.all()), round="1z"),
    ):
        with pytest.raises(fb.AnalysisError):
            call()


def test_bad_parameters():
    with pytest.raises(fb.AnalysisError, match="penalty"):
        fb.changepoints(_ok(), penalty="big")
    with pytest.raises(fb.AnalysisError, match="method"):
        fb.changepoints(_ok(), method="magic")
    with pytest.raises(fb.AnalysisError, match="rule"):
        fb.steady_state(_ok(), rule="vibes")
    with pytest.raises(fb.AnalysisError, match="capacity"):
        fb.to_rounds(_ok(), round="0.25fill")
    with pytest.raises(fb.AnalysisError):
        fb.changepoints("not a frame")
