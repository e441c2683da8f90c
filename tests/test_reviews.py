"""The review registry (``flashback.replay.procedures.REVIEWS``): every registered review has
each of its parts under the name it derives, and no part exists that no review names."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from flashback.replay.base import registered
from flashback.replay.procedures import REVIEWS

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "toolkit" / "flashback"
PROCEDURES = PACKAGE / "replay" / "procedures"
SECTIONS = PACKAGE / "report" / "reviews"
NOTEBOOKS = REPO / "notebooks"

#: Modules beside the reviews' that are helpers, not reviews (each says why it is there).
PROCEDURE_HELPERS = {"__init__", "common", "cdm", "puget_checks"}
SECTION_HELPERS = {"__init__", "common"}
#: Notebooks about flashback itself rather than one review.
OTHER_NOTEBOOKS = {"00-quickstart", "07-your-drive", "08-simulator", "09-fleet"}


def test_names_are_unique_and_each_protocol_starts_with_its_review():
    names = [r.name for r in REVIEWS]
    assert len(set(names)) == len(names)
    assert len({r.protocol for r in REVIEWS}) == len(REVIEWS)
    for r in REVIEWS:
        assert r.protocol.startswith(r.name), r


def test_the_registered_protocols_are_the_reviews_in_table_order():
    assert [p.name for p in registered()] == [r.protocol for r in REVIEWS]


def test_each_procedure_module_registers_its_review_protocol():
    for r in REVIEWS:
        assert (PROCEDURES / f"{r.module}.py").is_file(), r.name
        source = (PROCEDURES / f"{r.module}.py").read_text()
        assert f'name="{r.protocol}"' in source, r.name


def test_each_review_has_a_report_section_builder():
    for r in REVIEWS:
        module = importlib.import_module(f"flashback.report.reviews.{r.module}")
        params = inspect.signature(module.build).parameters
        assert set(params) == {"scale", "progress"}, r.name


def test_each_review_has_its_published_csv_and_linked_copy():
    for r in REVIEWS:
        assert (PACKAGE / "data" / "published" / r.csv_name).is_file(), r.name
        assert (REPO / "data" / "published" / r.csv_name).is_file(), r.name


def test_each_review_has_its_notebook_pair():
    for r in REVIEWS:
        for suffix in (".py", ".ipynb"):
            assert (NOTEBOOKS / f"{r.notebook_name}{suffix}").is_file(), (r.name, suffix)


def test_nothing_exists_that_no_review_names():
    modules = {r.module for r in REVIEWS}
    assert {p.stem for p in PROCEDURES.glob("*.py")} - PROCEDURE_HELPERS == modules
    assert {p.stem for p in SECTIONS.glob("*.py")} - SECTION_HELPERS == modules
    csvs = {r.csv_name for r in REVIEWS}
    assert {p.name for p in (PACKAGE / "data" / "published").glob("*.csv")} == csvs
    assert {p.name for p in (REPO / "data" / "published").glob("*.csv")} == csvs
    notebooks = {r.notebook_name for r in REVIEWS}
    assert {p.stem for p in NOTEBOOKS.glob("*.py")} - OTHER_NOTEBOOKS == notebooks
    assert {p.stem for p in NOTEBOOKS.glob("*.ipynb")} - OTHER_NOTEBOOKS == notebooks


def test_notebook_numbers_follow_the_table_order():
    numbers = [r.number for r in REVIEWS]
    assert numbers == sorted(numbers)
    assert set(numbers) == set(range(1, max(numbers) + 1))


def test_no_isort_skip_ordering_is_left():
    assert "isort" not in (PROCEDURES / "__init__.py").read_text()
