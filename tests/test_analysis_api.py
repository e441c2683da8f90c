"""The analysis package's surface: one name for a confidence level (``confidence=``, the old
``level=`` warns for one release), results built from keywords, bootstrap options as explicit
keywords, ``Raises:`` documented on every public function."""

import dataclasses
import inspect

import numpy as np
import polars as pl
import pytest

import flashback as fb
import flashback.analysis as fa


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    y = np.r_[np.full(n // 2, 500.0), np.full(n - n // 2, 200.0)] * np.exp(
        0.03 * rng.standard_normal(n)
    )
    return pl.DataFrame({"t_s": np.arange(1.0, n + 1), "write_mbps": y})


def test_the_old_level_spelling_is_gone():
    # the package was never released: ``level=`` is refused, not translated
    for f in (fb.changepoints, fb.steady_state_onset):
        with pytest.raises(TypeError, match="level"):
            f(_frame(), x="t_s", level=0.9)


@pytest.mark.parametrize("bad", [0, 1, 1.5, "high"])
def test_a_bad_confidence_is_an_analysis_error(bad):
    with pytest.raises(fb.AnalysisError, match="confidence"):
        fb.changepoints(_frame(), x="t_s", confidence=bad)


def test_no_analysis_option_is_called_level():
    # the CI level is ``confidence`` everywhere
    for name in fa.__all__:
        f = getattr(fa, name)
        if inspect.isfunction(f):
            assert "level" not in inspect.signature(f).parameters, name


def test_results_are_built_from_keywords():
    for cls in (fa.Segments, fa.Effect, fa.SteadyState, fb.analysis.onset.Onset):
        assert dataclasses.is_dataclass(cls)
        fields = [f for f in dataclasses.fields(cls) if f.init]
        assert all(f.kw_only for f in fields), cls
        with pytest.raises(TypeError):
            cls(*range(len(fields)))


def test_effect_functions_take_bootstrap_options_as_keywords():
    for f in (fb.compression_effect, fb.degradation, fb.idle_recovery, fb.trim_effect):
        params = inspect.signature(f).parameters
        assert not any(p.kind is p.VAR_KEYWORD for p in params.values()), f.__name__
        assert {"block_len", "n_resamples", "seed", "method"} <= set(params), f.__name__
    rng = np.random.default_rng(3)
    a, b = 500 + rng.standard_normal(600), 450 + rng.standard_normal(600)
    e1 = fb.degradation(a, b, n_resamples=199, seed=1, method="percentile")
    e2 = fb.degradation(a, b, n_resamples=199, seed=2, method="percentile")
    assert e1.ratio == e2.ratio and (e1.lo, e1.hi) != (e2.lo, e2.hi)
    with pytest.raises(TypeError):
        fb.degradation(a, b, resamples=199)


def test_every_public_analysis_function_documents_raises():
    missing = [
        name
        for name in fa.__all__
        if inspect.isfunction(getattr(fa, name))
        and "Raises:" not in (getattr(fa, name).__doc__ or "")
    ]
    assert not missing, missing
