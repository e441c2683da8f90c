"""The reviews: one row of :data:`REVIEWS` per review, from whose name every part derives.

A review's ``name`` (``anand2009``) gives, with ``module`` = the name with ``-`` → ``_``:

- its procedure, ``flashback/replay/procedures/<module>.py``, which registers ``protocol``
  (importing this package imports them, in the table's order: the order of
  ``fb.protocols()`` and of the report);
- its report section, ``build`` in ``flashback/report/reviews/<module>.py``, run by the
  demo report at ``scale`` (with ``--quick`` at its protocol's ``min_held_scale``, the
  smallest scale whose statuses the tests hold: :attr:`Review.quick_scale`) and picked by
  ``flashback demo --only <name>``;
- its published numbers, ``flashback/data/published/<published>.csv`` (linked from
  ``data/published/``), ``published`` being the name unless two reviews share one seed's
  numbers;
- its notebook, ``notebooks/<NN>-<notebook>.py`` and ``.ipynb`` (``NN`` = ``number``),
  ``notebook`` being the name unless two reviews share one notebook.

``tests/test_reviews.py`` fails when a registered review lacks a part or a part exists that
no review names.
"""

from __future__ import annotations

import dataclasses
import importlib


@dataclasses.dataclass(frozen=True, kw_only=True)
class Review:
    """One review's row (see the module docstring for what derives from ``name``).

    Attributes:
        name: the one name (``anand2009``); also the report section's key.
        protocol: the protocol its procedure registers (``anand2009-new-vs-used``), the name
            ``fb.replay`` takes and saved replays record, kept as published.
        number: its notebook's number (the notebooks' order).
        scale: the demo report's scale (``"1/32"``); at least its protocol's
            ``min_held_scale``.
        published: the published CSV's stem when it is another review's (one seed for two).
        notebook: the notebook's name after its number when it is another review's.
    """

    name: str
    protocol: str
    number: int
    scale: str
    published: str = ""
    notebook: str = ""

    @property
    def quick_scale(self) -> str:
        """The demo report's scale with ``--quick``: its protocol's ``min_held_scale`` (the
        smallest scale at which the tests hold its rows; below it nothing is compared)."""
        from flashback.replay.base import get_protocol

        return get_protocol(self.protocol).min_held_scale

    @property
    def module(self) -> str:
        """The module name of its procedure and of its report section (``anandtech_trim``)."""
        return self.name.replace("-", "_")

    @property
    def csv_name(self) -> str:
        """Its published numbers' file name (``anand2009.csv``)."""
        return f"{self.published or self.name}.csv"

    @property
    def notebook_name(self) -> str:
        """Its notebook's name without the suffix (``05-anand2009``)."""
        return f"{self.number:02d}-{self.notebook or self.name}"


# Demo scales: every compared row holds within 3 % (1 point for a %) between each protocol's
# min_held_scale and twice it (1/64 and 1/32; 1/16 and 1/8 for AnandTech's TRIM validation and SNIA PTS),
# but for the two rows
# tests/test_replay_scale.py's NOT_SCALE_INVARIANT names, so the demo runs small and spends
# the time on SEEDS seeds per comparison instead.
#: Every review, in the seeds' order.
REVIEWS: tuple[Review, ...] = (
    Review(name="puget", protocol="puget-cdm-loop", number=1, scale="1/32"),
    Review(
        name="behardware",
        protocol="behardware-used-trim",
        number=2,
        scale="1/16",
    ),
    Review(name="xbit", protocol="xbit-pts-degradation", number=3, scale="1/16"),
    Review(
        name="anandtech-consistency",
        protocol="anandtech-consistency",
        number=4,
        scale="1/16",
    ),
    Review(
        name="anandtech-trim",
        protocol="anandtech-trim-validation",
        number=4,
        scale="1/16",
        published="anandtech-consistency",  # one AnandTech article (seed 003) holds both
        notebook="anandtech-consistency",
    ),
    Review(
        name="anand2009",
        protocol="anand2009-new-vs-used",
        number=5,
        scale="1/32",
    ),
    Review(
        name="snia-pts",
        protocol="snia-pts",
        number=6,
        scale="1/16",
        published="xbit",  # the PTS procedure compares X-bit's numbers (seed 002)
    ),
)

for _review in REVIEWS:
    importlib.import_module(f"{__name__}.{_review.module}")
