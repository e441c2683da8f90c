"""Pieces shared by the fuzz tests: the one-answer rule and a strategy for any JSON value."""

from __future__ import annotations

from hypothesis import strategies as st

import flashback as fb


def allowed(fn, *args, **kwargs):
    """Runs ``fn``; a FlashbackError is an answer, anything else fails the test."""
    try:
        return fn(*args, **kwargs)
    except fb.FlashbackError as e:
        msg = str(e)
        assert msg and "\n" not in msg.strip(), f"not one sentence: {msg!r}"
        return None


json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
