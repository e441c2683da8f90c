"""Review procedures replayed on any target: :func:`replay`, :class:`Replay`, :func:`protocols`.

>>> import flashback as fb
>>> res = fb.replay("anandtech-trim-validation", target="sim:intel-530-240g?scale=1/64")
>>> res.compare()
"""

from flashback.replay.api import Replay, replay
from flashback.replay.base import Protocol, get_protocol, protocols

__all__ = ["Protocol", "Replay", "get_protocol", "protocols", "replay"]
