"""The one rule for a frozen options object passed beside the keywords it groups
(``bootstrap=`` for the effects, ``remap=`` for traces): the keywords must then stay at
their defaults."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def given_options(
    given: object,
    keywords: dict[str, Any],
    *,
    cls: type[T],
    name: str,
    label: str,
    what: str,
    error: type[Exception],
) -> T:
    """``given``, checked to be a ``cls`` and against the ``keywords`` the caller was called
    with (name -> value), which must all be at ``cls()``'s values.

    Args:
        name: the option's keyword (``bootstrap``); label: how the message names ``cls``;
        what: what the options are, for the message (``the options``); error: the
            :class:`~flashback.errors.FlashbackError` subclass raised.

    Raises:
        error: ``given`` is not a ``cls``, or a keyword is set to something other than its
            default beside it.
    """
    if not isinstance(given, cls):
        raise error(f"{name} must be a {label}, got {type(given).__name__}")
    default = cls()
    changed = [k for k, v in keywords.items() if v != getattr(default, k)]
    if changed:
        raise error(
            f"{', '.join(changed)} given both as keyword and in {name}=; pass {what} in one place"
        )
    return given
